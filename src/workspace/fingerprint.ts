/**
 * What a loaded workspace depends on, as file-system signatures: every file it read and
 * every directory it listed or probed (a directory's signature changes when an entry is
 * added, removed or renamed in it), and for a path that was missing, the nearest
 * directory that would list it once created. Comparing signatures costs one `stat` per
 * path, and no read unless the path changed just before it was signed (a same-size edit
 * within one tick of the file clock leaves the stat alike: {@link RACY_WINDOW_MS}): a
 * workspace is reloaded only when one of them changed.
 */
import { createHash } from "node:crypto";
import {
  closeSync,
  constants,
  fstatSync,
  openSync,
  readdirSync,
  readFileSync,
  realpathSync,
  type Stats,
  statSync,
} from "node:fs";
import { dirname, isAbsolute, join } from "node:path";
import { nodeErrorCode } from "../errors/index.js";
import { isInside } from "../files/index.js";
import type { WorkspaceFiles } from "./files.js";

/**
 * What a path was: inode, size, modification and change times and mode of what it
 * points to, and the digest of its content when it was "racy" (below), or `!CODE` when
 * it cannot be stat'ed (`!ENOENT`: missing). Times are in milliseconds with
 * sub-microsecond fractions (half the cost of a bigint stat); kept as numbers, compared
 * as numbers (formatting them cost more than the comparison).
 */
export type Signature = string | readonly [number, number, number, number, number, string | null];

/** Path → signature. */
export type Signatures = ReadonlyMap<string, Signature>;

/**
 * How recently (ms, before the signature is taken) a path may have changed for its stat
 * alone to be doubted. File times have a granularity: the kernel stamps them from a coarse
 * clock (milliseconds), some filesystems keep 1 or 2 s, and the service's clock may drift
 * a little from the filesystem's. Two same-size writes within one tick leave every stat
 * field alike, so a path changed within this window is also signed by its content (a
 * file's bytes, a directory's sorted names) and compared by it until it is read again.
 * Anything older is safe on stat alone: a later write gets a later time.
 */
export const RACY_WINDOW_MS = 3000;

const NONBLOCK = constants.O_RDONLY | (constants.O_NONBLOCK ?? 0);

/**
 * The digest of a file's bytes or a directory's sorted entry names (null otherwise). The
 * file is opened without blocking and read only when the opened one is the regular file
 * that was stat'ed (a FIFO swapped in cannot stall the service).
 */
function digest(path: string, s: Stats): string | null {
  try {
    const h = createHash("sha256");
    if (s.isDirectory()) return h.update(readdirSync(path).sort().join("\u0000")).digest("base64");
    if (!s.isFile()) return null;
    const fd = openSync(path, NONBLOCK);
    try {
      const f = fstatSync(fd);
      if (!f.isFile() || f.ino !== s.ino) return "!swapped";
      return h.update(readFileSync(fd)).digest("base64");
    } finally {
      closeSync(fd);
    }
  } catch (err) {
    return `!${nodeErrorCode(err, "error")}`;
  }
}

/** How a signature is taken: see {@link signature}. */
export interface SignOptions {
  /** Now, on the clock of the file times (epoch ms); without it, stat alone. */
  nowMs?: number;
  /** Sign by content whatever the times (a signature taken before had a digest). */
  digested?: boolean;
  /**
   * A real directory: only a path whose real path lies inside it is ever read for a
   * digest. What lies outside a workspace is refused by its sources whatever it holds, so
   * its content never matters; it is not read.
   */
  within?: string;
}

function readable(path: string, within: string | undefined): boolean {
  if (within === undefined) return true;
  try {
    return isInside(within, realpathSync(path));
  } catch {
    return false;
  }
}

/**
 * A path's {@link Signature}, taken at `nowMs` (the clock of the file times): with the
 * content's digest when the path changed within {@link RACY_WINDOW_MS} of it, or when
 * `digested` (a signature taken before it had one: compare like with like), and it lies
 * `within` the directory given.
 */
export function signature(path: string, options: SignOptions = {}): Signature {
  return sign(path, options.nowMs, options.digested === true, options.within);
}

// Positional, so a check of every path allocates no options object per path.
function sign(
  path: string,
  nowMs: number | undefined,
  digested: boolean,
  within: string | undefined,
): Signature {
  try {
    const s = statSync(path, { throwIfNoEntry: false });
    if (s === undefined) return "!ENOENT";
    const racy = nowMs !== undefined && nowMs - Math.max(s.mtimeMs, s.ctimeMs) < RACY_WINDOW_MS;
    const sum = (racy || digested) && readable(path, within) ? digest(path, s) : null;
    return [s.ino, s.size, s.mtimeMs, s.ctimeMs, s.mode, sum];
  } catch (err) {
    return `!${nodeErrorCode(err, "error")}`;
  }
}

