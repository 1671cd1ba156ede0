/**
 * Neutral messages ↔ Vercel AI SDK messages: `ModelMessage[]` for `generateText` /
 * `streamText`, and the `LanguageModelV3Prompt` a language-model middleware sees (the
 * same parts, content always an array). Plain data: `ai` is not imported at run time.
 */
import type { Message, Part } from "../../../conversation/index.js";
import { InvalidInputError } from "../../../errors/index.js";
import type { AiSdkJsonValue, AiSdkProviderOptions } from "../ai-sdk.js";
import type { AnthropicCacheControl } from "../breakpoints.js";
import {
  cachedBlocks,
  isRecord,
  MessageIds,
  type ReadConversation,
  type ToolInput,
  toolNamesOf,
  unsupported,
} from "./common.js";

/** `ai`'s `TextPart`. */
export interface AiSdkTextPart {
  type: "text";
  text: string;
  providerOptions?: AiSdkProviderOptions;
}

/** `ai`'s `ToolCallPart`. */
export interface AiSdkToolCallPart {
  type: "tool-call";
  toolCallId: string;
  toolName: string;
  input: ToolInput;
  providerOptions?: AiSdkProviderOptions;
}

/** `ai`'s `ToolResultPart` with a text output (`error-text` for an error result). */
export interface AiSdkToolResultPart {
  type: "tool-result";
  toolCallId: string;
  toolName: string;
  output: { type: "text" | "error-text"; value: string };
  providerOptions?: AiSdkProviderOptions;
}

/** A `ModelMessage` (and `LanguageModelV3Message`) this emits. */
export type AiSdkConversationMessage =
  | { role: "user"; content: AiSdkTextPart[] }
  | { role: "assistant"; content: (AiSdkTextPart | AiSdkToolCallPart)[] }
  | { role: "tool"; content: AiSdkToolResultPart[] };

/** Options of {@link toAiSdkMessages}. */
export interface AiSdkMessagesOptions {
  /**
   * Index of the message whose last part gets
   * `providerOptions: {anthropic: {cacheControl}}` (-1 or absent: none).
   */
  cacheAfter?: number;
  /** Parts that get it, as indexes over every part of every message in order. */
  cacheBlocks?: Iterable<number>;
  cacheControl?: AnthropicCacheControl;
}

type AiSdkPart = AiSdkTextPart | AiSdkToolCallPart | AiSdkToolResultPart;

function toPart(p: Part, names: ReadonlyMap<string, string>, path: (string | number)[]): AiSdkPart {
  switch (p.type) {
    case "text":
      return { type: "text", text: p.text };
    case "tool_call":
      return { type: "tool-call", toolCallId: p.callId, toolName: p.name, input: p.input };
    case "tool_result": {
      const toolName = names.get(p.callId);
      if (toolName === undefined) {
        throw new InvalidInputError(`tool result ${p.callId} answers no tool call`, path);
      }
      const type = p.isError === true ? "error-text" : "text";
      return {
        type: "tool-result",
        toolCallId: p.callId,
        toolName,
        output: { type, value: p.output },
      };
    }
  }
}

/**
 * Neutral messages as AI SDK messages, one for one, content always an array of parts
 * (`text`, `tool-call`, `tool-result` with a `text` or `error-text` output; a result's
 * `toolName` is its call's). With `cacheAfter`, the last part of that message carries
 * `providerOptions.anthropic.cacheControl` (what `@ai-sdk/anthropic` turns into
 * `cache_control` on that block); with `cacheBlocks`, each part named does.
 *
 * @example await generateText({ model, system, messages: toAiSdkMessages(plan.messages) })
 */
export function toAiSdkMessages(
  messages: readonly Message[],
  options: AiSdkMessagesOptions = {},
): AiSdkConversationMessage[] {
  const cached = cachedBlocks(messages, options.cacheAfter, options.cacheBlocks);
  const names = toolNamesOf(messages);
  let at = 0;
  return messages.map((m, i) => {
    const parts = m.content.map((p, j) => toPart(p, names, ["messages", i, "content", j]));
    for (const part of parts) {
      if (!cached.has(at++)) continue;
      const cacheControl = { ...(options.cacheControl ?? { type: "ephemeral" }) };
      part.providerOptions = { anthropic: { cacheControl } };
    }
    return { role: m.role, content: parts } as AiSdkConversationMessage;
  });
}

