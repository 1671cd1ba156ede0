/**
 * The project instruction-file chain of spec 06 (AGENTS.md / CLAUDE.md): user-level files,
 * then every directory from the stop directory down to the working directory, each file
 * followed by the files it `@imports`. I/O happens here, at the edge, but the result is a
 * pure function of the filesystem: every path is a parameter (never the process working
 * directory or home), files are visited in a fixed order, and nothing is read twice.
 *
 * Choices (documented once, relied on by tests):
 *
 * - **Order.** `userFiles` in the given order (farthest first), then the directories from
 *   `stopDir` down to `cwd`; in each directory the configured `fileNames` in order. When
 *   `AGENTS.md` is configured and a directory holds an entry named `AGENTS.override.md`
 *   (any entry, even a broken link, which is then reported), the override takes
 *   `AGENTS.md`'s place and `AGENTS.md` is not read. Missing files are skipped silently.
 * - **Imports.** A token is an import when it starts with `@` at the start of a line or
 *   after whitespace, outside inline code spans and fenced code blocks (``` or ~~~), and
 *   the rest (up to the next whitespace, minus trailing `.,;:!?)]}>"'`) looks like a
 *   file path: it starts with `~/`, contains a `/`, or ends in an extension (`.md`,
 *   `.txt`, …). So `@docs/style.md`, `@./x.md` and `@~/notes.md` are imports, while
 *   `@alice`, `user@host.com` and `` `@x.md` `` are not. Paths resolve against the
 *   directory of the importing file as it was reached (its lexical path, not its real
 *   path); `@~/` resolves against `home` (without it: `unresolved_import`). An imported
 *   file becomes its own part right after its importer's part (depth-first, imports in
 *   order of appearance), so `A` importing `B` and `D`, with `B` importing `C`, gives
 *   `A, B, C, D`. The importing file's text is kept as written (the `@` line stays).
 *   Only the kept content of a truncated file is scanned for imports.
 * - **Depth.** Chain files have depth 0; a file imported by a depth-`d` file has depth
 *   `d + 1`. Depth `maxImportDepth` is included; one more is reported `depth_exceeded`
 *   without touching the file.
 * - **Identity.** Files are identified by real path. A file whose real path is on the
 *   current import stack is a `cycle` (not followed); one already included elsewhere is a
 *   `duplicate` (skipped, the first occurrence wins).
 * - **Caps.** `bytes` is the UTF-8 size of the kept `content` (a leading BOM is dropped);
 *   `sha256` is the first 16 hex digits of the SHA-256 of the whole file's bytes (so it
 *   names the file version even when the content was cut). A file over `maxFileBytes` is
 *   cut at the last UTF-8 character boundary at or before the cap (`truncated`, plus a
 *   `file_cap` issue). The total cap counts kept content bytes in chain order: the first
 *   part that does not fit is cut the same way to the room left (dropped when none is
 *   left), and every later file found is dropped unread; each gets a `total_cap` issue.
 *   Nearer files come last, so they are the ones a total cap drops.
 * - **Failures** are issues, never errors: `unreadable` (permission, dangling link,
 *   invalid UTF-8, other I/O errors), `not_a_file` (a directory or device by that name),
 *   `symlink_loop` (ELOOP, which the OS reports at once, so nothing hangs). Only invalid
 *   options throw ({@link InvalidInputError}).
 * - **Paths.** `path` in parts and issues is relative to `stopDir` (with `/`) when the
 *   file lies inside it, else absolute; `absolutePath` is always absolute.
 * - **Text.** Each part is rendered as `<!-- file: PATH -->` (or
 *   `<!-- file: PATH (truncated) -->`) on its own line followed by the content, ending
 *   in a newline; parts are separated by one blank line.
 */
import type { Stats } from "node:fs";
import { lstat, readFile, realpath, stat } from "node:fs/promises";
import { dirname, isAbsolute, join, relative, resolve, sep } from "node:path";
import { z } from "zod";
import { shortHash } from "../cache/index.js";
import { InvalidInputError, invalidFromZod } from "../errors/index.js";
import { isBlank } from "../text/index.js";
import type { ContextSource, SourceItem } from "./types.js";

