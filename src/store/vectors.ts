/**
 * The vector side of a store, as the hybrid store (hybrid.ts) uses it: one contract, two
 * dialects (sqlite/vectors.ts over `sqlite-vec`, pg/vectors.ts over `pgvector`). Each
 * records the one embedder whose vectors it holds (another is `embedder_mismatch`), keeps
 * a state per memory (`embedded`, `uncovered`, or none: **pending**) and searches one
 * scope exactly (its top k is the brute-force cosine top k).
 */
import type { Hint } from "./hints.js";
import type { MemoryRecord } from "./schema.js";
import type { MaybePromise, MemoryStore } from "./types.js";

/** The embedder a store records. */
export interface RecordedEmbedder {
  embedder: string;
  dimensions: number;
}

/** A memory whose vector is pending. */
export interface PendingVector {
  rowid: number;
  userScope: string;
  content: string;
}

/** A vector to store: `null` marks the memory `uncovered`. */
export interface VectorWrite {
  rowid: number;
  /** The memory's scope (PostgreSQL writes it under that scope's row-level security). */
  userScope: string;
  /** The content that was embedded: a memory changed since is left pending. */
  content: string;
  vector: Float32Array | null;
}

/** A nearest neighbour: rowid and cosine similarity. */
export interface VectorHit {
  rowid: number;
  similarity: number;
}

/** The embedder identity a vector index binds to. */
export interface EmbedderIdentity {
  id: string;
  dimensions: number;
}

/** The vector side of one open store (see the module comment). */
export interface VectorIndex {
  /** The embedder the store's vectors come from, or `null` (none yet). */
  readonly recorded: RecordedEmbedder | null;
  /**
   * Whether vectors can be stored and searched. False for a PostgreSQL database without
   * the `pgvector` extension: recall stays full-text and {@link VectorIndex.hints} say so.
   */
  readonly searchable: boolean;
  /**
   * Whether {@link VectorIndex.pending} may list every scope's memories (SQLite; the
   * PostgreSQL store's owner). Otherwise writes embed what they wrote, by key.
   */
  readonly scansAll: boolean;
  /** Why recall by meaning is off or degraded (none when it works). */
  hints(): Hint[];
  /** Records `e` when none is recorded; another one is `embedder_mismatch`. */
  bind(e: EmbedderIdentity): MaybePromise<void>;
  /** Drops every vector and state (every memory pending again) and records `e`. */
  reset(e: EmbedderIdentity): MaybePromise<void>;
  /** Memories without a vector state, oldest rowid first, after `afterRowid`. */
  pending(limit: number, afterRowid?: number): MaybePromise<PendingVector[]>;
  /** Pending memories among `keys` ([userScope, memoryId]). */
  pendingOf(keys: readonly (readonly [string, string])[]): MaybePromise<PendingVector[]>;
  /** Pending memories of `scopes` (a role that cannot scan every scope, after an import). */
  pendingIn(scopes: readonly string[]): MaybePromise<PendingVector[]>;
  /** Memories without a vector state. */
  pendingCount(): MaybePromise<number>;
  /** Stores vectors; a memory changed since it was read stays pending. Returns those stored. */
  put(items: readonly VectorWrite[]): MaybePromise<number>;
  /** The `k` nearest vectors of the scope (in `categories`), best first; ties by rowid. */
  search(
    userScope: string,
    vector: Float32Array,
    k: number,
    categories?: readonly string[],
  ): MaybePromise<VectorHit[]>;
}

/** What the hybrid store needs of the store under it (either dialect). */
export interface VectorBase extends MemoryStore {
  readonly path: string;
  readonly vectors: VectorIndex;
  /** The epoch ms of the scope's latest replacement (a recall before it reads the past). */
  latestReplacement(userScope: string): MaybePromise<number | null>;
  /** The scope's active records of `rowids`. */
  recordsByRowid(
    rowids: readonly number[],
    userScope: string,
  ): MaybePromise<Map<number, MemoryRecord>>;
}

/** A candidate of a scope's vector search: its rowid and its stored vector. */
export interface VectorCandidate {
  rowid: number;
  vector: Float32Array;
}

/**
 * Extra candidates a dialect reads beyond `k` before {@link rankByCosine} re-ranks them:
 * the database's own float32 ordering and this one may swap near-ties at the boundary.
 */
export const RERANK_MARGIN = 10;

/**
 * The `k` best candidates by cosine similarity to `q`, best first, ties by rowid —
 * computed here (float64 sums over the stored float32 components), not by the database,
 * so that SQLite and PostgreSQL report the same similarities, bit for bit, for the same
 * vectors (sqlite-vec and pgvector round differently in the last digits).
 *
 * @example rankByCosine(Float32Array.of(1, 0), [{ rowid: 1, vector: Float32Array.of(0, 1) }], 1)
 * // [{ rowid: 1, similarity: 0 }]
 */
export function rankByCosine(
  q: Float32Array,
  candidates: readonly VectorCandidate[],
  k: number,
): VectorHit[] {
  let qq = 0;
  for (let i = 0; i < q.length; i++) qq += q[i]! * q[i]!;
  return candidates
    .map(({ rowid, vector: v }) => {
      let dot = 0;
      let vv = 0;
      for (let i = 0; i < v.length; i++) {
        dot += q[i]! * v[i]!;
        vv += v[i]! * v[i]!;
      }
      const norm = Math.sqrt(qq) * Math.sqrt(vv);
      return { rowid, similarity: norm === 0 ? 0 : dot / norm };
    })
    .sort((a, b) => b.similarity - a.similarity || a.rowid - b.rowid)
    .slice(0, k);
}
