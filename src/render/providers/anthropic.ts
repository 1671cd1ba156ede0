/** Anthropic Messages renderer of docs/session-and-cache.md: one system text block per tier, breakpoints placed. */
import type {
  AnthropicBreakpoint,
  AnthropicCacheControl,
  AnthropicOptions,
  AnthropicSkippedBreakpoint,
} from "./breakpoints.js";
import { placeBreakpoints } from "./breakpoints.js";
import { buildLayout, checkQuery, report, userContent } from "./layout.js";
import type { ProviderInput, ProviderReport } from "./types.js";

/** A Messages API `TextBlockParam`. */
export interface AnthropicTextBlock {
  type: "text";
  text: string;
  cache_control?: AnthropicCacheControl;
}

/**
 * A system text block, marked with `control` when a breakpoint falls on it (every
 * Anthropic-bound renderer's system side).
 *
 * @example anthropicTextBlock("rules", { type: "ephemeral" }) // { type: "text", text: "rules", cache_control: { type: "ephemeral" } }
 */
export function anthropicTextBlock(
  text: string,
  control: AnthropicCacheControl | undefined,
): AnthropicTextBlock {
  return control === undefined
    ? { type: "text", text }
    : { type: "text", text, cache_control: control };
}

/** A Messages API `MessageParam` (user role only: this renders the start of a conversation). */
export interface AnthropicMessage {
  role: "user";
  content: string | AnthropicTextBlock[];
}

/** The part of a Messages API request body this renders (add `model`, `max_tokens`, …). */
export interface AnthropicRequestBody {
  system: AnthropicTextBlock[];
  /** Present when memory moved to the user role or a query was given. */
  messages?: AnthropicMessage[];
}

/** Result of {@link toAnthropicRequest}. */
export interface AnthropicRequest extends ProviderReport {
  body: AnthropicRequestBody;
  breakpoints: AnthropicBreakpoint[];
  skipped: AnthropicSkippedBreakpoint[];
  /** The minimum cacheable length applied, and the model it came from. */
  minCacheableTokens: number;
  model: string;
}

/**
 * Renders a plan as the `system` (and opening `messages`) of an Anthropic Messages API
 * request: one text block per tier with content (static, session, dynamic; each holds
 * exactly `plan.prompt.slice(tier.start, tier.end)`, no boundary marker), with
 * `cache_control: {type: "ephemeral"}` (`ttl: "1h"` on request) on the last block of
 * each cached tier (static and session by default, dynamic never).
 *
 * A tier gets no breakpoint when the cached prefix through it (tools + system) is
 * shorter than the model's minimum cacheable length ({@link minCacheableTokens}, by the
 * tier token counts — an estimate for Claude, `tokenizer` says which counter), or when
 * the request would exceed 4 breakpoints counting `toolsBreakpoints` (the later tier
 * loses its breakpoint first); `skipped` says which and why.
 *
 * With `memoryPlacement: "user"` the recalled-memory layer leaves `system` and opens
 * the first user message (see {@link ProviderRenderOptions.memoryPlacement}); `query`, when
 * given, follows it. A user message is a plain string when it holds only the query.
 *
 * @example
 * const { body, breakpoints, skipped } = toAnthropicRequest(assembly, { model: "claude-sonnet-4-5" });
 * await anthropic.messages.create({ model: "claude-sonnet-4-5", max_tokens: 1024, ...body,
 *   messages: [...(body.messages ?? []), ...]});
 */
export function toAnthropicRequest(
  input: ProviderInput,
  options: AnthropicOptions = {},
): AnthropicRequest {
  checkQuery(options.query);
  const layout = buildLayout(input, options);
  const bp = placeBreakpoints(layout, options, anthropicTextBlock);
  const body: AnthropicRequestBody = { system: bp.system };
  const content = userContent(layout, options.query);
  if (content !== null) body.messages = [{ role: "user", content }];
  return {
    body,
    breakpoints: bp.breakpoints,
    skipped: bp.skipped,
    minCacheableTokens: bp.minTokens,
    model: bp.model,
    ...report(layout, true),
  };
}
