/**
 * What a loaded workspace depends on, as file-system signatures: every file it read and
 * every directory it listed or probed (a directory's signature changes when an entry is
 * added, removed or renamed in it), and for a path that was missing, the nearest
 * directory that would list it once created. Comparing signatures costs one `stat` per
 * path, no reads: a workspace is reloaded only when one of them changed.
 */
import { readdirSync, statSync } from "node:fs";
import { dirname, isAbsolute, join } from "node:path";
import { nodeErrorCode } from "../errors/index.js";
import type { WorkspaceFiles } from "./files.js";

/**
 * What a path was: inode, size, modification and change times and mode of what it
 * points to, or `!CODE` when it cannot be stat'ed (`!ENOENT`: missing). Times are in
 * milliseconds with sub-microsecond fractions (half the cost of a bigint stat); kept as
 * numbers, compared as numbers (formatting them cost more than the comparison).
 */
export type Signature = string | readonly [number, number, number, number, number];

/** Path → signature. */
export type Signatures = ReadonlyMap<string, Signature>;

/** A path's {@link Signature}, taken now. */
export function signature(path: string): Signature {
  try {
    const s = statSync(path, { throwIfNoEntry: false });
    if (s === undefined) return "!ENOENT";
    return [s.ino, s.size, s.mtimeMs, s.ctimeMs, s.mode];
  } catch (err) {
    return `!${nodeErrorCode(err, "error")}`;
  }
}

/** Whether two signatures are the same. */
export function sameSignature(a: Signature, b: Signature): boolean {
  if (typeof a === "string" || typeof b === "string") return a === b;
  return a[0] === b[0] && a[1] === b[1] && a[2] === b[2] && a[3] === b[3] && a[4] === b[4];
}

/** Signatures of `paths`, taken now. */
export function signaturesOf(paths: Iterable<string>): Map<string, Signature> {
  const out = new Map<string, Signature>();
  for (const p of paths) if (!out.has(p)) out.set(p, signature(p));
  return out;
}

/** Whether every path still has the signature it had. */
export function unchanged(sigs: Signatures): boolean {
  for (const [path, sig] of sigs) if (!sameSignature(signature(path), sig)) return false;
  return true;
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
