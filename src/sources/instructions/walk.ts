/**
 * The walk over instruction files (docs/sources.md): probes each path, reads and caps the file,
 * records it as a part or an issue, and follows its `@imports` depth first. The rules are
 * documented in `chain.ts`.
 */
import { lstat, realpath } from "node:fs/promises";
import { dirname, join, relative, resolve, sep } from "node:path";
import { shortHash } from "../../cache/index.js";
import { nodeErrorCode } from "../../errors/index.js";
import {
  confinedRoots,
  entryInside,
  isInside,
  PATH_REFUSED,
  REFUSED,
  type Roots,
  readConfined,
} from "../../files/index.js";
import { findImports } from "../../text/index.js";
import { cutUtf8 } from "./cap.js";
import type { Resolved } from "./options.js";
import type { InstructionIssue, InstructionIssueKind, InstructionPart } from "./parts.js";

// ---------------------------------------------------------------------------------------
// filesystem helpers

/** An entry exists at `p` (not following a final symlink). */
export async function entryExists(p: string): Promise<boolean> {
  try {
    await lstat(p);
    return true;
  } catch (err) {
    const code = nodeErrorCode(err, "EUNKNOWN");
    // Missing entries and non-directory components are "not there"; anything else (a
    // permission error, a loop in a parent link) means something is there to report.
    return code !== "ENOENT" && code !== "ENOTDIR";
  }
}

/** Directories from `stopDir` down to `cwd`, farthest first. */
export async function chainDirs(cwd: string, stopDir: string | null): Promise<string[]> {
  const up: string[] = [];
  let dir = cwd;
  for (;;) {
    up.push(dir);
    if (stopDir !== null ? dir === stopDir : await entryExists(join(dir, ".git"))) break;
    const parent = dirname(dir);
    if (parent === dir) break;
    dir = parent;
  }
  return up.reverse();
}

// ---------------------------------------------------------------------------------------
// confinement

/**
 * Where instruction files may be read from (files/confine.ts): the walk's root (the
 * workspace) and `userRoots` when given, else the directory of each configured user-level
 * file, as written and resolved, and the real directory of the file itself (a
 * `~/.claude/CLAUDE.md` linked into dotfiles).
 */
export async function allowedRoots(
  root: string,
  userFiles: readonly string[],
  userRoots: readonly string[] | null,
): Promise<Roots> {
  const dirs = [root];
  if (userRoots !== null) dirs.push(...userRoots);
  else {
    for (const f of userFiles) dirs.push(dirname(f));
    for (const f of userFiles) {
      const real = await realpath(f).catch(() => null);
      if (real !== null) dirs.push(dirname(real));
    }
  }
  return confinedRoots(dirs);
}

// ---------------------------------------------------------------------------------------
// UTF-8

const decoder = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true });

// ---------------------------------------------------------------------------------------
// the walk

interface Visit {
  abs: string;
  depth: number;
  importedFrom: string | null;
  /** Real paths of the importers, outermost first, with their shown paths. */
  stack: ReadonlyArray<{ real: string; shown: string }>;
  /** A missing chain file is skipped silently; a missing import is reported. */
  isImport: boolean;
}

/** Collects parts and issues over successive {@link Walker.visit} calls (one chain). */
export class Walker {
  readonly parts: InstructionPart[] = [];
  /** The per-file cap note of each part (null when whole), reported if the part is kept. */
  readonly fileCaps: Array<string | null> = [];
  readonly issues: InstructionIssue[] = [];
  readonly #seen = new Map<string, string>();

  constructor(
    private readonly o: Resolved,
    private readonly root: string,
    readonly roots: Roots,
    private readonly signal: AbortSignal | undefined,
  ) {}

  shown(abs: string): string {
    if (isInside(this.root, abs)) {
      const rel = relative(this.root, abs);
      return sep === "/" ? rel : rel.split(sep).join("/");
    }
    return abs;
  }

  issue(abs: string, kind: InstructionIssueKind, detail: string): void {
    this.issues.push({ path: this.shown(abs), kind, detail });
  }

