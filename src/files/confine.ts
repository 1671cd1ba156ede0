/**
 * Confinement: the one rule by which every source reads a file or lists a directory
 * (instruction files and their imports, user-level files, skills, KB files, a
 * workspace's config and default store, the files a recording names, a service's
 * workspace). A path is read only when it lies inside one of
 * the allowed roots both as written and with every symlink resolved, and the file that is
 * actually opened is checked again after the open, so a link swapped in between cannot
 * lead out. Everything else — missing, dangling, looping, outside, swapped — is one and the
 * same refusal ({@link REFUSED}): no answer says whether something exists outside the
 * roots, and nothing outside is ever opened for reading.
 *
 * How a swap is defeated: the check resolves the path (`realpath`) and compares the real
 * path with the roots' real paths; the open then takes that real path with `O_NOFOLLOW`
 * (a final component turned into a link fails) and `O_NONBLOCK` (a FIFO cannot block);
 * finally the kernel is asked where the opened descriptor really is
 * (`readlink /proc/self/fd/N`), and that path must be inside the roots too. A directory
 * swapped for a link anywhere on the way is thus caught: the descriptor names what was
 * opened, whatever the path said. Where `/proc` is missing (not Linux), the opened file's
 * device and inode must equal those of the real path resolved again after the open (a
 * narrower window: a swap out and back between those two calls is not seen). Listing a
 * directory reads the opened descriptor itself (`/proc/self/fd/N`), not the path again.
 */
import { constants, existsSync, type Stats } from "node:fs";
import { type FileHandle, lstat, open, readdir, readlink, realpath } from "node:fs/promises";
import { basename, dirname, isAbsolute, join, relative, resolve } from "node:path";
import { type FieldPath, formatPath, PromptctxError } from "../errors/index.js";

/** The one reason code of a refused path, in issues and in errors alike. */
export const PATH_REFUSED = "path_refused";

/** The one text of a refusal: the same for a missing path and for one outside the roots. */
export const REFUSED = "missing, or outside the allowed roots; not read";

/**
 * A path that is missing or outside the allowed roots, thrown where a caller named it
 * (a recording's `userFiles`, a service request's `workspace`). Code `path_refused`;
 * the message names the field, never what lies (or does not) at the path.
 *
 * @example throw new PathRefusedError(["request", "userFiles", 0]);
 */
export class PathRefusedError extends PromptctxError {
  constructor(path: FieldPath | string) {
    super(PATH_REFUSED, `${typeof path === "string" ? path : formatPath(path)}: ${REFUSED}`, path);
    this.name = "PathRefusedError";
  }
}

/** Allowed roots, as written (absolute) and resolved: build them with {@link confinedRoots}. */
export interface Roots {
  readonly lexical: readonly string[];
  readonly real: readonly string[];
}

/** Test hooks: `beforeOpen` runs between the check and the open (to swap a link there). */
export interface ConfineHooks {
  beforeOpen?: (real: string) => void | Promise<void>;
}

/**
 * `p` is `dir` or lies inside it, lexically (both absolute): the one "inside" test of the
 * package.
 *
 * @example isInside("/repo", "/repo/a/b.md") // true; isInside("/repo", "/repo-x") // false
 */
export function isInside(dir: string, p: string): boolean {
  const rel = relative(dir, p);
  return (
    rel === "" ||
    (rel !== ".." && !rel.startsWith("../") && !rel.startsWith("..\\") && !isAbsolute(rel))
  );
}

/** `p` lies inside one of `roots` (lexically). */
export const insideAny = (roots: readonly string[], p: string) => roots.some((r) => isInside(r, p));

async function realOrNull(p: string): Promise<string | null> {
  try {
    return await realpath(p);
  } catch {
    return null;
  }
}

/**
 * The allowed roots: each directory as written (made absolute) and resolved. A root that
 * does not resolve adds no real root: nothing can be inside it.
 *
 * @example const roots = await confinedRoots(["/repo"]);
 */
