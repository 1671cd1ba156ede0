/**
 * Provider output of docs/session-and-cache.md: one plan rendered as request fragments for the Anthropic
 * Messages API, OpenAI Chat Completions and Responses, and the Vercel AI SDK, laid out so
 * the providers' prefix caches hit (static content first, cache breakpoints at the end
 * of the stable tiers, a `prompt_cache_key` derived from the static cache key).
 *
 * The shapes are plain data that structurally match the official SDK types
 * (`@anthropic-ai/sdk`, `openai`, `ai`); this module imports none of them at run time.
 * The tests check them against those types and send them through the official clients
 * to a loopback server that records the wire request.
 */
export {
  type AiSdkJsonValue,
  type AiSdkMessage,
  type AiSdkOptions,
  type AiSdkProviderOptions,
  type AiSdkRequest,
  type AiSdkRequestBody,
  type AiSdkSystemMessage,
  type AiSdkUserMessage,
  toAiSdkRequest,
} from "./ai-sdk.js";
export {
  type AnthropicMessage,
  type AnthropicRequest,
  type AnthropicRequestBody,
  type AnthropicTextBlock,
  toAnthropicRequest,
} from "./anthropic.js";
export {
  ANTHROPIC_CACHE_LOOKBACK_BLOCKS,
  ANTHROPIC_MAX_BREAKPOINTS,
  ANTHROPIC_MIN_CACHEABLE_TOKENS,
  type AnthropicBreakpoint,
  type AnthropicCacheControl,
  type AnthropicOptions,
  type AnthropicSkippedBreakpoint,
  type BreakpointPosition,
  type BreakpointSkipReason,
  DEFAULT_ANTHROPIC_MODEL,
  HISTORY_BREAKPOINT_STRIDE,
  type MessageBlocks,
  minCacheableTokens,
  strideBlocks,
} from "./breakpoints.js";
export {
  contextWindowFor,
  MODEL_CONTEXT_WINDOWS,
} from "./context-windows.js";
export {
  type AiSdkConversationBody,
  type AnthropicConversationBody,
  CONVERSATION_PROVIDERS,
  type ConversationBodies,
  type ConversationProvider,
  type ConversationRenderOptions,
  type ConversationRequest,
  conversationLayout,
  messageBlocks,
  type OpenAIChatConversationBody,
  type OpenAIResponsesConversationBody,
  PER_REQUEST_MESSAGE_ID,
  type PlannedMessages,
  systemSideTokens,
  toConversationRequest,
} from "./conversation.js";
export * from "./messages/index.js";
export {
  DEFAULT_OPENAI_MODEL,
  type OpenAIChatBody,
  type OpenAIChatMessage,
  type OpenAIChatOptions,
  type OpenAIOptions,
  type OpenAIRequest,
  type OpenAIResponsesBody,
  type OpenAIResponsesInputMessage,
  PROMPT_CACHE_KEY_PREFIX,
  toOpenAIChatRequest,
  toOpenAIResponsesRequest,
} from "./openai.js";
export {
  type AssemblyLike,
  type Layout,
  MEMORY_LAYER_NAMES,
  type MemoryPlacement,
  type MovedLayer,
  type ProviderInput,
  type ProviderRenderOptions,
  type ProviderReport,
  type TierTokens,
} from "./types.js";
