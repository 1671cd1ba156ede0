/**
 * Hybrid recall's fusion (pure): how a semantic similarity becomes evidence on the same
 * scale as the lexical score, and how the two paths' candidates become one ranking.
 *
 * - `semantic = clamp((similarity − floor) / (full − floor), 0, 1)`: a similarity at or
 *   below `floor` is no evidence (an encoder finds every text a little similar to every
 *   other), one at `full` or above counts as a whole lexical match. The two bounds are the
 *   embedder's calibration, measured on the labelled set (test/fixtures/recall-meaning/).
 * - `relevance = max(lexical, semantic)` and `total = round6(relevance × salience)`: the
 *   score the confidence gate (`minScore`) reads keeps its meaning — a hit passes only
 *   when one path alone is strong evidence — and recency and importance still only
 *   reorder relevant hits.
 * - Order: `total`, then the stable recall order (score.ts `compareRecall`).
 *
 * Reciprocal rank fusion (`Σ 1/(60 + rank)`) was measured against this on the labelled
 * set and is reported per hit as `rrf` (docs/sources.md "recall by meaning"): it orders
 * by rank alone, so a weak semantic neighbour of a query with no lexical hit ranks as high
 * as a strong one, and its sum has no threshold the gate could read.
 */

import type { MemoryMatch } from "../memory/index.js";
import { round6 } from "./score.js";

/** An embedder's similarity calibration (see the module comment). */
export interface SemanticCalibration {
  floor: number;
  full: number;
}

/** The RRF constant (Cormack et al.). */
export const RRF_K = 60;

/**
 * The calibrated semantic evidence of a cosine similarity, rounded to 6 decimals.
 *
 * @example semanticRelevance(0.55, { floor: 0.3, full: 0.8 }) // 0.5
 */
export function semanticRelevance(similarity: number, cal: SemanticCalibration): number {
  const x = (similarity - cal.floor) / (cal.full - cal.floor);
  return round6(Math.min(1, Math.max(0, x)));
}

/**
 * The reciprocal rank fusion of 1-based ranks (`null`: the path did not find it).
 *
 * @example rrf(1, null) // 1/61
 */
export function rrf(lexicalRank: number | null, semanticRank: number | null): number {
  let s = 0;
  if (lexicalRank !== null) s += 1 / (RRF_K + lexicalRank);
  if (semanticRank !== null) s += 1 / (RRF_K + semanticRank);
  return round6(s);
}

/**
 * How one hybrid hit was found (docs/sources.md "recall by meaning"): the memory stage's
 * {@link MemoryMatch}, which a hit's candidate and decision carry as they are.
 */
export type HitMatch = MemoryMatch;