/** A tool result output as a string (JSON values stringified) and its error flag. */
function readOutput(output: unknown, path: (string | number)[]): { text: string; error: boolean } {
  if (!isRecord(output)) return unsupported("a tool result output of this shape", path);
  switch (output.type) {
    case "text":
    case "error-text":
      if (typeof output.value !== "string") return unsupported("a non-string text output", path);
      return { text: output.value, error: output.type === "error-text" };
    case "json":
    case "error-json":
      return {
        text: JSON.stringify(output.value as AiSdkJsonValue),
        error: output.type === "error-json",
      };
    case "execution-denied":
      return {
        text: typeof output.reason === "string" ? output.reason : "Tool call execution denied.",
        error: true,
      };
    case "content":
      if (!Array.isArray(output.value)) return unsupported("a content output of this shape", path);
      return {
        text: output.value
          .map((v, k) =>
            isRecord(v) && v.type === "text" && typeof v.text === "string"
              ? v.text
              : unsupported(`a ${String(isRecord(v) ? v.type : typeof v)} output part`, [
                  ...path,
                  "value",
                  k,
                ]),
          )
          .join(""),
        error: false,
      };
    default:
      return unsupported(`a ${String(output.type)} tool output`, [...path, "type"]);
  }
}

function readPart(p: unknown, role: Message["role"], path: (string | number)[]): Part {
  if (!isRecord(p)) return unsupported("a part that is not an object", path);
  if (p.type === "text" && typeof p.text === "string" && role !== "tool") {
    return { type: "text", text: p.text };
  }
  if (p.type === "tool-call" && role === "assistant" && p.providerExecuted !== true) {
    if (typeof p.toolCallId === "string" && typeof p.toolName === "string") {
      return {
        type: "tool_call",
        callId: p.toolCallId,
        name: p.toolName,
        input: p.input as ToolInput,
      };
    }
  }
  if (p.type === "tool-result" && role === "tool" && typeof p.toolCallId === "string") {
    const { text, error } = readOutput(p.output, [...path, "output"]);
    return {
      type: "tool_result",
      callId: p.toolCallId,
      output: text,
      ...(error ? { isError: true } : {}),
    };
  }
  return unsupported(`a ${String(p.type)} part in a ${role} message`, [...path, "type"]);
}

/**
 * Reads AI SDK messages (`ModelMessage[]`, or a middleware's `LanguageModelV3Prompt`) back
 * into the neutral model, one message for one: leading `system` messages into `system`;
 * string content as one text part; tool results' `text` / `error-text` outputs as output
 * and error flag (`json` outputs stringified, `content` outputs' text joined,
 * `execution-denied` as an error result). Files, images, reasoning, provider-executed
 * tools and approvals are invalid input naming the part; `providerOptions` on a message
 * or part are not kept. Ids come from {@link MessageIds}.
 *
 * @example fromAiSdkMessages(params.prompt).messages
 */
export function fromAiSdkMessages(messages: readonly unknown[]): ReadConversation {
  const ids = new MessageIds();
  const out: Message[] = [];
  const system: string[] = [];
  messages.forEach((m, i) => {
    const path = ["messages", i];
    if (!isRecord(m)) unsupported("a message that is not an object", path);
    if (m.role === "system") {
      if (out.length > 0) unsupported("a system message after the conversation began", path);
      if (typeof m.content !== "string") unsupported("system content that is not a string", path);
      system.push(m.content);
      return;
    }
    if (m.role !== "user" && m.role !== "assistant" && m.role !== "tool") {
      unsupported(`role ${JSON.stringify(m.role)}`, [...path, "role"]);
    }
    const role = m.role;
    const raw =
      typeof m.content === "string" && role !== "tool"
        ? [{ type: "text", text: m.content }]
        : m.content;
    if (!Array.isArray(raw) || raw.length === 0)
      unsupported("an empty message", [...path, "content"]);
    const content = raw.map((p, j) => readPart(p, role, [...path, "content", j]));
    out.push({ id: ids.next(role, content), role, content });
  });
  return { messages: out, system };
}
