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
import {
  hitBm25,
  indexKnowledge,
  poolOf,
  presence,
  type RecallCandidate,
  rankCandidates,
  searchedTerms,
} from "./rank.js";
import {
  type QueryWeights,
  queryWeights,
  type ScoreBreakdown,
  type ScoreWeights,
} from "./score.js";
import { readStats, type StatsStatements } from "./sqlite-stats.js";
import { ftsQuote } from "./terms.js";

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
    pool: db.prepare(`SELECT ${POOL} FROM memories m ${BY_IDS}`).raw(),
    poolText: db
      .prepare(`SELECT ${POOL}, m.content, m.summary, m.tags FROM memories m ${BY_IDS}`)
      .raw(),
    rows: db.prepare(`SELECT ${columns} FROM memories m ${BY_IDS}`),
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
 * The recall of the SQLite store: candidates, ranking (rank.ts) and the hits' rows with
 * their BM25, in one read transaction (one snapshot: statistics, index and rows agree
 * even while another connection writes).
 */
export function recallRows<R extends RecallRow>(
  db: Database.Database,
  s: RecallStatements,
  stats: StatsStatements,
  req: RecallRequest & { asOf: string; weights: ScoreWeights; limit: number },
): Array<RankedRow<R>> {
  return db.transaction(() => {
    const found = findCandidates(s, stats, req);
    const ranked = rankCandidates(found.candidates, found.query, req);
    if (ranked.length === 0) return [];
    const ids = JSON.stringify(ranked.map((r) => r.candidate.rowid));
    const rows = new Map(
      (s.rows.all({ ids, scope: req.userScope }) as R[]).map((r) => [r.rowid, r]),
    );
    return ranked.map((r) => {
      const row = rows.get(r.candidate.rowid)!;
      const memory = { content: row.content, summary: row.summary, tags: parseTags(row.tags) };
      const bm25 = hitBm25(found.query, memory, found.avgLength);
      return { row, breakdown: { ...r.breakdown, bm25 } };
    });
  })();
}

/** The columns of a memory row recall reads itself (the store reads all). */
export interface RecallRow {
  rowid: number;
  content: string;
  summary: string;
  /** JSON array. */
  tags: string;
}

/** The pool as rank.ts candidates, the query's IDF weights and the scope's average length. */
interface FoundCandidates {
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
  const matched = matchedTerms(s, req, searched, query);
  if (matched.size === 0) return found;
  const { leftOut, known: knownOf } = indexKnowledge(req.terms, st.df, searched);
  const ids = JSON.stringify(
    poolOf(
      new Map([...matched].map(([id, ts]) => [id, ts.reduce((a, i) => a + query.idf[i]!, 0)])),
      req.pool,
    ),
  );
  const rows = (leftOut ? s.poolText : s.pool).all({ ids, scope: req.userScope }) as PoolRow[];
  found.candidates = rows.map(
    ([rowid, memoryId, importance, capturedAt, content, summary, tags]) => {
      const known = knownOf(matched.get(rowid) ?? []);
      const text = () => [content!, summary!, ...parseTags(tags!)].join("\n");
      return { rowid, memoryId, importance, capturedAt, has: presence(req.terms, known, text) };
    },
  );
  return found;
}

/**
 * The candidates and the searched terms each contains (indices into `req.terms`): for one
 * searched term its `pool` newest matches, else every match of every searched term.
 */
function matchedTerms(
  s: RecallStatements,
  req: RecallRequest,
  searched: readonly number[],
  query: QueryWeights,
): Map<number, number[]> {
  const prefix = scopePrefix(req.userScope);
  const cats = req.categories === undefined ? null : JSON.stringify(req.categories);
  const match = (i: number) => ftsQuote(prefix + query.terms[i]!);
  const out = new Map<number, number[]>();
  if (searched.length === 1) {
    const i = searched[0]!;
    const ids = (
      cats === null
        ? s.newest.all(match(i), req.pool)
        : s.newestInCats.all({ match: match(i), cats, limit: req.pool })
    ) as number[];
    for (const id of ids) out.set(id, [i]);
    return out;
  }
  for (const i of searched) {
    const m = match(i);
    const ids = (cats === null ? s.all.all(m) : s.allInCats.all({ match: m, cats })) as number[];
    for (const id of ids) {
      const ts = out.get(id);
      if (ts === undefined) out.set(id, [i]);
      else ts.push(i);
    }
  }
  return out;
}

/** rowid, memory_id, importance, captured_at (and content, summary, tags with text). */
type PoolRow = [number, string, number, string, string?, string?, string?];

function parseTags(json: string): string[] {
  return JSON.parse(json) as string[];
}
