/**
 * Recall scoring: an inspectable, deterministic breakdown.
 *
 * - `lexical` = `(bm25 / bestBm25) × coverage`, in [0, 1]. `bm25` is SQLite FTS5's
 *   `bm25()` (negative; more negative is better) and `bestBm25` the best value in the
 *   candidate pool, so the ratio is 1 for the strongest text match of this recall.
 *   `coverage` is the share of the query's terms (all of them, also any left out of the
 *   search by the work budget) that the memory contains. The
 *   ratio alone would give a lone weak match 1.0; coverage keeps "matched one word of
 *   five" visibly weak so spec 02's `minScore` gate can abstain.
 * - `recency` = `0.5 ^ (ageDays / 30)`: exponential decay with a 30-day half-life, age =
 *   `asOf − source.capturedAt` (a memory captured after `asOf` has age 0 → 1).
 * - `importance` = the record's importance, as stored.
 *
 * Each component is rounded to 6 decimals (spec 01 rounding: half to even on the exact
 * binary value, as `formatScore` prints), then `total = round6(Σ weight × component)`.
 * Rounding makes the total reproducible from the breakdown and immune to summation-order
 * noise; weights sum to 1 so the total stays in [0, 1].
 */
import { InvalidInputError } from "../errors/index.js";
import { compareCodePoints, compareInstants, formatFixed } from "../text/index.js";

/** Weights of the three components; non-negative, summing to 1. */
export interface ScoreWeights {
  lexical: number;
  recency: number;
  importance: number;
}

/** Default weights: text relevance dominates, recency and importance break ties. */
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
  lexical: number;
  recency: number;
  importance: number;
  weights: ScoreWeights;
  total: number;
  /** Raw FTS5 bm25 of this memory (negative; more negative is a better match). */
  bm25: number;
  /** Share of searched query terms found in the memory, in [0, 1]. */
  coverage: number;
}

/** `x` rounded to 6 decimals exactly as spec 01 formats scores. @example round6(0.1234565) */
export function round6(x: number): number {
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

/** The lexical component from the bm25 ratio and term coverage. */
export function lexicalScore(bm25: number, bestBm25: number, coverage: number): number {
  // bm25 < 0 for every FTS5 match; guard the degenerate case anyway.
  const ratio = bestBm25 < 0 ? Math.min(1, Math.max(0, bm25 / bestBm25)) : 1;
  return ratio * coverage;
}

/** The full breakdown for one candidate. */
export function scoreBreakdown(input: {
  bm25: number;
  bestBm25: number;
  coverage: number;
  capturedMs: number;
  asOfMs: number;
  importance: number;
  weights: ScoreWeights;
}): ScoreBreakdown {
  const lexical = round6(lexicalScore(input.bm25, input.bestBm25, input.coverage));
  const recency = round6(recencyScore(input.capturedMs, input.asOfMs));
  const importance = round6(input.importance);
  const w = input.weights;
  const total = round6(
    Math.min(1, w.lexical * lexical + w.recency * recency + w.importance * importance),
  );
  return {
    lexical,
    recency,
    importance,
    weights: { ...w },
    total,
    bm25: input.bm25,
    coverage: round6(input.coverage),
  };
}

/** What the stable rank compares. */
export interface Rankable {
  memoryId: string;
  total: number;
  lexical: number;
  /** `source.capturedAt` in nanoseconds (spec 01 instant). */
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