  /**
   * Visits one file: admits it, reads it and applies the per-file cap, records the part,
   * then its imports. The total cap comes after the walk (`applyTotalCap`).
   */
  async visit(v: Visit): Promise<void> {
    this.signal?.throwIfAborted();
    const shown = this.shown(v.abs);
    const found = await readConfined(v.abs, this.roots);
    if (!found.ok) {
      if (found.why === "not_a_file") this.issue(v.abs, "not_a_file", found.detail);
      // Missing and outside are one answer; a chain file with no entry at all is silent.
      else if (v.isImport || (await entryInside(v.abs, this.roots))) {
        const from = v.importedFrom === null ? "" : ` (from ${v.importedFrom})`;
        this.issue(v.abs, PATH_REFUSED, `${REFUSED}${from}`);
      }
      return;
    }
    if (!this.admit(v, shown, found.real)) return;
    const file = this.decode(v.abs, found.bytes);
    if (file === null) return;
    const kept = this.keep(file.body);
    const content = decoder.decode(kept.bytes);
    this.fileCaps.push(kept.fileCap);
    this.parts.push({
      path: shown,
      absolutePath: v.abs,
      sha256: file.sha256,
      bytes: kept.bytes.length,
      content,
      importedFrom: v.importedFrom,
      depth: v.depth,
      truncated: kept.truncated,
    });
    await this.followImports(v, content, { real: found.real, shown });
  }

  /**
   * Whether the file at real path `real` is taken: not on the import stack and not seen
   * before; else reports why.
   */
  private admit(v: Visit, shown: string, real: string): boolean {
    const onStack = v.stack.findIndex((s) => s.real === real);
    if (onStack >= 0) {
      const chain = [...v.stack.slice(onStack).map((s) => s.shown), shown].join(" → ");
      this.issue(v.abs, "cycle", `import cycle ${chain}; not followed`);
      return false;
    }
    const first = this.#seen.get(real);
    if (first !== undefined) {
      this.issue(v.abs, "duplicate", `same file as ${first}; skipped`);
      return false;
    }
    this.#seen.set(real, shown);
    return true;
  }

  /** The file's bytes without a leading BOM and the hash of the whole file, or null (reported). */
  private decode(abs: string, raw: Uint8Array): { body: Uint8Array; sha256: string } | null {
    let decoded: string;
    try {
      decoded = decoder.decode(raw);
    } catch {
      this.issue(abs, "unreadable", "not valid UTF-8");
      return null;
    }
    // The decoder keeps a BOM, so re-encoding gives back exactly the file's bytes.
    const sha256 = shortHash(decoded);
    const bom = raw[0] === 0xef && raw[1] === 0xbb && raw[2] === 0xbf;
    return { body: bom ? raw.subarray(3) : raw, sha256 };
  }

  /** `body` cut by the per-file cap, with the note to report when the part is kept. */
  private keep(body: Uint8Array): {
    bytes: Uint8Array;
    truncated: boolean;
    fileCap: string | null;
  } {
    const bytes = cutUtf8(body, this.o.maxFileBytes);
    const truncated = bytes.length < body.length;
    const fileCap = truncated
      ? `kept ${bytes.length} of ${body.length} bytes (maxFileBytes ${this.o.maxFileBytes})`
      : null;
    return { bytes, truncated, fileCap };
  }

  /** Visits the imports of a part's kept content in order of appearance, depth first. */
  private async followImports(
    v: Visit,
    content: string,
    self: { real: string; shown: string },
  ): Promise<void> {
    const imports = findImports(content);
    if (imports.length === 0) return;
    const stack = [...v.stack, self];
    const depth = v.depth + 1;
    for (const spec of imports) {
      const target = this.importTarget(spec, v.abs, self.shown);
      if (target === null) continue;
      if (depth > this.o.maxImportDepth) {
        this.issue(
          target,
          "depth_exceeded",
          `import depth ${depth} exceeds ${this.o.maxImportDepth} (from ${self.shown}); not read`,
        );
        continue;
      }
      await this.visit({ abs: target, depth, importedFrom: self.shown, stack, isImport: true });
    }
  }

  /** The absolute path an import names, or null for `~/…` without a home (reported). */
  private importTarget(spec: string, importer: string, shown: string): string | null {
    if (spec === "~" || spec.startsWith("~/")) {
      if (this.o.home === null) {
        this.issues.push({
          path: `~${spec.slice(1)}`,
          kind: "unresolved_import",
          detail: `no home directory given (from ${shown})`,
        });
        return null;
      }
      return resolve(this.o.home, `.${spec.slice(1)}`);
    }
    return resolve(dirname(importer), spec);
  }
}
