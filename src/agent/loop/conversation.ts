/** The provider-neutral side of a chat: tool calls, replies, tool results and the conversation both providers implement. */

import { PromptctxError, unreachableCode } from "../../errors/index.js";
import type { ProviderInput } from "../../render/index.js";
import type { PlannedRequest } from "../request/index.js";
import type { ChatCompactionEvent, ChatProvider } from "./events.js";

/** `max_tokens` of each Anthropic request. */
export const CHAT_MAX_TOKENS = 4096;

/** Which provider to call, with what key and model, at which base URL (the SDK default when undefined). */
export interface ChatConnection {
  provider: ChatProvider;
  apiKey: string;
  model: string;
  baseURL: string | undefined;
}

/** A tool call the model asked for. */
export interface ToolCallRequest {
  id: string;
  name: string;
  input: unknown;
  /** OpenAI: the arguments as sent (echoed back in the history). */
  raw?: string;
  /** The arguments could not be parsed. */
  inputError?: string;
}

/** One model reply: its text, the tool calls it asks for, why it stopped, the usage counts. */
export interface ModelReply {
  text: string;
  toolCalls: ToolCallRequest[];
  stopReason: string | null;
  usage: Record<string, number>;
}

/** What a tool call produced, as sent back to the model. */
export interface ToolResult {
  id: string;
  content: string;
  isError: boolean;
}

/**
 * One provider conversation: the history (neutral messages, planned against the model's
 * window before every request) plus the system side of the current turn.
 */
export interface Conversation {
  readonly provider: ChatProvider;
  readonly model: string;
  /** The last request sent, with its budget and decisions (null before the first). */
  readonly lastRequest: PlannedRequest | null;
  /** Plans the next request without sending it (what `/context` shows before a request). */
  preview(): PlannedRequest | null;
  /** Told when the history is compacted. */
  onCompact?: (event: ChatCompactionEvent) => void;
  /**
   * A new user turn: the freshly assembled system side, then the user's line. Returns the
   * provider's cache report for the turn event.
   */
  beginTurn(out: ProviderInput, text: string): Record<string, unknown>;
  complete(): Promise<ModelReply>;
  /** Appends the assistant's reply, its text replaced by `shownText` when given. */
  pushAssistant(reply: ModelReply, shownText?: string): void;
  pushToolResults(results: readonly ToolResult[]): void;
}

/**
 * A failed provider request at path `provider`: `connection_refused` with a message that
 * says what to check when the provider could not be reached, else `internal_error`.
 */
export function providerFailure(provider: ChatProvider, err: unknown): PromptctxError {
  const code = unreachableCode(err);
  if (code !== null) {
    const base = provider === "anthropic" ? "ANTHROPIC_BASE_URL" : "OPENAI_BASE_URL";
    return new PromptctxError(
      "connection_refused",
      `cannot reach the ${provider} API (${code}): check the network and ${base}`,
      "provider",
    );
  }
  const why = err instanceof Error ? err.message : String(err);
  return new PromptctxError("internal_error", `${provider} request failed: ${why}`, "provider");
}

/** The numeric fields of a provider's usage object. */
export function usageNumbers(obj: object | null | undefined): Record<string, number> {
  const out: Record<string, number> = {};
  for (const [k, v] of Object.entries(obj ?? {})) if (typeof v === "number") out[k] = v;
  return out;
}
