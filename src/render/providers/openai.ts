/** OpenAI renderers of docs/session-and-cache.md: Chat Completions and Responses, with a `prompt_cache_key`. */
import { InvalidInputError } from "../../errors/index.js";
import { tokenizerForModel } from "../../tokens/index.js";
import { buildLayout, checkQuery, report, userContent, userTexts } from "./layout.js";
import type { Layout, ProviderInput, ProviderRenderOptions, ProviderReport } from "./types.js";

/** Model assumed by the CLI's `--format openai` when none is named. */
export const DEFAULT_OPENAI_MODEL = "gpt-4o";
/** Prefix of the `prompt_cache_key` derived from the static cache key. */
export const PROMPT_CACHE_KEY_PREFIX = "promptctx-";

/** Options of the OpenAI renderers. */
export interface OpenAIOptions extends ProviderRenderOptions {
  /** Names the model, so `tokensEstimated` can tell whether the counter is its encoding. */
  model?: string;
  /** Prefix of `prompt_cache_key` (default {@link PROMPT_CACHE_KEY_PREFIX}). */
  cacheKeyPrefix?: string;
}

/** Options of {@link toOpenAIChatRequest}. */
export interface OpenAIChatOptions extends OpenAIOptions {
  /** Role of the instructions message: `"system"` (default) or `"developer"` (o-series, gpt-5). */
  role?: "system" | "developer";
}

/** A Chat Completions message this renders. */
export type OpenAIChatMessage =
  | { role: "system" | "developer"; content: string }
  | { role: "user"; content: string | { type: "text"; text: string }[] };

/** The part of a Chat Completions body this renders (add `model`, …). */
export interface OpenAIChatBody {
  messages: OpenAIChatMessage[];
  /** Absent when the plan has no static tier. */
  prompt_cache_key?: string;
}

/** A Responses API input message. */
export interface OpenAIResponsesInputMessage {
  role: "user";
  content: { type: "input_text"; text: string }[];
}

/** The part of a Responses API body this renders (add `model`, …). */
export interface OpenAIResponsesBody {
  instructions: string;
  /** The query alone is a plain string; moved memory makes it one user message of input_text parts. */
  input?: string | OpenAIResponsesInputMessage[];
  prompt_cache_key?: string;
}

/** Result of the OpenAI renderers. */
export interface OpenAIRequest<B> extends ProviderReport {
  body: B;
  /** `prompt_cache_key` sent, or null when there is no static tier to derive it from. */
  promptCacheKey: string | null;
}

/** `prompt_cache_key`: the prefix + the static cache key, or null without a static tier. */
export function promptCacheKey(layout: Layout, prefix: string | undefined): string | null {
  if (prefix !== undefined && typeof prefix !== "string") {
    throw new InvalidInputError("cacheKeyPrefix must be a string", "cacheKeyPrefix");
  }
  const key = layout.keys.static;
  return key === null ? null : `${prefix ?? PROMPT_CACHE_KEY_PREFIX}${key}`;
}

/** Whether the token figures estimate the model's count (the counter is not its BPE encoding). */
export function openAIEstimated(tokenizer: string, model: string | undefined): boolean {
  if (tokenizer !== "o200k_base" && tokenizer !== "cl100k_base") return true;
  if (model === undefined) return false;
  try {
    return tokenizerForModel(model) !== tokenizer;
  } catch {
    return true;
  }
}

/**
 * Renders a plan as the start of an OpenAI Chat Completions request: one `system` (or
 * `developer`) message holding the prompt as planned (already tier-ordered, static
 * first, so automatic prefix caching hits), then a user message with moved memory and
 * the query, and `prompt_cache_key` = `promptctx-` + the static cache key (stable while
 * static content is; absent without a static tier).
 *
 * @example
 * const { body } = toOpenAIChatRequest(assembly, { role: "developer", query: "fix the build" });
 * await openai.chat.completions.create({ model: "gpt-4o", ...body });
 */
export function toOpenAIChatRequest(
  input: ProviderInput,
  options: OpenAIChatOptions = {},
): OpenAIRequest<OpenAIChatBody> {
  checkQuery(options.query);
  const role = options.role ?? "system";
  if (role !== "system" && role !== "developer") {
    throw new InvalidInputError(
      `role must be "system" or "developer", got ${JSON.stringify(role)}`,
      "role",
    );
  }
  const layout = buildLayout(input, options);
  const messages: OpenAIChatMessage[] = [];
  if (layout.system !== "") messages.push({ role, content: layout.system });
  const content = userContent(layout, options.query);
  if (content !== null) messages.push({ role: "user", content });
  const key = promptCacheKey(layout, options.cacheKeyPrefix);
  const body: OpenAIChatBody = key === null ? { messages } : { messages, prompt_cache_key: key };
  return {
    body,
    promptCacheKey: key,
    ...report(layout, openAIEstimated(layout.tokenizer, options.model)),
  };
}

/**
 * Renders a plan as the start of an OpenAI Responses request: `instructions` = the
 * prompt as planned, `input` = the query (a string), or one user message of
 * `input_text` parts (moved memory, then the query), and `prompt_cache_key` as for
 * {@link toOpenAIChatRequest}.
 *
 * @example
 * const { body } = toOpenAIResponsesRequest(assembly, { query: "fix the build" });
 * await openai.responses.create({ model: "gpt-4o", ...body });
 */
export function toOpenAIResponsesRequest(
  input: ProviderInput,
  options: OpenAIOptions = {},
): OpenAIRequest<OpenAIResponsesBody> {
  checkQuery(options.query);
  const layout = buildLayout(input, options);
  const body: OpenAIResponsesBody = { instructions: layout.system };
  if (layout.moved.length > 0) {
    body.input = [
      {
        role: "user",
        content: userTexts(layout, options.query).map((text) => ({ type: "input_text", text })),
      },
    ];
  } else if (options.query !== undefined) {
    body.input = options.query;
  }
  const key = promptCacheKey(layout, options.cacheKeyPrefix);
  if (key !== null) body.prompt_cache_key = key;
  return {
    body,
    promptCacheKey: key,
    ...report(layout, openAIEstimated(layout.tokenizer, options.model)),
  };
}