export async function confinedRoots(dirs: readonly string[]): Promise<Roots> {
  const lexical = dirs.map((d) => resolve(d));
  const real: string[] = [];
  for (const d of lexical) {
    const r = await realOrNull(d);
    if (r !== null && !real.includes(r)) real.push(r);
  }
  return { lexical, real };
}

/** The real path of `path` when it is inside the roots as written and resolved, else null. */
async function checked(path: string, roots: Roots): Promise<string | null> {
  const abs = resolve(path);
  if (!insideAny(roots.lexical, abs) && !insideAny(roots.real, abs)) return null;
  const real = await realOrNull(abs);
  return real !== null && insideAny(roots.real, real) ? real : null;
}

/**
 * Whether the kernel names open descriptors (`/proc/self/fd`, Linux): read once at load,
 * a fact of the machine, never changed after.
 */
export const PROC_FD = existsSync("/proc/self/fd");

/** Where the kernel says the descriptor is, or null without `/proc` (or when it cannot say). */
async function descriptorPath(handle: FileHandle): Promise<string | null> {
  if (!PROC_FD) return null;
  try {
    return await readlink(`/proc/self/fd/${handle.fd}`);
  } catch {
    return null;
  }
}

/** The opened descriptor is the file at `real`, inside the roots (see the module notes). */
export async function verified(
  handle: FileHandle,
  real: string,
  roots: Roots,
): Promise<Stats | null> {
  const stats = await handle.stat();
  const at = await descriptorPath(handle);
  if (at !== null) return insideAny(roots.real, at) ? stats : null;
  if (PROC_FD) return null;
  const again = await realOrNull(real);
  if (again !== real) return null;
  try {
    const now = await lstat(real);
    return now.dev === stats.dev && now.ino === stats.ino ? stats : null;
  } catch {
    return null;
  }
}

const OPEN_FLAGS = constants.O_RDONLY | (constants.O_NOFOLLOW ?? 0) | (constants.O_NONBLOCK ?? 0);

/** An opened, verified path: close it when done. */
export interface Opened {
  real: string;
  handle: FileHandle;
  stats: Stats;
}

/**
 * Opens `path` when confined to `roots` (see the module notes), else null (refused);
 * `flags` must keep `O_NOFOLLOW` (a write opens without truncating, then verifies).
 */
export async function openConfined(
  path: string,
  roots: Roots,
  hooks?: ConfineHooks,
  flags: number = OPEN_FLAGS,
): Promise<Opened | null> {
  const real = await checked(path, roots);
  if (real === null) return null;
  await hooks?.beforeOpen?.(real);
  let handle: FileHandle;
  try {
    handle = await open(real, flags);
  } catch {
    // Whatever the reason (gone, swapped for a link, no permission), it is not read.
    return null;
  }
  try {
    const stats = await verified(handle, real, roots);
    if (stats !== null) return { real, handle, stats };
  } catch {
    // fall through: refused
  }
  await handle.close();
  return null;
}

/** What {@link readConfined} found. `real` is the verified real path. */
export type ConfinedRead =
  | { ok: true; real: string; bytes: Buffer; size: number }
  | { ok: false; why: "refused" }
  | { ok: false; why: "not_a_file"; real: string; detail: string }
  | { ok: false; why: "too_large"; real: string; size: number };

/**
 * Reads the regular file at `path` when it is confined to `roots`; a file over
 * `maxBytes` is not read (`too_large`); with `limitBytes`, only its first `limitBytes`
 * bytes are (`size` says how large it is). Missing and outside are the same `refused`.
 *
 * @example
 * const read = await readConfined("/repo/AGENTS.md", await confinedRoots(["/repo"]));
 * if (read.ok) read.bytes;
 */
