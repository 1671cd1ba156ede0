/**
 * The memory store (docs/sources.md): records, JSONL import/export and scoped full-text
 * recall whose hits feed memory selection. Embedded default: SQLite ({@link openStore});
 * shared: PostgreSQL ({@link openPostgresStore}); either from a path or URL
 * ({@link openStoreUrl}). May import every stage below it (errors … conversation).
 */

export { StoreOpenError, StoreVersionError } from "./errors.js";
export { adapterOptionsFromHits } from "./hits.js";
export { MIGRATIONS, type Migration, STORE_SCHEMA_VERSION } from "./migrations.js";
export { type OpenAnyStoreOptions, type OpenedStore, openStoreUrl } from "./open-url.js";
export { PostgresMemoryStore } from "./pg.js";
export { PG_MIGRATIONS, PG_SCHEMA_VERSION, type PgMigration } from "./pg-migrations.js";
export {
  isPostgresUrl,
  type OpenPostgresOptions,
  openPostgresStore,
  redactUrl,
} from "./pg-open.js";
export { MAX_TERM_BYTES, termKey } from "./pg-write.js";
export { type RecallCandidate, rankRecall, rarestTerms } from "./recall-rank.js";
export {
  KNOWN_KINDS,
  type MemoryKind,
  type MemoryRecord,
  type MemoryRecordInput,
  MemoryRecordSchema,
  type MemorySource,
  MemorySourceSchema,
  parseRecord,
  recordToJsonLine,
} from "./schema.js";
export {
  compareRecall,
  DEFAULT_WEIGHTS,
  RECENCY_HALF_LIFE_DAYS,
  round6,
  type ScoreBreakdown,
  type ScoreWeights,
} from "./score.js";
export { SqliteMemoryStore } from "./sqlite.js";
export {
  DEFAULT_POOL_SIZE,
  MATCH_BUDGET,
  type OpenStoreOptions,
  openStore,
  STORE_APPLICATION_ID,
} from "./sqlite-open.js";
export { scopePrefix } from "./sqlite-statements.js";
export { ftsQuote, indexTerms, MAX_QUERY_TERMS, queryTerms } from "./terms.js";
export type {
  AddResult,
  ImportLineError,
  ImportOptions,
  ImportProgress,
  ImportResult,
  JsonlInput,
  ListOptions,
  MaybePromise,
  MemoryStore,
  RecallOptions,
  StoreRecallHit,
} from "./types.js";
export { scopeConflict, type WriteOutcome } from "./write-outcome.js";
