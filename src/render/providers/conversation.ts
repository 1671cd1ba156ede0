/**
 * Whole-request builders of docs/conversation.md: the system side of a plan (as the docs/session-and-cache.md renderers
 * lay it out) plus the planned conversation, in each provider's own shape, with Anthropic
 * cache breakpoints on the messages too (the tail, and stride positions within the
 * provider's lookback; placed by the same {@link placeBreakpoints} as the system tiers,
 * within the limit of 4), and the layers that change every request after the last
 * cached block.
 */
import { shortHash } from "../../cache/index.js";
import { MESSAGE_OVERHEAD_TOKENS, type Message, partTokens } from "../../conversation/index.js";
import { InvalidInputError } from "../../errors/index.js";
import { isTokenizerName, resolveTokenCounter, type TokenCounter } from "../../tokens/index.js";
import {
  type AiSdkProviderOptions,
  type AiSdkSystemMessage,
  aiSdkSystemMessage,
} from "./ai-sdk.js";
import { type AnthropicTextBlock, anthropicTextBlock } from "./anthropic.js";
import {
  type AnthropicBreakpoint,
  type AnthropicOptions,
  type AnthropicSkippedBreakpoint,
  type MessageBlocks,
  placeBreakpoints,
} from "./breakpoints.js";
import { buildLayout, report } from "./layout.js";
import { type AiSdkConversationMessage, toAiSdkMessages } from "./messages/ai-sdk.js";
import { type AnthropicConversationMessage, toAnthropicMessages } from "./messages/anthropic.js";
import {
  type OpenAIChatConversationMessage,
  type OpenAIResponsesItem,
  toOpenAIChatMessages,
  toOpenAIResponsesInput,
} from "./messages/openai.js";
import {
  type OpenAIChatOptions,
  openAIEstimated,
  PROMPT_CACHE_KEY_PREFIX,
  promptCacheKey,
} from "./openai.js";
import type { Layout, ProviderInput, ProviderReport } from "./types.js";

/** The request shapes a whole request can take. */
export const CONVERSATION_PROVIDERS = [
  "anthropic",
  "openai-chat",
  "openai-responses",
  "ai-sdk-anthropic",
  "ai-sdk-openai",
] as const;
export type ConversationProvider = (typeof CONVERSATION_PROVIDERS)[number];

/** The planned conversation a whole request carries. */
export interface PlannedMessages {
  /** The messages to send (a conversation plan's `messages`), the current turn last. */
  messages: readonly Message[];
  /** Index of the last message of the stable history prefix (-1: there is none). */
  stableEnd: number;
  /** Tokens of `messages[0..stableEnd]`, as the plan counted them. */
  stableTokens: number;
}

/** Options of the whole-request builders (every provider's render options; `query` not allowed). */
export interface ConversationRenderOptions extends AnthropicOptions, OpenAIChatOptions {
  /** Anthropic: breakpoints on the messages (the tail and stride positions; default true). */
  cacheHistory?: boolean;
}

/** `messages` + `system` of an Anthropic Messages request (add `model`, `max_tokens`, `tools`). */
export interface AnthropicConversationBody {
  system: AnthropicTextBlock[];
  messages: AnthropicConversationMessage[];
}

/** A Chat Completions request's `messages` and `prompt_cache_key`. */
export interface OpenAIChatConversationBody {
  messages: ({ role: "system" | "developer"; content: string } | OpenAIChatConversationMessage)[];
  prompt_cache_key?: string;
}

/** A Responses request's `instructions`, `input` and `prompt_cache_key`. */
export interface OpenAIResponsesConversationBody {
  instructions: string;
  input: OpenAIResponsesItem[];
  prompt_cache_key?: string;
}

/** `generateText` / `streamText` call settings (add `model`). */
export interface AiSdkConversationBody {
  system?: string | AiSdkSystemMessage[];
  messages: AiSdkConversationMessage[];
  providerOptions?: AiSdkProviderOptions;
}

/** The body of each provider's whole request. */
export interface ConversationBodies {
  anthropic: AnthropicConversationBody;
  "openai-chat": OpenAIChatConversationBody;
  "openai-responses": OpenAIResponsesConversationBody;
  "ai-sdk-anthropic": AiSdkConversationBody;
  "ai-sdk-openai": AiSdkConversationBody;
}

/** A whole request in one provider's shape, with the system side's report. */
export interface ConversationRequest<P extends ConversationProvider = ConversationProvider>
  extends ProviderReport {
  provider: P;
  body: ConversationBodies[P];
  /** Anthropic-bound: the breakpoints placed (tiers, then `history`) and those skipped. */
  breakpoints: AnthropicBreakpoint[];
  skipped: AnthropicSkippedBreakpoint[];
  /** OpenAI-bound: the `prompt_cache_key` sent, else null. */
  promptCacheKey: string | null;
  /**
   * Index of the message the per-request layers were sent in (a user message after the
   * planned ones), or null when no layer moved.
   */
  perRequestIndex: number | null;
}

/** Id of the message that carries the per-request layers after the planned messages. */
export const PER_REQUEST_MESSAGE_ID = "promptctx:per-request";

