/**
 * Recall scoring: an inspectable, deterministic breakdown, the same for every backend
 * (pure functions over the query's terms, the scope's statistics and the memory's terms).
 *
 * - `idf(t) = ln(1 + (N − df + 0.5) / (df + 0.5))` (BM25's IDF, always > 0), with `N` the
 *   memories of the scope and `df` those of them that contain the term: a term in few
 *   memories weighs much, one in most weighs little.
 * - `lexical = Σ idf(matched terms) / Σ idf(query terms)`, in [0, 1]: the share of the
 *   query's (content) terms the memory contains, each weighted by its IDF; normalized per
 *   query, so it means the same at 10 memories and at 10 million. A memory that contains
 *   every query term has 1; one that shares only a frequent word with a query of rare
 *   words has little. Stop words are never query terms (see terms.ts).
 * - `coverage = |matched| / |query terms|` (unweighted, shown for inspection).
 * - `recency = 0.5 ^ (ageDays / 30)`: exponential decay with a 30-day half-life, age =
 *   `asOf − source.capturedAt` (a memory captured after `asOf` has age 0 → 1).
 * - `importance` = the record's importance, as stored.
 * - `salience = wL + wR·recency + wI·importance`, in [wL, 1].
 * - `total = lexical × salience`.
 *
 * Relevance is a multiplier, not a summand: `total ≤ lexical`, so recency and importance
 * reorder relevant hits (by up to a factor `wL`) but can never lift a memory over a
 * confidence gate (docs/memory-selection.md's `minScore`) its text match does not reach by itself.
 *
 * Each component is rounded to 6 decimals (docs/text-and-tokens.md rounding: half to even on the exact
 * binary value, as `formatScore` prints), then `salience` and `total` are computed from
 * the rounded values and rounded: the total is reproducible from the breakdown
 * (`total = round6(lexical × salience)`) and immune to summation-order noise.
 */
import { InvalidInputError } from "../errors/index.js";
import { compareCodePoints, compareInstants, formatFixed } from "../text/index.js";

/**
 * Weights of the salience factor; non-negative, summing to 1. `lexical` is the share of
 * the salience a text match earns alone, `recency` and `importance` what they can add.
 */
export interface ScoreWeights {
  lexical: number;
  recency: number;
  importance: number;
}

/** Default weights: a perfect text match scores at least 0.6, recency and importance add up to 0.4. */
export const DEFAULT_WEIGHTS: Readonly<ScoreWeights> = Object.freeze({
  lexical: 0.6,
  recency: 0.2,
  importance: 0.2,
});

/** Recency half-life in days. */
export const RECENCY_HALF_LIFE_DAYS = 30;

const DAY_MS = 86_400_000;

/** What a recall hit shows about its score. */
export interface ScoreBreakdown {
  /** IDF-weighted share of the query terms the memory contains, in [0, 1]. */
  lexical: number;
  recency: number;
  importance: number;
  weights: ScoreWeights;
  /** `wL + wR·recency + wI·importance`, in [wL, 1]. */
  salience: number;
  /** `lexical × salience`. */
  total: number;
  /**
   * The backend's raw full-text rank, for inspection only (SQLite: FTS5 `bm25()`, negative,
   * more negative is better; it chose the candidate pool, see sqlite/store.ts).
   */
  bm25: number;
  /**
   * Recall by meaning only (hybrid recall, fuse.ts): the calibrated semantic evidence, in
   * [0, 1]. When present, `total = round6(max(lexical, semantic) × salience)`.
   */
  semantic?: number;
  /** Share of the query terms found in the memory (unweighted), in [0, 1]. */
  coverage: number;
  /** The query terms the memory contains, in query order. */
  matchedTerms: string[];
}

/** `x` rounded to 6 decimals exactly as docs/text-and-tokens.md formats scores. @example round6(0.1234565) */
export function round6(x: number): number {
  const y = Math.abs(x) * 1e6;
  if (y < 2 ** 52) {
    // Away from a tie (formatFixed's own margin) the nearest integer to the double
    // product is the exact one's, and k / 1e6 is the double the formatted text reads as.
    const frac = y - Math.floor(y);
    if (Math.abs(frac - 0.5) > y * 2 ** -40 + 1e-9) {
      const r = Math.round(y) / 1e6;
      return x < 0 && r !== 0 ? -r : r;
    }
  }
  const r = Number(formatFixed(x, 6));
  return r === 0 ? 0 : r; // no -0
}

/** Validates weights (finite, ≥ 0, sum 1 within 1e-9). */
export function checkWeights(w: ScoreWeights, path = "weights"): ScoreWeights {
  for (const k of ["lexical", "recency", "importance"] as const) {
    const v = w[k];
    if (typeof v !== "number" || !Number.isFinite(v) || v < 0) {
      throw new InvalidInputError(`${path}.${k} must be a finite number >= 0`, `${path}.${k}`);
    }
  }
  if (Math.abs(w.lexical + w.recency + w.importance - 1) > 1e-9) {
    throw new InvalidInputError(`${path} must sum to 1`, path);
  }
  return { lexical: w.lexical, recency: w.recency, importance: w.importance };
}

