/** Vercel AI SDK renderer of docs/session-and-cache.md: `generateText` call settings, Anthropic- or OpenAI-bound. */
import { InvalidInputError } from "../../errors/index.js";
import type {
  AnthropicBreakpoint,
  AnthropicCacheControl,
  AnthropicOptions,
  AnthropicSkippedBreakpoint,
} from "./breakpoints.js";
import { placeBreakpoints } from "./breakpoints.js";
import { buildLayout, checkQuery, report, userContent } from "./layout.js";
import { type OpenAIOptions, openAIEstimated, promptCacheKey } from "./openai.js";
import type { Layout, ProviderInput, ProviderReport } from "./types.js";

/** A JSON value (`ai`'s `JSONValue`). */
export type AiSdkJsonValue =
  | null
  | string
  | number
  | boolean
  | AiSdkJsonValue[]
  | { [key: string]: AiSdkJsonValue | undefined };

/** Provider options by provider name (`ai`'s `ProviderOptions`). */
export type AiSdkProviderOptions = Record<string, { [key: string]: AiSdkJsonValue | undefined }>;

/** `ai`'s `SystemModelMessage`. */
export interface AiSdkSystemMessage {
  role: "system";
  content: string;
  providerOptions?: AiSdkProviderOptions;
}

/**
 * A system message, with Anthropic's cache control as a provider option when a breakpoint
 * falls on it (every AI SDK renderer bound to Anthropic).
 *
 * @example aiSdkSystemMessage("rules", undefined) // { role: "system", content: "rules" }
 */
export function aiSdkSystemMessage(
  content: string,
  control: AnthropicCacheControl | undefined,
): AiSdkSystemMessage {
  return control === undefined
    ? { role: "system", content }
    : { role: "system", content, providerOptions: { anthropic: { cacheControl: control } } };
}

/** `ai`'s `UserModelMessage` with text content. */
export interface AiSdkUserMessage {
  role: "user";
  content: string | { type: "text"; text: string }[];
}

/** The `ModelMessage`s this renders. */
export type AiSdkMessage = AiSdkSystemMessage | AiSdkUserMessage;

/** Call settings for `generateText` / `streamText` (add `model`). */
export interface AiSdkRequestBody {
  /**
   * OpenAI: the whole system side as one string. Anthropic: one system message per tier
   * (`ai` ≥ 5.1 takes an array). Absent when the system side is empty.
   */
  system?: string | AiSdkSystemMessage[];
  /** The user message (moved memory, then the query); `[]` when there is neither. */
  messages: AiSdkUserMessage[];
  /** `{openai: {promptCacheKey}}` for OpenAI. */
  providerOptions?: AiSdkProviderOptions;
}

/** Options of {@link toAiSdkRequest}. */
export type AiSdkOptions =
  | (AnthropicOptions & { provider: "anthropic" })
  | (OpenAIOptions & { provider: "openai" });

/** Result of {@link toAiSdkRequest}. */
export interface AiSdkRequest extends ProviderReport {
  provider: "anthropic" | "openai";
  body: AiSdkRequestBody;
  /** Anthropic only: as in {@link toAnthropicRequest}. */
  breakpoints: AnthropicBreakpoint[];
  skipped: AnthropicSkippedBreakpoint[];
  /** OpenAI only: the `promptCacheKey` sent, else null. */
  promptCacheKey: string | null;
}

function aiSdkUser(layout: Layout, query: string | undefined): AiSdkUserMessage[] {
  const content = userContent(layout, query);
  return content === null ? [] : [{ role: "user", content }];
}

/** Anthropic-bound: one system message per tier, breakpoints as provider options. */
function anthropicSettings(
  input: ProviderInput,
  options: AnthropicOptions & { provider: "anthropic" },
): AiSdkRequest {
  checkQuery(options.query);
  const layout = buildLayout(input, options);
  const bp = placeBreakpoints(layout, options, aiSdkSystemMessage);
  const body: AiSdkRequestBody = { messages: aiSdkUser(layout, options.query) };
  if (bp.system.length > 0) body.system = bp.system;
  return {
    provider: "anthropic",
    body,
    breakpoints: bp.breakpoints,
    skipped: bp.skipped,
    promptCacheKey: null,
    ...report(layout, true),
  };
}

/** OpenAI-bound: the system side as one string, `promptCacheKey` as a provider option. */
function openAISettings(
  input: ProviderInput,
  options: OpenAIOptions & { provider: "openai" },
): AiSdkRequest {
  checkQuery(options.query);
  const layout = buildLayout(input, options);
  const key = promptCacheKey(layout, options.cacheKeyPrefix);
  const body: AiSdkRequestBody = { messages: aiSdkUser(layout, options.query) };
  if (layout.system !== "") body.system = layout.system;
  if (key !== null) body.providerOptions = { openai: { promptCacheKey: key } };
  return {
    provider: "openai",
    body,
    breakpoints: [],
    skipped: [],
    promptCacheKey: key,
    ...report(layout, openAIEstimated(layout.tokenizer, options.model)),
  };
}

/**
 * Renders a plan as Vercel AI SDK call settings (`generateText({model, ...body})`):
 * - `anthropic`: `system` = one `SystemModelMessage` per tier, the cached ones carrying
 *   `providerOptions: {anthropic: {cacheControl: {type: "ephemeral"}}}` (same breakpoint
 *   rules as {@link toAnthropicRequest}; `@ai-sdk/anthropic` turns each into one system
 *   text block with `cache_control`); `messages` = the user message.
 * - `openai`: `system` = the prompt as planned, the user message, and
 *   `providerOptions: {openai: {promptCacheKey}}` (derived from the static key).
 *
 * @example
 * const { body } = toAiSdkRequest(assembly, { provider: "anthropic", query: "fix the build" });
 * await generateText({ model: anthropic("claude-sonnet-4-5"), ...body });
 */
export function toAiSdkRequest(input: ProviderInput, options: AiSdkOptions): AiSdkRequest {
  if (options.provider === "anthropic") return anthropicSettings(input, options);
  if (options.provider === "openai") return openAISettings(input, options);
  throw new InvalidInputError(
    `provider must be "anthropic" or "openai", got ${JSON.stringify((options as { provider?: unknown }).provider)}`,
    "provider",
  );
}
