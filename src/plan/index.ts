/**
 * Segment planner of spec 03: the whole system prompt under one budget, with a decision log,
 * laid out by cache tier (spec 05) when segments name one.
 */
export type { PlanDecision, SegmentReason, SegmentStatus } from "./decision.js";
export { SEGMENT_SEPARATOR } from "./layout.js";
export { type PlanOptions, type PlanTier, type PromptPlan, planPrompt } from "./planner.js";
export {
  CACHE_TIERS,
  type CacheTier,
  DEFAULT_BUDGET_CHARS,
  DEFAULT_CACHE_BOUNDARY,
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
