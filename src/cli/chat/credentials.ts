/** The provider, key, model and base URL of `promptctx chat`, read from the environment. */
import type { ChatConnection, ChatProvider } from "../../agent/index.js";
import { InvalidInputError } from "../../errors/index.js";

/** Provider, key, model and base URL taken from the environment. */
export type ChatCredentials = ChatConnection;

/** The environment variables `chat` reads. */
export type ChatEnv = Readonly<Record<string, string | undefined>>;

const KEY_VAR: Record<ChatProvider, string> = {
  anthropic: "ANTHROPIC_API_KEY",
  openai: "OPENAI_API_KEY",
};
const BASE_VAR: Record<ChatProvider, string> = {
  anthropic: "ANTHROPIC_BASE_URL",
  openai: "OPENAI_BASE_URL",
};

function envValue(env: ChatEnv, name: string): string | undefined {
  const v = env[name];
  return v === undefined || v.trim() === "" ? undefined : v.trim();
}

/**
 * Picks the provider and reads its key and `MODEL_ID`, or throws `invalid_input` saying
 * exactly what is missing (path `env.VAR`).
 *
 * @example chatCredentials({ ANTHROPIC_API_KEY: "sk-…", MODEL_ID: "claude-sonnet-4-5" })
 */
export function chatCredentials(env: ChatEnv, provider?: ChatProvider): ChatCredentials {
  const model = envValue(env, "MODEL_ID");
  const chosen: ChatProvider | undefined =
    provider ??
    (envValue(env, KEY_VAR.anthropic) !== undefined
      ? "anthropic"
      : envValue(env, KEY_VAR.openai) !== undefined
        ? "openai"
        : undefined);
  const apiKey = chosen === undefined ? undefined : envValue(env, KEY_VAR[chosen]);
  if (apiKey === undefined || chosen === undefined) {
    const keyVar = chosen === undefined ? KEY_VAR.anthropic : KEY_VAR[chosen];
    const keys = chosen === undefined ? `${KEY_VAR.anthropic} (or ${KEY_VAR.openai})` : keyVar;
    throw new InvalidInputError(
      `set ${keys}${model === undefined ? " and MODEL_ID" : ""}`,
      `env.${keyVar}`,
    );
  }
  if (model === undefined) {
    throw new InvalidInputError("set MODEL_ID (the model to call)", "env.MODEL_ID");
  }
  return { provider: chosen, apiKey, model, baseURL: envValue(env, BASE_VAR[chosen]) };
}
