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
import type { WorkspaceFiles } from "./workspace.js";

/** Path → signature. */
export type Signatures = ReadonlyMap<string, string>;

/**
 * A path's signature: inode, size, modification and change times and mode of what it
 * points to, or `!CODE` when it cannot be stat'ed (`!ENOENT`: missing). Times are in
 * milliseconds with sub-microsecond fractions (half the cost of a bigint stat).
 */
export function signature(path: string): string {
  try {
    const s = statSync(path, { throwIfNoEntry: false });
    if (s === undefined) return "!ENOENT";
    return `${s.ino}:${s.size}:${s.mtimeMs}:${s.ctimeMs}:${s.mode}`;
  } catch (err) {
    return `!${nodeErrorCode(err, "error")}`;
  }
}

/** Signatures of `paths`, taken now. */
export function signaturesOf(paths: Iterable<string>): Map<string, string> {
  const out = new Map<string, string>();
  for (const p of paths) if (!out.has(p)) out.set(p, signature(p));
  return out;
}

/** Whether every path still has the signature it had. */
export function unchanged(sigs: Signatures): boolean {
  for (const [path, sig] of sigs) if (signature(path) !== sig) return false;
  return true;
}

/** `path`, and when it is missing, its ancestors up to the first that exists. */
function withAncestors(path: string, out: Set<string>): void {
  let p = path;
  for (;;) {
    out.add(p);
    if (!signature(p).startsWith("!")) return;
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
