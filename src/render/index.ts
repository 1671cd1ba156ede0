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
  type AiSdkJsonValue,
  type AiSdkMessage,
  type AiSdkOptions,
  type AiSdkProviderOptions,
  type AiSdkRequest,
  type AiSdkRequestBody,
  type AiSdkSystemMessage,
  type AiSdkUserMessage,
  ANTHROPIC_MAX_BREAKPOINTS,
  ANTHROPIC_MIN_CACHEABLE_TOKENS,
  type AnthropicBreakpoint,
  type AnthropicCacheControl,
  type AnthropicMessage,
  type AnthropicOptions,
  type AnthropicRequest,
  type AnthropicRequestBody,
  type AnthropicSkippedBreakpoint,
  type AnthropicTextBlock,
  type AssemblyLike,
  type BreakpointSkipReason,
  DEFAULT_ANTHROPIC_MODEL,
  DEFAULT_OPENAI_MODEL,
  MEMORY_LAYER_NAMES,
  type MemoryPlacement,
  type MovedLayer,
  minCacheableTokens,
  type OpenAIChatBody,
  type OpenAIChatMessage,
  type OpenAIChatOptions,
  type OpenAIOptions,
  type OpenAIRequest,
  type OpenAIResponsesBody,
  type OpenAIResponsesInputMessage,
  PROMPT_CACHE_KEY_PREFIX,
  type ProviderInput,
  type ProviderRenderOptions,
  type ProviderReport,
  type TierTokens,
  toAiSdkRequest,
  toAnthropicRequest,
  toOpenAIChatRequest,
  toOpenAIResponsesRequest,
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
