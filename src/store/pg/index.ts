/**
 * The PostgreSQL dialect of the memory store (shared by several instances), opened and
 * migrated by {@link openPostgresStore}. Implements the contract of ../types.ts with the
 * shared scoring, terms, options and JSONL import of ../.
 */
export { PG_MIGRATIONS, PG_SCHEMA_VERSION, type PgMigration } from "./migrations.js";
export { type OpenPostgresOptions, openPostgresStore, redactUrl } from "./open.js";
export { PostgresMemoryStore } from "./store.js";
export { PgVectorIndex, type PgVectorState, vectorLiteral } from "./vectors.js";
export { MAX_TERM_BYTES, termKey } from "./write.js";
