/** Model context windows as data (spec 09 "the whole request"), with where they come from. */
import { InvalidInputError } from "../../errors/index.js";

/**
 * Context windows (input + output tokens together) of the models promptctx knows, as
 * data. The whole request plans the conversation in `window − system − response reserve
 * − tail reserve`, so a window set too high lets a request overflow and one set too low
 * only drops history early: when unsure, the smaller figure is encoded.
 *
 * Claude: the "Context window" line of each model's page on Anthropic's documentation
 * (https://platform.claude.com/docs/en/models/<model>/overview), read on 2026-12-01:
 * 1M for Claude Haiku 5.5, Opus 5, Sonnet 5, Opus 4.6, Sonnet 4.6, and for Opus 5.5 and
 * Sonnet 5.5 (the lineup table on the same pages); 200K for Haiku 4.5, Sonnet 4.5 and
 * Opus 4.5. The context-windows guide says every other Claude model has 200K; an id the
 * table does not name gets that default (200K is also the smallest current window).
 * Opus 4.7 / 4.8 and the Fable / Mythos models are left out: their ids were not confirmed
 * on Anthropic's own pages.
 *
 * OpenAI: the model pages (https://platform.openai.com/docs/models/<model>), as relayed by
 * provider catalogs on 2026-12-01 (OpenAI's own pages could not be read from here): 128,000
 * for GPT-4o, GPT-4o mini and GPT-4 Turbo; 1,047,576 for GPT-4.1 (mini, nano); 200,000
 * for o1, o3, o4-mini; 400,000 for GPT-5, 5.1 and 5.2 (mini, nano); 1,050,000 for GPT-5.4;
 * 8,192 for GPT-4; 16,385 for GPT-3.5 Turbo. An OpenAI model the table does not name has
 * no default: pass `contextWindow`.
 */
export const MODEL_CONTEXT_WINDOWS = {
  sources: [
    "https://platform.claude.com/docs/en/models/<model>/overview (Context window)",
    "https://platform.openai.com/docs/models/<model> (Context window), via provider catalogs",
  ],
  asOf: "2026-12-01",
  /** For a `claude-*` model the table does not name. */
  claudeDefaultTokens: 200_000,
  /** Model ids (aliases; a dated snapshot such as `-20251001` matches its alias). */
  models: {
    "claude-haiku-5-5": 1_000_000,
    "claude-sonnet-5-5": 1_000_000,
    "claude-opus-5-5": 1_000_000,
    "claude-opus-5": 1_000_000,
    "claude-sonnet-5": 1_000_000,
    "claude-opus-4-6": 1_000_000,
    "claude-sonnet-4-6": 1_000_000,
    "claude-opus-4-5": 200_000,
    "claude-sonnet-4-5": 200_000,
    "claude-haiku-4-5": 200_000,
    "gpt-5.4": 1_050_000,
    "gpt-5.2": 400_000,
    "gpt-5.1": 400_000,
    "gpt-5": 400_000,
    "gpt-5-mini": 400_000,
    "gpt-5-nano": 400_000,
    "gpt-4.1": 1_047_576,
    "gpt-4.1-mini": 1_047_576,
    "gpt-4.1-nano": 1_047_576,
    "gpt-4o": 128_000,
    "gpt-4o-mini": 128_000,
    "gpt-4-turbo": 128_000,
    "gpt-4": 8_192,
    "gpt-3.5-turbo": 16_385,
    o1: 200_000,
    o3: 200_000,
    "o4-mini": 200_000,
  } as Readonly<Record<string, number>>,
} as const;

/** A model id without provider prefix, version suffix or snapshot date. */
function bareModelId(model: string): string {
  return model
    .trim()
    .toLowerCase()
    .replace(/^(?:[a-z0-9-]+\/)?(?:[a-z]+\.)*(?=claude)/, "")
    .replace(/^openai\//, "")
    .replace(/@.*$/, "")
    .replace(/-v\d+(?::\d+)?$/, "")
    .replace(/-(?:latest|\d{8}|\d{4}-\d{2}-\d{2})$/, "");
}

/**
 * The context window of a model from {@link MODEL_CONTEXT_WINDOWS}: the id is lower-cased,
 * a provider prefix (`anthropic/`, `openai/`, `anthropic.`), a `@…` or `-vN:M` suffix and a
 * `-latest` / `-YYYYMMDD` / `-YYYY-MM-DD` snapshot suffix are dropped. An unnamed Claude model
 * gets the Claude default (200K); any other unnamed model is invalid input (pass the window
 * yourself: no silent guess).
 *
 * @example contextWindowFor("claude-haiku-4-5-20251001") // 200000
 * @example contextWindowFor("gpt-4o-2024-08-06") // 128000
 */
export function contextWindowFor(model: string, path = "model"): number {
  if (typeof model !== "string" || model.trim() === "") {
    throw new InvalidInputError("model must be a non-empty string", path);
  }
  const id = bareModelId(model);
  const known = MODEL_CONTEXT_WINDOWS.models[id];
  if (known !== undefined) return known;
  if (id.startsWith("claude")) return MODEL_CONTEXT_WINDOWS.claudeDefaultTokens;
  throw new InvalidInputError(
    `no context window known for model "${model}": pass contextWindow (tokens)`,
    path,
  );
}
