/**
 * The store contract. {@link MemoryStore} is what the rest of promptctx depends on; the
 * embedded SQLite store implements it synchronously, and a shared PostgreSQL store (full-
 * text search, optional pgvector; docs/sources.md "scale-out") could implement it asynchronously
 * — every method may return a promise, so callers always `await`.
 */
import type { Authority, Provenance } from "../memory/index.js";
import type { HitMatch } from "./fuse.js";
import type { MemoryKind, MemoryRecord, MemoryRecordInput } from "./schema.js";
import type { ScoreBreakdown, ScoreWeights } from "./score.js";

export type MaybePromise<T> = T | Promise<T>;

/** Options of {@link MemoryStore.recall}. */
export interface RecallOptions {
  /** The only scope searched (exact match; part of the SQL predicate). */
  userScope: string;
  /** Hits returned, 1..1000. Default 20. */
  limit?: number;
  /** Only memories whose category is one of these (also inside the SQL predicate). */
  categories?: readonly string[];
  /** ISO-8601 instant ages are measured against. Required: the store reads no clock. */
  asOf: string;
  /** Weights of the salience factor (default 0.6 / 0.2 / 0.2; see score.ts). */
  weights?: ScoreWeights;
}

/**
 * One recall hit. Shaped as docs/memory-selection.md's `RecallHit` (`candidatesFromRecallHits` accepts it
 * as is) plus the record facts selection cannot carry; `conflictKey`/`authority` feed the
 * adapter's maps through {@link adapterOptionsFromHits}.
 */
export interface StoreRecallHit {
  memoryId: string;
  /** The memory's content, whole (a hit is atomic). */
  snippet: string;
  userScope: string;
  /** `scoreBreakdown.total`. */
  score: number;
  scoreBreakdown: ScoreBreakdown;
  /** 1-based position in the stable recall order. */
  rank: number;
  provenance: Provenance;
  kind: MemoryKind;
  category: string;
  tags: string[];
  importance: number;
  conflictKey: string | null;
  authority: Authority | null;
  /**
   * Hybrid recall only (a store with an embedder): which paths found the hit, its lexical
   * and semantic ranks, its similarity and fused score (fuse.ts).
   */
  match?: HitMatch;
}

/** Progress after each committed import batch. */
export interface ImportProgress {
  /** 1-based number of the batch just committed. */
  batch: number;
  /** Lines read so far (blank lines included). */
  lines: number;
  /** Records committed so far. */
  imported: number;
  /** Lines skipped so far. */
  skipped: number;
}

export interface ImportOptions {
  /** Records per transaction. Default 1000. */
  batchSize?: number;
  /** Called after each batch commits (never before: a reported batch is durable). */
  onProgress?: (p: ImportProgress) => void;
  /** `storedAt` for lines without one (else their `source.capturedAt`). */
  now?: string;
  /** Errors kept in the result (the `skipped` count stays exact). Default 1000. */
  maxErrors?: number;
}

/** A skipped line: 1-based line number, field path (if any) and reason. */
export interface ImportLineError {
  line: number;
  path: string | null;
  message: string;
}

export interface ImportResult {
  imported: number;
  skipped: number;
  errors: ImportLineError[];
}

export interface AddResult {
  inserted: number;
  updated: number;
}

/** What {@link MemoryStore.list} returns: records of one scope, by memoryId. */
export interface ListOptions {
  userScope: string;
  kinds?: readonly string[];
  categories?: readonly string[];
}

/** Options of {@link MemoryStore.get}. */
export interface GetOptions {
  /**
   * The scope the id is looked up in: a record of another scope is not found (`null`,
   * exactly as a missing id). Without it, `get` reads every scope (the first scope in
   * code-point order that holds the id), which a PostgreSQL store allows its owner only.
   */
  userScope?: string;
}

/** JSONL text, or a stream of chunks (a `Readable`, an async generator, …). */
export type JsonlInput =
  | string
  | Iterable<string | Uint8Array>
  | AsyncIterable<string | Uint8Array>;

export interface MemoryStore {
  /**
   * Writes records in one transaction (all or nothing). Upsert by (`userScope`,
   * `memoryId`): the stored record of the same scope is replaced (last write wins); the
   * same `memoryId` in another scope is another memory, so a record never moves between
   * scopes and a write answers alike whether or not another scope holds its id.
   */
  add(records: readonly MemoryRecordInput[], options?: { now?: string }): MaybePromise<AddResult>;
  /**
   * JSONL import: each batch one transaction; bad lines (JSON, validation) are reported
   * with their line number and skipped; blank lines are
   * ignored. If reading the input fails midway, the error propagates and the batches
   * already committed stay.
   */
  importJsonl(input: JsonlInput, options?: ImportOptions): Promise<ImportResult>;
  /**
   * Writes every record as canonical JSONL, ordered by `userScope`, then `memoryId`
   * (code points). `write` receives whole lines. Returns the record count. It reads every
   * scope: a PostgreSQL store allows it to its owner role only.
   */
  exportJsonl(write: (chunk: string) => void): MaybePromise<number>;
  /** Records of one scope, or of the whole store (a PostgreSQL store's owner only). */
  count(options?: { userScope?: string }): MaybePromise<number>;
  /** The record of `memoryId` (see {@link GetOptions}), or `null`. */
  get(memoryId: string, options?: GetOptions): MaybePromise<MemoryRecord | null>;
  list(options: ListOptions): MaybePromise<MemoryRecord[]>;
  /**
   * Full-text recall inside one scope, ranked `total desc → lexical desc → capturedAt desc
   * → memoryId asc`, each hit with its score breakdown (see score.ts: `total = lexical ×
   * salience`, so recency and importance never make up for a weak match). A query with no
   * searchable term (empty, punctuation, emoji, stop words only) returns no hits: recall is
   * evidence for the query, and "recent and important" without a match is not evidence.
   */
  recall(query: string, options: RecallOptions): MaybePromise<StoreRecallHit[]>;
  close(): MaybePromise<void>;
}
