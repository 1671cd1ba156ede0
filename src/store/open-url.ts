/** One entry point for both backends: a `postgres://` URL or an SQLite file path. */
import {
  type OpenPostgresOptions,
  openPostgresStore,
  type PostgresMemoryStore,
} from "./pg/index.js";
import { type OpenStoreOptions, openStore, type SqliteMemoryStore } from "./sqlite/index.js";
import { isPostgresUrl } from "./url.js";

/** Options of {@link openStoreUrl}: each backend takes the ones it knows. */
export type OpenAnyStoreOptions = OpenStoreOptions & OpenPostgresOptions;

/** An open store of either backend; `path` names it in messages (a URL without password). */
export type OpenedStore = SqliteMemoryStore | PostgresMemoryStore;

/**
 * Opens the PostgreSQL store for a `postgres://` or `postgresql://` URL, else the SQLite
 * store file at `target`.
 *
 * @example const store = await openStoreUrl(process.argv[2] ?? ".promptctx/memory.db");
 */
export async function openStoreUrl(
  target: string,
  options: OpenAnyStoreOptions = {},
): Promise<OpenedStore> {
  if (typeof target === "string" && isPostgresUrl(target)) {
    const { busyTimeoutMs: _sqliteOnly, ...pgOptions } = options;
    return openPostgresStore(target, pgOptions);
  }
  const { maxConnections: _pgOnly, ...sqliteOptions } = options;
  return openStore(target, sqliteOptions);
}