/** Whether two signatures are the same (a digest on one side only counts as a change). */
export function sameSignature(a: Signature, b: Signature): boolean {
  if (typeof a === "string" || typeof b === "string") return a === b;
  return (
    a[0] === b[0] &&
    a[1] === b[1] &&
    a[2] === b[2] &&
    a[3] === b[3] &&
    a[4] === b[4] &&
    a[5] === b[5]
  );
}

const digestedIn = (like: Signatures | undefined, p: string): boolean => {
  const was = like?.get(p);
  return was !== undefined && typeof was !== "string" && was[5] !== null;
};

/**
 * Signatures of `paths` (see {@link signature}); a path `like` signed by its content is
 * signed by its content again.
 */
export function signaturesOf(
  paths: Iterable<string>,
  options: Omit<SignOptions, "digested"> = {},
  like?: Signatures,
): Map<string, Signature> {
  const out = new Map<string, Signature>();
  for (const p of paths) {
    if (!out.has(p)) out.set(p, sign(p, options.nowMs, digestedIn(like, p), options.within));
  }
  return out;
}

/**
 * Whether every path still has the signature it had: one `stat` per path, plus one read
 * for each path signed by its content. When they all do, returns the signatures to keep:
 * a content-signed path whose times have meanwhile fallen out of {@link RACY_WINDOW_MS} of
 * `nowMs` (read before this check) is signed by stat alone from then on — a later write
 * gets a later time — so a freshly copied workspace is not read at every check.
 * Otherwise null.
 */
export function recheck(sigs: Signatures, nowMs?: number, within?: string): Signatures | null {
  let settled: Map<string, Signature> | null = null;
  for (const [path, sig] of sigs) {
    const digested = typeof sig !== "string" && sig[5] !== null;
    if (!sameSignature(sign(path, undefined, digested, within), sig)) return null;
    if (digested && nowMs !== undefined && nowMs - Math.max(sig[2], sig[3]) >= RACY_WINDOW_MS) {
      settled ??= new Map(sigs);
      settled.set(path, [sig[0], sig[1], sig[2], sig[3], sig[4], null]);
    }
  }
  return settled ?? sigs;
}

/** Whether every path still has the signature it had ({@link recheck}). */
export function unchanged(sigs: Signatures): boolean {
  return recheck(sigs) !== null;
}

/** `path`, and when it is missing, its ancestors up to the first that exists. */
function withAncestors(path: string, out: Set<string>): void {
  let p = path;
  for (;;) {
    out.add(p);
    if (typeof signature(p) !== "string") return;
    const parent = dirname(p);
    if (parent === p) return;
    p = parent;
  }
}

/** The entries of a directory (none when it cannot be listed). */
function entries(dir: string): string[] {
  try {
    return readdirSync(dir);
  } catch {
    return [];
  }
}

/** The directories the instruction walk probed: from its start up to the stop directory. */
function chainDirs(cwd: string, stopDir: string | null): string[] {
  const dirs: string[] = [];
  let dir = cwd;
  for (;;) {
    dirs.push(dir);
    if (dir === stopDir) return dirs;
    const parent = dirname(dir);
    if (parent === dir) return dirs;
    dir = parent;
  }
}

/** Every path whose signature stands for the workspace's files (see the module notes). */
export function watchedPaths(files: WorkspaceFiles, configPath: string): Set<string> {
  const out = new Set<string>();
  withAncestors(configPath, out);
  const { instructionOptions: walk, root } = files;
  for (const dir of chainDirs(walk.cwd, walk.stopDir ?? null)) withAncestors(dir, out);
  for (const part of files.instructions.parts) out.add(part.absolutePath);
  const shown = (p: string) => (isAbsolute(p) ? p : join(walk.stopDir ?? root, p));
  for (const issue of files.instructions.issues) {
    withAncestors(shown(issue.path), out);
    withAncestors(dirname(shown(issue.path)), out);
  }
  for (const f of walk.userFiles ?? []) withAncestors(f, out);
  for (const skillRoot of files.skillRoots) {
    withAncestors(skillRoot, out);
    for (const name of entries(skillRoot)) {
      out.add(join(skillRoot, name));
      out.add(join(skillRoot, name, "SKILL.md"));
    }
  }
  withAncestors(files.kbDir, out);
  for (const name of entries(files.kbDir)) {
    if (name.endsWith(".jsonl")) out.add(join(files.kbDir, name));
  }
  return out;
}
