/**
 * The conversation stage: history, tool calls and results planned under a token budget
 * (units kept or dropped whole, one decision per message, cache-friendly windows) and
 * compaction of the dropped run. Imports errors, text, tokens and cache only.
 */
export {
  CLEARING_BATCH_REACH_ROOMS,
  CLEARING_REACH_ROOMS,
  type ClearingEngine,
  type GridClearing,
  type GridClearingOptions,
  type GridEngine,
  gridClearing,
  type PlanOnce,
  planClearing,
  type StatelessClearing,
  statelessClearing,
  type TurnSizes,
} from "./clearing/index.js";
export {
  type CompactionRequest,
  type CompactionResult,
  type CompactionSummary,
  compactConversation,
  type Summarize,
  summaryMessage,
} from "./compact.js";
export { canonicalJson, MESSAGE_OVERHEAD_TOKENS, messageTokens, partTokens } from "./count.js";
export {
  type ConversationDecision,
  type ConversationPlan,
  type ConversationReason,
  sent,
} from "./decide.js";
export {
  createDigestSummarizer,
  type DigestOptions,
  digestConversation,
  parseMessages,
} from "./digest.js";
export { rejectUnknownMessageFields } from "./fast-parse.js";
export { planConversation } from "./plan.js";
export {
  type ConversationPlanner,
  createConversationPlanner,
  oneCallPlanner,
  type PlanConversationRequest,
} from "./planner.js";
export { type QuotedLine, quotedLines } from "./quotes.js";
export {
  type ConversationPolicy,
  type ConversationPolicyInput,
  ConversationPolicySchema,
  MAX_TOOL_INPUT_DEPTH,
  MESSAGE_ROLES,
  type Message,
  type MessageInput,
  type MessageRole,
  MessageSchema,
  MIN_TOOL_RESULT_MAX_TOKENS,
  type Part,
  PartSchema,
  type PlanConversationJsonRequest,
  PlanConversationJsonRequestSchema,
  type TextPart,
  type ToolCallPart,
  type ToolResultPart,
} from "./schema.js";
export {
  CLEARED_QUOTE_MIN_TOKENS,
  CLEARED_QUOTE_SHARE,
  clearedNotice,
  clearedOutput,
  elisionNotice,
  type Transform,
  truncateToolOutput,
  UNKNOWN_TOOL,
} from "./transforms.js";
export type { Unit } from "./units.js";
