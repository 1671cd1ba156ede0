/**
 * In-memory candidate indexes of a PostgreSQL store's large scopes (../scope-index.ts, the
 * same as SQLite's). pgvector's exact search inside a scope reads every vector of the
 * scope (100,000 × 512 dimensions: ~200 ms); an approximate index (HNSW) is filtered by
 * row-level security *after* its scan, so a scope among many gets too few hits. A scope
 * of at least {@link LARGE_SCOPE} memories is therefore searched, from its second search
 * in this process on, through an index of compact codes built from its vectors, and the
 * candidates it yields are re-ranked by exact cosine on their stored vectors.
 *
 * Current across processes: every statement that inserts or deletes a scope's vectors
 * bumps the scope's `vector_gen` (a trigger, migrations.ts version 7). A search reads it
 * in its snapshot (one row, with the scope's size), and uses an index only if it was
 * built at — or brought up to — that generation; otherwise it searches exactly and the
 * index is rebuilt. This process's own vector writes update its index in place when no
 * other write came between. Row-level security holds throughout: the index is built in
 * a transaction that declared the scope alone, and every candidate is read back under it
 * (a candidate not found there is no hit, and the search falls back to the exact one).
 */
import { EXACT_MARGIN, LARGE_SCOPE, ScopeIndex, trimIndexes } from "../scope-index.js";
import { RERANK_MARGIN, rankByCosine, type VectorHit } from "../vectors.js";
import type { Tx } from "./tx.js";

/** Rows read per round trip when an index is built. */
const BUILD_BATCH = 4096;

/** An index and the generation of the scope's vectors it holds. */
class Cached {
  constructor(
    readonly index: ScopeIndex,
    public gen: string,
  ) {}

  get byteSize(): number {
    return this.index.byteSize;
  }
}

/** What a vector write did to one scope, for the index of that scope. */
export interface ScopeWrite {
  userScope: string;
  /** `vector_gen` before the write (read under the write's row lock) and after it. */
  genBefore: string;
  genAfter: string;
  /** Each written memory: its vector (null: none any more) and category. */
  changes: readonly { rowid: number; category: string; vector: Float32Array | null }[];
}

/** The scope's generation and size, read in the search's snapshot. */
export interface ScopeState {
  gen: string;
  memories: number;
}

/** The indexes of one open store's large scopes (see the module comment). */
export class PgScopeIndexes {
  #dims: number;
  #ext: string;
  /** Least recently searched first. */
  #cached = new Map<string, Cached>();
  /** Large scopes searched once already (an index pays from the second search on). */
  #searched = new Set<string>();

  /** `ext`: the quoted schema of the `vector` extension. */
  constructor(dims: number, ext: string) {
    this.#dims = dims;
    this.#ext = ext;
  }

  get dims(): number {
    return this.#dims;
  }

  /** Drops every index (the store's vectors were reset). */
  clear(): void {
    this.#cached.clear();
    this.#searched.clear();
  }

