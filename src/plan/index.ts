/**
 * Segment planner of spec 03: the whole system prompt under one budget, with a decision log,
 * laid out by cache tier (spec 05) when segments name one.
 */
export {
  type PlanDecision,
  type PlanOptions,
  type PlanTier,
  type PromptPlan,
  planPrompt,
  SEGMENT_SEPARATOR,
  type SegmentReason,
  type SegmentStatus,
} from "./planner.js";
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
