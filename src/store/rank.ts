/**
 * Recall ranking over candidate rows, the same for every backend: a backend finds the
 * candidates (full-text matches inside the scope) and the scope's statistics; this module
 * scores and orders them (see score.ts for the formula).
 */
import { compareCodePoints, instantMillis, parseInstantParts } from "../text/index.js";
import {
  bm25Score,
  compareRecall,
  type QueryWeights,
  type ScoreBreakdown,
  type ScoreWeights,
  scoreBreakdown,
} from "./score.js";
import { indexTerms, termPresence } from "./terms.js";

/** What ranking needs of a candidate memory. */
export interface RecallCandidate {
  memoryId: string;
  content: string;
  summary: string;
  tags: readonly string[];
  importance: number;
  /** `source.capturedAt` (ISO-8601). */
  capturedAt: string;
}

export interface RankedCandidate<C extends RecallCandidate> {
  candidate: C;
  breakdown: ScoreBreakdown;
}

/**
 * Scores `candidates` against the query's IDF weights and returns the best `limit` in the
 * stable recall order (`total desc → lexical desc → capturedAt desc → memoryId asc`), with
 * their BM25 (`avgLength`: the scope's index terms per memory). Input order never matters.
 *
 * @example
 * const q = queryWeights(["python"], scopeSize, [df]);
 * rankCandidates(rows, q, { asOf: "2026-08-17T09:00:00Z", weights: DEFAULT_WEIGHTS, limit: 20, avgLength: 42 });
 */
export function rankCandidates<C extends RecallCandidate>(
  candidates: readonly C[],
  query: QueryWeights,
  options: { asOf: string; weights: ScoreWeights; limit: number; avgLength: number },
): Array<RankedCandidate<C>> {
  const asOfMs = instantMillis(options.asOf) as number;
  const scored = candidates.map((c) => {
    const has = termPresence([c.content, c.summary, ...c.tags].join("\n"), query.terms);
    const at = parseInstantParts(c.capturedAt)!;
    const breakdown = scoreBreakdown({
      query,
      has,
      capturedMs: at.seconds * 1000 + Math.floor(at.nanos / 1_000_000),
      asOfMs,
      importance: c.importance,
      weights: options.weights,
    });
    return {
      candidate: c,
      breakdown,
      memoryId: c.memoryId,
      total: breakdown.total,
      lexical: breakdown.lexical,
      capturedNs: BigInt(at.seconds) * 1_000_000_000n + BigInt(at.nanos),
    };
  });
  scored.sort(compareRecall);
  const top = scored.slice(0, options.limit);
  return withBm25(
    top.map((s) => ({ candidate: s.candidate, breakdown: s.breakdown })),
    query,
    options.avgLength,
  );
}

/**
 * The query terms a recall searches (indices into `terms`), given each term's document
 * frequency in the scope and the work budget: every term that occurs in the scope when
 * their frequencies sum to at most `budget`; else the rarest first (ties by code point)
 * while the sum fits, and always at least the rarest. Terms left out are the most common
 * ones (they weigh least); they still count in the score of every candidate. A term no
 * memory of the scope contains is never searched.
 *
 * @example searchedTerms(["python", "the"], [3, 9000], 5000) // [0]
 */
export function searchedTerms(
  terms: readonly string[],
  df: readonly number[],
  budget: number,
): number[] {
  const present = terms.map((_, i) => i).filter((i) => (df[i] ?? 0) > 0);
  const total = present.reduce((a, i) => a + df[i]!, 0);
  if (total <= budget) return present;
  const byRarity = [...present].sort(
    (a, b) => df[a]! - df[b]! || compareCodePoints(terms[a]!, terms[b]!),
  );
  const kept: number[] = [];
  let sum = 0;
  for (const i of byRarity) {
    if (kept.length > 0 && sum + df[i]! > budget) break;
    kept.push(i);
    sum += df[i]!;
  }
  return kept.sort((a, b) => a - b);
}

/**
 * The candidate pool: the `size` matches with the largest weight (the IDF sum of the
 * searched terms they contain), the most recently written first among equal weights
 * (`seq`: the backend's write order, larger is newer). Only the pool is scored in full.
 *
 * @example poolOf(new Map([[1, 2.5], [2, 2.5], [3, 0.7]]), 2) // [2, 1]
 */
export function poolOf(weights: ReadonlyMap<number, number>, size: number): number[] {
  return [...weights]
    .sort((a, b) => b[1] - a[1] || b[0] - a[0])
    .slice(0, size)
    .map(([seq]) => seq);
}

/**
 * Fills in `breakdown.bm25` of ranked hits: BM25 over the query terms with the scope's
 * statistics (see {@link bm25Score}); computed for the returned hits only.
 */
function withBm25<C extends RecallCandidate>(
  ranked: Array<RankedCandidate<C>>,
  query: QueryWeights,
  avgLength: number,
): Array<RankedCandidate<C>> {
  for (const r of ranked) {
    const c = r.candidate;
    const all = indexTerms([c.content, c.summary, ...c.tags].join("\n"));
    const tf = new Map<string, number>();
    for (const t of all) tf.set(t, (tf.get(t) ?? 0) + 1);
    r.breakdown.bm25 = bm25Score(
      query,
      query.terms.map((t) => tf.get(t) ?? 0),
      all.length,
      avgLength,
    );
  }
  return ranked;
}
