/**
 * Vectors of the PostgreSQL store (recall by meaning) over `pgvector`: the same contract
 * as the SQLite store's ({@link VectorIndex}, ../vectors.ts), so the hybrid store
 * (../hybrid.ts) ranks both alike.
 *
 * - `promptctx_embedder`: the one embedder whose vectors the store holds; another one is
 *   refused ({@link EmbedderMismatchError}). `memory reembed` migrates (the owner only:
 *   it drops every scope's vectors).
 * - `promptctx_vec_state`: `embedded` / `uncovered`; no row: **pending**. A trigger drops
 *   the state (and, by its foreign key, the vector) when a memory's content or category
 *   changes; forgetting a memory deletes both.
 * - `promptctx_vectors`: the vectors, searched inside one scope: a scope of fewer than
 *   LARGE_SCOPE memories (and any scope's first search in a process) **exactly** — the
 *   scope's b-tree gives its rows, ordered by cosine distance (`<=>`); a larger one
 *   through an in-memory candidate index kept current by the scope's `vector_gen`
 *   (vector-cache.ts), its candidates re-ranked by exact cosine. Row-level security
 *   filters what an approximate index (HNSW, IVFFlat) returns *after* the index scan, so
 *   a small scope in a large table would get fewer than k hits, or none; the figures
 *   that chose this are in docs/sources.md ("pgvector").
 *
 * Without the extension (or before the table exists), the index is not
 * {@link PgVectorIndex.searchable}: writes leave memories pending, recall stays full-text
 * and {@link PgVectorIndex.hints} say why and what to do.
 */
import type { Pool } from "pg";
import { EmbedderMismatchError } from "../../embed/index.js";
import { compareCodePoints } from "../../text/index.js";
import { StorePrivilegeError } from "../errors.js";
import type { Hint } from "../hints.js";
import {
  type EmbedderIdentity,
  type PendingVector,
  RERANK_MARGIN,
  type RecordedEmbedder,
  rankByCosine,
  type VectorHit,
  type VectorIndex,
  type VectorWrite,
} from "../vectors.js";
import { MIGRATION_LOCK, vectorExtension, vectorTableDdl } from "./migrations.js";
import { inTransaction, type Tx } from "./tx.js";
import { PgScopeIndexes, type ScopeWrite } from "./vector-cache.js";

/** Why a PostgreSQL store cannot search vectors. */
export type PgVectorState = "ready" | "no_extension" | "no_table";

/** A vector as pgvector's text input: `[x,y,…]` (shortest round-trip float32 digits). */
export function vectorLiteral(v: Float32Array): string {
  return `[${Array.from(v, (x) => String(x)).join(",")}]`;
}

/** The hint of a store that recalls by words only (`recall_full_text_only`). */
function fullTextHint(state: Exclude<PgVectorState, "ready">): Hint {
  const why =
    state === "no_extension"
      ? "the PostgreSQL database has no pgvector extension"
      : "the store's vector table is not created yet (pgvector was installed after the store)";
  const fix =
    state === "no_extension"
      ? "install pgvector on the server (docs/sources.md), run `promptctx store init` with an administrator's URL, then `promptctx memory reembed`"
      : "run `promptctx store init` with an administrator's URL (or open the store once as its owner), then `promptctx memory reembed`";
  return {
    code: "recall_full_text_only",
    message: `recall is by words only: ${why}; ${fix}`,
  };
}

/** The vector side of one open PostgreSQL store (see the module comment). */
export class PgVectorIndex implements VectorIndex {
  #pool: Pool;
  #privileged: boolean;
  #where: string;
  #recorded: RecordedEmbedder | null = null;
  #ext: string | null = null;
  #state: PgVectorState = "no_extension";
  /** Indexes of large scopes, for vectors of the recorded dimensions (vector-cache.ts). */
  #indexes: PgScopeIndexes | null = null;

  /** Use {@link PgVectorIndex.load}. */
  private constructor(pool: Pool, privileged: boolean, where: string) {
    this.#pool = pool;
    this.#privileged = privileged;
    this.#where = where;
  }

  /**
   * Reads the recorded embedder and whether vectors can be searched; the owner creates
   * the vector table when the extension was installed after the store's migration.
   */
  static async load(pool: Pool, privileged: boolean, where: string): Promise<PgVectorIndex> {
    const index = new PgVectorIndex(pool, privileged, where);
    await index.#refresh();
    return index;
  }

