/** Segment planner of spec 03: the whole system prompt under one budget, with a decision log. */
export {
  type PlanDecision,
  type PlanOptions,
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
