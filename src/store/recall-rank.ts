/**
 * The backend-neutral half of recall: from the candidate pool a backend matched (each
 * record with its bm25) to ranked hits with their score breakdowns. Both stores call it,
 * so a change to scoring (score.ts) or to terms (terms.ts) applies to both alike.
 */
import { compareCodePoints, instantMillis, parseInstant } from "../text/index.js";
import type { MemoryRecord } from "./schema.js";
import { compareRecall, type ScoreBreakdown, type ScoreWeights, scoreBreakdown } from "./score.js";
import { indexTerms } from "./terms.js";
import type { StoreRecallHit } from "./types.js";

/** One matched record and its FTS5-style bm25 (negative; more negative is better). */
export interface RecallCandidate {
  record: MemoryRecord;
  bm25: number;
  /**
   * The query terms the record holds, when the backend read them from its index (else
   * they are found by tokenizing the record's text: the same terms, at a higher cost).
   */
  present?: ReadonlySet<string>;
}

/** How {@link rankRecall} scores and cuts. */
export interface RankOptions {
  /** Hits returned. */
  limit: number;
  weights: ScoreWeights;
  /** `asOf` in epoch milliseconds. */
  asOfMs: number;
}

/** A record as a hit, at its 1-based rank. */
function toHit(record: MemoryRecord, breakdown: ScoreBreakdown, rank: number): StoreRecallHit {
  return {
    memoryId: record.memoryId,
    snippet: record.content,
    userScope: record.userScope,
    score: breakdown.total,
    scoreBreakdown: breakdown,
    rank,
    provenance: { ...record.source },
    kind: record.kind,
    category: record.category,
    tags: record.tags,
    importance: record.importance,
    conflictKey: record.conflictKey,
    authority: record.authority,
  };
}

/**
 * Scores every candidate against the query `terms` (all of them, also any a backend left
 * out of the search) and returns the best `limit` in the stable recall order.
 */
export function rankRecall(
  candidates: readonly RecallCandidate[],
  terms: readonly string[],
  options: RankOptions,
): StoreRecallHit[] {
  if (candidates.length === 0) return [];
  const best = candidates.reduce((m, c) => Math.min(m, c.bm25), 0);
  const scored = candidates.map(({ record, bm25, present }) => {
    const have =
      present ?? new Set(indexTerms([record.content, record.summary, ...record.tags].join("\n")));
    const coverage = terms.filter((t) => have.has(t)).length / terms.length;
    const breakdown = scoreBreakdown({
      bm25,
      bestBm25: best,
      coverage,
      capturedMs: instantMillis(record.source.capturedAt) as number,
      asOfMs: options.asOfMs,
      importance: record.importance,
      weights: options.weights,
    });
    return {
      record,
      breakdown,
      memoryId: record.memoryId,
      total: breakdown.total,
      lexical: breakdown.lexical,
      capturedNs: parseInstant(record.source.capturedAt) as bigint,
    };
  });
  scored.sort(compareRecall);
  return scored.slice(0, options.limit).map((s, i) => toHit(s.record, s.breakdown, i + 1));
}

/**
 * The query terms to search when all of them would exceed the match budget: the rarest
 * first (by `counts`, each capped at budget + 1; ties by code point) while the sum of
 * their counts fits, and always at least the rarest. Query order is kept.
 */
export function rarestTerms(
  terms: readonly string[],
  counts: readonly number[],
  budget: number,
): string[] {
  const counted = terms
    .map((t, i) => ({ t, n: counts[i] ?? 0 }))
    .sort((a, b) => a.n - b.n || compareCodePoints(a.t, b.t));
  const kept = new Set<string>();
  let sum = 0;
  for (const c of counted) {
    // A term without matches costs nothing and must not use up the "keep the rarest".
    if (sum > 0 && sum + c.n > budget) break;
    kept.add(c.t);
    sum += c.n;
  }
  return terms.filter((t) => kept.has(t));
}
