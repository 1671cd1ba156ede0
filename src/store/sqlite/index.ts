/**
 * The SQLite dialect of the memory store (the embedded default): one file with an FTS5
 * index, opened and migrated by {@link openStore}. Implements the contract of ../types.ts
 * with the shared scoring, terms, options and JSONL import of ../.
 */
export { MIGRATIONS, type Migration, STORE_SCHEMA_VERSION } from "./migrations.js";
export { type OpenStoreOptions, openStore, STORE_APPLICATION_ID } from "./open.js";
export { scopePrefix } from "./prefix.js";
export { SqliteMemoryStore } from "./store.js";