/** Default instruction file names, read in this order in each directory. */
export const DEFAULT_INSTRUCTION_FILE_NAMES: readonly string[] = [
  "AGENTS.md",
  "CLAUDE.md",
  "CLAUDE.local.md",
];
/** The file that replaces `AGENTS.md` in the same directory when present. */
export const AGENTS_OVERRIDE_FILE = "AGENTS.override.md";
/** Default per-file cap in bytes (16 KiB). */
export const DEFAULT_MAX_FILE_BYTES = 16 * 1024;
/** Default total cap in bytes (32 KiB). */
export const DEFAULT_MAX_TOTAL_BYTES = 32 * 1024;
/** Default maximum import depth. */
export const DEFAULT_MAX_IMPORT_DEPTH = 4;

export interface InstructionChainOptions {
  /** Absolute directory where the walk starts (nearest, read last). */
  cwd: string;
  /**
   * Absolute directory where the walk stops (farthest, read first); `cwd` or one of its
   * ancestors. Default: the nearest ancestor-or-self of `cwd` holding a `.git` entry,
   * else the filesystem root.
   */
  stopDir?: string;
  /** Absolute user-level files, farthest first; read before the directory chain. */
  userFiles?: string[];
  /** Absolute home directory for `@~/…` imports; without it they are unresolved. */
  home?: string;
  /** File names per directory, in order. Default `AGENTS.md`, `CLAUDE.md`, `CLAUDE.local.md`. */
  fileNames?: string[];
  /** Per-file cap on kept content bytes. Default 16 KiB. */
  maxFileBytes?: number;
  /** Cap on the total kept content bytes. Default 32 KiB. */
  maxTotalBytes?: number;
  /** Deepest import level included. Default 4. */
  maxImportDepth?: number;
}

/** One file of the chain, with its provenance. */
export interface InstructionPart {
  /** Relative to `stopDir` (with `/`) when inside it, else absolute. */
  path: string;
  /** The lexical absolute path the file was reached by. */
  absolutePath: string;
  /** First 16 hex digits of the SHA-256 of the file's bytes (the whole file). */
  sha256: string;
  /** UTF-8 bytes of `content`. */
  bytes: number;
  /** The kept text (BOM dropped; cut at a character boundary when `truncated`). */
  content: string;
  /** `path` of the importing file, `null` for chain files. */
  importedFrom: string | null;
  /** 0 for chain files, import depth otherwise. */
  depth: number;
  /** Whether `content` was cut by the per-file or the total cap. */
  truncated: boolean;
}

export type InstructionIssueKind =
  | "unreadable"
  | "cycle"
  | "depth_exceeded"
  | "file_cap"
  | "total_cap"
  | "symlink_loop"
  | "unresolved_import"
  | "not_a_file"
  | "duplicate";

/** Something that kept (part of) a file out of the chain. Never fatal. */
export interface InstructionIssue {
  /** The file concerned, shown like {@link InstructionPart.path}. */
  path: string;
  kind: InstructionIssueKind;
  detail: string;
}

export interface InstructionChain {
  /** Farthest first, each import right after its importer. */
  parts: InstructionPart[];
  /** In the order met. */
  issues: InstructionIssue[];
  /** The parts rendered with file headers (see the module notes). */
  text: string;
  /** Sum of the parts' `bytes`. */
  totalBytes: number;
}

// ---------------------------------------------------------------------------------------
// options

const absolutePath = z
  .string()
  .refine((p) => p.length > 0 && isAbsolute(p), { message: "must be an absolute path" });
const byteCount = z.number().int().min(0);
const fileName = z
  .string()
  .refine((n) => !isBlank(n) && !n.includes("/") && !n.includes("\\") && n !== "." && n !== "..", {
    message: "must be a plain file name",
  });

const OptionsSchema = z.object({
  cwd: absolutePath,
  stopDir: absolutePath.optional(),
  userFiles: z.array(absolutePath).optional(),
  home: absolutePath.optional(),
  fileNames: z.array(fileName).optional(),
  maxFileBytes: byteCount.optional(),
  maxTotalBytes: byteCount.optional(),
  maxImportDepth: byteCount.optional(),
});

