/** `assemble --format anthropic|openai`: a ready request body (loaded only for those formats). */
import { InvalidInputError } from "../errors/index.js";
import {
  DEFAULT_ANTHROPIC_MODEL,
  DEFAULT_OPENAI_MODEL,
  toAnthropicRequest,
  toOpenAIChatRequest,
} from "../render/index.js";
import { getTokenCounter } from "../tokens/index.js";
import type { WorkspaceAssembly } from "../workspace/workspace.js";

/** `max_tokens` of the `--format anthropic` body (the Messages API requires one). */
export const ANTHROPIC_MAX_TOKENS = 1024;

/**
 * The request body of `--format anthropic|openai`, the query as the user message:
 * - `anthropic`: Messages API `{model, max_tokens, system, messages}`, `system` one text
 *   block per cache tier with `cache_control` breakpoints ({@link toAnthropicRequest};
 *   the breakpoints' minimum cacheable length is checked with `claude_estimate` counts);
 * - `openai`: Chat Completions `{model, messages, prompt_cache_key}` with the prompt as
 *   the `system` message ({@link toOpenAIChatRequest}).
 * The model is `--model`, else `claude-sonnet-4-6` / `gpt-4o`; a model of the other
 * provider is invalid input.
 */
export function providerRequestJson(
  out: WorkspaceAssembly,
  format: "anthropic" | "openai",
  query: string,
  model: string | undefined,
): string {
  const claude = (m: string) => /^claude/i.test(m.trim());
  if (format === "anthropic") {
    const name = model ?? DEFAULT_ANTHROPIC_MODEL;
    if (!claude(name)) {
      throw new InvalidInputError(
        `--format anthropic needs a Claude model, got "${name}"`,
        "--model",
      );
    }
    const { body } = toAnthropicRequest(out, {
      model: name,
      query,
      tokenCounter: getTokenCounter("claude_estimate"),
    });
    return JSON.stringify({ model: name, max_tokens: ANTHROPIC_MAX_TOKENS, ...body });
  }
  const name = model ?? DEFAULT_OPENAI_MODEL;
  if (claude(name)) {
    throw new InvalidInputError(`--format openai needs an OpenAI model, got "${name}"`, "--model");
  }
  const { body } = toOpenAIChatRequest(out, { model: name, query });
  return JSON.stringify({ model: name, ...body });
}