export async function readConfined(
  path: string,
  roots: Roots,
  options: { maxBytes?: number; limitBytes?: number; hooks?: ConfineHooks } = {},
): Promise<ConfinedRead> {
  const opened = await openConfined(path, roots, options.hooks);
  if (opened === null) return { ok: false, why: "refused" };
  const { real, handle, stats } = opened;
  try {
    if (!stats.isFile()) {
      const detail = stats.isDirectory() ? "a directory" : "not a regular file";
      return { ok: false, why: "not_a_file", real, detail };
    }
    if (options.maxBytes !== undefined && stats.size > options.maxBytes) {
      return { ok: false, why: "too_large", real, size: stats.size };
    }
    const size = stats.size;
    if (options.limitBytes === undefined || size <= options.limitBytes) {
      return { ok: true, real, bytes: await handle.readFile(), size };
    }
    const buf = Buffer.alloc(options.limitBytes);
    const { bytesRead } = await handle.read(buf, 0, buf.length, 0);
    return { ok: true, real, bytes: buf.subarray(0, bytesRead), size };
  } catch {
    return { ok: false, why: "refused" };
  } finally {
    await handle.close();
  }
}

/** What {@link listConfined} found. */
export type ConfinedList =
  | { ok: true; real: string; names: string[]; dirs: ReadonlySet<string> }
  | { ok: false };

/**
 * The entry names of the directory at `path` when it is confined to `roots` (unsorted;
 * `dirs`: the names that are directories, not links to them), read through the opened
 * descriptor; anything else (missing, outside, not a directory)
 * is `{ ok: false }`.
 *
 * @example const list = await listConfined("/repo/.promptctx/kb", await confinedRoots(["/repo"]));
 */
export async function listConfined(
  path: string,
  roots: Roots,
  hooks?: ConfineHooks,
): Promise<ConfinedList> {
  const opened = await openConfined(path, roots, hooks);
  if (opened === null) return { ok: false };
  const { real, handle, stats } = opened;
  try {
    if (!stats.isDirectory()) return { ok: false };
    const through = PROC_FD ? `/proc/self/fd/${handle.fd}` : real;
    const entries = await readdir(through, { withFileTypes: true });
    const dirs = new Set(entries.filter((e) => e.isDirectory()).map((e) => e.name));
    return { ok: true, real, names: entries.map((e) => e.name), dirs };
  } catch {
    return { ok: false };
  } finally {
    await handle.close();
  }
}

/**
 * Whether `path` names an entry (of any kind, a broken link included) in a directory that
 * is itself confined to `roots`: lets a caller tell "nothing by that name here" (often
 * silent) from "something here that was refused" (reported) without ever looking outside
 * the roots. The lookup goes through the opened directory's descriptor.
 *
 * @example if (!read.ok && (await entryInside(path, roots))) report(path, REFUSED);
 */
export async function entryInside(path: string, roots: Roots): Promise<boolean> {
  const abs = resolve(path);
  const opened = await openConfined(dirname(abs), roots);
  if (opened === null) return false;
  const { real, handle, stats } = opened;
  try {
    if (!stats.isDirectory()) return false;
    const dir = PROC_FD ? `/proc/self/fd/${handle.fd}` : real;
    await lstat(join(dir, basename(abs)));
    return true;
  } catch {
    return false;
  } finally {
    await handle.close();
  }
}

/**
 * The real path of the directory (or, with `kind: "file"`, the regular file) at `path`
 * when it is confined to `roots`, else a {@link PathRefusedError} at `field`: the same
 * error for a missing path, one outside the roots and one of the other kind.
 *
 * @example const ws = await confinedPath(request.workspace, await confinedRoots([serverRoot]), "workspace");
 */
export async function confinedPath(
  path: string,
  roots: Roots,
  field: FieldPath | string,
  kind: "dir" | "file" = "dir",
): Promise<string> {
  const opened = await openConfined(path, roots);
  if (opened === null) throw new PathRefusedError(field);
  await opened.handle.close();
  const ok = kind === "dir" ? opened.stats.isDirectory() : opened.stats.isFile();
  if (!ok) throw new PathRefusedError(field);
  return opened.real;
}
