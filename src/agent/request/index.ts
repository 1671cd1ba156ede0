/** The whole request of docs/conversation.md: the system prompt and the conversation under one window. */

export {
  AGENT_KEEP_RECENT_TOOL_RESULTS,
  AGENT_LOW_WATER_BOUNDS,
  AGENT_WINDOW_SHARES,
  AGENT_WORKING_SET_TOKENS,
  type AgentDefaults,
  type AgentSlotBudgets,
  agentDefaults,
  agentSchemas,
  clockSource,
  type WindowShare,
} from "./defaults.js";
export {
  type DropReason,
  explainRequest,
  type RequestExplanation,
  type TransformSummary,
} from "./explain.js";
export {
  type AgentRequestAnswer,
  type AgentRequestJson,
  AgentRequestJsonSchema,
  ANSWER_PARTS,
  type AnswerPart,
  badSystem,
  isSegmentsSystem,
  parseAgentRequestJson,
  REQUEST_PROVIDERS,
  REQUEST_SYSTEM_BUDGET_CHARS,
  RequestRenderJsonSchema,
  requestFromJson,
  segmentsSystem,
  underSystem,
} from "./json.js";
export {
  type ContextReport,
  type ConversationState,
  contextMetadata,
  MIDDLEWARE_RESPONSE_RESERVE,
  type PromptctxMiddlewareOptions,
  promptctxMiddleware,
} from "./middleware.js";
export { explainRefusal, type RefusalExplanation, requestRefusal } from "./refusal.js";
export {
  type AssembledRequest,
  type AssembleRequestInput,
  assembleRequest,
  type PlannedRequest,
  planAgentRequest,
  planRequest,
  type RequestBudget,
  RequestBudgetSchema,
  type RequestInput,
  type StablePrefix,
} from "./request.js";
export {
  anthropicSummarizer,
  type OpenAISummarizerOptions,
  openAISummarizer,
  SUMMARY_INSTRUCTIONS,
  SUMMARY_TOOL_OUTPUT_MAX_TOKENS,
  type SummarizerOptions,
  summaryTranscript,
} from "./summarize.js";
export { gridWindowStart, WINDOW_DIGEST_HEADER, withWindowDigest } from "./window.js";