/** `0.5 ^ (age / half-life)`, age clamped at 0. */
export function recencyScore(capturedMs: number, asOfMs: number): number {
  const ageDays = Math.max(0, asOfMs - capturedMs) / DAY_MS;
  return 0.5 ** (ageDays / RECENCY_HALF_LIFE_DAYS);
}

/**
 * BM25's inverse document frequency: `ln(1 + (n − df + 0.5) / (df + 0.5))`, > 0 for any
 * `0 ≤ df ≤ n` (df is clamped into that range).
 *
 * @example idf(0, 100) // ≈ 5.30 (a term no memory has)
 * @example idf(100, 100) // ≈ 0.005 (a term every memory has)
 */
export function idf(df: number, n: number): number {
  const d = Math.min(Math.max(0, df), Math.max(0, n));
  return Math.log(1 + (n - d + 0.5) / (d + 0.5));
}

/** IDF weights of a query's terms in a scope: `df[i]` belongs to `terms[i]`. */
export interface QueryWeights {
  terms: readonly string[];
  idf: readonly number[];
  /** Σ idf: the weight of a memory that contains every term. */
  sum: number;
}

/**
 * The IDF weights of `terms` given the scope's size `n` and each term's document
 * frequency `df[i]` in the scope.
 *
 * @example queryWeights(["python", "bash"], 10, [1, 9]).idf // [≈ 1.99, ≈ 0.15]
 */
export function queryWeights(
  terms: readonly string[],
  n: number,
  df: readonly number[],
): QueryWeights {
  const w = terms.map((_, i) => idf(df[i] ?? 0, n));
  return { terms, idf: w, sum: w.reduce((a, b) => a + b, 0) };
}

/** BM25's term-frequency saturation and length normalization constants. */
export const BM25_K1 = 1.2;
export const BM25_B = 0.75;

/**
 * BM25 of a memory for the query, negated (FTS5's convention: more negative is better),
 * rounded to 6 decimals: `−Σ idf(t) · tf·(k1+1) / (tf + k1·(1 − b + b·len/avgLen))` over
 * the query terms, `tf[i]` the occurrences of term i in the memory, `len` its number of
 * index terms, `avgLen` the scope's average. Shown in the breakdown; not part of `total`.
 *
 * @example bm25Score(queryWeights(["a"], 10, [1]), [1], 5, 5) // ≈ −1.99
 */
export function bm25Score(
  query: QueryWeights,
  tf: readonly number[],
  length: number,
  avgLength: number,
): number {
  const norm = avgLength > 0 ? 1 - BM25_B + (BM25_B * length) / avgLength : 1;
  let sum = 0;
  query.terms.forEach((_, i) => {
    const f = tf[i] ?? 0;
    if (f > 0) sum += (query.idf[i]! * f * (BM25_K1 + 1)) / (f + BM25_K1 * norm);
  });
  return round6(-sum);
}

/** The full breakdown for one memory, given which query terms it contains. */
export function scoreBreakdown(input: {
  query: QueryWeights;
  /** `has[i]`: the memory contains `query.terms[i]`. */
  has: readonly boolean[];
  capturedMs: number;
  asOfMs: number;
  importance: number;
  weights: ScoreWeights;
}): ScoreBreakdown {
  const q = input.query;
  let weight = 0;
  const matchedTerms: string[] = [];
  q.terms.forEach((t, i) => {
    if (input.has[i] === true) {
      weight += q.idf[i]!;
      matchedTerms.push(t);
    }
  });
  const lexical = round6(q.sum > 0 ? Math.min(1, weight / q.sum) : 0);
  const recency = round6(recencyScore(input.capturedMs, input.asOfMs));
  const importance = round6(input.importance);
  const w = input.weights;
  const salience = round6(Math.min(1, w.lexical + w.recency * recency + w.importance * importance));
  return {
    lexical,
    recency,
    importance,
    weights: { ...w },
    salience,
    total: round6(lexical * salience),
    bm25: 0, // filled in for returned hits (see rank.ts)
    coverage: round6(q.terms.length > 0 ? matchedTerms.length / q.terms.length : 0),
    matchedTerms,
  };
}

/** What the stable rank compares. */
export interface Rankable {
  memoryId: string;
  total: number;
  lexical: number;
  /** `source.capturedAt` in nanoseconds (docs/text-and-tokens.md instant). */
  capturedNs: bigint;
}

/**
 * The stable recall order: `total desc → lexical desc → capturedAt desc (instant) →
 * memoryId asc (code points)`. Input order never matters.
 */
export function compareRecall(a: Rankable, b: Rankable): number {
  if (a.total !== b.total) return b.total - a.total;
  if (a.lexical !== b.lexical) return b.lexical - a.lexical;
  const t = compareInstants(b.capturedNs, a.capturedNs);
  if (t !== 0) return t;
  return compareCodePoints(a.memoryId, b.memoryId);
}
