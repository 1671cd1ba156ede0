/**
 * The store contract. {@link MemoryStore} is what the rest of promptctx depends on; the
 * embedded SQLite store implements it synchronously, and a shared PostgreSQL store (full-
 * text search, optional pgvector; docs/sources.md "scale-out") could implement it asynchronously
 * — every method may return a promise, so callers always `await`.
 */
import type { Authority, GateMode, Provenance, TakeoverRule } from "../memory/index.js";
import type { HitMatch } from "./fuse.js";
import type { Hint } from "./hints.js";
import type { MemoryKind, MemoryRecord, MemoryRecordInput, MemoryStatus } from "./schema.js";
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
  /**
   * ISO-8601 instant ages are measured against, and the instant the store is seen at:
   * each memory as it was stored then (its last version written at or before `asOf`; a
   * memory first written later is seen as its first version, its age counted as 0 — the
   * recency contract of a memory captured after `asOf`). Required: the store reads no clock.
   */
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
  /** Imported records the takeover gate held (counted in `imported`); absent when none. */
  quarantined?: QuarantinedWrite[];
}

/** A written record the takeover gate held: stored, never recalled until approved. */
export interface QuarantinedWrite {
  memoryId: string;
  userScope: string;
  rule: TakeoverRule;
}

export interface AddResult {
  inserted: number;
  updated: number;
  /** Written records the takeover gate held (counted in inserted/updated); absent when none. */
  quarantined?: QuarantinedWrite[];
}

/** Per-call options of {@link MemoryStore.add}. */
export interface AddOptions {
  /** `storedAt` of records without one (the store's time of this write). */
  now?: string;
  /** The takeover gate's mode for this write (default: the store's, see its open options). */
  gate?: GateMode;
}

/** What {@link MemoryStore.list} returns: active records of one scope, by memoryId. */
export interface ListOptions {
  userScope: string;
  kinds?: readonly string[];
  categories?: readonly string[];
}

/** A stored memory with what the store knows of it beyond the record. */
export interface MemoryEntry extends MemoryRecord {
  status: MemoryStatus;
  /** The takeover rule that holds it (`quarantined`), else null. */
  rule: TakeoverRule | null;
  /** 1 for a memory never replaced; +1 per replacement. */
  version: number;
}

/** Options of {@link MemoryStore.listEntries}: one page of a scope, by memoryId. */
export interface ListEntriesOptions {
  userScope: string;
  /** `active`, `quarantined`, or `all` (default). */
  status?: MemoryStatus | "all";
  kinds?: readonly string[];
  categories?: readonly string[];
  /** Entries per page, 1..1000. Default 100. */
  limit?: number;
  /** Only memoryIds after this one (code-point order): the previous page's `next`. */
  after?: string;
}

/** One page of entries; `next` is the `after` of the next page, null on the last. */
export interface EntryPage {
  entries: MemoryEntry[];
  next: string | null;
}

/** One version of a memory, oldest first in {@link MemoryStore.history}. */
export interface MemoryVersion {
  version: number;
  /** The store's time of this write. */
  storedAt: string;
  status: MemoryStatus;
  rule: TakeoverRule | null;
  /** True for the memory's current version (the last). */
  current: boolean;
  record: MemoryRecord;
}

/**
 * What {@link MemoryStore.forget} erases, always inside one scope: one memory by id, or
 * every memory of the scope (`all: true`), optionally only those of some kinds and/or
 * categories.
 */
export type ForgetTarget =
  | { userScope: string; memoryId: string }
  | { userScope: string; all: true; kinds?: readonly string[]; categories?: readonly string[] };

/** What a forget erased. */
export interface ForgetResult {
  /** Memories forgotten. */
  memories: number;
  /** Records removed: every version of those memories (the current ones included). */
  removed: number;
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
  add(records: readonly MemoryRecordInput[], options?: AddOptions): MaybePromise<AddResult>;
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
  /** A page of one scope's memories with status, rule and version (any status). */
  listEntries(options: ListEntriesOptions): MaybePromise<EntryPage>;
  /** The entry of `memoryId` in `userScope`, or `null` (another scope's id is not found). */
  getEntry(memoryId: string, options: { userScope: string }): MaybePromise<MemoryEntry | null>;
  /** Every version of a memory, oldest first ([] when not found in the scope). */
  history(memoryId: string, options: { userScope: string }): MaybePromise<MemoryVersion[]>;
  /**
   * Releases a quarantined memory (it is recalled from then on); returns its entry, or
   * `null` when the scope holds no such memory. Approving an active memory changes nothing.
   */
  approve(memoryId: string, options: { userScope: string }): MaybePromise<MemoryEntry | null>;
  /**
   * Erases memories of one scope, every version, in one transaction: gone from recall at
   * any instant, list, history, export and the full-text index (and, for SQLite, from the
   * bytes of the database file and its WAL: secure delete, index optimize, WAL checkpoint).
   * Another scope's id answers exactly as a missing id: `{ memories: 0, removed: 0 }`.
   *
   * @example
   * store.forget({ userScope: "u1", memoryId: "m1" }); // { memories: 1, removed: 2 }
   * store.forget({ userScope: "u1", all: true, categories: ["health"] });
   */
  forget(target: ForgetTarget): MaybePromise<ForgetResult>;
  close(): MaybePromise<void>;
  /**
   * Why recall is degraded, shown beside recall answers (hints.ts): e.g.
   * `recall_full_text_only` for a PostgreSQL store without pgvector. Optional.
   */
  hints?(): Hint[];
}
