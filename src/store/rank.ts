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
import { recordTerms, termPresence } from "./terms.js";

/** What ranking needs of a candidate memory. */
export interface RecallCandidate {
  memoryId: string;
  importance: number;
  /** `source.capturedAt` (ISO-8601). */
  capturedAt: string;
  /**
   * `has[i]`: the memory contains the query's term i (the backend knows it from its index
   * for the terms it searched, and from {@link termPresence} over the memory's text for
   * the others).
   */
  has: readonly boolean[];
}

export interface RankedCandidate<C extends RecallCandidate> {
  candidate: C;
  breakdown: ScoreBreakdown;
}

/**
 * Scores `candidates` against the query's IDF weights and returns the best `limit` in the
 * stable recall order (`total desc → lexical desc → capturedAt desc → memoryId asc`).
 * Input order never matters. `breakdown.bm25` is left 0: see {@link hitBm25}.
 *
 * @example
 * const q = queryWeights(["python"], scopeSize, [df]);
 * rankCandidates(rows, q, { asOf: "2026-08-17T09:00:00Z", weights: DEFAULT_WEIGHTS, limit: 20 });
 */
export function rankCandidates<C extends RecallCandidate>(
  candidates: readonly C[],
  query: QueryWeights,
  options: { asOf: string; weights: ScoreWeights; limit: number },
): Array<RankedCandidate<C>> {
  const asOfMs = instantMillis(options.asOf) as number;
  const scored = candidates.map((c) => {
    const at = parseInstantParts(c.capturedAt)!;
    const breakdown = scoreBreakdown({
      query,
      has: c.has,
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
  return scored
    .slice(0, options.limit)
    .map((s) => ({ candidate: s.candidate, breakdown: s.breakdown }));
}

/**
 * `has` of a memory: `known[i]` where the backend knows it, else whether the memory's
 * text contains term i (see {@link termPresence}; the text is only read when needed).
 *
 * @example presence(["python", "bash"], [true, undefined], () => "uses bash") // [true, true]
 */
export function presence(
  terms: readonly string[],
  known: ReadonlyArray<boolean | undefined>,
  text: () => string,
): boolean[] {
  const unknown = terms.map((_, i) => i).filter((i) => known[i] === undefined);
  if (unknown.length === 0) return known.map((k) => k === true);
  const found = termPresence(
    text(),
    unknown.map((i) => terms[i]!),
  );
  const out = known.map((k) => k === true);
  unknown.forEach((i, j) => {
    out[i] = found[j]!;
  });
  return out;
}

/** What a backend's index tells of the query's terms; see {@link indexKnowledge}. */
export interface IndexKnowledge {
  /** A term occurs in the scope but was left out of the search: its presence needs the text. */
  leftOut: boolean;
  /** `known` (see {@link presence}) of a candidate that matched the searched terms `matched`. */
  known(matched: readonly number[]): Array<boolean | undefined>;
}

/**
 * What the full-text index tells of each query term in a candidate, the same for every
 * backend: a searched term is there iff the candidate matched it, a term no memory of the
 * scope holds (`df` 0) is nowhere, and a term left out of the search is unknown (only those
 * need the text). The part common to all candidates is computed once per recall.
 *
 * @example
 * const k = indexKnowledge(["python", "rare", "the"], [3, 0, 9000], [0]);
 * k.leftOut; // true ("the" was not searched)
 * k.known([0]); // [true, false, undefined]
 */
export function indexKnowledge(
  terms: readonly string[],
  df: readonly number[],
  searched: readonly number[],
): IndexKnowledge {
  const base: Array<boolean | undefined> = terms.map((_, i) =>
    df[i] === 0 || searched.includes(i) ? false : undefined,
  );
  return {
    leftOut: base.includes(undefined),
    known: (matched) => {
      const known = [...base];
      for (const i of matched) known[i] = true;
      return known;
    },
  };
}

/** A memory's index terms counted: term → occurrences, and how many terms it has. */
export interface TermCounts {
  tf: ReadonlyMap<string, number>;
  length: number;
}

/** The {@link TermCounts} of a memory's text (see `recordTerms`). */
export function termCounts(memory: {
  content: string;
  summary: string;
  tags: readonly string[];
}): TermCounts {
  const all = recordTerms(memory);
  const tf = new Map<string, number>();
  for (const t of all) tf.set(t, (tf.get(t) ?? 0) + 1);
  return { tf, length: all.length };
}

/**
 * BM25 of a returned hit (see {@link bm25Score}) from its text and the scope's average
 * number of index terms per memory; the `bm25` of the breakdown (not part of `total`).
 */
export function hitBm25(
  query: QueryWeights,
  memory: { content: string; summary: string; tags: readonly string[] },
  avgLength: number,
): number {
  return countsBm25(query, termCounts(memory), avgLength);
}

/** {@link hitBm25} from the memory's term counts. */
export function countsBm25(query: QueryWeights, counts: TermCounts, avgLength: number): number {
  return bm25Score(
    query,
    query.terms.map((t) => counts.tf.get(t) ?? 0),
    counts.length,
    avgLength,
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