interface Resolved {
  cwd: string;
  stopDir: string | null;
  userFiles: string[];
  home: string | null;
  fileNames: string[];
  maxFileBytes: number;
  maxTotalBytes: number;
  maxImportDepth: number;
}

function resolveOptions(options: InstructionChainOptions): Resolved {
  const r = OptionsSchema.safeParse(options);
  if (!r.success) throw invalidFromZod(r.error, ["options"]);
  const o = r.data;
  const fileNames = o.fileNames ?? [...DEFAULT_INSTRUCTION_FILE_NAMES];
  const seen = new Set<string>();
  fileNames.forEach((n, i) => {
    if (seen.has(n)) {
      throw new InvalidInputError(`duplicate file name "${n}"`, ["options", "fileNames", i]);
    }
    seen.add(n);
  });
  const cwd = resolve(o.cwd);
  const stopDir = o.stopDir === undefined ? null : resolve(o.stopDir);
  if (stopDir !== null && !isSelfOrAncestor(stopDir, cwd)) {
    throw new InvalidInputError("stopDir must be cwd or one of its ancestors", [
      "options",
      "stopDir",
    ]);
  }
  return {
    cwd,
    stopDir,
    userFiles: (o.userFiles ?? []).map((p) => resolve(p)),
    home: o.home === undefined ? null : resolve(o.home),
    fileNames,
    maxFileBytes: o.maxFileBytes ?? DEFAULT_MAX_FILE_BYTES,
    maxTotalBytes: o.maxTotalBytes ?? DEFAULT_MAX_TOTAL_BYTES,
    maxImportDepth: o.maxImportDepth ?? DEFAULT_MAX_IMPORT_DEPTH,
  };
}

function isSelfOrAncestor(dir: string, p: string): boolean {
  const rel = relative(dir, p);
  return rel === "" || (!rel.startsWith("..") && !isAbsolute(rel));
}

// ---------------------------------------------------------------------------------------
// filesystem helpers

function errCode(err: unknown): string {
  if (typeof err === "object" && err !== null && "code" in err) {
    const code = (err as { code: unknown }).code;
    if (typeof code === "string") return code;
  }
  return "EUNKNOWN";
}

/** An entry exists at `p` (not following a final symlink). */
async function entryExists(p: string): Promise<boolean> {
  try {
    await lstat(p);
    return true;
  } catch (err) {
    const code = errCode(err);
    // Missing entries and non-directory components are "not there"; anything else (a
    // permission error, a loop in a parent link) means something is there to report.
    return code !== "ENOENT" && code !== "ENOTDIR";
  }
}

/** Directories from `stopDir` down to `cwd`, farthest first. */
async function chainDirs(cwd: string, stopDir: string | null): Promise<string[]> {
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
// UTF-8

const decoder = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true });

/** Longest prefix of valid UTF-8 `bytes` at most `max` bytes long, ending on a boundary. */
function cutUtf8(bytes: Uint8Array, max: number): Uint8Array {
  if (bytes.length <= max) return bytes;
  let n = max;
  // Back up over continuation bytes (10xxxxxx) so the cut never splits a code point.
  while (n > 0 && ((bytes[n] as number) & 0xc0) === 0x80) n--;
  return bytes.subarray(0, n);
}

// ---------------------------------------------------------------------------------------
// imports

const FENCE_OPEN = /^ {0,3}(`{3,}|~{3,})(.*)$/s; // s: the info string may end in \r
const FENCE_CLOSE = /^ {0,3}(`{3,}|~{3,})[ \t\r]*$/;

/**
 * `text` with fenced code blocks and inline code spans blanked out (every masked code
 * unit but `\n` becomes U+0000), so offsets stay the same.
 */
export function maskMarkdownCode(text: string): string {
  const lines = text.split("\n");
  const out: string[] = [];
  let paragraph: string[] = [];
  let fence: { char: string; len: number } | null = null;
  const flush = () => {
    if (paragraph.length > 0) out.push(...maskInlineCode(paragraph.join("\n")).split("\n"));
    paragraph = [];
  };
  for (const line of lines) {
    if (fence !== null) {
      const m = FENCE_CLOSE.exec(line);
      const run = m?.[1];
      if (run !== undefined && run[0] === fence.char && run.length >= fence.len) fence = null;
      out.push(blank(line));
      continue;
    }
    const m = FENCE_OPEN.exec(line);
    const run = m?.[1];
    if (run !== undefined && !(run[0] === "`" && (m?.[2] ?? "").includes("`"))) {
      flush();
      fence = { char: run[0] as string, len: run.length };
      out.push(blank(line));
      continue;
    }
    if (isBlank(line)) {
      flush();
      out.push(line);
      continue;
    }
    paragraph.push(line);
  }
  flush();
  return out.join("\n");
}

