/**
 * Recall's reads from the SQLite store: candidates from the FTS5 index, then the rows of
 * the pool. Ranking is rank.ts's (the same on every backend); this module only finds.
 *
 * 1. The scope's statistics (stats.ts) and each query term's document frequency,
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
 *    A pool no larger than the hits asked for is read whole at once (every candidate is
 *    then a hit); a larger one reads what ranking needs, then the hits' whole rows.
 */
import type Database from "better-sqlite3";
import {
  countsBm25,
  indexKnowledge,
  poolOf,
  presence,
  type RecallCandidate,
  rankCandidates,
  searchedTerms,
} from "../rank.js";
import {
  type QueryWeights,
  queryWeights,
  type ScoreBreakdown,
  type ScoreWeights,
} from "../score.js";
import { ftsQuote } from "../terms.js";
import { parseTags, type ReadCache } from "./cache.js";
import type { RawRow } from "./columns.js";
import { scopePrefix } from "./prefix.js";
import { readStats, type StatsStatements } from "./stats.js";

/** A candidate: what ranking needs, and the rowid to read the whole row by. */
type SqliteCandidate = RecallCandidate & { rowid: number };

export interface RecallStatements {
  newest: Database.Statement;
  newestInCats: Database.Statement;
  all: Database.Statement;
  allInCats: Database.Statement;
  pool: Database.Statement;
  poolText: Database.Statement;
  rows: Database.Statement;
}

const CATS = `AND m.category IN (SELECT value FROM json_each(:cats))`;
const POOL = "m.rowid, m.memory_id, m.importance, m.captured_at";
const BY_IDS = "WHERE m.rowid IN (SELECT value FROM json_each(:ids)) AND +m.user_scope = :scope";

/**
 * Prepares the candidate and fetch statements; `columns` are the `m.` columns of a
 * {@link RawRow}. Rows are read as arrays: building an object per row costs more than
 * the read itself.
 */
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
    // the columns ranking reads: the pool is up to 500 rows per recall.
    pool: db.prepare(`SELECT ${POOL} FROM memories m ${BY_IDS}`).raw(),
    poolText: db
      .prepare(`SELECT ${POOL}, m.content, m.summary, m.tags FROM memories m ${BY_IDS}`)
      .raw(),
    rows: db.prepare(`SELECT ${columns} FROM memories m ${BY_IDS}`).raw(),
  };
}

/** What a recall asks of the store. */
export interface RecallRequest {
  userScope: string;
  terms: readonly string[];
  categories: readonly string[] | undefined;
  pool: number;
  budget: number;
  /** Hits returned at most. */
  limit: number;
}

/** A ranked hit: the whole row and its score breakdown. */
export interface RankedRow {
  row: RawRow;
  breakdown: ScoreBreakdown;
}

/** A recall as {@link recallRunner} makes it. */
export type RecallRun = (
  req: RecallRequest & { asOf: string; weights: ScoreWeights },
) => RankedRow[];

/**
 * The recall of the SQLite store: candidates, ranking (rank.ts) and the hits' rows with
 * their BM25, in one read transaction (one snapshot: statistics, index and rows agree
 * even while another connection writes). The transaction function is made once per
 * connection (making one costs more than a small recall's statements).
 */
export function recallRunner(
  db: Database.Database,
  s: RecallStatements,
  stats: StatsStatements,
  cache: ReadCache,
): RecallRun {
  return db.transaction((req: Parameters<RecallRun>[0]): RankedRow[] => {
    const found = findCandidates(s, stats, cache, req);
    const ranked = rankCandidates(found.candidates, found.query, req);
    if (ranked.length === 0) return [];
    const ids = ranked.map((r) => r.candidate.rowid);
    const rows = found.rows ?? rowsById(s.rows, cache, ids, req.userScope);
    return ranked.map((r) => {
      const row = rows.get(r.candidate.rowid)!;
      const bm25 = countsBm25(found.query, cache.counts(row), found.avgLength);
      return { row, breakdown: { ...r.breakdown, bm25 } };
    });
  });
}

/**
 * The rows of `ids` in the scope, by rowid: from `cache`, the others read by `stmt`
 * (which reads {@link RawRow}s) and cached. A cached row of another scope is left out as
 * the statement leaves it out.
 */
function rowsById(
  stmt: Database.Statement,
  cache: ReadCache,
  ids: readonly number[],
  userScope: string,
): Map<number, RawRow> {
  const out = new Map<number, RawRow>();
  const missing: number[] = [];
  for (const id of ids) {
    const row = cache.row(id);
    if (row === undefined) missing.push(id);
    else if (row[2] === userScope) out.set(id, row);
  }
  if (missing.length === 0) return out;
  const read = stmt.all({ ids: JSON.stringify(missing), scope: userScope }) as RawRow[];
  for (const row of read) {
    cache.setRow(row);
    out.set(row[0], row);
  }
  return out;
}

/** The pool as rank.ts candidates, the query's IDF weights and the scope's average length. */
interface FoundCandidates {
  query: QueryWeights;
  avgLength: number;
  candidates: SqliteCandidate[];
  /** The candidates' whole rows, when the pool was read whole. */
  rows?: Map<number, RawRow>;
}