  async #refresh(): Promise<void> {
    await inTransaction(this.#pool, { readOnly: true }, async (tx) => {
      this.#recorded = await readRecorded(tx);
      this.#ext = await vectorExtension(tx);
      const table = await tx.query<{ t: string | null }>(
        "SELECT to_regclass('promptctx_vectors')::text AS t",
      );
      this.#state =
        this.#ext === null ? "no_extension" : table[0]?.t == null ? "no_table" : "ready";
    });
    if (this.#state === "no_table" && this.#privileged) {
      const ext = this.#ext!;
      await inTransaction(this.#pool, {}, async (tx) => {
        await tx.query("SELECT pg_advisory_xact_lock($1)", [MIGRATION_LOCK]);
        await tx.query(vectorTableDdl(ext));
      });
      this.#state = "ready";
    }
  }

  get recorded(): RecordedEmbedder | null {
    return this.#recorded;
  }

  /** Why vectors can or cannot be searched. */
  get state(): PgVectorState {
    return this.#state;
  }

  /** The owner's connection only (row-level security shows no other role every scope). */
  get scansAll(): boolean {
    return this.#privileged;
  }

  get searchable(): boolean {
    return this.#state === "ready";
  }

  hints(): Hint[] {
    return this.#state === "ready" ? [] : [fullTextHint(this.#state)];
  }

  async bind(e: EmbedderIdentity): Promise<void> {
    checkDimensions(e.dimensions);
    this.#recorded = await inTransaction(this.#pool, {}, async (tx) => {
      await tx.query(
        `INSERT INTO promptctx_embedder (id, embedder, dimensions) VALUES (1, $1, $2)
         ON CONFLICT (id) DO NOTHING`,
        [e.id, e.dimensions],
      );
      const now = (await readRecorded(tx))!;
      if (now.embedder !== e.id || now.dimensions !== e.dimensions) {
        throw new EmbedderMismatchError(now.embedder, e.id);
      }
      return now;
    });
  }

  /** The owner only: it drops every scope's vectors. */
  async reset(e: EmbedderIdentity): Promise<void> {
    checkDimensions(e.dimensions);
    if (!this.#privileged) {
      throw new StorePrivilegeError("migrating the vectors to another embedder", this.#where);
    }
    await inTransaction(this.#pool, {}, async (tx) => {
      // TRUNCATE of the state cascades to the vectors (their foreign key).
      await tx.query("TRUNCATE promptctx_vec_state CASCADE");
      await tx.query("DELETE FROM promptctx_embedder");
      await tx.query(
        "INSERT INTO promptctx_embedder (id, embedder, dimensions) VALUES (1, $1, $2)",
        [e.id, e.dimensions],
      );
    });
    this.#recorded = { embedder: e.id, dimensions: e.dimensions };
    this.#indexes = null;
  }

  /** The indexes of large scopes, for the recorded dimensions (null: none recorded). */
  #scopeIndexes(): PgScopeIndexes | null {
    const dims = this.#recorded?.dimensions;
    if (dims === undefined || this.#ext === null) return null;
    if (this.#indexes?.dims !== dims) this.#indexes = new PgScopeIndexes(dims, this.#ext);
    return this.#indexes;
  }

  /**
   * Every scope's pending memories: the owner's connection only (another role sees no
   * scope without declaring it: {@link StorePrivilegeError}).
   */
  async pending(limit: number, afterRowid = 0): Promise<PendingVector[]> {
    if (!this.#privileged) throw new StorePrivilegeError("memory reembed", this.#where);
    const rows = await inTransaction(this.#pool, { readOnly: true }, (tx) =>
      tx.query<{ id: string; user_scope: string; content: string }>(
        `SELECT m.id, m.user_scope, m.content FROM promptctx_memories m
         WHERE m.id > $1 AND NOT EXISTS (SELECT 1 FROM promptctx_vec_state s WHERE s.id = m.id)
         ORDER BY m.id LIMIT $2`,
        [afterRowid, limit],
      ),
    );
    return rows.map((r) => ({ rowid: Number(r.id), userScope: r.user_scope, content: r.content }));
  }

  async pendingOf(keys: readonly (readonly [string, string])[]): Promise<PendingVector[]> {
    if (!this.searchable || keys.length === 0) return [];
    const byScope = groupBy(keys, (k) => k[0]);
    return inTransaction(
      this.#pool,
      { readOnly: true, scopes: [...byScope.keys()] },
      async (tx) => {
        const out: PendingVector[] = [];
        for (const [scope, ks] of byScope) {
          await tx.setScope(scope);
          const rows = await tx.query<{ id: string; content: string }>(
            `SELECT m.id, m.content FROM promptctx_memories m
           WHERE m.user_scope = $1 AND m.memory_id = ANY($2::text[]) AND NOT EXISTS
             (SELECT 1 FROM promptctx_vec_state s WHERE s.id = m.id)
           ORDER BY m.id`,
            [scope, ks.map((k) => k[1])],
          );
          for (const r of rows)
            out.push({ rowid: Number(r.id), userScope: scope, content: r.content });
        }
        return out.sort((a, b) => a.rowid - b.rowid);
      },
    );
  }

  /** Pending memories of `scopes` (each under its own row-level security), oldest first. */
  async pendingIn(scopes: readonly string[]): Promise<PendingVector[]> {
    if (!this.searchable || scopes.length === 0) return [];
    const sorted = [...new Set(scopes)].sort(compareCodePoints);
    return inTransaction(this.#pool, { readOnly: true, scopes: sorted }, async (tx) => {
      const out: PendingVector[] = [];
      for (const scope of sorted) {
        await tx.setScope(scope);
        const rows = await tx.query<{ id: string; content: string }>(
          `SELECT m.id, m.content FROM promptctx_memories m
           WHERE m.user_scope = $1 AND NOT EXISTS
             (SELECT 1 FROM promptctx_vec_state s WHERE s.id = m.id)`,
          [scope],
        );
        for (const r of rows)
          out.push({ rowid: Number(r.id), userScope: scope, content: r.content });
      }
      return out.sort((a, b) => a.rowid - b.rowid);
    });
  }

  /** Every scope's pending memories (the owner's connection; another role sees 0). */
  async pendingCount(): Promise<number> {
    const rows = await inTransaction(this.#pool, { readOnly: true }, (tx) =>
      tx.query<{ n: string }>(
        `SELECT count(*)::text AS n FROM promptctx_memories m
         WHERE NOT EXISTS (SELECT 1 FROM promptctx_vec_state s WHERE s.id = m.id)`,
      ),
    );
    return Number(rows[0]?.n ?? 0);
  }

  /**
   * Stores vectors, one transaction, each scope under its own row-level security; a memory
   * whose content changed since it was read (or that is gone) stays pending.
   */
  async put(items: readonly VectorWrite[]): Promise<number> {
    const dims = this.#recorded?.dimensions;
    if (dims === undefined) throw new Error("no embedder is recorded in the store");
    if (!this.searchable || items.length === 0) return 0;
    for (const it of items) {
      if (it.vector !== null && it.vector.length !== dims)
        throw new Error(`vector of ${it.vector.length} dimensions; the store's are ${dims}`);
    }
    const byScope = groupBy(items, (it) => it.userScope);
    // Scopes in code-point order: concurrent writers lock rows in the same order.
    const scopes = [...byScope.keys()].sort(compareCodePoints);
    const written: ScopeWrite[] = [];
    const stored = await inTransaction(this.#pool, { scopes }, async (tx) => {
      written.length = 0; // a retried transaction starts over
      let n = 0;
      for (const scope of scopes) {
        const its = byScope.get(scope)!;
        await tx.setScope(scope);
        n += await this.#putScope(tx, scope, its, written);
      }
      return n;
    });
    // Committed: this process's indexes of those scopes follow.
    for (const w of written) this.#indexes?.written(w);
    return stored;
  }

  async #putScope(
    tx: Tx,
    scope: string,
    items: readonly VectorWrite[],
    written: ScopeWrite[],
  ): Promise<number> {
    const current = await tx.query<{ id: string; category: string; content: string }>(
      `SELECT id, category, content FROM promptctx_memories
       WHERE user_scope = $1 AND id = ANY($2::int8[]) FOR UPDATE`,
      [scope, items.map((it) => it.rowid)],
    );
    const now = new Map(current.map((r) => [Number(r.id), r]));
    const fresh = items.filter((it) => now.get(it.rowid)?.content === it.content);
    if (fresh.length === 0) return 0;
    // The scope's vector generation, locked: no other write bumps it before this commits.
    const gen = async (lock: string) =>
      (
        await tx.query<{ g: string }>(
          `SELECT vector_gen::text AS g FROM promptctx_scopes WHERE user_scope = $1 ${lock}`,
          [scope],
        )
      )[0]?.g ?? "";
    const genBefore = await gen("FOR UPDATE");
    const ids = fresh.map((it) => it.rowid);
    await tx.query(
      "DELETE FROM promptctx_vec_state WHERE user_scope = $1 AND id = ANY($2::int8[])",
      [scope, ids],
    );
    await tx.query(
      `INSERT INTO promptctx_vec_state (id, user_scope, state)
       SELECT u.id, $1, u.state FROM unnest($2::int8[], $3::text[]) AS u(id, state)`,
      [scope, ids, fresh.map((it) => (it.vector === null ? "uncovered" : "embedded"))],
    );
    const embedded = fresh.filter((it) => it.vector !== null);
    if (embedded.length > 0) {
      await tx.query(
        `INSERT INTO promptctx_vectors (id, user_scope, category, embedding)
         SELECT u.id, $1, u.category, u.v::${this.#ext}.vector
         FROM unnest($2::int8[], $3::text[], $4::text[]) AS u(id, category, v)`,
        [
          scope,
          embedded.map((it) => it.rowid),
          embedded.map((it) => now.get(it.rowid)!.category),
          embedded.map((it) => vectorLiteral(it.vector!)),
        ],
      );
    }
    written.push({
      userScope: scope,
      genBefore,
      genAfter: await gen(""),
      changes: fresh.map((it) => ({
        rowid: it.rowid,
        category: now.get(it.rowid)!.category,
        vector: it.vector,
      })),
    });
    return embedded.length;
  }

  /**
   * The scope's `k` nearest vectors by cosine similarity, best first, ties by rowid:
   * exact, or a large scope's candidate index re-ranked exactly (see the module comment).
   */
  async search(
    userScope: string,
    vector: Float32Array,
    k: number,
    categories?: readonly string[],
  ): Promise<VectorHit[]> {
    if (!this.searchable) return [];
    const indexes = this.#scopeIndexes();
    // One snapshot (REPEATABLE READ): the generation read is the one of the vectors read.
    const tx = { readOnly: true, snapshot: true, scopes: [userScope] };
    return inTransaction(this.#pool, tx, async (tx) => {
      if (indexes !== null) {
        const hits = await indexes.search(tx, userScope, vector, k, categories);
        if (hits !== null) return hits;
      }
      return this.#exact(tx, userScope, vector, k, categories);
    });
  }

  /** pgvector's exact search inside the scope (its b-tree gives its rows). */
  async #exact(
    tx: Tx,
    userScope: string,
    vector: Float32Array,
    k: number,
    categories?: readonly string[],
  ): Promise<VectorHit[]> {
    const rows = await tx.query<{ id: string; v: string }>(
      `SELECT v.id, v.embedding::text AS v FROM promptctx_vectors v
       WHERE v.user_scope = $1 AND ($4::text[] IS NULL OR v.category = ANY($4::text[]))
       ORDER BY v.embedding OPERATOR(${this.#ext}.<=>) $2::${this.#ext}.vector, v.id LIMIT $3`,
      [userScope, vectorLiteral(vector), k + RERANK_MARGIN, categories ?? null],
    );
    // Ordered by pgvector, similarities computed by rankByCosine (the same in both dialects).
    return rankByCosine(
      vector,
      rows.map((r) => ({ rowid: Number(r.id), vector: parseVector(r.v) })),
      k,
    );
  }
}

/** pgvector's text output `[x,y,…]` as an array (float32, as stored). */
function parseVector(text: string): Float32Array {
  return Float32Array.from(text.slice(1, -1).split(","), Number);
}

async function readRecorded(tx: Tx): Promise<RecordedEmbedder | null> {
  const rows = await tx.query<RecordedEmbedder>(
    "SELECT embedder, dimensions FROM promptctx_embedder WHERE id = 1",
  );
  return rows[0] ?? null;
}

function checkDimensions(d: number): void {
  if (!Number.isSafeInteger(d) || d < 1 || d > 16000) {
    throw new Error(`invalid embedder dimensions ${d}`);
  }
}

function groupBy<T>(items: readonly T[], key: (t: T) => string): Map<string, T[]> {
  const out = new Map<string, T[]>();
  for (const it of items) {
    const k = key(it);
    const list = out.get(k);
    if (list === undefined) out.set(k, [it]);
    else list.push(it);
  }
  return out;
}
