/** The memory store the server shares between requests: which one, and who closes it. */
import { existsSync } from "node:fs";
import { join, resolve } from "node:path";
import { type MemoryStore, openStore } from "../store/index.js";
import { WORKSPACE_PATHS } from "../workspace/index.js";

/** The shared store, and whether the server opened it (then the server closes it). */
export interface SharedStore {
  store: MemoryStore | null;
  own: boolean;
  /** The store's file when the server opened it (recorded requests name it). */
  path: string | null;
}

/**
 * Opens the store `option` names (a path, which must exist), takes an open one as given,
 * or, when none is named, opens the root's `.promptctx/memory.db` if it exists.
 */
export function openSharedStore(
  option: string | MemoryStore | null | undefined,
  root: string,
): SharedStore {
  if (typeof option === "string")
    return { store: openStore(option, { mustExist: true }), own: true, path: resolve(option) };
  if (option === undefined) {
    const fallback = join(root, WORKSPACE_PATHS.store);
    if (existsSync(fallback))
      return { store: openStore(fallback, { mustExist: true }), own: true, path: fallback };
    return { store: null, own: false, path: null };
  }
  return { store: option, own: false, path: null };
}
