/** The memory store the server shares between requests: which one, and who closes it. */
import { existsSync } from "node:fs";
import { join, resolve } from "node:path";
import type { GateMode } from "../memory/index.js";
import {
  hybridStore,
  isPostgresUrl,
  type MemoryStore,
  openHybrid,
  openStore,
  openStoreUrl,
  PostgresMemoryStore,
  SqliteMemoryStore,
  type StoreLimits,
} from "../store/index.js";
import { loadWorkspaceConfig, WORKSPACE_PATHS } from "../workspace/index.js";

/** The shared store, and whether the server opened it (then the server closes it). */
export interface SharedStore {
  store: MemoryStore | null;
  own: boolean;
  /**
   * The store's file (or `postgres://` URL) when the server opened it (recorded requests
   * name it; a recording drops the URL's password).
   */
  path: string | null;
}

/**
 * Opens the store `option` names (a path, which must exist, or a `postgres://` URL),
 * takes an open one as given, or, when none is named, opens the root's
 * `.promptctx/memory.db` if it exists. With `embedder` (an `--embedder` value), a store
 * it opens (an SQLite file, or PostgreSQL with pgvector) recalls by meaning too
 * (docs/sources.md).
 */
export async function openSharedStore(
  option: string | MemoryStore | null | undefined,
  root: string,
  memory?: { gate?: GateMode; limits?: StoreLimits },
  embedder?: string,
): Promise<SharedStore> {
  const shared = await openPlain(option, root, memory);
  const base = shared.store;
  if (embedder === undefined || !shared.own || base === null) return shared;
  if (!(base instanceof SqliteMemoryStore) && !(base instanceof PostgresMemoryStore)) return shared;
  // Recall by meaning over the store the server opened (an SQLite file or a PostgreSQL
  // URL): the encoder is loaded here, once per process.
  try {
    const { chooseEmbedderSpec, createEmbedder } = await import("../embed/index.js");
    const e = await createEmbedder(chooseEmbedderSpec({ flag: embedder }), process.env);
    if (e === null) return shared;
    const store =
      base instanceof SqliteMemoryStore ? hybridStore(base, e) : await openHybrid(base, e);
    return { ...shared, store };
  } catch (err) {
    await base.close();
    throw err;
  }
}

async function openPlain(
  option: string | MemoryStore | null | undefined,
  root: string,
  memory?: { gate?: GateMode; limits?: StoreLimits },
): Promise<SharedStore> {
  if (typeof option === "string" || option === undefined) {
    // The write policy: the server's, else the workspace config's `memory` section.
    const policy = memory ?? (await configPolicy(root));
    return openOwned(option, root, policy);
  }
  return { store: option, own: false, path: null };
}

/**
 * The root's config `memory` section; a config that does not load leaves the defaults (the
 * gate quarantines: the safe side), and assemblies report the config's error themselves.
 */
async function configPolicy(root: string): Promise<{ gate?: GateMode; limits?: StoreLimits }> {
  try {
    return (await loadWorkspaceConfig(root)).memory ?? {};
  } catch {
    return {};
  }
}

async function openOwned(
  option: string | undefined,
  root: string,
  policy: { gate?: GateMode; limits?: StoreLimits },
): Promise<SharedStore> {
  const writes = {
    ...(policy.gate === undefined ? {} : { gate: policy.gate }),
    ...(policy.limits === undefined ? {} : { limits: policy.limits }),
  };
  if (typeof option === "string") {
    const store = await openStoreUrl(option, { mustExist: true, ...writes });
    return { store, own: true, path: isPostgresUrl(option) ? option : resolve(option) };
  }
  const fallback = join(root, WORKSPACE_PATHS.store);
  if (existsSync(fallback))
    return {
      store: openStore(fallback, { mustExist: true, ...writes }),
      own: true,
      path: fallback,
    };
  return { store: null, own: false, path: null };
}
