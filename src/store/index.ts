/**
 * The memory store of spec 06: records, JSONL import/export and scoped full-text recall
 * whose hits feed spec 02 selection. Embedded default: SQLite ({@link openStore}).
 */
export { StoreOpenError, StoreVersionError } from "./errors.js";
export { adapterOptionsFromHits, recallHit } from "./hits.js";
export { MIGRATIONS, type Migration, STORE_SCHEMA_VERSION } from "./migrations.js";
export { scopePrefix } from "./prefix.js";
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
export {
  DEFAULT_POOL_SIZE,
  MATCH_BUDGET,
  type OpenStoreOptions,
  openStore,
  SqliteMemoryStore,
  STORE_APPLICATION_ID,
} from "./sqlite.js";
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
