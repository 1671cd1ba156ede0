/**
 * Vectors of the SQLite store (recall by meaning): a `sqlite-vec` `vec0` table whose
 * partition key is the scope, so a search only ever scans its own scope's vectors (an
 * exact, brute-force cosine search: its top k is the exact top k), plus the state of each
 * memory's vector:
 *
 * - `embedder_meta`: the one embedder whose vectors the store holds (id, dimensions);
 *   opening with another one is refused ({@link EmbedderMismatchError});
 * - `memory_vec_state`: `embedded` (a vector is stored) or `uncovered` (the embedder does
 *   not know the text's script, or the text is empty: full-text alone serves it). A
 *   memory with no state row is **pending**: written while the embedder failed or was off,
 *   or changed since it was embedded. `promptctx memory reembed` fills pending memories.
 *
 * Search: a scope of fewer than {@link LARGE_SCOPE} vectors is searched exactly, from its
 * partition's chunks (build-index.ts `smallScope`); a larger one through an in-memory candidate index of compact
 * codes (../scope-index.ts, shared with PostgreSQL), built on its second search and kept while the store is open
 * (dropped when another connection commits; this connection's vector writes update it),
 * whose similarities are the cosine up to int8 rounding (within ~0.001).
 *
 * The `vec0` table is made when an embedder is first recorded (its dimensions are the
 * embedder's). Writes that change a memory's content or category drop its vector and
 * state in the same transaction (see statements.ts), so a stale vector is never searched.
 */
import type Database from "better-sqlite3";
import { EmbedderMismatchError } from "../../embed/index.js";
import type { Hint } from "../hints.js";
import { EXACT_MARGIN, LARGE_SCOPE, type ScopeIndex, trimIndexes } from "../scope-index.js";
import {
  type PendingVector,
  RERANK_MARGIN,
  type RecordedEmbedder,
  rankByCosine,
  type VectorHit,
  type VectorIndex,
  type VectorWrite,
} from "../vectors.js";
import { buildScopeIndex, floats, type LayoutCheck, smallScope } from "./build-index.js";
import { VEC_CHUNKS_INDEX } from "./migrations.js";

export type { PendingVector, RecordedEmbedder, VectorHit, VectorWrite } from "../vectors.js";

const VEC_TABLE = "memory_vec";

export { LARGE_SCOPE } from "../scope-index.js";

/**
 * Vectors per sqlite-vec chunk. Each partition (scope) has chunks of its own, stored at
 * full size from the first vector: at sqlite-vec's default of 1,024, 100,000 vectors over
 * 1,000 scopes took 2.1 GB and a search read 2 MB per scope (p50 1.7 ms); at 128, 270 MB
 * and 0.35 ms (measured, docs/sources.md). Stores made before keep their table.
 */
const VEC_CHUNK = 128;

function blob(v: Float32Array): Buffer {
  return Buffer.from(v.buffer, v.byteOffset, v.byteLength);
}

/** The vector side of one open store (see the module comment). */
export class SqliteVectorIndex implements VectorIndex {
  #db: Database.Database;
  #recorded: RecordedEmbedder | null;
  /** Indexes of large scopes, least recently searched first. */
  #indexes = new Map<string, ScopeIndex>();
  /** Large scopes searched by this connection (each gets its index on its second search). */
  #searched = new Set<string>();
  /** Whether sqlite-vec's chunk layout was checked (build-index.ts). */
  #layout: LayoutCheck = { done: false };
  /** `PRAGMA data_version` when the indexes were last known current. */
  #dataVersion = -1;

  constructor(db: Database.Database) {
    this.#db = db;
    this.#recorded = this.#read();
  }

