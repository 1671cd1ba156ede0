/**
 * The matching half of recall on PostgreSQL: the same candidate pool SQLite's FTS5 query
 * yields, with the same bm25 (bm25.ts), from the postings table.
 *
 * As in SQLite (sqlite.ts): the query terms to search are all of them when their in-scope
 * matches fit the match budget, else the rarest first (see {@link rarestTerms}); the
 * matches of the searched terms inside the scope (and categories) are walked newest
 * first and cut at the budget; bm25 ranks them and the best `pool` (ties by memoryId)
 * become the candidates scored by score.ts. Every statement carries the scope in its
 * predicate, and row-level security holds it too.
 */

import { compareCodePoints } from "../text/index.js";
import { bm25IdfFromLn, bm25Score } from "./bm25.js";
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

/** A match: row id and bm25. */
export interface PgMatch {
  id: string;
  bm25: number;
}

interface ScopeStats {
  scopeId: number;
  rows: number;
  tokens: number;
}

async function scopeStats(tx: Tx, userScope: string): Promise<ScopeStats | null> {
  const rows = await tx.query<{ scope_id: number; rows: number; tokens: number }>(
    `SELECT s.scope_id, st.rows, st.tokens
     FROM promptctx_scopes s,
       (SELECT coalesce(sum(index_rows), 0)::float8 AS rows,
               coalesce(sum(index_tokens), 0)::float8 AS tokens
        FROM promptctx_stats) st
     WHERE s.user_scope = $1`,
    [userScope],
  );
  const r = rows[0];
  return r === undefined ? null : { scopeId: r.scope_id, rows: r.rows, tokens: r.tokens };
}

/**
 * Each key's document frequency in the scope, and `ln((N − n + 0.5) / (n + 0.5))` computed
 * by the server: its ln() is the C library's log(), as FTS5's, so the IDF is the same
 * double SQLite computes (JavaScript's Math.log may differ in the last bit).
 */
async function docFreqs(
  tx: Tx,
  scopeId: number,
  keys: readonly string[],
  rows: number,
): Promise<{ df: number[]; ln: number[] }> {
  const found = await tx.query<{ df: number; ln: number }>(
    `SELECT coalesce(t.df, 0) AS df,
       ln(($3::float8 - coalesce(t.df, 0) + 0.5) / (coalesce(t.df, 0) + 0.5)) AS ln
     FROM unnest($2::text[]) WITH ORDINALITY AS k(term, i)
     LEFT JOIN promptctx_terms t ON t.scope_id = $1 AND t.term = k.term
     ORDER BY k.i`,
    [scopeId, keys, rows],
  );
  return { df: found.map((r) => r.df), ln: found.map((r) => r.ln) };
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

const CATEGORY_FILTER = `AND ($4::text[] IS NULL OR EXISTS (
  SELECT 1 FROM promptctx_memories m
  WHERE m.id = p.id AND m.user_scope = $5 AND m.category = ANY($4::text[])))`;

/** The newest `scanBudget` in-scope matches: row id, term count, and frequency per key. */
async function scanMatches(
  tx: Tx,
  scope: { id: number; name: string },
  keys: readonly string[],
  categories: readonly string[] | null,
  scanBudget: number,
): Promise<Array<{ id: string; doc_len: number; terms: string[]; tfs: number[] }>> {
  // One key: walk its postings newest first (index order) and stop at the budget.
  const sql =
    keys.length === 1
      ? `SELECT p.id, p.doc_len, ARRAY[p.term] AS terms, ARRAY[p.tf] AS tfs
         FROM promptctx_postings p
         WHERE p.scope_id = $1 AND p.term = ($2::text[])[1] ${CATEGORY_FILTER}
         ORDER BY p.id DESC LIMIT $3`
      : `SELECT p.id, min(p.doc_len) AS doc_len, array_agg(p.term) AS terms,
           array_agg(p.tf) AS tfs
         FROM promptctx_postings p
         WHERE p.scope_id = $1 AND p.term = ANY($2::text[]) ${CATEGORY_FILTER}
         GROUP BY p.id ORDER BY p.id DESC LIMIT $3`;
  return tx.query(sql, [scope.id, keys, scanBudget, categories, scope.name]);
}

/**
 * The best `pool` matches by bm25, ties by memoryId (code points) as SQLite's `ORDER BY
 * bm25, memory_id`; memoryIds are read only for the matches tied at the cut.
 */
async function bestPool(
  tx: Tx,
  userScope: string,
  matches: PgMatch[],
  pool: number,
): Promise<PgMatch[]> {
  matches.sort((a, b) => a.bm25 - b.bm25);
  if (matches.length <= pool) return matches;
  const edge = matches[pool - 1]!.bm25;
  const better = matches.filter((m) => m.bm25 < edge);
  const tied = matches.filter((m) => m.bm25 === edge);
  const rows = await tx.query<{ id: string; memory_id: string }>(
    "SELECT id, memory_id FROM promptctx_memories WHERE user_scope = $1 AND id = ANY($2::int8[])",
    [userScope, tied.map((m) => m.id)],
  );
  const idOf = new Map(rows.map((r) => [r.id, r.memory_id]));
  tied.sort((a, b) => compareCodePoints(idOf.get(a.id) ?? "", idOf.get(b.id) ?? ""));
  return [...better, ...tied.slice(0, pool - better.length)];
}

/**
 * The candidate pool of a recall: row ids with their bm25, best first. Empty when the
 * scope holds nothing or nothing matches.
 */
export async function matchPool(
  tx: Tx,
  userScope: string,
  terms: readonly string[],
  categories: readonly string[] | null,
  limits: MatchLimits,
): Promise<PgMatch[]> {
  const stats = await scopeStats(tx, userScope);
  if (stats === null || stats.rows === 0) return [];
  const keys = [...new Set(terms.map(termKey))];
  const { df, ln } = await docFreqs(tx, stats.scopeId, keys, stats.rows);
  const searched = await searchKeys(tx, stats.scopeId, keys, df, limits.matchBudget);
  const rows = await scanMatches(
    tx,
    { id: stats.scopeId, name: userScope },
    searched,
    categories,
    limits.scanBudget,
  );
  if (rows.length === 0) return [];
  const idf = searched.map((k) => bm25IdfFromLn(ln[keys.indexOf(k)]!));
  const avgdl = stats.tokens / stats.rows;
  const matches = rows.map((r) => {
    const tf = new Map(r.terms.map((t, i) => [t, r.tfs[i]!]));
    const freqs = searched.map((k) => tf.get(k) ?? 0);
    return { id: r.id, bm25: bm25Score(idf, freqs, r.doc_len, avgdl) };
  });
  return bestPool(tx, userScope, matches, limits.pool);
}
