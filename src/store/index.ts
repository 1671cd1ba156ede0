/**
 * The memory store (docs/sources.md): records, JSONL import/export and scoped full-text
 * recall whose hits feed memory selection. Embedded default: SQLite ({@link openStore});
 * shared: PostgreSQL ({@link openPostgresStore}); either from a path or URL
 * ({@link openStoreUrl}). This folder holds the contract (types.ts), scoring, terms,
 * options and JSONL shared by both dialects; sqlite/ and pg/ implement it. May import every
 * stage below it (errors … conversation).
 */

export {
  MemoryRejectedError,
  MemoryTooLargeError,
  ScopeFullError,
  StoreOpenError,
  StorePrivilegeError,
  StoreVersionError,
} from "./errors.js";
export {
  type HitMatch,
  RRF_K,
  rrf,
  type SemanticCalibration,
  semanticRelevance,
} from "./fuse.js";
export { type Hint, recallHints } from "./hints.js";
export { adapterOptionsFromHits, recallHit } from "./hits.js";
export {
  calibrationOf,
  DEFAULT_CALIBRATION,
  type EmbedProgress,
  type EmbedReport,
  HybridMemoryStore,
  hybridStore,
  openHybrid,
  PATH_CANDIDATES,
  type ReembedOptions,
} from "./hybrid.js";
export { type OpenAnyStoreOptions, type OpenedStore, openStoreUrl } from "./open-url.js";
export { DEFAULT_POOL_SIZE, MATCH_BUDGET } from "./options.js";
export {
  MAX_TERM_BYTES,
  type OpenPostgresOptions,
  openPostgresStore,
  PG_MIGRATIONS,
  PG_SCHEMA_VERSION,
  type PgMigration,
  PgVectorIndex,
  type PgVectorState,
  PostgresMemoryStore,
  redactUrl,
  termKey,
  vectorLiteral,
} from "./pg/index.js";
export {
  type InitPostgresOptions,
  type InitPostgresResult,
  initPostgresStore,
} from "./pg/roles.js";
export {
  hitBm25,
  poolOf,
  presence,
  type RankedCandidate,
  type RecallCandidate,
  rankCandidates,
  searchedTerms,
} from "./rank.js";
export {
  derivedMemoryId,
  KNOWN_KINDS,
  type MemoryKind,
  type MemoryRecord,
  type MemoryRecordInput,
  MemoryRecordSchema,
  type MemorySource,
  MemorySourceSchema,
  parseRecord,
  recordToJsonLine,
  storedNonBlank,
  storedText,
} from "./schema.js";
export {
  BM25_B,
  BM25_K1,
  bm25Score,
  compareRecall,
  DEFAULT_WEIGHTS,
  idf,
  type QueryWeights,
  queryWeights,
  RECENCY_HALF_LIFE_DAYS,
  recencyScore,
  round6,
  type ScoreBreakdown,
  type ScoreWeights,
  scoreBreakdown,
} from "./score.js";
export { rankSnapshot, type StoredVersion, visibleAt } from "./snapshot.js";
export {
  MIGRATIONS,
  type Migration,
  type OpenStoreOptions,
  openStore,
  SqliteMemoryStore,
  STORE_APPLICATION_ID,
  STORE_SCHEMA_VERSION,
  scopePrefix,
} from "./sqlite/index.js";
export type { SqliteVectorIndex } from "./sqlite/vectors.js";
export {
  CHINESE_STOP_CHARS,
  CHINESE_STOP_WORDS,
  cjkContentPieces,
  ENGLISH_STOP_WORDS,
  isStopWord,
  JAPANESE_STOP_CHARS,
  JAPANESE_STOP_WORDS,
} from "./stopwords/index.js";
export {
  ftsQuote,
  indexTerms,
  MAX_QUERY_TERMS,
  queryTerms,
  recordTerms,
  termPresence,
} from "./terms.js";
export type {
  AddOptions,
  AddResult,
  EntryPage,
  ForgetResult,
  ForgetTarget,
  GetOptions,
  ImportLineError,
  ImportOptions,
  ImportProgress,
  ImportResult,
  JsonlInput,
  ListEntriesOptions,
  ListOptions,
  MaybePromise,
  MemoryEntry,
  MemoryStore,
  MemoryVersion,
  QuarantinedWrite,
  RecallOptions,
  StoreRecallHit,
} from "./types.js";
export { isPostgresUrl } from "./url.js";
export type {
  EmbedderIdentity,
  PendingVector,
  RecordedEmbedder,
  VectorBase,
  VectorHit,
  VectorIndex,
  VectorWrite,
} from "./vectors.js";
export {
  MEMORY_STATUSES,
  type MemoryStatus,
  type PreparedWrite,
  prepareWrite,
  type StoreLimits,
  type WritePolicy,
  writePolicy,
} from "./write-gate.js";
export type { WriteOutcome } from "./write-outcome.js";
