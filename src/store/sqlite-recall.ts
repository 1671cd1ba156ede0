/**
 * Recall's reads from the SQLite store: candidates from the FTS5 index, then the rows of
 * the pool. Ranking is rank.ts's (the same on every backend); this module only finds.
 *
 * 1. The scope's statistics (sqlite-stats.ts) and each query term's document frequency,
 *    counted up to the work budget + 1; {@link searchedTerms} picks the terms to search
 *    within the budget.
 * 2. One searched term: every match has the same weight, so the candidates are its
 *    `pool` most recently written matches (`ORDER BY rowid DESC LIMIT`, which FTS5 walks
 *    from the end of the doclist). Several: all their matches (their frequencies sum to at
 *    most the budget), weighted by the IDF of the searched terms each contains, and
 *    {@link poolOf} keeps the best `pool`.
 * 3. The pool's rows are read by rowid with the exact `user_scope = ?` comparison in the
 *    same statement (the scope prefix inside every MATCH already confines the search to
 *    the scope; the comparison guards against prefix collisions). Categories, when
 *    given, are part of the candidate statements (before the pool, never a post-filter).
 */
import type Database from "better-sqlite3";
import { scopePrefix } from "./prefix.js";
import { poolOf, type RecallCandidate, rankCandidates, searchedTerms } from "./rank.js";
import {
  type QueryWeights,
  queryWeights,
  type ScoreBreakdown,
  type ScoreWeights,
} from "./score.js";
import { readStats, type StatsStatements } from "./sqlite-stats.js";
import { ftsQuote } from "./terms.js";

/** A candidate: what ranking needs, and the rowid to read the whole row by. */
export type SqliteCandidate = RecallCandidate & { rowid: number };

export interface RecallStatements {
  newest: Database.Statement;
  newestInCats: Database.Statement;
  all: Database.Statement;
  allInCats: Database.Statement;
  pool: Database.Statement;
  rows: Database.Statement;
}

const CATS = `AND m.category IN (SELECT value FROM json_each(:cats))`;

/** Prepares the candidate and fetch statements; `columns` are the `m.` columns to read. */
export function prepareRecall(db: Database.Database, columns: string): RecallStatements {
  const newest = (cats: string) =>
    db
      .prepare(`SELECT f.rowid FROM memory_fts f JOIN memories m ON m.rowid = f.rowid
        WHERE memory_fts MATCH :match ${cats}
        ORDER BY f.rowid DESC LIMIT :limit`)
      .pluck();
  return {
    newest: db
      .prepare("SELECT rowid FROM memory_fts WHERE memory_fts MATCH ? ORDER BY rowid DESC LIMIT ?")
      .pluck(),
    newestInCats: newest(CATS),
    all: db.prepare("SELECT rowid FROM memory_fts WHERE memory_fts MATCH ?").pluck(),
    allInCats: db
      .prepare(`SELECT f.rowid FROM memory_fts f JOIN memories m ON m.rowid = f.rowid
        WHERE memory_fts MATCH :match ${CATS}`)
      .pluck(),
    // `+m.user_scope` keeps the planner on rowid lookups (not the scope index). Only
    // the columns ranking reads, as arrays: the pool is up to 500 rows per recall.
    pool: db
      .prepare(`SELECT m.rowid, m.memory_id, m.content, m.summary, m.tags, m.importance,
          m.captured_at FROM memories m
        WHERE m.rowid IN (SELECT value FROM json_each(:ids)) AND +m.user_scope = :scope`)
      .raw(),
    rows: db.prepare(`SELECT ${columns} FROM memories m
      WHERE m.rowid IN (SELECT value FROM json_each(:ids)) AND +m.user_scope = :scope`),
  };
}

/** What a recall asks of the store. */
export interface RecallRequest {
  userScope: string;
  terms: readonly string[];
  categories: readonly string[] | undefined;
  pool: number;
  budget: number;
}

/** A ranked hit: the whole row and its score breakdown. */
export interface RankedRow<R> {
  row: R;
  breakdown: ScoreBreakdown;
}

/**
 * The recall of the SQLite store: candidates, ranking (rank.ts) and the hits' rows, in
 * one read transaction (one snapshot: statistics, index and rows agree even while
 * another connection writes).
 */
export function recallRows<R extends { rowid: number }>(
  db: Database.Database,
  s: RecallStatements,
  stats: StatsStatements,
  req: RecallRequest & { asOf: string; weights: ScoreWeights; limit: number },
): Array<RankedRow<R>> {
  return db.transaction(() => {
    const found = findCandidates(s, stats, req);
    const ranked = rankCandidates(found.candidates, found.query, {
      asOf: req.asOf,
      weights: req.weights,
      limit: req.limit,
      avgLength: found.avgLength,
    });
    const rows = readRows<R>(
      s,
      req.userScope,
      ranked.map((r) => r.candidate),
    );
    return ranked.map((r) => ({ row: rows.get(r.candidate.rowid)!, breakdown: r.breakdown }));
  })();
}

/** The pool as rank.ts candidates, the query's IDF weights and the scope's average length. */
export interface FoundCandidates {
  query: QueryWeights;
  avgLength: number;
  candidates: SqliteCandidate[];
}

/** Steps 1–3 of the module comment. */
function findCandidates(
  s: RecallStatements,
  stats: StatsStatements,
  req: RecallRequest,
): FoundCandidates {
  const st = readStats(stats, req.userScope, req.terms, req.budget + 1);
  const query = queryWeights(req.terms, st.n, st.df);
  const found: FoundCandidates = { query, avgLength: st.avgLength, candidates: [] };
  const searched = searchedTerms(req.terms, st.df, req.budget);
  if (searched.length === 0) return found;
  const prefix = scopePrefix(req.userScope);
  const cats = req.categories === undefined ? null : JSON.stringify(req.categories);
  const match = (i: number) => ftsQuote(prefix + req.terms[i]!);
  let ids: number[];
  if (searched.length === 1) {
    const m = match(searched[0]!);
    ids = (
      cats === null
        ? s.newest.all(m, req.pool)
        : s.newestInCats.all({ match: m, cats, limit: req.pool })
    ) as number[];
  } else {
    const weights = new Map<number, number>();
    for (const i of searched) {
      const m = match(i);
      const rows = (cats === null ? s.all.all(m) : s.allInCats.all({ match: m, cats })) as number[];
      for (const id of rows) weights.set(id, (weights.get(id) ?? 0) + query.idf[i]!);
    }
    ids = poolOf(weights, req.pool);
  }
  if (ids.length === 0) return found;
  const rows = s.pool.all({ ids: JSON.stringify(ids), scope: req.userScope }) as PoolRow[];
  return {
    ...found,
    candidates: rows.map(([rowid, memoryId, content, summary, tags, importance, capturedAt]) => ({
      rowid,
      memoryId,
      content,
      summary,
      tags: JSON.parse(tags) as string[],
      importance,
      capturedAt,
    })),
  };
}

type PoolRow = [number, string, string, string, string, number, string];

/** The whole rows of `candidates` (read after ranking, for the hits only), by rowid. */
function readRows<R extends { rowid: number }>(
  s: RecallStatements,
  userScope: string,
  candidates: readonly SqliteCandidate[],
): Map<number, R> {
  if (candidates.length === 0) return new Map();
  const ids = JSON.stringify(candidates.map((c) => c.rowid));
  const rows = s.rows.all({ ids, scope: userScope }) as R[];
  return new Map(rows.map((r) => [r.rowid, r]));
}
