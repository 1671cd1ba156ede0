// Memory decisions: the reason codes, the decision shapes and the builder of one decision.

import type { Ranked } from "./rank.js";
import type { Authority } from "./schema.js";

/** Reason codes of spec 02, stable across releases. */
export type MemoryReason =
  | "selected"
  | "scope_mismatch"
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
  candidateTokens: number;
  detail: string;
}

/** One terminal decision per candidate, keyed by reason code. */
export type MemoryDecision =
  | (DecisionFields & { status: "selected"; reason: "selected"; relatedMemoryId: null })
  | (DecisionFields & {
      status: "rejected";
      reason:
        | "scope_mismatch"
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
  return {
    memoryId: r.id,
    status,
    reason,
    score: r.score,
    sourceRank: r.sourceRank,
    authority: r.authority,
    candidateChars: r.chars,
    candidateTokens: r.tokens,
    relatedMemoryId,
    detail,
  } as MemoryDecision;
}