function checkPlanned(planned: PlannedMessages, options: ConversationRenderOptions): void {
  if (options.query !== undefined) {
    throw new InvalidInputError(
      "query is not an option of a whole request: the current turn is the last user message",
      "query",
    );
  }
  const n = planned.messages.length;
  if (!Number.isInteger(planned.stableEnd) || planned.stableEnd < -1 || planned.stableEnd >= n) {
    throw new InvalidInputError(`stableEnd must be in [-1, ${n - 1}]`, "stableEnd");
  }
}

/** Tokens of the system side as sent: every block, plus layers moved after the conversation. */
export function systemSideTokens(layout: Layout): number {
  let total = 0;
  for (const b of layout.blocks) total += b.tokens;
  for (const m of layout.moved) total += m.tokens;
  return total;
}

/**
 * Lays out the system side of a whole request ({@link buildLayout}): what the request
 * builders and the budget of the conversation are computed from.
 */
export function conversationLayout(
  input: ProviderInput,
  options: ConversationRenderOptions,
): Layout {
  return buildLayout(input, options);
}

interface Sides {
  layout: Layout;
  /** The planned messages, then (when layers moved) the per-request message. */
  messages: Message[];
  /** Where the per-request message is, or null. */
  perRequest: number | null;
}

/**
 * The two sides of a whole request. Layers moved out of the system side go into one user
 * message after the planned ones (the last cached block stays the planned conversation's
 * last block): they change every request, and a block that changes must never sit
 * between cached blocks. Anthropic merges it into the last user-side message.
 */
function sides(
  input: ProviderInput,
  planned: PlannedMessages,
  options: ConversationRenderOptions,
): Sides {
  checkPlanned(planned, options);
  const layout = buildLayout(input, options);
  const messages = [...planned.messages];
  if (layout.moved.length === 0) return { layout, messages, perRequest: null };
  messages.push({
    id: PER_REQUEST_MESSAGE_ID,
    role: "user",
    content: layout.moved.map((m) => ({ type: "text" as const, text: m.text })),
  });
  return { layout, messages, perRequest: messages.length - 1 };
}

/** The counter of the message blocks: the caller's, else the plan's built-in one. */
function blockCounter(layout: Layout, options: ConversationRenderOptions): TokenCounter {
  if (options.tokenCounter !== undefined) return options.tokenCounter;
  return resolveTokenCounter(isTokenizerName(layout.tokenizer) ? layout.tokenizer : "estimate");
}

/**
 * Tokens through the end of each block of the planned messages, counted as the
 * conversation planner counts a message (its framing on its first block).
 */
export function messageBlocks(messages: readonly Message[], counter: TokenCounter): MessageBlocks {
  const prefixTokens: number[] = [];
  let total = 0;
  for (const m of messages) {
    total += MESSAGE_OVERHEAD_TOKENS;
    for (const p of m.content) {
      total += partTokens(p, counter);
      prefixTokens.push(total);
    }
  }
  return { prefixTokens };
}

function anthropicBound<S>(
  s: Sides,
  planned: PlannedMessages,
  options: ConversationRenderOptions,
  block: (text: string, control: AnthropicTextBlock["cache_control"]) => S,
) {
  const blocks =
    options.cacheHistory === false
      ? null
      : messageBlocks(planned.messages, blockCounter(s.layout, options));
  const bp = placeBreakpoints(s.layout, options, block, blocks);
  const cache = bp.history ? { cacheBlocks: bp.messageBlocks, cacheControl: bp.control } : {};
  return { bp, cache };
}

/**
 * `prompt_cache_key` of a whole request: the prefix + 16 hex of the SHA-256 of the static
 * cache key and the first message's id — one key per conversation window, stable while
 * the stable prefix is (null without a static tier, as for the system-only renderers).
 */
function conversationCacheKey(
  layout: Layout,
  planned: PlannedMessages,
  prefix: string | undefined,
): string | null {
  const key = promptCacheKey(layout, prefix);
  if (key === null) return null;
  const first = planned.messages[0]?.id ?? "";
  return `${prefix ?? PROMPT_CACHE_KEY_PREFIX}${shortHash(`${layout.keys.static}\n${first}`)}`;
}

function anthropicRequest(
  input: ProviderInput,
  planned: PlannedMessages,
  options: ConversationRenderOptions,
): ConversationRequest<"anthropic"> {
  const s = sides(input, planned, options);
  const { bp, cache } = anthropicBound(s, planned, options, anthropicTextBlock);
  return {
    provider: "anthropic",
    body: { system: bp.system, messages: toAnthropicMessages(s.messages, cache) },
    breakpoints: bp.breakpoints,
    skipped: bp.skipped,
    promptCacheKey: null,
    perRequestIndex: s.perRequest,
    ...report(s.layout, true),
  };
}

