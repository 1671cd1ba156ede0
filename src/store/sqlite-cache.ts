/**
 * What one SQLite connection keeps of its recalls' reads while the database does not
 * change: each query term's document frequency and postings (rowids, for the terms
 * searched whole, by categories) per scope, and the rows read with their term counts. A service recalls
 * the same scopes and terms over and over; each recall still ranks and scores in full.
 *
 * Validity: the version is `PRAGMA data_version` (moves with every commit of another
 * connection) with `total_changes()` (every row this connection wrote), read inside the
 * recall's own read transaction, so it is the version of the snapshot the recall reads.
 * Any change drops everything: every entry is exactly what the database would answer at
 * that version, never an approximation.
 */
import { type TermCounts, termCounts } from "./rank.js";
import type { RawRow } from "./sqlite-statements.js";

/** A row read at the cache's version, with its term counts once needed. */
interface CachedRow {
  raw: RawRow;
  counts: TermCounts | null;
}

/** Entries (counts, rowids, rows) kept at most: past it the cache starts over. */
const MAX_ENTRIES = 1_000_000;

/** The per-connection cache of recall reads (see the module notes). */
export class RecallCache {
  #version = "";
  #size = 0;
  readonly #df = new Map<string, Map<string, number>>();
  readonly #postings = new Map<string, Map<string, readonly number[]>>();
  readonly #rows = new Map<number, CachedRow>();

  /** Uses the entries of `version`: everything is dropped when the version moved. */
  at(version: string): void {
    if (version === this.#version && this.#size <= MAX_ENTRIES) return;
    this.#df.clear();
    this.#postings.clear();
    this.#rows.clear();
    this.#size = 0;
    this.#version = version;
  }

  /** A term's document frequency in the scope (capped as counted), or undefined. */
  df(userScope: string, term: string): number | undefined {
    return this.#df.get(userScope)?.get(term);
  }

  setDf(userScope: string, term: string, df: number): void {
    inner(this.#df, userScope).set(term, df);
    this.#size++;
  }

  /** The rowids of the scope that match `key` (a term and the categories), or undefined. */
  postings(userScope: string, key: string): readonly number[] | undefined {
    return this.#postings.get(userScope)?.get(key);
  }

  setPostings(userScope: string, key: string, rowids: readonly number[]): void {
    inner(this.#postings, userScope).set(key, rowids);
    this.#size += rowids.length + 1;
  }

  /** The row of `rowid`, or undefined. */
  row(rowid: number): RawRow | undefined {
    return this.#rows.get(rowid)?.raw;
  }

  setRow(raw: RawRow): void {
    this.#rows.set(raw[0], { raw, counts: null });
    this.#size++;
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

function inner<V>(outer: Map<string, Map<string, V>>, key: string): Map<string, V> {
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