// Masked code becomes NUL, which is neither whitespace nor part of a token, so code can
// neither hold an import nor start one (`x`@a.md is not an import).
function blank(s: string): string {
  return s.replace(/[^\n]/g, "\u0000");
}

function backtickRun(s: string, i: number): number {
  let j = i;
  while (j < s.length && s[j] === "`") j++;
  return j - i;
}

/** Blanks CommonMark code spans: a run of n backticks up to the next run of exactly n. */
function maskInlineCode(s: string): string {
  let out = "";
  let i = 0;
  while (i < s.length) {
    const c = s[i];
    if (c === "\\" && s[i + 1] === "`") {
      out += "\\`";
      i += 2;
      continue;
    }
    if (c !== "`") {
      out += c;
      i++;
      continue;
    }
    const n = backtickRun(s, i);
    let j = i + n;
    let close = -1;
    while (j < s.length) {
      if (s[j] === "`") {
        const m = backtickRun(s, j);
        if (m === n) {
          close = j + m;
          break;
        }
        j += m;
      } else j++;
    }
    if (close < 0) {
      // No closing run: the backticks are literal text.
      out += s.slice(i, i + n);
      i += n;
    } else {
      out += blank(s.slice(i, close));
      i = close;
    }
  }
  return out;
}

const IMPORT_TOKEN = /(?:^|\s)@([^\s\u0000]+)/gu;
const TRAILING_PUNCT = /[.,;:!?)\]}>"']+$/u;
const HAS_EXTENSION = /\.[A-Za-z0-9_-]+$/u;

/**
 * The `@` import paths of a Markdown text, in order of appearance (see the module notes
 * for the rule).
 *
 * @example findImports("see @docs/a.md and `@b.md`, mail me@x.org") // ["docs/a.md"]
 */
