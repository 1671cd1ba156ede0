/**
 * SQLite FTS5's `bm25()`, reproduced operation for operation, so that a backend without
 * FTS5 (the PostgreSQL store) computes the very same double for the same statistics.
 *
 * FTS5 (fts5_aux.c, `fts5Bm25Function`), with k1 = 1.2 and b = 0.75:
 *
 *     idf(t)  = ln((N − n(t) + 0.5) / (n(t) + 0.5)), and 1e-6 when that is ≤ 0
 *     bm25(D) = −1 × Σ_t idf(t) × ((f(t,D) × (k1 + 1)) / (f(t,D) + k1 × (1 − b + b × |D| / avgdl)))
 *
 * summed over the searched terms in query order. The statistics are FTS5's own:
 *
 * - `N` = rows ever written to the index and `avgdl` = tokens ever written / N. The store
 *   index is contentless with `contentless_delete`, and FTS5 does not decrement these
 *   totals when such a row is deleted, so every write (insert, or the delete + insert of
 *   an update) counts once. They are store-wide (every scope).
 * - `n(t)` = rows that hold the term now (a scope's own: terms are per scope).
 * - `f(t,D)` = occurrences of the term in the row, `|D|` = all terms of the row.
 */

const K1 = 1.2;
const B = 0.75;

/** What bm25 needs from the index besides the row. */
export interface Bm25Stats {
  /** Rows ever written to the index (store-wide). */
  rows: number;
  /** Terms ever written to the index (store-wide). */
  tokens: number;
}

/**
 * The IDF of each term, from its document frequency `n(t)` and the row count.
 *
 * The logarithm is a parameter: FTS5 calls the C library's `log()`, which may differ from
 * `Math.log` in the last bit; PostgreSQL's `ln()` is the C library's, so the PostgreSQL
 * store takes its logarithms from the server (see {@link bm25IdfFromLn}).
 *
 * @example bm25Idf(10, [3]) // [0.8109302162163288]
 */
export function bm25Idf(
  rows: number,
  docFreqs: readonly number[],
  log: (x: number) => number = Math.log,
): number[] {
  return docFreqs.map((n) => bm25IdfFromLn(log((rows - n + 0.5) / (n + 0.5))));
}

/**
 * FTS5's IDF from `ln((N − n + 0.5) / (n + 0.5))` already computed: 1e-6 when ≤ 0.
 *
 * @example bm25IdfFromLn(-0.2) // 0.000001
 */
export function bm25IdfFromLn(ln: number): number {
  return ln <= 0 ? 1e-6 : ln;
}

/**
 * FTS5's bm25 of one row: `idf` and `freqs` per searched term (same order), `length` =
 * the row's term count. Negative; more negative is a better match.
 *
 * @example bm25Score(bm25Idf(10, [3]), [1], 2, 27 / 10) // -0.8525634480524609
 */
export function bm25Score(
  idf: readonly number[],
  freqs: readonly number[],
  length: number,
  avgdl: number,
): number {
  let score = 0.0;
  for (let i = 0; i < idf.length; i++) {
    const f = freqs[i] ?? 0;
    score += idf[i]! * ((f * (K1 + 1.0)) / (f + K1 * (1 - B + (B * length) / avgdl)));
  }
  return -1.0 * score;
}
