/**
 * The matching half of recall on PostgreSQL: the candidate pool SQLite's FTS5 query yields,
 * with the very same bm25 doubles, from the postings table.
 *
 * As in SQLite (sqlite.ts): the query terms to search are all of them when their in-scope
 * matches fit the match budget, else the rarest first (see {@link rarestTerms}); the
 * matches of the searched terms inside the scope (and categories) are walked newest
 * first and cut at the budget; bm25 ranks them and the best `pool` (ties by memoryId)
 * become the candidates that score.ts scores. Every statement carries the scope in its
 * predicate, and row-level security holds it too.
 *
 * bm25 is FTS5's (fts5_aux.c), computed by the server operation for operation, in the
 * same order, in IEEE doubles — so the same double as SQLite's:
 *
 *     idf(t)  = ln((N − n(t) + 0.5) / (n(t) + 0.5)), and 1e-6 when that is ≤ 0
 *     bm25(D) = −1 × Σ_t idf(t) × ((f × (k1 + 1)) / (f + k1 × ((1 − b) + (b × |D|) / avgdl)))
 *
 * with k1 = 1.2, b = 0.75, summed over the searched terms in query order (a term the row
 * lacks adds exactly 0). The statistics are FTS5's own: `N` = rows ever written to the
 * index and `avgdl` = tokens ever written / N — FTS5 does not decrement these totals
 * when a row of a contentless-delete table is deleted, so every write (insert, or the
 * delete + insert of an update) counts once; they are store-wide — and `n(t)` = the
 * scope's rows that hold the term now. PostgreSQL's ln() is the C library's log(), as
 * FTS5's (JavaScript's Math.log may differ in the last bit).
 */
import type { Tx } from "./pg-tx.js";
import { termKey } from "./pg-write.js";
import { rarestTerms } from "./recall-rank.js";

/** The limits of one recall's work. */
export interface MatchLimits {
  /** In-scope matches counted before terms are left out (the store's matchBudget). */
  matchBudget: number;
  /** Matches scored by bm25: max(matchBudget, poolSize, limit). */
  scanBudget: number;
  /** Candidates kept: max(poolSize, limit). */
  pool: number;
}

/** The scope's id, the store-wide bm25 statistics, and each key's document frequency. */
interface ScopeStats {
  scopeId: number;
  rows: number;
  tokens: number;
  df: number[];
  /** `ln((N − n + 0.5) / (n + 0.5))` per key, by the server. */
  ln: number[];
}

/** One statement for everything recall needs before matching; null when the scope holds nothing. */
async function scopeStats(
  tx: Tx,
  userScope: string,
  keys: readonly string[],
): Promise<ScopeStats | null> {
  const rows = await tx.query<{
    scope_id: number;
    rows: number;
    tokens: number;
    df: number[];
    ln: number[];
  }>(
    `WITH st AS (
       SELECT coalesce(sum(index_rows), 0)::float8 AS rows,
              coalesce(sum(index_tokens), 0)::float8 AS tokens
       FROM promptctx_stats),
     s AS (SELECT scope_id FROM promptctx_scopes WHERE user_scope = $1),
     k AS (
       SELECT k.i, coalesce(t.df, 0) AS df
       FROM unnest($2::text[]) WITH ORDINALITY AS k(term, i)
       LEFT JOIN promptctx_terms t ON t.scope_id = (SELECT scope_id FROM s) AND t.term = k.term)
     SELECT s.scope_id, st.rows, st.tokens,
       array_agg(k.df ORDER BY k.i) AS df,
       array_agg(ln((st.rows - k.df + 0.5) / (k.df + 0.5)) ORDER BY k.i) AS ln
     FROM s, st, k
     GROUP BY s.scope_id, st.rows, st.tokens`,
    [userScope, keys],
  );
  const r = rows[0];
  return r === undefined
    ? null
    : { scopeId: r.scope_id, rows: r.rows, tokens: r.tokens, df: r.df, ln: r.ln };
}

/** In-scope memories holding any of `keys`, counted up to `cap`. */
async function unionCount(tx: Tx, scopeId: number, keys: readonly string[], cap: number) {
  const rows = await tx.query<{ n: number }>(
    `SELECT count(*)::int AS n FROM (
       SELECT DISTINCT id FROM promptctx_postings WHERE scope_id = $1 AND term = ANY($2::text[])
       LIMIT $3) x`,
    [scopeId, keys, cap],
  );
  return rows[0]?.n ?? 0;
}