/** Steps 1–3 of the module comment. */
function findCandidates(
  s: RecallStatements,
  stats: StatsStatements,
  cache: ReadCache,
  req: RecallRequest,
): FoundCandidates {
  const st = readStats(stats, cache, req.userScope, req.terms, req.budget + 1);
  const query = queryWeights(req.terms, st.n, st.df);
  const found: FoundCandidates = { query, avgLength: st.avgLength, candidates: [] };
  const searched = searchedTerms(req.terms, st.df, req.budget);
  if (searched.length === 0) return found;
  const matched = matchedTerms(s, cache, req, searched, st.df);
  if (matched.size === 0) return found;
  const { leftOut, known: knownOf } = indexKnowledge(req.terms, st.df, searched);
  const ids = poolOf(
    new Map([...matched].map(([id, ts]) => [id, ts.reduce((a, i) => a + query.idf[i]!, 0)])),
    req.pool,
  );
  const candidate = (
    rowid: number,
    memoryId: string,
    importance: number,
    capturedAt: string,
    text: () => string,
  ): SqliteCandidate => {
    const has = presence(req.terms, knownOf(matched.get(rowid) ?? []), text);
    return { rowid, memoryId, importance, capturedAt, has };
  };
  if (ids.length <= req.limit) {
    // Every candidate will be a hit: one read for ranking and for the hits.
    found.rows = rowsById(s.rows, cache, ids, req.userScope);
    found.candidates = [...found.rows.values()].map((r) =>
      candidate(r[0], r[1], r[8], r[14], () => memoryText(r[6], r[7], r[5])),
    );
    return found;
  }
  const bind = { ids: JSON.stringify(ids), scope: req.userScope };
  const rows = (leftOut ? s.poolText : s.pool).all(bind) as PoolRow[];
  found.candidates = rows.map(([rowid, memoryId, importance, capturedAt, content, summary, tags]) =>
    candidate(rowid, memoryId, importance, capturedAt, () => memoryText(content!, summary!, tags!)),
  );
  return found;
}

/** The text term presence is read from: content, summary and tags (see `recordTerms`). */
function memoryText(content: string, summary: string, tags: string): string {
  return [content, summary, ...parseTags(tags)].join("\n");
}

/**
 * The candidates and the searched terms each contains (indices into `req.terms`): for one
 * searched term its `pool` newest matches, else every match of every searched term.
 */
function matchedTerms(
  s: RecallStatements,
  cache: ReadCache,
  req: RecallRequest,
  searched: readonly number[],
  df: readonly number[],
): Map<number, number[]> {
  const out = new Map<number, number[]>();
  const cats = req.categories === undefined ? "" : JSON.stringify(req.categories);
  if (searched.length === 1) {
    const i = searched[0]!;
    // A term within the budget has its matches cached whole: the newest `pool` of them
    // are what `ORDER BY rowid DESC LIMIT pool` reads.
    const ids =
      df[i]! <= req.budget
        ? postings(s, cache, req, cats, i).slice(0, req.pool)
        : newestMatches(s, req, i);
    for (const id of ids) out.set(id, [i]);
    return out;
  }
  // Several terms: their frequencies sum to at most the budget (see searchedTerms).
  for (const i of searched) {
    for (const id of postings(s, cache, req, cats, i)) {
      const ts = out.get(id);
      if (ts === undefined) out.set(id, [i]);
      else ts.push(i);
    }
  }
  return out;
}

/** The FTS5 query of term `i` in the request's scope. */
function matchOf(req: RecallRequest, i: number): string {
  return ftsQuote(scopePrefix(req.userScope) + req.terms[i]!);
}

/**
 * Every match of term `i` in the categories `cats` (their JSON list, "" for any), newest
 * (highest rowid) first, cached (see cache.ts). Only for a term within the work
 * budget.
 */
function postings(
  s: RecallStatements,
  cache: ReadCache,
  req: RecallRequest,
  cats: string,
  i: number,
): readonly number[] {
  const term = req.terms[i]!;
  const known = cache.postings(req.userScope, cats, term);
  if (known !== undefined) return known;
  const match = matchOf(req, i);
  const rowids = (cats === "" ? s.all.all(match) : s.allInCats.all({ match, cats })) as number[];
  // Newest first, sorted once when read (not on every recall that takes the newest).
  rowids.sort((a, b) => b - a);
  cache.setPostings(req.userScope, cats, term, rowids);
  return rowids;
}

/** The `pool` newest matches of term `i` (in the request's categories, when given). */
function newestMatches(s: RecallStatements, req: RecallRequest, i: number): number[] {
  const match = matchOf(req, i);
  return (
    req.categories === undefined
      ? s.newest.all(match, req.pool)
      : s.newestInCats.all({
          match,
          cats: JSON.stringify(req.categories),
          limit: req.pool,
        })
  ) as number[];
}

/** rowid, memory_id, importance, captured_at (and content, summary, tags with text). */
type PoolRow = [number, string, number, string, string?, string?, string?];
