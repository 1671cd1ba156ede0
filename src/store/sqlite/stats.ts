/**
 * The per-scope statistics recall scores with (score.ts), in the SQLite store:
 *
 * - `scope_stats(user_scope, memory_count, term_count)` (migration 2): the scope's
 *   memories and the total number of their index terms (for the average length BM25
 *   uses), updated in the transaction of every write (one row per scope and batch);
 * - document frequencies are counted in the FTS5 index at recall time, each up to the
 *   work budget + 1 (exact up to the budget; a term in more memories counts as in
 *   budget + 1): a count costs a walk of at most that many postings, where keeping
 *   exact counts per term at write time would rewrite most of a large table per batch.
 *   The counts are kept per connection while the database does not change (see
 *   cache.ts).
 */
import type Database from "better-sqlite3";
import { ftsQuote } from "../terms.js";
import type { ReadCache } from "./cache.js";
import { scopePrefix } from "./prefix.js";

/** A record's terms as the stats see them. */
interface Counted {
  userScope: string;
  /** Every index term of the record, repeats kept (see `recordTerms`). */
  terms: readonly string[];
}

/** Statistics changes of one write batch, added up before they are applied. */
export class StatsDelta {
  readonly scopes = new Map<string, { memories: number; terms: number }>();

  /** Counts a record in (`sign` 1) or out (`sign` −1, the old version of an update). */
  add(record: Counted, sign: 1 | -1): void {
    const s = this.scopes.get(record.userScope) ?? { memories: 0, terms: 0 };
    s.memories += sign;
    s.terms += sign * record.terms.length;
    this.scopes.set(record.userScope, s);
  }
}

/** The statements of this module, prepared once per connection. */
export interface StatsStatements {
  addScope: Database.Statement;
  scope: Database.Statement;
  countMatches: Database.Statement;
}

/** Prepares the statements that read and write the statistics. */
export function prepareStats(db: Database.Database): StatsStatements {
  return {
    addScope: db.prepare(`INSERT INTO scope_stats (user_scope, memory_count, term_count)
      VALUES (?, ?, ?)
      ON CONFLICT (user_scope) DO UPDATE SET
        memory_count = memory_count + excluded.memory_count,
        term_count = term_count + excluded.term_count`),
    scope: db.prepare("SELECT memory_count, term_count FROM scope_stats WHERE user_scope = ?"),
    countMatches: db
      .prepare("SELECT count(*) FROM (SELECT 1 FROM memory_fts WHERE memory_fts MATCH ? LIMIT ?)")
      .pluck(),
  };
}

/** Applies a batch's changes (inside the batch's transaction). */
export function applyStats(s: StatsStatements, delta: StatsDelta): void {
  for (const [scope, d] of delta.scopes) {
    if (d.memories !== 0 || d.terms !== 0) s.addScope.run(scope, d.memories, d.terms);
  }
}

/** What recall reads: the scope's size and average length, each term's (capped) frequency. */
export interface ScopeTermStats {
  /** Memories in the scope. */
  n: number;
  /** Index terms per memory of the scope, on average (0 for an empty scope). */
  avgLength: number;
  /** `df[i]`: memories of the scope that contain `terms[i]`, up to the cap. */
  df: number[];
}

/**
 * Reads the statistics of `terms` (unprefixed) in `userScope`; document frequencies are
 * counted up to `cap` (the work budget + 1), or taken from `cache` when this database
 * version already counted them. Runs first in the recall's read transaction: it moves
 * `cache` to the snapshot's version.
 */
export function readStats(
  s: StatsStatements,
  cache: ReadCache,
  userScope: string,
  terms: readonly string[],
  cap: number,
): ScopeTermStats {
  cache.begin();
  const row = s.scope.get(userScope) as { memory_count: number; term_count: number } | undefined;
  const n = row?.memory_count ?? 0;
  if (n === 0) return { n: 0, avgLength: 0, df: terms.map(() => 0) };
  const prefix = scopePrefix(userScope);
  const df = terms.map((t) => {
    const known = cache.df(userScope, t);
    if (known !== undefined) return known;
    const counted = s.countMatches.get(ftsQuote(prefix + t), cap) as number;
    cache.setDf(userScope, t, counted);
    return counted;
  });
  return { n, avgLength: (row?.term_count ?? 0) / n, df };
}

/**
 * Fills `scope_stats` from the data already stored (migration 2): memory counts from the
 * memories table, term totals from the full-text index itself (an `fts5vocab` view of
 * it: each scope's terms carry its prefix).
 */
export function backfillStats(db: Database.Database): void {
  db.exec("CREATE VIRTUAL TABLE temp.memory_fts_vocab USING fts5vocab(main, memory_fts, 'row')");
  try {
    const sums = db
      .prepare(`SELECT substr(term, 1, 16) AS prefix, sum(cnt) AS terms
        FROM temp.memory_fts_vocab GROUP BY prefix`)
      .all() as Array<{ prefix: string; terms: number }>;
    const termsByPrefix = new Map(sums.map((r) => [r.prefix, r.terms]));
    const scopes = db
      .prepare("SELECT user_scope, count(*) AS n FROM memories GROUP BY user_scope")
      .all() as Array<{ user_scope: string; n: number }>;
    const insert = db.prepare(
      "INSERT INTO scope_stats (user_scope, memory_count, term_count) VALUES (?, ?, ?)",
    );
    for (const r of scopes) {
      insert.run(r.user_scope, r.n, termsByPrefix.get(scopePrefix(r.user_scope)) ?? 0);
    }
  } finally {
    db.exec("DROP TABLE temp.memory_fts_vocab");
  }
}
