/**
 * Confined writes: a file is created or overwritten only inside the allowed roots, by the
 * same rule as reads (confine.ts), and nothing outside is ever created, truncated or
 * written — not a file, not a directory.
 *
 * How: the deepest existing ancestor directory is opened confined (checked, opened, its
 * descriptor verified); every missing directory below it is made and opened through the
 * held descriptor of its parent (`/proc/self/fd/N/name`, `O_DIRECTORY | O_NOFOLLOW`), so a
 * directory swapped for a link on the way is never followed; the file itself is created
 * with `O_CREAT | O_EXCL | O_NOFOLLOW` through that descriptor (a link, even dangling,
 * makes it fail), or, when it exists, opened without truncating, verified, and only then
 * truncated and written. A link to a file inside the roots is written through, after its
 * target is checked and the opened descriptor verified like any read. Without `/proc`
 * (not Linux), the same steps go by real path with the descriptor's device and inode
 * checked after each open (a narrower window; see confine.ts).
 */
import { constants } from "node:fs";
import { type FileHandle, lstat, mkdir, open } from "node:fs/promises";
import { basename, dirname, join, resolve } from "node:path";
import { nodeErrorCode } from "../errors/index.js";
import {
  type ConfineHooks,
  insideAny,
  type Opened,
  openConfined,
  PROC_FD,
  type Roots,
  verified,
} from "./confine.js";

/** What {@link writeConfined} did. `real`: the verified real path written. */
export type ConfinedWrite =
  | { ok: true; real: string; bytes: number; created: boolean }
  | { ok: false; why: "refused" }
  | { ok: false; why: "not_a_file"; real: string };

const NOFOLLOW = constants.O_NOFOLLOW ?? 0;
const NONBLOCK = constants.O_NONBLOCK ?? 0;
const DIR_FLAGS = constants.O_RDONLY | (constants.O_DIRECTORY ?? 0) | NOFOLLOW | NONBLOCK;
const CREATE_FLAGS =
  constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | NOFOLLOW | NONBLOCK;
const WRITE_FLAGS = constants.O_WRONLY | NOFOLLOW | NONBLOCK;

/** A held directory: its descriptor, real path, and the name to reach a child through it. */
interface Dir {
  handle: FileHandle;
  real: string;
  /** `/proc/self/fd/N` when the kernel names descriptors, else the real path. */
  through: string;
}

function held(opened: Opened): Dir {
  const through = PROC_FD ? `/proc/self/fd/${opened.handle.fd}` : opened.real;
  return { handle: opened.handle, real: opened.real, through };
}

/** The deepest existing ancestor of `abs` (itself excluded), and the names below it. */
async function existingAncestor(abs: string): Promise<{ base: string; missing: string[] }> {
  const missing: string[] = [];
  let dir = dirname(abs);
  for (;;) {
    try {
      await lstat(dir);
      return { base: dir, missing };
    } catch (err) {
      if (nodeErrorCode(err) !== "ENOENT" || dirname(dir) === dir) return { base: dir, missing };
      missing.unshift(basename(dir));
      dir = dirname(dir);
    }
  }
}

/** Opens the child directory `name` of `dir` (made when missing), or null (refused). */
async function childDir(dir: Dir, name: string, roots: Roots): Promise<Dir | null> {
  const at = join(dir.through, name);
  await mkdir(at).catch((err: unknown) => {
    if (nodeErrorCode(err) !== "EEXIST") throw err;
  });
  const handle = await open(at, DIR_FLAGS).catch(() => null);
  if (handle === null) return null;
  const real = join(dir.real, name);
  const stats = await verified(handle, real, roots).catch(() => null);
  if (stats === null || !stats.isDirectory()) {
    await handle.close();
    return null;
  }
  return { handle, real, through: dir.through === dir.real ? real : `/proc/self/fd/${handle.fd}` };
}

/** Writes `data` into the opened, verified `handle` from its start, dropping what was there. */
async function fill(handle: FileHandle, data: Buffer): Promise<void> {
  await handle.truncate(0);
  let at = 0;
  while (at < data.length) {
    const { bytesWritten } = await handle.write(data, at, data.length - at, at);
    at += bytesWritten;
  }
}

async function writeIn(
  dir: Dir,
  name: string,
  data: Buffer,
  roots: Roots,
  hooks?: ConfineHooks,
): Promise<ConfinedWrite> {
  await hooks?.beforeOpen?.(join(dir.real, name));
  const created = await open(join(dir.through, name), CREATE_FLAGS, 0o666).catch((err: unknown) =>
    nodeErrorCode(err) === "EEXIST" ? "exists" : null,
  );
  const opened =
    created === "exists"
      ? await openConfined(join(dir.real, name), roots, hooks, WRITE_FLAGS)
      : created === null
        ? null
        : { handle: created, real: join(dir.real, name) };
  if (opened === null) return { ok: false, why: "refused" };
  try {
    const stats = await opened.handle.stat();
    if (!stats.isFile()) return { ok: false, why: "not_a_file", real: opened.real };
    await fill(opened.handle, data);
    return { ok: true, real: opened.real, bytes: data.length, created: created !== "exists" };
  } finally {
    await opened.handle.close();
  }
}

/**
 * Creates or overwrites the file at `path` with `content` when the path is confined to
 * `roots` (missing directories below the deepest existing one are made, inside the roots
 * only); anything else — outside, through a link leading out, a dangling link, a swap
 * between check and write — is `refused`, and nothing is written anywhere. `hooks.beforeOpen`
 * (tests) runs before the file is opened, possibly twice (create, then the existing entry).
 *
 * @example
 * const done = await writeConfined("/repo/notes/a.md", await confinedRoots(["/repo"]), "hi");
 * if (!done.ok) report(done.why);
 */
export async function writeConfined(
  path: string,
  roots: Roots,
  content: string | Uint8Array,
  hooks?: ConfineHooks,
): Promise<ConfinedWrite> {
  const abs = resolve(path);
  if (!insideAny(roots.lexical, abs) && !insideAny(roots.real, abs)) {
    return { ok: false, why: "refused" };
  }
  const name = basename(abs);
  if (name === "" || dirname(abs) === abs) return { ok: false, why: "refused" };
  const { base, missing } = await existingAncestor(abs);
  const top = await openConfined(base, roots);
  if (top === null || !top.stats.isDirectory()) {
    await top?.handle.close();
    return { ok: false, why: "refused" };
  }
  let dir = held(top);
  try {
    for (const part of missing) {
      const next = await childDir(dir, part, roots);
      if (next === null) return { ok: false, why: "refused" };
      await dir.handle.close();
      dir = next;
    }
    const data = typeof content === "string" ? Buffer.from(content, "utf8") : Buffer.from(content);
    return await writeIn(dir, name, data, roots, hooks);
  } catch {
    return { ok: false, why: "refused" };
  } finally {
    await dir.handle.close().catch(() => undefined);
  }
}
