/** Opens a conversation with the provider a connection names; the provider's SDK is loaded on first use. */
import type { ToolSpec } from "../../sources/index.js";
import { AnthropicConversation } from "./anthropic.js";
import type { ChatConnection, Conversation } from "./conversation.js";
import type { ChatContextOptions } from "./history.js";
import { OpenAIConversation } from "./openai.js";
import type { ToolArgDocs } from "./tool-schemas.js";

/**
 * A new, empty conversation with `connection.provider` offering the `registry` tools (their
 * arguments described by `argDocs`), its history planned with `context` (default: the
 * model's window, the response reserve of `CHAT_MAX_TOKENS`, no compaction). Only the
 * chosen provider's SDK is imported.
 *
 * @example const c = await openConversation({ provider: "openai", apiKey, model, baseURL: undefined }, [])
 */
export async function openConversation(
  connection: ChatConnection,
  registry: readonly ToolSpec[],
  argDocs?: ToolArgDocs,
  context?: ChatContextOptions,
): Promise<Conversation> {
  if (connection.provider === "anthropic") {
    const { default: AnthropicClient } = await import("@anthropic-ai/sdk");
    const client = new AnthropicClient({
      apiKey: connection.apiKey,
      ...(connection.baseURL !== undefined ? { baseURL: connection.baseURL } : {}),
    });
    return new AnthropicConversation(client, connection.model, registry, argDocs, context);
  }
  const { default: OpenAIClient } = await import("openai");
  const client = new OpenAIClient({
    apiKey: connection.apiKey,
    ...(connection.baseURL !== undefined ? { baseURL: connection.baseURL } : {}),
  });
  return new OpenAIConversation(client, connection.model, registry, argDocs, context);
}