  /**
   * The scope's `k` nearest (in `categories`, when given) through its index, best first,
   * ties by rowid; null: search exactly (a small scope, a first search, or a stale index).
   * Inside the search's REPEATABLE READ transaction, whose scope is `userScope`.
   *
   * With an index kept, one statement reads the scope's generation and its candidates'
   * vectors: when the generation is the index's and every candidate is there, they are
   * ranked by exact cosine; otherwise the index is dropped and rebuilt (or the search is
   * exact).
   */
  async search(
    tx: Tx,
    userScope: string,
    q: Float32Array,
    k: number,
    categories?: readonly string[],
  ): Promise<VectorHit[] | null> {
    const kept = this.#cached.get(userScope);
    let state: ScopeState;
    if (kept !== undefined) {
      this.#cached.delete(userScope); // most recently searched: last (when still current)
      const candidates = kept.index.candidates(q, k + EXACT_MARGIN + RERANK_MARGIN, categories);
      const rows = await tx.query<{ gen: string; n: string; id: string | null; b: string }>(
        `SELECT s.vector_gen::text AS gen, s.memory_count::text AS n, c.id, c.b
         FROM promptctx_scopes s LEFT JOIN LATERAL (
           SELECT v.id, ${packed(this.#ext)} AS b FROM promptctx_vectors v
           WHERE v.user_scope = $1 AND v.id = ANY($2::int8[])) c ON true
         WHERE s.user_scope = $1`,
        [userScope, candidates.map((c) => c.rowid)],
      );
      if (rows[0] === undefined) return [];
      state = { gen: rows[0].gen, memories: Number(rows[0].n) };
      const found = rows.filter((r) => r.id !== null);
      if (state.gen === kept.gen && found.length === candidates.length) {
        this.#cached.set(userScope, kept);
        return this.#ranked(q, found, k);
      }
    } else {
      const rows = await tx.query<{ gen: string; n: string }>(
        `SELECT vector_gen::text AS gen, memory_count::text AS n FROM promptctx_scopes
         WHERE user_scope = $1`,
        [userScope],
      );
      if (rows[0] === undefined) return [];
      state = { gen: rows[0].gen, memories: Number(rows[0].n) };
    }
    if (state.memories < LARGE_SCOPE) return null;
    // A one-shot process (a CLI recall) searches a scope once: the exact scan costs less
    // than building the index, which pays from the second search on. (Only large scopes
    // are remembered: a server of a million small scopes keeps no set of them.)
    const first = !this.#searched.has(userScope);
    this.#searched.add(userScope);
    if (first) return null;
    const index = await this.#build(tx);
    this.#cached.set(userScope, new Cached(index, state.gen));
    trimIndexes(this.#cached);
    return this.#fromIndex(tx, index, userScope, q, k, categories);
  }

  /** Rows of ids and packed vectors, ranked by exact cosine to `q`. */
  #ranked(q: Float32Array, rows: readonly { id: string | null; b: string }[], k: number) {
    return rankByCosine(
      q,
      rows.map((r) => ({ rowid: Number(r.id), vector: unpack(r.b, this.#dims) })),
      k,
    );
  }

  /**
   * Reads the scope's vectors (binary, in batches through a cursor) into a new index: the
   * transaction's current scope, which is `userScope` (a cursor's query takes no
   * parameters, so the scope is the guard's, never a literal).
   */
  async #build(tx: Tx): Promise<ScopeIndex> {
    const index = new ScopeIndex(this.#dims);
    await tx.query(
      `DECLARE promptctx_build NO SCROLL CURSOR FOR
       SELECT v.id, v.category, ${packed(this.#ext)} AS b FROM promptctx_vectors v
       WHERE v.user_scope = (SELECT promptctx_scope())`,
    );
    for (;;) {
      const rows = await tx.query<{ id: string; category: string; b: string }>(
        `FETCH ${BUILD_BATCH} FROM promptctx_build`,
      );
      for (const r of rows) index.set(Number(r.id), r.category, unpack(r.b, this.#dims));
      if (rows.length < BUILD_BATCH) break;
    }
    await tx.query("CLOSE promptctx_build");
    return index;
  }

  /**
   * The `k` nearest of a new index's candidates, by exact cosine on their stored vectors
   * (read under the scope's row-level security); null when a candidate is gone.
   */
  async #fromIndex(
    tx: Tx,
    index: ScopeIndex,
    userScope: string,
    q: Float32Array,
    k: number,
    categories?: readonly string[],
  ): Promise<VectorHit[] | null> {
    const candidates = index.candidates(q, k + EXACT_MARGIN + RERANK_MARGIN, categories);
    if (candidates.length === 0) return [];
    const rows = await tx.query<{ id: string; b: string }>(
      `SELECT v.id, ${packed(this.#ext)} AS b FROM promptctx_vectors v
       WHERE v.user_scope = $1 AND v.id = ANY($2::int8[])`,
      [userScope, candidates.map((c) => c.rowid)],
    );
    if (rows.length !== candidates.length) {
      this.#cached.delete(userScope);
      return null;
    }
    return this.#ranked(q, rows, k);
  }

  /**
   * After a committed vector write of this process: the scope's index follows it when it
   * was at the generation the write started from, else it is dropped.
   */
  written(w: ScopeWrite): void {
    const kept = this.#cached.get(w.userScope);
    if (kept === undefined) return;
    if (kept.gen !== w.genBefore) {
      this.#cached.delete(w.userScope);
      return;
    }
    for (const c of w.changes) {
      if (c.vector === null) kept.index.delete(c.rowid);
      else kept.index.set(c.rowid, c.category, c.vector);
    }
    kept.gen = w.genAfter;
  }
}

/**
 * A vector as base64 of pgvector's binary form (`ext`: the extension's quoted schema) (`vector_send`: int16 dimensions, int16
 * unused, then float4 big-endian): ~2.7 kB of text for 512 dimensions, where its decimal
 * text is ~5.5 kB and must be parsed float by float. (pg's binary result mode is not used:
 * it decodes every value as UTF-8 first, which corrupts the bytes.)
 */
function packed(ext: string): string {
  return `encode(${ext}.vector_send(v.embedding), 'base64')`;
}

/** The floats of a {@link packed} vector (PostgreSQL's line breaks are skipped). */
function unpack(b64: string, dims: number): Float32Array {
  const b = Buffer.from(b64, "base64");
  const n = b.readUInt16BE(0);
  if (n !== dims) throw new Error(`stored vector of ${n} dimensions; the store's are ${dims}`);
  const out = new Float32Array(n);
  for (let i = 0; i < n; i++) out[i] = b.readFloatBE(4 + 4 * i);
  return out;
}
