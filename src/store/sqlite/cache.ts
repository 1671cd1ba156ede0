/**
 * What one SQLite connection keeps of its reads while the database does not change: each
 * query term's document frequency and postings (rowids, for the terms searched whole, by
 * categories) per scope, the rows recall read with their term counts, and the lists of a
 * scope's records by kinds and categories (the profile list of every assembly). A
 * service reads the same scopes and terms over and over; each recall still ranks and
 * scores in full.
 *
 * Validity: the version is `PRAGMA data_version` (moves with every commit of another
 * connection) with `total_changes()` (every row this connection wrote), read first inside
 * the reader's own read transaction, so it is the version of the snapshot it reads.
 * Any change drops everything: every entry is exactly what the database would answer at
 * that version, never an approximation.
 */
import type Database from "better-sqlite3";
import { type TermCounts, termCounts } from "../rank.js";
import type { RawRow } from "./columns.js";

/** A row read at the cache's version, with its term counts once needed. */
interface CachedRow {
  raw: RawRow;
  counts: TermCounts | null;
}

/**
 * What the cache holds at most, in units (a count or a rowid is one; a row is 32 plus one
 * per 8 characters of its text): some tens of MB. Past it, the cache starts over.
 */
const MAX_UNITS = 8_000_000;

/** The units of a row (see {@link MAX_UNITS}). */
function rowUnits(r: RawRow): number {
  return 32 + ((r[1].length + r[5].length + r[6].length + r[7].length + r[13].length) >> 3);
}

/** The per-connection cache of reads (see the module notes). */
export class ReadCache {
  readonly #dataVersionStmt: Database.Statement;
  readonly #changesStmt: Database.Statement;
  #dataVersion = -1;
  #changes = -1;
  #size = 0;
  readonly #df = new Map<string, Map<string, number>>();
  readonly #postings = new Map<string, Map<string, Map<string, readonly number[]>>>();
  readonly #rows = new Map<number, CachedRow>();
  readonly #lists = new Map<string, Map<string, readonly RawRow[]>>();

  /** Prepares the statements that read the version (see the module notes). */
  constructor(db: Database.Database) {
    this.#dataVersionStmt = db.prepare("PRAGMA data_version").pluck();
    this.#changesStmt = db.prepare("SELECT total_changes()").pluck();
  }

  /**
   * Reads the version and drops everything when it moved. Call it first in each read
   * transaction: `PRAGMA data_version` then opens the transaction's snapshot (it reads
   * the database), so the version is the snapshot's.
   */
  begin(): void {
    const dataVersion = this.#dataVersionStmt.get() as number;
    const changes = this.#changesStmt.get() as number;
    const same = dataVersion === this.#dataVersion && changes === this.#changes;
    if (same && this.#size <= MAX_UNITS) return;
    this.#df.clear();
    this.#postings.clear();
    this.#rows.clear();
    this.#lists.clear();
    this.#size = 0;
    this.#dataVersion = dataVersion;
    this.#changes = changes;
  }

  /**
   * A term's document frequency in the scope, as counted (capped at the store's work
   * budget + 1: one cache per store, whose budget is fixed), or undefined.
   */
  df(userScope: string, term: string): number | undefined {
    return this.#df.get(userScope)?.get(term);
  }

  setDf(userScope: string, term: string, df: number): void {
    inner(this.#df, userScope).set(term, df);
    this.#size++;
  }

  /**
   * The rowids of the scope whose memory holds `term`, in the categories `cats` (their
   * JSON list, "" for any), or undefined.
   */
  postings(userScope: string, cats: string, term: string): readonly number[] | undefined {
    return this.#postings.get(userScope)?.get(cats)?.get(term);
  }

  setPostings(userScope: string, cats: string, term: string, rowids: readonly number[]): void {
    inner(inner(this.#postings, userScope), cats).set(term, rowids);
    this.#size += rowids.length + 1;
  }

  /** The rows a list of the scope read for `key` (its filters), or undefined. */
  list(userScope: string, key: string): readonly RawRow[] | undefined {
    return this.#lists.get(userScope)?.get(key);
  }

  /** Keeps a list's rows, unless they would fill much of the cache by themselves. */
  setList(userScope: string, key: string, rows: readonly RawRow[]): void {
    let units = 1;
    for (const r of rows) units += rowUnits(r);
    if (units > MAX_UNITS / 16) return;
    inner(this.#lists, userScope).set(key, rows);
    this.#size += units;
  }

  /** The row of `rowid`, or undefined. */
  row(rowid: number): RawRow | undefined {
    return this.#rows.get(rowid)?.raw;
  }

  setRow(raw: RawRow): void {
    this.#rows.set(raw[0], { raw, counts: null });
    this.#size += 2 * rowUnits(raw); // the row, and its term counts once needed
  }

  /** The term counts of a row (kept with the row when it is cached). */
  counts(raw: RawRow): TermCounts {
    const cached = this.#rows.get(raw[0]);
    if (cached?.raw === raw && cached.counts !== null) return cached.counts;
    const counts = termCounts({ content: raw[6], summary: raw[7], tags: parseTags(raw[5]) });
    if (cached?.raw === raw) cached.counts = counts;
    return counts;
  }
}

function inner<K, V>(outer: Map<K, Map<string, V>>, key: K): Map<string, V> {
  let map = outer.get(key);
  if (map === undefined) {
    map = new Map();
    outer.set(key, map);
  }
  return map;
}

/** A row's `tags` column (a JSON array of strings). */
export function parseTags(json: string): string[] {
  return JSON.parse(json) as string[];
}
