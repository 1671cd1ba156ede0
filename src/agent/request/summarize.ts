/**
 * Compaction summarizers that call the configured provider through its official client
 * (docs/conversation.md "Compaction"): the dropped run as a plain transcript (oversized tool outputs
 * cut to head + notice + tail), one request, the reply's text as the summary.
 */
import type Anthropic from "@anthropic-ai/sdk";
import type OpenAI from "openai";
import {
  canonicalJson,
  type MessageInput,
  parseMessages,
  type Summarize,
  truncateToolOutput,
} from "../../conversation/index.js";
import { PromptctxError } from "../../errors/index.js";
import { resolveTokenCounter, type TokenCounter } from "../../tokens/index.js";

/** What the summarizing model is told (the transcript follows in the user message). */
export const SUMMARY_INSTRUCTIONS = [
  "You compact an agent's conversation history. The user message holds a transcript of",
  "turns that no longer fit the context window. Write a summary that lets the agent carry",
  "on: the user's goals and constraints, decisions made, facts learned from tool results",
  "(file names, values, errors), what was done and what is still open. Be specific and",
  "brief; no preamble. Write in the language of the conversation.",
].join(" ");

/** Default cap on one tool output inside the transcript, in tokens. */
export const SUMMARY_TOOL_OUTPUT_MAX_TOKENS = 2000;

/** Options every provider summarizer takes. */
export interface SummarizerOptions {
  /** The model that writes the summary. */
  model: string;
  /** `max_tokens` of the summary request (default 1024). */
  maxTokens?: number;
  /** The system / developer instructions (default {@link SUMMARY_INSTRUCTIONS}). */
  instructions?: string;
  /** A tool output over this many tokens is cut in the transcript (default 2000). */
  toolOutputMaxTokens?: number;
  /** Counts tool outputs for the cut (default `estimate`). */
  tokenizer?: TokenCounter | string;
}

/**
 * The dropped messages as a plain transcript, one block per part: `user:` / `assistant:`
 * text, `assistant called NAME (call ID): {canonical input}`, `tool result (call ID[,
 * error]):` output — an output over `maxTokens` cut to head + notice + tail. Deterministic.
 *
 * @example summaryTranscript([{ id: "u1", role: "user", content: [{ type: "text", text: "hi" }] }], counter, 2000) // "user: hi"
 */
export function summaryTranscript(
  messages: readonly MessageInput[],
  counter: TokenCounter,
  maxTokens: number,
): string {
  const lines: string[] = [];
  for (const m of parseMessages(messages)) {
    for (const p of m.content) {
      if (p.type === "text") lines.push(`${m.role}: ${p.text}`);
      else if (p.type === "tool_call") {
        lines.push(`assistant called ${p.name} (call ${p.callId}): ${canonicalJson(p.input)}`);
      } else {
        const out =
          counter.count(p.output) > maxTokens
            ? truncateToolOutput(p.output, p.callId, maxTokens, counter)
            : p.output;
        lines.push(`tool result (call ${p.callId}${p.isError === true ? ", error" : ""}): ${out}`);
      }
    }
  }
  return lines.join("\n\n");
}

function settings(options: SummarizerOptions) {
  return {
    counter: resolveTokenCounter(options.tokenizer ?? "estimate"),
    maxTokens: options.maxTokens ?? 1024,
    instructions: options.instructions ?? SUMMARY_INSTRUCTIONS,
    toolMax: options.toolOutputMaxTokens ?? SUMMARY_TOOL_OUTPUT_MAX_TOKENS,
  };
}

function failure(provider: string, err: unknown): PromptctxError {
  const why = err instanceof Error ? err.message : String(err);
  return new PromptctxError(
    "internal_error",
    `${provider} summary request failed: ${why}`,
    "summarize",
  );
}

function nonEmpty(provider: string, text: string): string {
  if (text.trim() === "") throw failure(provider, new Error("the reply holds no text"));
  return text;
}

/**
 * A {@link Summarize} that asks an Anthropic model through `@anthropic-ai/sdk`: one
 * Messages request (`system` = the instructions, one user message = the transcript),
 * the reply's text blocks joined as the summary. A failed request or an empty reply
 * throws `internal_error` at path `summarize`.
 *
 * @example
 * const summarize = anthropicSummarizer(new Anthropic(), { model: "claude-haiku-4-5" });
 * await compactConversation({ messages, plan, summarize, thresholdTokens: 20000 });
 */
export function anthropicSummarizer(client: Anthropic, options: SummarizerOptions): Summarize {
  const s = settings(options);
  return async (messages) => {
    let res: Anthropic.Message;
    try {
      res = await client.messages.create({
        model: options.model,
        max_tokens: s.maxTokens,
        system: s.instructions,
        messages: [{ role: "user", content: summaryTranscript(messages, s.counter, s.toolMax) }],
      });
    } catch (err) {
      throw failure("anthropic", err);
    }
    const text = res.content.flatMap((b) => (b.type === "text" ? [b.text] : [])).join("");
    return nonEmpty("anthropic", text);
  };
}

/** Options of {@link openAISummarizer}. */
export interface OpenAISummarizerOptions extends SummarizerOptions {
  /** `"chat"` (Chat Completions, default) or `"responses"`. */
  api?: "chat" | "responses";
  /** Role of the instructions in Chat Completions (default `"system"`). */
  role?: "system" | "developer";
}

/**
 * A {@link Summarize} that asks an OpenAI model through the `openai` client: Chat
 * Completions (instructions as a system / developer message, the transcript as the user
 * message) or Responses (`instructions` + `input`). A failed request or an empty reply
 * throws `internal_error` at path `summarize`.
 *
 * @example const summarize = openAISummarizer(new OpenAI(), { model: "gpt-4o-mini" });
 */
export function openAISummarizer(client: OpenAI, options: OpenAISummarizerOptions): Summarize {
  const s = settings(options);
  return async (messages) => {
    const transcript = summaryTranscript(messages, s.counter, s.toolMax);
    try {
      if (options.api === "responses") {
        const res = await client.responses.create({
          model: options.model,
          instructions: s.instructions,
          input: transcript,
          max_output_tokens: s.maxTokens,
        });
        return nonEmpty("openai", res.output_text);
      }
      const res = await client.chat.completions.create({
        model: options.model,
        max_completion_tokens: s.maxTokens,
        messages: [
          { role: options.role ?? "system", content: s.instructions },
          { role: "user", content: transcript },
        ],
      });
      return nonEmpty("openai", res.choices[0]?.message.content ?? "");
    } catch (err) {
      throw err instanceof PromptctxError ? err : failure("openai", err);
    }
  };
}
