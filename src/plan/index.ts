/**
 * The segment planner (docs/planner.md): the whole system prompt under one budget,
 * required parts never dropped, one decision per segment, laid out by cache tier.
 * May import errors, text, tokens and memory (today: errors, text, tokens).
 */
export type { PlanDecision, SegmentReason, SegmentStatus } from "./decision.js";
export { SEGMENT_SEPARATOR } from "./layout.js";
export { type PlanOptions, type PlanTier, type PromptPlan, planPrompt } from "./planner.js";
export {
  CACHE_TIERS,
  type CacheTier,
  DEFAULT_BUDGET_CHARS,
  DEFAULT_CACHE_BOUNDARY,
  DEFAULT_CACHE_TIER,
  type ParsedPlanPromptRequest,
  type PlanPromptJsonRequest,
  PlanPromptJsonRequestSchema,
  type PlanPromptJsonSegment,
  PlanPromptJsonSegmentSchema,
  type PlanPromptRequest,
  PlanPromptRequestSchema,
  type Segment,
  type SegmentInput,
  SegmentInputSchema,
} from "./schema.js";
