/**
 * A workspace's own files beside its sources — its config and its default memory store —
 * under the same confinement rule as every source (files/confine.ts): only inside the
 * workspace, symlinks resolved. A file that is absent (no entry by that name) is no file;
 * one that is there but dangling or leads out is one `path_refused` error naming the
 * field, never what lies at its target (a config linked to `/etc/passwd` gives no JSON
 * parse error quoting it; a store linked to another workspace's is not opened).
 */
import {
  confinedPath,
  confinedRoots,
  entryInside,
  PathRefusedError,
  readConfined,
} from "../files/index.js";

/**
 * The text of the file at `path` inside the workspace `root`; null when there is no
 * entry by that name; else a {@link PathRefusedError} at `field`.
 *
 * @example const text = await readWorkspaceText("/repo/.promptctx/config.json", "/repo", "config");
 */
export async function readWorkspaceText(
  path: string,
  root: string,
  field: string,
): Promise<string | null> {
  const roots = await confinedRoots([root]);
  const read = await readConfined(path, roots);
  if (read.ok) return read.bytes.toString("utf8");
  if (read.why === "refused" && !(await entryInside(path, roots))) return null;
  throw new PathRefusedError(field);
}

/**
 * The real path of the regular file at `path` inside the workspace `root` (a store file
 * to open); null when there is no entry by that name; else a {@link PathRefusedError}
 * at `field`. SQLite opens by path: a swap after this check is not defended against.
 *
 * @example const store = await workspaceFilePath("/repo/.promptctx/memory.db", "/repo", "store");
 */
export async function workspaceFilePath(
  path: string,
  root: string,
  field: string,
): Promise<string | null> {
  const roots = await confinedRoots([root]);
  try {
    return await confinedPath(path, roots, field, "file");
  } catch (err) {
    if (!(await entryInside(path, roots))) return null;
    throw err;
  }
}
