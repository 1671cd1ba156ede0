/**
 * The walk over instruction files (docs/sources.md): probes each path, reads and caps the file,
 * records it as a part or an issue, and follows its `@imports` depth first. The rules are
 * documented in `instructions.ts`.
 */
import type { Stats } from "node:fs";
import { lstat, readFile, realpath, stat } from "node:fs/promises";
import { dirname, join, relative, resolve, sep } from "node:path";
import { shortHash } from "../cache/index.js";
import { nodeErrorCode } from "../errors/index.js";
import { findImports } from "../text/index.js";
import { cutUtf8 } from "./instruction-cap.js";
import { isSelfOrAncestor, type Resolved } from "./instruction-options.js";
import type {
  InstructionIssue,
  InstructionIssueKind,
  InstructionPart,
} from "./instruction-parts.js";

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

const ERRNO_TEXT: Readonly<Record<string, string>> = {
  EACCES: "permission denied",
  EPERM: "operation not permitted",
  EISDIR: "is a directory",
  EIO: "I/O error",
  EMFILE: "too many open files",
  ENAMETOOLONG: "name too long",
};

function errnoDetail(code: string): string {
  const text = ERRNO_TEXT[code];
  return text === undefined ? code : `${code}: ${text}`;
}

// ---------------------------------------------------------------------------------------
// confinement

/**
 * Where instruction files may be read from: the walk's root (the workspace) and the
 * directory of each configured user-level file, as written (`lexical`, checked before a
 * file is touched) and with symlinks resolved (`real`, checked on the file's real path).
 * A user file's real directory counts too (a `~/.claude/CLAUDE.md` linked into dotfiles).
 */
export interface AllowedRoots {
  lexical: string[];
  real: string[];
}

async function realOr(p: string): Promise<string | null> {
  try {
    return await realpath(p);
  } catch {
    return null;
  }
}

/** The allowed roots for a walk rooted at `root` with these user files. */
export async function allowedRoots(
  root: string,
  userFiles: readonly string[],
): Promise<AllowedRoots> {
  const lexical = [root, ...userFiles.map((f) => dirname(f))];
  const real: string[] = [];
  for (const dir of lexical) real.push((await realOr(dir)) ?? dir);
  for (const f of userFiles) {
    const r = await realOr(f);
    if (r !== null) real.push(dirname(r));
  }
  return { lexical, real };
}

const insideAny = (roots: readonly string[], p: string) =>
  roots.some((r) => isSelfOrAncestor(r, p));

// ---------------------------------------------------------------------------------------
// UTF-8

const decoder = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true });

// ---------------------------------------------------------------------------------------
// the walk

type Probe =
  | { ok: true; real: string }
  | { ok: false; missing: true }
  | { ok: false; missing: false; kind: InstructionIssueKind; detail: string };

/** Follows `p` to a regular file, or says why not. */
async function probe(p: string): Promise<Probe> {
  let link: Stats;
  try {
    link = await lstat(p);
  } catch (err) {
    const code = nodeErrorCode(err, "EUNKNOWN");
    if (code === "ENOENT" || code === "ENOTDIR") return { ok: false, missing: true };
    if (code === "ELOOP") return loop();
    return { ok: false, missing: false, kind: "unreadable", detail: errnoDetail(code) };
  }
  let st: Stats = link;
  if (link.isSymbolicLink()) {
    try {
      st = await stat(p);
    } catch (err) {
      const code = nodeErrorCode(err, "EUNKNOWN");
      if (code === "ELOOP") return loop();
      if (code === "ENOENT" || code === "ENOTDIR") {
        return { ok: false, missing: false, kind: "unreadable", detail: "dangling symlink" };
      }
      return { ok: false, missing: false, kind: "unreadable", detail: errnoDetail(code) };
    }
  }
  if (!st.isFile()) {
    const what = st.isDirectory() ? "a directory" : "not a regular file";
    return { ok: false, missing: false, kind: "not_a_file", detail: what };
  }
  try {
    return { ok: true, real: await realpath(p) };
  } catch (err) {
    const code = nodeErrorCode(err, "EUNKNOWN");
    if (code === "ELOOP") return loop();
    return { ok: false, missing: false, kind: "unreadable", detail: errnoDetail(code) };
  }
}

function loop(): Probe {
  return { ok: false, missing: false, kind: "symlink_loop", detail: "too many levels of symlinks" };
}

interface Visit {
  abs: string;
  depth: number;
  importedFrom: string | null;
  /** Real paths of the importers, outermost first, with their shown paths. */
  stack: ReadonlyArray<{ real: string; shown: string }>;
  /** A missing chain file is skipped silently; a missing import is reported. */
  isImport: boolean;
  /** A user-level file the caller configured: read wherever its real path is. */
  configured?: boolean;
}

const OUTSIDE = "outside the workspace root and the user-level instruction directories";

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
    private readonly allowed: AllowedRoots,
    private readonly signal: AbortSignal | undefined,
  ) {}

  shown(abs: string): string {
    if (isSelfOrAncestor(this.root, abs)) {
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
    const real = await this.admit(v, shown);
    if (real === null) return;
    const file = await this.read(v.abs);
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
    await this.followImports(v, content, { real, shown });
  }

  /**
   * The real path of `v` when it is a regular file inside the allowed roots, not on the
   * import stack and not seen before; else reports why (a missing chain file silently)
   * and returns null.
   */
  private async admit(v: Visit, shown: string): Promise<string | null> {
    if (v.configured !== true && !insideAny(this.allowed.lexical, v.abs)) {
      const from = v.importedFrom === null ? "" : ` (from ${v.importedFrom})`;
      this.issue(v.abs, "outside_root", `${OUTSIDE}${from}; not read`);
      return null;
    }
    const p = await probe(v.abs);
    if (p.ok && v.configured !== true && !insideAny(this.allowed.real, p.real)) {
      this.issue(v.abs, "outside_root", `real path (symlinks resolved) is ${OUTSIDE}; not read`);
      return null;
    }
    if (!p.ok) {
      if (!p.missing) this.issue(v.abs, p.kind, p.detail);
      else if (v.isImport) {
        this.issue(v.abs, "unresolved_import", `no such file (from ${v.importedFrom})`);
      }
      return null;
    }
    const onStack = v.stack.findIndex((s) => s.real === p.real);
    if (onStack >= 0) {
      const chain = [...v.stack.slice(onStack).map((s) => s.shown), shown].join(" → ");
      this.issue(v.abs, "cycle", `import cycle ${chain}; not followed`);
      return null;
    }
    const first = this.#seen.get(p.real);
    if (first !== undefined) {
      this.issue(v.abs, "duplicate", `same file as ${first}; skipped`);
      return null;
    }
    this.#seen.set(p.real, shown);
    return p.real;
  }

  /** The file's bytes without a leading BOM and the hash of the whole file, or null (reported). */
  private async read(abs: string): Promise<{ body: Uint8Array; sha256: string } | null> {
    let raw: Uint8Array;
    try {
      raw = await readFile(abs);
    } catch (err) {
      const code = nodeErrorCode(err, "EUNKNOWN");
      this.issue(abs, code === "ELOOP" ? "symlink_loop" : "unreadable", errnoDetail(code));
      return null;
    }
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