  /** Drops the indexes when another connection has committed since they were built. */
  #current(): void {
    const v = this.#db.pragma("data_version", { simple: true }) as number;
    if (v !== this.#dataVersion) {
      this.#indexes.clear();
      this.#dataVersion = v;
    }
  }

  #read(): RecordedEmbedder | null {
    const row = this.#db
      .prepare("SELECT embedder, dimensions FROM embedder_meta WHERE id = 1")
      .get() as RecordedEmbedder | undefined;
    return row ?? null;
  }

  /** The embedder the store's vectors come from, or `null` (none yet). */
  get recorded(): RecordedEmbedder | null {
    return this.#recorded;
  }

  /** True when the store holds a vector table. */
  get active(): boolean {
    return this.#recorded !== null;
  }

  /** Always: `sqlite-vec` is loaded with the store. */
  get searchable(): boolean {
    return true;
  }

  /** Always: one process owns the file. */
  get scansAll(): boolean {
    return true;
  }

  /** None: recall by meaning always works on SQLite. */
  hints(): Hint[] {
    return [];
  }

  /**
   * Records `e` as the store's embedder (creating the vector table) when none is recorded;
   * refuses another one with {@link EmbedderMismatchError}.
   */
  bind(e: { id: string; dimensions: number }): void {
    this.#db
      .transaction(() => {
        const now = this.#read();
        if (now !== null) {
          if (now.embedder !== e.id || now.dimensions !== e.dimensions) {
            throw new EmbedderMismatchError(now.embedder, e.id);
          }
          this.#recorded = now;
          return;
        }
        this.#create(e);
      })
      .immediate();
  }

  /**
   * Migrates the store to `e`: drops every vector and state (every memory pending again)
   * and records `e`. Nothing is lost: the records stay, full-text recall keeps working,
   * and filling the pending vectors can be interrupted and resumed.
   */
  reset(e: { id: string; dimensions: number }): void {
    this.#db
      .transaction(() => {
        this.#db.exec(
          `DROP TABLE IF EXISTS ${VEC_TABLE}; DELETE FROM memory_vec_state; DELETE FROM embedder_meta;`,
        );
        this.#create(e);
      })
      .immediate();
    this.#indexes.clear();
  }

  #create(e: { id: string; dimensions: number }): void {
    if (!Number.isSafeInteger(e.dimensions) || e.dimensions < 1 || e.dimensions > 8192) {
      throw new Error(`invalid embedder dimensions ${e.dimensions}`);
    }
    this.#db.exec(`CREATE VIRTUAL TABLE ${VEC_TABLE} USING vec0(
      user_scope TEXT partition key,
      category TEXT,
      embedding float[${e.dimensions}] distance_metric=cosine,
      chunk_size=${VEC_CHUNK}
    )`);
    this.#db.exec(VEC_CHUNKS_INDEX);
    this.#db
      .prepare("INSERT INTO embedder_meta (id, embedder, dimensions) VALUES (1, ?, ?)")
      .run(e.id, e.dimensions);
    this.#recorded = { embedder: e.id, dimensions: e.dimensions };
  }

  /** Drops the vector and state of `rowid` (inside the caller's write transaction). */
  invalidate(rowid: number | bigint): void {
    this.#db.prepare("DELETE FROM memory_vec_state WHERE rowid = ?").run(rowid);
    if (this.#tableExists())
      this.#db.prepare(`DELETE FROM ${VEC_TABLE} WHERE rowid = ?`).run(BigInt(rowid));
  }

  #tableExists(): boolean {
    // Another connection may have made the table since this one read the meta row.
    if (this.#recorded !== null) return true;
    this.#recorded = this.#read();
    return this.#recorded !== null;
  }

  /** Memories without a vector state, oldest rowid first, after `afterRowid`. */
  pending(limit: number, afterRowid = 0): PendingVector[] {
    return this.#db
      .prepare(`SELECT m.rowid AS rowid, m.user_scope AS userScope, m.content AS content
        FROM memories m WHERE m.rowid > ? AND NOT EXISTS
          (SELECT 1 FROM memory_vec_state s WHERE s.rowid = m.rowid)
        ORDER BY m.rowid LIMIT ?`)
      .all(afterRowid, limit) as PendingVector[];
  }

  /** Pending memories among `keys` ([userScope, memoryId]). */
  pendingOf(keys: readonly (readonly [string, string])[]): PendingVector[] {
    const stmt =
      this.#db.prepare(`SELECT m.rowid AS rowid, m.user_scope AS userScope, m.content AS content
      FROM memories m WHERE m.user_scope = ? AND m.memory_id = ? AND NOT EXISTS
        (SELECT 1 FROM memory_vec_state s WHERE s.rowid = m.rowid)`);
    const out = new Map<number, PendingVector>();
    for (const [scope, id] of keys) {
      const row = stmt.get(scope, id) as PendingVector | undefined;
      if (row !== undefined) out.set(row.rowid, row);
    }
    return [...out.values()];
  }

  /** Pending memories of `scopes`, oldest rowid first. */
  pendingIn(scopes: readonly string[]): PendingVector[] {
    return this.#db
      .prepare(`SELECT m.rowid AS rowid, m.user_scope AS userScope, m.content AS content
        FROM memories m WHERE m.user_scope IN (SELECT value FROM json_each(?)) AND NOT EXISTS
          (SELECT 1 FROM memory_vec_state s WHERE s.rowid = m.rowid)
        ORDER BY m.rowid`)
      .all(JSON.stringify(scopes)) as PendingVector[];
  }

  /** Memories without a vector state. */
  pendingCount(): number {
    return (
      this.#db
        .prepare(`SELECT count(*) AS n FROM memories m WHERE NOT EXISTS
          (SELECT 1 FROM memory_vec_state s WHERE s.rowid = m.rowid)`)
        .get() as { n: number }
    ).n;
  }

  /**
   * Stores vectors in one transaction; a memory whose content changed since it was read
   * (or that is gone) is skipped and stays pending. Returns the vectors stored.
   */
  put(items: readonly VectorWrite[]): number {
    const dims = this.#recorded?.dimensions;
    if (dims === undefined) throw new Error("no embedder is recorded in the store");
    const current = this.#db.prepare(
      "SELECT user_scope, category, content FROM memories WHERE rowid = ?",
    );
    const del = this.#db.prepare(`DELETE FROM ${VEC_TABLE} WHERE rowid = ?`);
    const ins = this.#db.prepare(
      `INSERT INTO ${VEC_TABLE} (rowid, user_scope, category, embedding) VALUES (?, ?, ?, ?)`,
    );
    const state = this.#db.prepare(
      "INSERT OR REPLACE INTO memory_vec_state (rowid, state) VALUES (?, ?)",
    );
    this.#current();
    const written: {
      rowid: number;
      scope: string;
      category: string;
      vector: Float32Array | null;
    }[] = [];
    const stored = this.#db.transaction(() => {
      let n = 0;
      for (const it of items) {
        const row = current.get(it.rowid) as
          | { user_scope: string; category: string; content: string }
          | undefined;
        if (row === undefined || row.content !== it.content) continue;
        del.run(BigInt(it.rowid));
        written.push({
          rowid: it.rowid,
          scope: row.user_scope,
          category: row.category,
          vector: it.vector,
        });
        if (it.vector === null) {
          state.run(it.rowid, "uncovered");
          continue;
        }
        if (it.vector.length !== dims)
          throw new Error(`vector of ${it.vector.length} dimensions; the store's are ${dims}`);
        ins.run(BigInt(it.rowid), row.user_scope, row.category, blob(it.vector));
        state.run(it.rowid, "embedded");
        n++;
      }
      return n;
    })();
    // Committed: the indexes of large scopes follow (a write that threw changed nothing).
    for (const w of written) {
      const index = this.#indexes.get(w.scope);
      if (index === undefined) continue;
      if (w.vector === null) index.delete(w.rowid);
      else index.set(w.rowid, w.category, w.vector);
    }
    return stored;
  }

  /**
   * The `k` nearest vectors of the scope (in `categories`, when given), by cosine
   * similarity, best first; ties by rowid. A small scope is searched exactly by sqlite-vec;
   * a large one through its candidate index, the candidates ranked by exact cosine.
   */
  search(
    userScope: string,
    vector: Float32Array,
    k: number,
    categories?: readonly string[],
  ): VectorHit[] {
    if (!this.#tableExists()) return [];
    this.#current();
    let index = this.#indexes.get(userScope);
    if (index === undefined) {
      const small = this.#scanChunks(userScope, vector, k, categories);
      if (small !== null) return small;
      const n = (
        this.#db
          .prepare(`SELECT count(*) AS n FROM memories m JOIN memory_vec_state s
          ON s.rowid = m.rowid AND s.state = 'embedded' WHERE m.user_scope = ?`)
          .get(userScope) as { n: number }
      ).n;
      // A one-shot process (a CLI recall) searches a scope once: sqlite-vec's scan costs
      // less than building the index, which pays from the second search on.
      // Only large scopes are remembered: many small scopes leave no set behind.
      if (n < LARGE_SCOPE || !this.#searched.has(userScope)) {
        if (n >= LARGE_SCOPE) this.#searched.add(userScope);
        return this.#scan(userScope, vector, k, categories);
      }
      index = this.#build(userScope);
    } else {
      this.#indexes.delete(userScope); // most recently searched: last
    }
    this.#indexes.set(userScope, index);
    trimIndexes(this.#indexes);
    return this.#fromIndex(index, vector, k, categories);
  }

  /** The index of a large scope, from the stored vectors (see build-index.ts). */
  #build(userScope: string): ScopeIndex {
    return buildScopeIndex(
      this.#db,
      VEC_TABLE,
      userScope,
      this.#recorded!.dimensions,
      this.#layout,
    );
  }

  /**
   * The index's nearest, each checked to be still embedded (a vector dropped since it was
   * indexed — a changed memory, a forget — is no hit and leaves the index).
   */
  #fromIndex(
    index: ScopeIndex,
    q: Float32Array,
    k: number,
    categories?: readonly string[],
  ): VectorHit[] {
    const found = index.candidates(q, k + EXACT_MARGIN, categories);
    // One query for every candidate (not one per candidate).
    const live = new Set(
      this.#db
        .prepare(`SELECT rowid FROM memory_vec_state WHERE state = 'embedded'
          AND rowid IN (SELECT value FROM json_each(?))`)
        .pluck()
        .all(JSON.stringify(found.map((c) => c.rowid))) as number[],
    );
    const hits: VectorHit[] = [];
    for (const c of found) {
      if (live.has(c.rowid)) hits.push(c);
      else index.delete(c.rowid);
    }
    return hits.sort((a, b) => b.similarity - a.similarity || a.rowid - b.rowid).slice(0, k);
  }

  /**
   * A small scope's exact search: its vectors read from its sqlite-vec chunks (one row
   * per 128 vectors) and ranked by cosine here — no row of `memories` read unless
   * categories filter. sqlite-vec's own search of a partition reads each hit's vector
   * again point by point, and counting the scope's memories reads one page per memory
   * when scopes interleave (at 10,000 scopes: ~10 ms a search, against ~2 ms). `null`:
   * a large scope, or chunks not readable here.
   */
  #scanChunks(
    userScope: string,
    vector: Float32Array,
    k: number,
    categories?: readonly string[],
  ): VectorHit[] | null {
    const dims = this.#recorded!.dimensions;
    const all = smallScope(this.#db, VEC_TABLE, userScope, dims, LARGE_SCOPE, this.#layout);
    if (all === null) return null;
    let found = all;
    if (categories !== undefined && all.length > 0) {
      const keep = new Set(
        this.#db
          .prepare(`SELECT rowid FROM memories WHERE rowid IN (SELECT value FROM json_each(?))
            AND category IN (SELECT value FROM json_each(?))`)
          .pluck()
          .all(JSON.stringify(all.map((c) => c.rowid)), JSON.stringify(categories)) as number[],
      );
      found = all.filter((c) => keep.has(c.rowid));
    }
    return rankByCosine(vector, found, k);
  }

  /** sqlite-vec's exact search inside the scope's partition. */
  #scan(
    userScope: string,
    vector: Float32Array,
    k: number,
    categories?: readonly string[],
  ): VectorHit[] {
    const cats =
      categories === undefined ? "" : "AND category IN (SELECT value FROM json_each(:cats))";
    // Ordered by sqlite-vec, similarities computed by rankByCosine (the same in both dialects).
    const rows = this.#db
      .prepare(`SELECT rowid, embedding FROM ${VEC_TABLE}
        WHERE embedding MATCH :v AND k = :k AND user_scope = :scope ${cats}`)
      .all({
        v: blob(vector),
        k: k + RERANK_MARGIN,
        scope: userScope,
        ...(categories === undefined ? {} : { cats: JSON.stringify(categories) }),
      }) as { rowid: number; embedding: Buffer }[];
    return rankByCosine(
      vector,
      rows.map((r) => ({ rowid: r.rowid, vector: floats(r.embedding) })),
      k,
    );
  }
}
