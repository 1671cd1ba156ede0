// The plan's decision log: reason codes, the decision shapes and the builder of one decision.
import type { CacheTier } from "./schema.js";

/** Terminal status of a segment. */
export type SegmentStatus = "included" | "dropped" | "inactive";
/** Reason codes of docs/planner.md, stable across releases. */
export type SegmentReason =
  | "required"
  | "never_truncate"
  | "fits_budget"
  | "char_budget_exceeded"
  | "token_budget_exceeded"
  | "inactive";

interface DecisionFields {
  name: string;
  priority: number;
  required: boolean;
  budgetPriority: number;
  provenance: string;
  /** The tier the segment was laid out in (a tierless one counts as `dynamic`); null when untiered. */
  cacheTier: CacheTier | null;
  detail: string;
  originalChars: number;
  renderedChars: number;
  originalTokens: number;
  renderedTokens: number;
}

/** One decision per segment, keyed by reason code. */
export type PlanDecision =
  | (DecisionFields & { required: true; status: "included"; reason: "required" })
  | (DecisionFields & { required: false; status: "included"; reason: "fits_budget" })
  // A neverTruncate segment (docs/manifest-wire-guard.md): reserved like a required one, never dropped.
  | (DecisionFields & { required: false; status: "included"; reason: "never_truncate" })
  | (DecisionFields & {
      required: false;
      status: "dropped";
      reason: "char_budget_exceeded" | "token_budget_exceeded";
      renderedChars: 0;
      renderedTokens: 0;
    })
  // Dropped after counting only part of its rendering: it provably could not fit, and its
  // own tokens were never counted, so it has no token figures (docs/planner.md makes them optional).
  | (Omit<DecisionFields, "originalTokens" | "renderedTokens"> & {
      required: false;
      status: "dropped";
      reason: "token_budget_exceeded";
      renderedChars: 0;
      originalTokens?: undefined;
      renderedTokens?: undefined;
    })
  | (DecisionFields & {
      status: "inactive";
      reason: "inactive";
      originalChars: 0;
      renderedChars: 0;
      originalTokens: 0;
      renderedTokens: 0;
    });

/**
 * What a decision is built from: a segment's fields and the outcome admission set on it
 * (an inactive segment keeps "inactive"). The planner's entries carry these as plain fields.
 */
export interface SegmentOutcome {
  name: string;
  priority: number;
  budgetPriority: number;
  required: boolean;
  provenance: string;
  /** The tier recorded in the decision; null when untiered. */
  cacheTier: CacheTier | null;
  chars: number;
  status: SegmentStatus;
  reason: SegmentReason;
  detail: string;
}

/** Sets the outcome once; its PlanDecision object is built only in the final pass (see makeDecision). */
export function decide(
  e: SegmentOutcome,
  status: SegmentStatus,
  reason: SegmentReason,
  detail: string,
): void {
  e.status = status;
  e.reason = reason;
  e.detail = detail;
}

/**
 * The decision of a segment, once admission is over, with its own token count (-1 when it
 * was never counted). Decisions are built together in the
 * final pass rather than as admission goes: objects that outlive a scavenge (here, while
 * the rest of the plan is computed) lead V8 to pretenure their allocation site, after
 * which every decision is allocated in old space, several times slower and at the cost
 * of mark-compact collections (15–28% of a plan's time in the profiles of 2,000 segments).
 */
export function makeDecision(e: SegmentOutcome, tokens: number): PlanDecision {
  const included = e.status === "included";
  // Fields in the documented order, so the JSON form is stable.
  const d: Omit<DecisionFields, "originalTokens" | "renderedTokens"> & {
    status: SegmentStatus;
    reason: SegmentReason;
    originalTokens?: number;
    renderedTokens?: number;
  } = {
    name: e.name,
    priority: e.priority,
    required: e.required,
    budgetPriority: e.budgetPriority,
    provenance: e.provenance,
    cacheTier: e.cacheTier,
    status: e.status,
    reason: e.reason,
    detail: e.detail,
    originalChars: e.chars,
    renderedChars: included ? e.chars : 0,
  };
  // A segment dropped after counting only part of it has no token figures.
  if (tokens >= 0) {
    d.originalTokens = tokens;
    d.renderedTokens = included ? tokens : 0;
  }
  return d as PlanDecision;
}
