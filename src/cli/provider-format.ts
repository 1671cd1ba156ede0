/** `assemble --format anthropic|openai`: a ready request body (loaded only for those formats). */
import { InvalidInputError } from "../errors/index.js";
import {
  type AnthropicRequest,
  DEFAULT_ANTHROPIC_MODEL,
  DEFAULT_OPENAI_MODEL,
  toAnthropicRequest,
  toOpenAIChatRequest,
} from "../render/index.js";
import type { Hint } from "../store/index.js";
import { getTokenCounter } from "../tokens/index.js";
import type { WorkspaceAssembly } from "../workspace/index.js";

/** `max_tokens` of the `--format anthropic` body (the Messages API requires one). */
export const ANTHROPIC_MAX_TOKENS = 1024;

/**
 * `prefix_below_cache_minimum` when no tier got a `cache_control` breakpoint because the
 * cached prefix is shorter than the model's minimum cacheable length.
 */
function cacheHints(request: AnthropicRequest): Hint[] {
  const short = request.skipped.filter((s) => s.reason === "below_min_cacheable_tokens");
  if (request.breakpoints.length > 0 || short.length === 0) return [];
  const message = `no cache_control breakpoint: the cacheable prefix is below ${request.model}'s minimum of ${request.minCacheableTokens} tokens (estimated), so the provider would not cache it`;
  return [{ code: "prefix_below_cache_minimum", message }];
}

/**
 * The request body of `--format anthropic|openai`, the query as the user message:
 * - `anthropic`: Messages API `{model, max_tokens, system, messages}`, `system` one text
 *   block per cache tier with `cache_control` breakpoints ({@link toAnthropicRequest};
 *   the breakpoints' minimum cacheable length is checked with `claude_estimate` counts);
 * - `openai`: Chat Completions `{model, messages, prompt_cache_key}` with the prompt as
 *   the `system` message ({@link toOpenAIChatRequest}).
 * The model is `--model`, else `claude-sonnet-4-6` / `gpt-4o`; a model of the other
 * provider is invalid input. `hints` say what is surprising about the body.
 */
export function providerRequestJson(
  out: WorkspaceAssembly,
  format: "anthropic" | "openai",
  query: string,
  model: string | undefined,
): { json: string; hints: Hint[] } {
  const claude = (m: string) => /^claude/i.test(m.trim());
  if (format === "anthropic") {
    const name = model ?? DEFAULT_ANTHROPIC_MODEL;
    if (!claude(name)) {
      throw new InvalidInputError(
        `--format anthropic needs a Claude model, got "${name}"`,
        "--model",
      );
    }
    const request = toAnthropicRequest(out, {
      model: name,
      query,
      tokenCounter: getTokenCounter("claude_estimate"),
    });
    const json = JSON.stringify({ model: name, max_tokens: ANTHROPIC_MAX_TOKENS, ...request.body });
    return { json, hints: cacheHints(request) };
  }
  const name = model ?? DEFAULT_OPENAI_MODEL;
  if (claude(name)) {
    throw new InvalidInputError(`--format openai needs an OpenAI model, got "${name}"`, "--model");
  }
  const { body } = toOpenAIChatRequest(out, { model: name, query });
  return { json: JSON.stringify({ model: name, ...body }), hints: [] };
}
