// Memory decisions: the reason codes, the decision shapes and the builder of one decision.

import type { Ranked } from "./rank.js";
import type { Authority, MemoryMatch } from "./schema.js";

/** Reason codes of docs/memory-selection.md, stable across releases. */
export type MemoryReason =
  | "selected"
  | "scope_mismatch"
  | "quarantined"
  | "low_confidence"
  | "duplicate_content"
  | "authority_loser"
  | "conflict_loser"
  | "top_k_reached"
  | "char_budget_exceeded"
  | "token_budget_exceeded";

interface DecisionFields {
  memoryId: string;
  score: number;
  sourceRank: number;
  authority: Authority;
  candidateChars: number;
  /**
   * Tokens of the hit's own rendering. Absent only when it was never counted: the
   * assembler's recall slot counts the hits it admits, not the ones it cuts (as the
   * planner's bounded drops carry no token figures, docs/planner.md).
   */
  candidateTokens?: number;
  detail: string;
  /**
   * How a hybrid recall found the candidate (its lexical and semantic ranks, similarity,
   * fused score, path); absent when the candidate carried none (full-text recall, inline
   * candidates without one).
   */
  match?: MemoryMatch;
}

/** One terminal decision per candidate, keyed by reason code. */
export type MemoryDecision =
  | (DecisionFields & { status: "selected"; reason: "selected"; relatedMemoryId: null })
  | (DecisionFields & {
      status: "rejected";
      reason:
        | "scope_mismatch"
        | "quarantined"
        | "low_confidence"
        | "top_k_reached"
        | "char_budget_exceeded"
        | "token_budget_exceeded";
      relatedMemoryId: null;
    })
  | (DecisionFields & {
      status: "rejected";
      reason: "duplicate_content" | "authority_loser" | "conflict_loser";
      relatedMemoryId: string;
    });

// Builds a decision with the fields in the documented order (stable JSON).
export function decision(
  r: Ranked,
  status: MemoryDecision["status"],
  reason: MemoryReason,
  relatedMemoryId: string | null,
  detail: string,
): MemoryDecision {
  const d = {
    memoryId: r.id,
    status,
    reason,
    score: r.score,
    sourceRank: r.sourceRank,
    authority: r.authority,
    candidateChars: r.chars,
    relatedMemoryId,
    detail,
  } as MemoryDecision;
  if (r.c.match !== undefined) d.match = r.c.match;
  // A counted hit: the same fields with its tokens in their documented place.
  return r.tokens < 0 ? d : withHitTokens(d, r.tokens);
}

/**
 * `d` with the hit's own token count, fields in the documented order (stable JSON): for a
 * decision made without counting its hit, once the hit was counted after all.
 */
export function withHitTokens(d: MemoryDecision, tokens: number): MemoryDecision {
  return {
    memoryId: d.memoryId,
    status: d.status,
    reason: d.reason,
    score: d.score,
    sourceRank: d.sourceRank,
    authority: d.authority,
    candidateChars: d.candidateChars,
    candidateTokens: tokens,
    relatedMemoryId: d.relatedMemoryId,
    detail: d.detail,
    ...(d.match === undefined ? {} : { match: d.match }),
  } as MemoryDecision;
}