function aiSdkAnthropicRequest(
  input: ProviderInput,
  planned: PlannedMessages,
  options: ConversationRenderOptions,
): ConversationRequest<"ai-sdk-anthropic"> {
  const s = sides(input, planned, options);
  const { bp, cache } = anthropicBound(s, planned, options, aiSdkSystemMessage);
  const body: AiSdkConversationBody = { messages: toAiSdkMessages(s.messages, cache) };
  if (bp.system.length > 0) body.system = bp.system;
  return {
    provider: "ai-sdk-anthropic",
    body,
    breakpoints: bp.breakpoints,
    skipped: bp.skipped,
    promptCacheKey: null,
    perRequestIndex: s.perRequest,
    ...report(s.layout, true),
  };
}

function openAIChatRequest(
  input: ProviderInput,
  planned: PlannedMessages,
  options: ConversationRenderOptions,
): ConversationRequest<"openai-chat"> {
  const s = sides(input, planned, options);
  const role = options.role ?? "system";
  if (role !== "system" && role !== "developer") {
    throw new InvalidInputError(
      `role must be "system" or "developer", got ${JSON.stringify(role)}`,
      "role",
    );
  }
  const key = conversationCacheKey(s.layout, planned, options.cacheKeyPrefix);
  const head = s.layout.system === "" ? [] : [{ role, content: s.layout.system }];
  const body: OpenAIChatConversationBody = {
    messages: [...head, ...toOpenAIChatMessages(s.messages)],
  };
  if (key !== null) body.prompt_cache_key = key;
  return {
    provider: "openai-chat",
    body,
    breakpoints: [],
    skipped: [],
    promptCacheKey: key,
    perRequestIndex: s.perRequest,
    ...report(s.layout, openAIEstimated(s.layout.tokenizer, options.model)),
  };
}

function openAIResponsesRequest(
  input: ProviderInput,
  planned: PlannedMessages,
  options: ConversationRenderOptions,
): ConversationRequest<"openai-responses"> {
  const s = sides(input, planned, options);
  const key = conversationCacheKey(s.layout, planned, options.cacheKeyPrefix);
  const body: OpenAIResponsesConversationBody = {
    instructions: s.layout.system,
    input: toOpenAIResponsesInput(s.messages),
  };
  if (key !== null) body.prompt_cache_key = key;
  return {
    provider: "openai-responses",
    body,
    breakpoints: [],
    skipped: [],
    promptCacheKey: key,
    perRequestIndex: s.perRequest,
    ...report(s.layout, openAIEstimated(s.layout.tokenizer, options.model)),
  };
}

function aiSdkOpenAIRequest(
  input: ProviderInput,
  planned: PlannedMessages,
  options: ConversationRenderOptions,
): ConversationRequest<"ai-sdk-openai"> {
  const s = sides(input, planned, options);
  const key = conversationCacheKey(s.layout, planned, options.cacheKeyPrefix);
  const body: AiSdkConversationBody = { messages: toAiSdkMessages(s.messages) };
  if (s.layout.system !== "") body.system = s.layout.system;
  if (key !== null) body.providerOptions = { openai: { promptCacheKey: key } };
  return {
    provider: "ai-sdk-openai",
    body,
    breakpoints: [],
    skipped: [],
    promptCacheKey: key,
    perRequestIndex: s.perRequest,
    ...report(s.layout, openAIEstimated(s.layout.tokenizer, options.model)),
  };
}

const BUILDERS: {
  [P in ConversationProvider]: (
    input: ProviderInput,
    planned: PlannedMessages,
    options: ConversationRenderOptions,
  ) => ConversationRequest<P>;
} = {
  anthropic: anthropicRequest,
  "openai-chat": openAIChatRequest,
  "openai-responses": openAIResponsesRequest,
  "ai-sdk-anthropic": aiSdkAnthropicRequest,
  "ai-sdk-openai": aiSdkOpenAIRequest,
};

/**
 * Renders a whole request: the plan's system side as the docs/session-and-cache.md renderer of `provider`
 * lays it out (tiers, layers moved on request, `prompt_cache_key`), then the planned
 * messages in the provider's own shape. Layers moved out of the system side
 * (`memoryPlacement` / `dynamicPlacement: "user"`) go in one user message after the
 * planned ones, after the last cached block. Anthropic-bound requests get breakpoints on
 * the messages too: the tail (the last planned block) and stride positions
 * ({@link strideBlocks}), ranked with the system tiers under the limit of 4, each only
 * where the cached prefix reaches the minimum cacheable length.
 *
 * @example
 * const r = toConversationRequest("anthropic", assembly, { messages: plan.messages, stableEnd: 5, stableTokens: 900 }, { model });
 * await client.messages.create({ model, max_tokens: 1024, ...r.body });
 */
export function toConversationRequest<P extends ConversationProvider>(
  provider: P,
  input: ProviderInput,
  planned: PlannedMessages,
  options: ConversationRenderOptions = {},
): ConversationRequest<P> {
  const build = (Object.hasOwn(BUILDERS, provider) ? BUILDERS[provider] : undefined) as
    | ((
        i: ProviderInput,
        p: PlannedMessages,
        o: ConversationRenderOptions,
      ) => ConversationRequest<P>)
    | undefined;
  if (build === undefined) {
    throw new InvalidInputError(
      `provider must be one of ${CONVERSATION_PROVIDERS.join(", ")}, got ${JSON.stringify(provider)}`,
      "provider",
    );
  }
  return build(input, planned, options);
}