/** The keys to search, as SQLite's `#searchTerms` chooses them. */
async function searchKeys(
  tx: Tx,
  scopeId: number,
  keys: readonly string[],
  df: readonly number[],
  budget: number,
): Promise<string[]> {
  if (keys.length === 1) return [...keys];
  const counts = df.map((n) => Math.min(n, budget + 1));
  const sum = counts.reduce((a, b) => a + b, 0);
  const fits =
    sum <= budget ||
    (Math.max(...counts) <= budget && (await unionCount(tx, scopeId, keys, budget + 1)) <= budget);
  return fits ? [...keys] : rarestTerms(keys, counts, budget);
}

const COLUMNS = `mem.id, mem.memory_id, mem.user_scope, mem.kind, mem.category, mem.tags,
  mem.content, mem.summary, mem.importance, mem.conflict_key, mem.authority, mem.source_id,
  mem.source_type, mem.source_title, mem.captured_at, mem.stored_at`;

// $1 scope id, $2 scope, $3 searched keys, $4 their idf, $5 avgdl, $6 scan budget,
// $7 pool, $8 categories (or null), $9 every query key.
const IN_CATEGORIES = `AND ($8::text[] IS NULL OR EXISTS (
  SELECT 1 FROM promptctx_memories c
  WHERE c.id = p.id AND c.user_scope = $2 AND c.category = ANY($8::text[])))`;
const SCORE = `-1.0::float8 * sum(q.idf * ((p.tf::float8 * 2.2::float8)
  / (p.tf::float8 + 1.2::float8 * (0.25::float8 + 0.75::float8 * p.doc_len::float8 / $5::float8)))
  ORDER BY q.i)`;

/**
 * The statement that matches, scores, cuts and fetches: the newest `$6` matches, their
 * bm25, the best `$7` by (bm25, memoryId) — memoryIds are joined only for the rows up to
 * the cut — and for each, which query keys it holds (the coverage of score.ts, read from
 * the index instead of re-tokenizing the text). With one searched key the match walks
 * the postings index newest first and stops at the budget.
 */
function poolStatement(oneKey: boolean): string {
  const match = oneKey ? "p.term = ($3::text[])[1]" : "p.term = ANY($3::text[])";
  return `WITH q AS (
      SELECT k.term, k.i, ($4::float8[])[k.i] AS idf
      FROM unnest($3::text[]) WITH ORDINALITY AS k(term, i)),
    matches AS (
      SELECT p.id, ${SCORE} AS bm25
      FROM promptctx_postings p JOIN q ON q.term = p.term
      WHERE p.scope_id = $1 AND ${match} ${IN_CATEGORIES}
      GROUP BY p.id ORDER BY p.id DESC LIMIT $6),
    edge AS (SELECT bm25 FROM matches ORDER BY bm25 LIMIT 1 OFFSET $7 - 1),
    pool AS (
      SELECT m.bm25, ${COLUMNS}
      FROM matches m JOIN promptctx_memories mem ON mem.id = m.id AND mem.user_scope = $2
      WHERE m.bm25 <= coalesce((SELECT bm25 FROM edge), 'Infinity'::float8)
      ORDER BY m.bm25, mem.memory_id LIMIT $7)
    SELECT pool.*, ARRAY(
        SELECT k.i FROM unnest($9::text[]) WITH ORDINALITY AS k(term, i)
        WHERE EXISTS (SELECT 1 FROM promptctx_postings h
          WHERE h.scope_id = $1 AND h.term = k.term AND h.id = pool.id)
        ORDER BY k.i) AS have
    FROM pool ORDER BY pool.bm25, pool.memory_id`;
}

/** A pooled row: the memory's columns, its bm25, and the 1-based query keys it holds. */
export interface PoolRow {
  bm25: number;
  have: number[];
  [column: string]: unknown;
}

/**
 * The candidate pool of a recall, best bm25 first (ties by memoryId), with the query
 * terms each candidate holds. Empty when the scope holds nothing or nothing matches.
 */
export async function matchPool(
  tx: Tx,
  userScope: string,
  terms: readonly string[],
  categories: readonly string[] | null,
  limits: MatchLimits,
): Promise<Array<{ row: PoolRow; present: Set<string> }>> {
  const keys = terms.map(termKey);
  const stats = await scopeStats(tx, userScope, keys);
  if (stats === null || stats.rows === 0) return [];
  const searched = await searchKeys(tx, stats.scopeId, keys, stats.df, limits.matchBudget);
  const idf = searched.map((k) => {
    const ln = stats.ln[keys.indexOf(k)]!;
    return ln <= 0 ? 1e-6 : ln;
  });
  const rows = await tx.query<PoolRow>(poolStatement(searched.length === 1), [
    stats.scopeId,
    userScope,
    searched,
    idf,
    stats.tokens / stats.rows,
    limits.scanBudget,
    limits.pool,
    categories,
    keys,
  ]);
  return rows.map((row) => ({
    row,
    present: new Set(row.have.map((i) => terms[i - 1]!)),
  }));
}
