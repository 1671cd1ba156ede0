/**
 * The per-scope statistics recall scores with (score.ts), kept in two tables of the
 * SQLite store (migration 2) and updated in the transaction of every write:
 *
 * - `term_stats(term, df)`: for each scope-prefixed term (see {@link scopePrefix}), the
 *   number of the scope's memories that contain it (document frequency);
 * - `scope_stats(user_scope, memory_count, term_count)`: the scope's memories and the total
 *   number of their index terms (for the average length BM25 uses).
 *
 * Reading them costs one B-tree seek per query term, where counting matches in the
 * full-text index costs as much as the term is common. Writes add their changes up per
 * batch and apply them in two statements.
 */
import type Database from "better-sqlite3";
import { scopePrefix } from "./prefix.js";

/** A record's terms as the stats see them. */
interface Counted {
  userScope: string;
  /** Every index term of the record, repeats kept (see `recordTerms`). */
  terms: readonly string[];
}

/** Statistics changes of one write batch, added up before they are applied. */
export class StatsDelta {
  readonly df = new Map<string, number>();
  readonly scopes = new Map<string, { memories: number; terms: number }>();

  /** Counts a record in (`sign` 1) or out (`sign` −1, the old version of an update). */
  add(record: Counted, sign: 1 | -1): void {
    const prefix = scopePrefix(record.userScope);
    for (const t of new Set(record.terms)) {
      const key = prefix + t;
      this.df.set(key, (this.df.get(key) ?? 0) + sign);
    }
    const s = this.scopes.get(record.userScope) ?? { memories: 0, terms: 0 };
    s.memories += sign;
    s.terms += sign * record.terms.length;
    this.scopes.set(record.userScope, s);
  }
}

/** The statements of this module, prepared once per connection. */
export interface StatsStatements {
  addDf: Database.Statement;
  dropZeroDf: Database.Statement;
  addScope: Database.Statement;
  df: Database.Statement;
  scope: Database.Statement;
}

/** Prepares the statements that read and write the statistics. */
export function prepareStats(db: Database.Database): StatsStatements {
  return {
    // `WHERE true` lets SQLite parse the upsert after a SELECT.
    addDf: db.prepare(`INSERT INTO term_stats (term, df)
      SELECT key, value FROM json_each(?) WHERE true
      ON CONFLICT (term) DO UPDATE SET df = df + excluded.df`),
    dropZeroDf: db.prepare(`DELETE FROM term_stats
      WHERE term IN (SELECT key FROM json_each(?)) AND df <= 0`),
    addScope: db.prepare(`INSERT INTO scope_stats (user_scope, memory_count, term_count)
      VALUES (?, ?, ?)
      ON CONFLICT (user_scope) DO UPDATE SET
        memory_count = memory_count + excluded.memory_count,
        term_count = term_count + excluded.term_count`),
    df: db.prepare("SELECT df FROM term_stats WHERE term = ?").pluck(),
    scope: db.prepare("SELECT memory_count, term_count FROM scope_stats WHERE user_scope = ?"),
  };
}

/** Applies a batch's changes (inside the batch's transaction). */
export function applyStats(s: StatsStatements, delta: StatsDelta): void {
  const changed = Object.fromEntries([...delta.df].filter(([, d]) => d !== 0));
  if (Object.keys(changed).length > 0) {
    const json = JSON.stringify(changed);
    s.addDf.run(json);
    if (Object.values(changed).some((d) => d < 0)) s.dropZeroDf.run(json);
  }
  for (const [scope, d] of delta.scopes) {
    if (d.memories !== 0 || d.terms !== 0) s.addScope.run(scope, d.memories, d.terms);
  }
}

/** What recall reads: the scope's size and average length, each term's frequency. */
export interface ScopeTermStats {
  /** Memories in the scope. */
  n: number;
  /** Index terms per memory of the scope, on average (0 for an empty scope). */
  avgLength: number;
  /** `df[i]`: memories of the scope that contain `terms[i]`. */
  df: number[];
}

/** Reads the statistics of `terms` (unprefixed) in `userScope`. */
export function readStats(
  s: StatsStatements,
  userScope: string,
  terms: readonly string[],
): ScopeTermStats {
  const row = s.scope.get(userScope) as { memory_count: number; term_count: number } | undefined;
  const n = row?.memory_count ?? 0;
  const avgLength = n > 0 ? (row?.term_count ?? 0) / n : 0;
  if (n === 0) return { n: 0, avgLength: 0, df: terms.map(() => 0) };
  const prefix = scopePrefix(userScope);
  const df = terms.map((t) => (s.df.get(prefix + t) as number | undefined) ?? 0);
  return { n, avgLength, df };
}

/**
 * Fills both tables from the data already stored (migration 2): document frequencies and
 * term totals from the full-text index itself (an `fts5vocab` view of it), memory counts
 * from the memories table.
 */
export function backfillStats(db: Database.Database): void {
  db.exec("CREATE VIRTUAL TABLE temp.memory_fts_vocab USING fts5vocab(main, memory_fts, 'row')");
  try {
    db.exec("INSERT INTO term_stats (term, df) SELECT term, doc FROM temp.memory_fts_vocab");
    const termsByPrefix = new Map<string, number>();
    const sums = db
      .prepare(`SELECT substr(term, 1, 16) AS prefix, sum(cnt) AS terms
        FROM temp.memory_fts_vocab GROUP BY prefix`)
      .all() as Array<{ prefix: string; terms: number }>;
    for (const r of sums) termsByPrefix.set(r.prefix, r.terms);
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