export function findImports(text: string): string[] {
  const masked = maskMarkdownCode(text);
  const found: string[] = [];
  for (const m of masked.matchAll(IMPORT_TOKEN)) {
    const raw = (m[1] as string).replace(TRAILING_PUNCT, "");
    if (raw === "" || raw.startsWith("@")) continue;
    if (raw === "~" || raw.startsWith("~/") || raw.includes("/") || HAS_EXTENSION.test(raw)) {
      found.push(raw);
    }
  }
  return found;
}

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
    const code = errCode(err);
    if (code === "ENOENT" || code === "ENOTDIR") return { ok: false, missing: true };
    if (code === "ELOOP") return loop();
    return { ok: false, missing: false, kind: "unreadable", detail: errnoDetail(code) };
  }
  let st: Stats = link;
  if (link.isSymbolicLink()) {
    try {
      st = await stat(p);
    } catch (err) {
      const code = errCode(err);
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
    const code = errCode(err);
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
}

class Walker {
  readonly parts: InstructionPart[] = [];
  readonly issues: InstructionIssue[] = [];
  readonly #seen = new Map<string, string>();
  #total = 0;
  #capHit = false;

  constructor(
    private readonly o: Resolved,
    private readonly root: string,
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

  async visit(v: Visit): Promise<void> {
    this.signal?.throwIfAborted();
    const shown = this.shown(v.abs);
    const p = await probe(v.abs);
    if (!p.ok) {
      if (p.missing) {
        if (v.isImport)
          this.issue(v.abs, "unresolved_import", `no such file (from ${v.importedFrom})`);
        return;
      }
      this.issue(v.abs, p.kind, p.detail);
      return;
    }
    const onStack = v.stack.findIndex((s) => s.real === p.real);
    if (onStack >= 0) {
      const chain = [...v.stack.slice(onStack).map((s) => s.shown), shown].join(" → ");
      this.issue(v.abs, "cycle", `import cycle ${chain}; not followed`);
      return;
    }
    const first = this.#seen.get(p.real);
    if (first !== undefined) {
      this.issue(v.abs, "duplicate", `same file as ${first}; skipped`);
      return;
    }
    this.#seen.set(p.real, shown);
    if (this.#capHit) {
      this.issue(v.abs, "total_cap", `dropped: total cap of ${this.o.maxTotalBytes} bytes reached`);
      return;
    }

    let raw: Uint8Array;
    try {
      raw = await readFile(v.abs);
    } catch (err) {
      const code = errCode(err);
      this.issue(v.abs, code === "ELOOP" ? "symlink_loop" : "unreadable", errnoDetail(code));
      return;
    }
    let decoded: string;
    try {
      decoded = decoder.decode(raw);
    } catch {
      this.issue(v.abs, "unreadable", "not valid UTF-8");
      return;
    }
    // The decoder keeps a BOM, so re-encoding gives back exactly the file's bytes.
    const sha256 = shortHash(decoded);
    let body = raw;
    if (raw[0] === 0xef && raw[1] === 0xbb && raw[2] === 0xbf) body = raw.subarray(3);

    const fileKept = cutUtf8(body, this.o.maxFileBytes);
    const room = this.o.maxTotalBytes - this.#total;
    const kept = cutUtf8(fileKept, room);
    if (kept.length < fileKept.length) this.#capHit = true; // every later file is dropped
    if (kept.length === 0 && fileKept.length > 0) {
      this.issue(v.abs, "total_cap", `dropped: total cap of ${this.o.maxTotalBytes} bytes reached`);
      return;
    }
    if (fileKept.length < body.length) {
      this.issue(
        v.abs,
        "file_cap",
        `kept ${fileKept.length} of ${body.length} bytes (maxFileBytes ${this.o.maxFileBytes})`,
      );
    }
    if (kept.length < fileKept.length) {
      this.issue(
        v.abs,
        "total_cap",
        `kept ${kept.length} of ${fileKept.length} bytes (maxTotalBytes ${this.o.maxTotalBytes})`,
      );
    }
    const truncated = kept.length < body.length;
    const content = decoder.decode(kept);
    this.#total += kept.length;
    this.parts.push({
      path: shown,
      absolutePath: v.abs,
      sha256,
      bytes: kept.length,
      content,
      importedFrom: v.importedFrom,
      depth: v.depth,
      truncated,
    });

    const imports = findImports(content);
    if (imports.length === 0) return;
    const stack = [...v.stack, { real: p.real, shown }];
    for (const spec of imports) {
      const depth = v.depth + 1;
      let target: string;
      if (spec === "~" || spec.startsWith("~/")) {
        if (this.o.home === null) {
          this.issues.push({
            path: `~${spec.slice(1)}`,
            kind: "unresolved_import",
            detail: `no home directory given (from ${shown})`,
          });
          continue;
        }
        target = resolve(this.o.home, `.${spec.slice(1)}`);
      } else {
        target = resolve(dirname(v.abs), spec);
      }
      if (depth > this.o.maxImportDepth) {
        this.issue(
          target,
          "depth_exceeded",
          `import depth ${depth} exceeds ${this.o.maxImportDepth} (from ${shown}); not read`,
        );
        continue;
      }
      await this.visit({ abs: target, depth, importedFrom: shown, stack, isImport: true });
    }
  }
}

function headerPath(p: string): string {
  // Keep the header one well-formed comment line whatever the file name holds.
  return p.replace(/[\u0000-\u001f\u007f]/g, "?").replaceAll("-->", "--&gt;");
}

/** The chain's `text`: each part under a `<!-- file: PATH -->` line, blank-line separated. */
export function renderInstructionChain(parts: readonly InstructionPart[]): string {
  return parts
    .map((p) => {
      const head = `<!-- file: ${headerPath(p.path)}${p.truncated ? " (truncated)" : ""} -->\n`;
      const body = p.content === "" || p.content.endsWith("\n") ? p.content : `${p.content}\n`;
      return head + body;
    })
    .join("\n");
}

/**
 * Loads the instruction-file chain (spec 06). Never fails on file problems (they become
 * `issues`); throws {@link InvalidInputError} on invalid options, and the signal's reason
 * when `signal` aborts.
 *
 * @example
 * const chain = await loadInstructionChain({ cwd: "/repo/pkg", stopDir: "/repo" });
 * chain.parts.map((p) => p.path) // ["AGENTS.md", "pkg/AGENTS.md"]
 */
export async function loadInstructionChain(
  options: InstructionChainOptions,
  signal?: AbortSignal,
): Promise<InstructionChain> {
  const o = resolveOptions(options);
  signal?.throwIfAborted();
  const dirs = await chainDirs(o.cwd, o.stopDir);
  const root = dirs[0] as string;
  const walker = new Walker(o, root, signal);
  const top = { depth: 0, importedFrom: null, stack: [], isImport: false } as const;
  for (const abs of o.userFiles) await walker.visit({ ...top, abs });
  for (const dir of dirs) {
    for (const name of o.fileNames) {
      let abs = join(dir, name);
      if (name === "AGENTS.md" && (await entryExists(join(dir, AGENTS_OVERRIDE_FILE)))) {
        abs = join(dir, AGENTS_OVERRIDE_FILE);
      }
      await walker.visit({ ...top, abs });
    }
  }
  const parts = walker.parts;
  return {
    parts,
    issues: walker.issues,
    text: renderInstructionChain(parts),
    totalBytes: parts.reduce((n, p) => n + p.bytes, 0),
  };
}

/**
 * The chain as a source of kind `instructions`, loaded at each fetch: one item per part
 * with non-blank content, in chain order — id = the part's `path`, text = its content,
 * `sourceRef` = `PATH#SHA256`, `rank` = position, category `user`/`project`/`import`
 * (user file, directory file, imported file), tag `truncated` when cut. Issues are not
 * items; read them with {@link loadInstructionChain}. Options are validated when built.
 *
 * @example instructionsSource({ cwd: "/repo/pkg", stopDir: "/repo" })
 */
export function instructionsSource(
  options: InstructionChainOptions,
  id = "instructions",
): ContextSource {
  if (typeof id !== "string" || isBlank(id)) {
    throw new InvalidInputError("source id must not be blank", "id");
  }
  resolveOptions(options);
  const frozen: InstructionChainOptions = {
    ...options,
    userFiles: options.userFiles === undefined ? undefined : [...options.userFiles],
    fileNames: options.fileNames === undefined ? undefined : [...options.fileNames],
  };
  const userFiles = new Set((frozen.userFiles ?? []).map((p) => resolve(p)));
  return {
    id,
    supports: (kind) => kind === "instructions",
    fetch: async (slot, _query, signal) => {
      if (slot.kind !== "instructions") return [];
      const chain = await loadInstructionChain(frozen, signal);
      return instructionItems(chain, userFiles);
    },
  };
}

/**
 * The items of an already-loaded chain (see {@link instructionsSource} for their shape);
 * `userFiles` are the absolute paths of user-level files.
 */
export function instructionItems(
  chain: InstructionChain,
  userFiles: ReadonlySet<string> = new Set(),
): SourceItem[] {
  const items: SourceItem[] = [];
  for (const part of chain.parts) {
    if (isBlank(part.content)) continue;
    const item: SourceItem = {
      id: part.path,
      text: part.content,
      sourceRef: `${part.path}#${part.sha256}`,
      rank: items.length,
      category:
        part.importedFrom !== null
          ? "import"
          : userFiles.has(part.absolutePath)
            ? "user"
            : "project",
    };
    if (part.truncated) item.tags = ["truncated"];
    items.push(item);
  }
  return items;
}

/**
 * A source over a chain loaded once (e.g. a workspace assembly that also reports the
 * chain's issues), so the files are not read twice.
 *
 * @example instructionChainSource(await loadInstructionChain(options))
 */
export function instructionChainSource(
  chain: InstructionChain,
  userFiles: readonly string[] = [],
  id = "instructions",
): ContextSource {
  const items = instructionItems(chain, new Set(userFiles.map((p) => resolve(p))));
  return {
    id,
    supports: (kind) => kind === "instructions",
    fetch: (slot) => (slot.kind === "instructions" ? items.map((i) => ({ ...i })) : []),
  };
}
