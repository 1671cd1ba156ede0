/** The memory store the server shares between requests: which one, and who closes it. */
import { existsSync } from "node:fs";
import { join } from "node:path";
import { type MemoryStore, openStore, openStoreUrl } from "../store/index.js";
import { WORKSPACE_PATHS } from "../workspace/index.js";

/** The shared store, and whether the server opened it (then the server closes it). */
export interface SharedStore {
  store: MemoryStore | null;
  own: boolean;
}

/**
 * Opens the store `option` names (a path, which must exist, or a `postgres://` URL),
 * takes an open one as given, or, when none is named, opens the root's
 * `.promptctx/memory.db` if it exists.
 */
export async function openSharedStore(
  option: string | MemoryStore | null | undefined,
  root: string,
): Promise<SharedStore> {
  if (typeof option === "string") {
    return { store: await openStoreUrl(option, { mustExist: true }), own: true };
  }
  if (option === undefined) {
    const fallback = join(root, WORKSPACE_PATHS.store);
    if (existsSync(fallback)) return { store: openStore(fallback, { mustExist: true }), own: true };
    return { store: null, own: false };
  }
  return { store: option, own: false };
}
