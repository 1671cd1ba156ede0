/**
 * Recall's reads from the SQLite store: candidates from the FTS5 index, then the rows of
 * the pool. Ranking is rank.ts's (the same on every backend); this module only finds.
 *
 * 1. The scope's statistics (sqlite-stats.ts) give each query term's document frequency;
 *    {@link searchedTerms} picks the terms to search within the work budget.
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
import { poolOf, type RecallCandidate, searchedTerms } from "./rank.js";
import { type QueryWeights, queryWeights } from "./score.js";
import { readStats, type StatsStatements } from "./sqlite-stats.js";
import { ftsQuote } from "./terms.js";

/** The columns recall needs of a memory row (the store reads more). */
export interface RecallRow {
  rowid: number;
  memory_id: string;
  content: string;
  summary: string;
  /** JSON array. */
  tags: string;
  importance: number;
  captured_at: string;
}

export interface RecallStatements {
  newest: Database.Statement;
  newestInCats: Database.Statement;
  all: Database.Statement;
  allInCats: Database.Statement;
  fetch: Database.Statement;
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
    // `+m.user_scope` keeps the planner on rowid lookups (not the scope index).
    fetch: db.prepare(`SELECT ${columns} FROM memories m
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

/** The pool's rows as rank.ts candidates, the query's IDF weights and the scope's average length. */
export interface FoundCandidates<R extends RecallRow> {
  query: QueryWeights;
  avgLength: number;
  candidates: Array<RecallCandidate & { row: R }>;
}

/** Steps 1–3 of the module comment. */
export function findCandidates<R extends RecallRow>(
  s: RecallStatements,
  stats: StatsStatements,
  req: RecallRequest,
): FoundCandidates<R> {
  const st = readStats(stats, req.userScope, req.terms);
  const query = queryWeights(req.terms, st.n, st.df);
  const found: FoundCandidates<R> = { query, avgLength: st.avgLength, candidates: [] };
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
  const rows = s.fetch.all({ ids: JSON.stringify(ids), scope: req.userScope }) as R[];
  return {
    ...found,
    candidates: rows.map((row) => ({
      memoryId: row.memory_id,
      content: row.content,
      summary: row.summary,
      tags: JSON.parse(row.tags) as string[],
      importance: row.importance,
      capturedAt: row.captured_at,
      row,
    })),
  };
}
