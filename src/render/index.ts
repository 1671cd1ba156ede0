/**
 * Rendering (docs/assembler.md, docs/session-and-cache.md): slot renderers driven by locale
 * tables, the tagged renderer and provider requests (Anthropic, OpenAI, AI SDK) with cache
 * breakpoints. May import every stage below it (errors … sources).
 */
import { InvalidInputError } from "../errors/index.js";
import { createHeadingRenderer, LOCALES } from "./heading.js";
import { taggedRenderer } from "./tagged.js";
import type { SlotRenderer } from "./types.js";

export {
  createHeadingRenderer,
  LOCALES,
  type LocaleTable,
  LocaleTableSchema,
  type RecallLineFormat,
} from "./heading.js";
export {
  type AiSdkConversationBody,
  type AiSdkConversationMessage,
  type AiSdkJsonValue,
  type AiSdkMessage,
  type AiSdkMessagesOptions,
  type AiSdkOptions,
  type AiSdkProviderOptions,
  type AiSdkRequest,
  type AiSdkRequestBody,
  type AiSdkSystemMessage,
  type AiSdkTextPart,
  type AiSdkToolCallPart,
  type AiSdkToolResultPart,
  type AiSdkUserMessage,
  ANTHROPIC_MAX_BREAKPOINTS,
  ANTHROPIC_MIN_CACHEABLE_TOKENS,
  type AnthropicBreakpoint,
  type AnthropicCacheControl,
  type AnthropicContentBlock,
  type AnthropicConversationBody,
  type AnthropicConversationMessage,
  type AnthropicMessage,
  type AnthropicMessageLike,
  type AnthropicMessagesOptions,
  type AnthropicOptions,
  type AnthropicRequest,
  type AnthropicRequestBody,
  type AnthropicSkippedBreakpoint,
  type AnthropicTextBlock,
  type AssemblyLike,
  type BreakpointPosition,
  type BreakpointSkipReason,
  CONVERSATION_PROVIDERS,
  type ConversationBodies,
  type ConversationProvider,
  type ConversationRenderOptions,
  type ConversationRequest,
  contextWindowFor,
  conversationLayout,
  DEFAULT_ANTHROPIC_MODEL,
  DEFAULT_OPENAI_MODEL,
  fromAiSdkMessages,
  fromAnthropicMessages,
  fromOpenAIChatMessages,
  fromOpenAIResponsesInput,
  type HistoryPrefix,
  type Layout,
  MEMORY_LAYER_NAMES,
  type MemoryPlacement,
  MessageIds,
  MODEL_CONTEXT_WINDOWS,
  type MovedLayer,
  minCacheableTokens,
  type OpenAIChatBody,
  type OpenAIChatConversationBody,
  type OpenAIChatConversationMessage,
  type OpenAIChatMessage,
  type OpenAIChatOptions,
  type OpenAIOptions,
  type OpenAIRequest,
  type OpenAIResponsesBody,
  type OpenAIResponsesConversationBody,
  type OpenAIResponsesInputMessage,
  type OpenAIResponsesItem,
  type OpenAITextPart,
  type OpenAIToolCall,
  type PlannedMessages,
  PROMPT_CACHE_KEY_PREFIX,
  type ProviderInput,
  type ProviderRenderOptions,
  type ProviderReport,
  parseArguments,
  type ReadConversation,
  systemSideTokens,
  type TierTokens,
  TOOL_ERROR_PREFIX,
  type ToolInput,
  toAiSdkMessages,
  toAiSdkRequest,
  toAnthropicMessages,
  toAnthropicRequest,
  toConversationRequest,
  toOpenAIChatMessages,
  toOpenAIChatRequest,
  toOpenAIResponsesInput,
  toOpenAIResponsesRequest,
  toolNamesOf,
  withTurnPrefix,
} from "./providers/index.js";
export { taggedRenderer } from "./tagged.js";
export { type RenderContext, renderFramed, type SlotFrame, type SlotRenderer } from "./types.js";

/** Names of the built-in renderers. */
export const RENDERER_NAMES = ["en", "zh-CN", "tagged"] as const;
export type RendererName = (typeof RENDERER_NAMES)[number];

const BUILTIN: Readonly<Record<RendererName, SlotRenderer>> = Object.freeze({
  en: createHeadingRenderer("en", LOCALES.en),
  "zh-CN": createHeadingRenderer("zh-CN", LOCALES["zh-CN"]),
  tagged: taggedRenderer,
});

/**
 * A built-in renderer by name; an unknown name is `InvalidInputError` with path `renderer`.
 *
 * @example getRenderer("zh-CN").renderSlot({ kind: "profile" }, items, { userScope: "u1" })
 */
export function getRenderer(name: RendererName | (string & {})): SlotRenderer {
  if (typeof name === "string" && Object.hasOwn(BUILTIN, name)) {
    return BUILTIN[name as RendererName];
  }
  throw new InvalidInputError(
    `unknown renderer "${String(name)}" (expected one of ${RENDERER_NAMES.join(", ")})`,
    "renderer",
  );
}
