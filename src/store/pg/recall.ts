/**
 * Recall's reads from the PostgreSQL store: the same candidates SQLite's FTS5 search
 * yields (../sqlite/recall.ts), from the postings table, ranked by rank.ts — the same
 * ranking as every backend.
 *
 * 1. The scope's statistics, computed in SQL within the scope: N (its memories), the
 *    average number of index terms per memory, and each query term's document frequency
 *    (`promptctx_terms`), capped at the work budget + 1 as SQLite counts it;
 *    {@link searchedTerms} picks the terms to search within the budget.
 * 2. One searched term: its `pool` most recently written matches (ids descending). Several:
 *    all their matches, weighted by the IDF of the searched terms each contains, and
 *    {@link poolOf} keeps the best `pool`.
 * 3. The pool's rows are read with `user_scope = $1` in the predicate (row-level security
 *    holds it too); categories are part of the candidate statements, never a post-filter.
 */

import {
  hitBm25,
  indexKnowledge,
  poolOf,
  presence,
  type RecallCandidate,
  rankCandidates,
  searchedTerms,
} from "../rank.js";
import type { MemoryRecord } from "../schema.js";
import {
  type QueryWeights,
  queryWeights,
  type ScoreBreakdown,
  type ScoreWeights,
} from "../score.js";
import type { Tx } from "./tx.js";
import { termKey } from "./write.js";

/** What a recall asks of the store. */
export interface PgRecallRequest {
  userScope: string;
  terms: readonly string[];
  categories: readonly string[] | null;
  pool: number;
  budget: number;
  asOf: string;
  weights: ScoreWeights;
  limit: number;
}

/** Reads the stored records of row ids of the scope. */
export type FetchRecords = (ids: readonly string[]) => Promise<Map<string, MemoryRecord>>;

/** A ranked hit: the record and its score breakdown. */
export interface PgRankedHit {
  record: MemoryRecord;
  breakdown: ScoreBreakdown;
}

interface ScopeStats {
  scopeId: number;
  n: number;
  avgLength: number;
  df: number[];
}

/** Step 1: the scope's N, average length and the terms' capped document frequencies. */
async function scopeStats(
  tx: Tx,
  userScope: string,
  terms: readonly string[],
  cap: number,
): Promise<ScopeStats | null> {
  // The counters every write keeps (migration 2): one row, whatever the scope's size.
  const rows = await tx.query<{ scope_id: number; n: number; len: number }>(
    `SELECT s.scope_id, s.memory_count::float8 AS n, s.term_count::float8 AS len
     FROM promptctx_scopes s WHERE s.user_scope = $1`,
    [userScope],
  );
  const r = rows[0];
  if (r === undefined || r.n === 0) return null;
  const found = await tx.query<{ df: number }>(
    `SELECT least(coalesce(t.df, 0), $3::int) AS df
     FROM unnest($2::text[]) WITH ORDINALITY AS k(term, i)
     LEFT JOIN promptctx_terms t ON t.scope_id = $1 AND t.term = k.term
     ORDER BY k.i`,
    [r.scope_id, terms.map(termKey), cap],
  );
  return { scopeId: r.scope_id, n: r.n, avgLength: r.len / r.n, df: found.map((f) => f.df) };
}

const CATEGORY_FILTER = `AND ($4::text[] IS NULL OR EXISTS (
  SELECT 1 FROM promptctx_memories m
  WHERE m.id = p.id AND m.user_scope = $5 AND m.category = ANY($4::text[])))`;

/** Step 2: the matches (row ids) and the searched terms each contains. */
async function matchedTerms(
  tx: Tx,
  st: ScopeStats,
  req: PgRecallRequest,
  searched: readonly number[],
): Promise<Map<string, number[]>> {
  const keys = searched.map((i) => termKey(req.terms[i]!));
  const one = searched.length === 1;
  const rows = await tx.query<{ id: string; term: string }>(
    `SELECT p.id, p.term FROM promptctx_postings p
     WHERE p.scope_id = $1 AND p.term = ANY($2::text[]) ${CATEGORY_FILTER}
     ${one ? "ORDER BY p.id DESC LIMIT $3" : "AND $3::int IS NOT NULL"}`,
    [st.scopeId, keys, req.pool, req.categories, req.userScope],
  );
  const out = new Map<string, number[]>();
  for (const r of rows) {
    const i = searched[keys.indexOf(r.term)]!;
    const ts = out.get(r.id);
    if (ts === undefined) out.set(r.id, [i]);
    else ts.push(i);
  }
  return out;
}

/** Step 3: the pool as rank.ts candidates, with their records. */
function candidatesOf(
  req: PgRecallRequest,
  st: ScopeStats,
  searched: readonly number[],
  matched: ReadonlyMap<string, number[]>,
  records: ReadonlyMap<string, MemoryRecord>,
): Array<RecallCandidate & { record: MemoryRecord }> {
  const index = indexKnowledge(req.terms, st.df, searched);
  return [...records].map(([id, record]) => {
    const known = index.known(matched.get(id) ?? []);
    const text = () => [record.content, record.summary, ...record.tags].join("\n");
    return {
      memoryId: record.memoryId,
      importance: record.importance,
      capturedAt: record.source.capturedAt,
      has: presence(req.terms, known, text),
      record,
    };
  });
}

/** The ranked hits of a recall (inside the caller's scoped read-only transaction). */
export async function recallPg(
  tx: Tx,
  req: PgRecallRequest,
  fetch: FetchRecords,
): Promise<PgRankedHit[]> {
  const st = await scopeStats(tx, req.userScope, req.terms, req.budget + 1);
  if (st === null) return [];
  const query: QueryWeights = queryWeights(req.terms, st.n, st.df);
  const searched = searchedTerms(req.terms, st.df, req.budget);
  if (searched.length === 0) return [];
  const matched = await matchedTerms(tx, st, req, searched);
  if (matched.size === 0) return [];
  const weights = new Map(
    [...matched].map(([id, ts]) => [Number(id), ts.reduce((a, i) => a + query.idf[i]!, 0)]),
  );
  const records = await fetch(poolOf(weights, req.pool).map(String));
  const ranked = rankCandidates(candidatesOf(req, st, searched, matched, records), query, req);
  return ranked.map(({ candidate, breakdown }) => ({
    record: candidate.record,
    breakdown: { ...breakdown, bm25: hitBm25(query, candidate.record, st.avgLength) },
  }));
}
