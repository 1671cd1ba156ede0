/**
 * Neutral messages ↔ OpenAI: Chat Completions messages (`tool_calls` on the assistant
 * message, one `tool` message per result) and Responses input items
 * (`function_call` / `function_call_output`). Neither has an error flag on a tool result:
 * an error result's output is sent after {@link TOOL_ERROR_PREFIX}, and read back from it.
 */
import type { Message, Part } from "../../../conversation/index.js";
import {
  isRecord,
  MessageIds,
  parseArguments,
  type ReadConversation,
  unsupported,
} from "./common.js";

/** What an error tool result's output is sent after (OpenAI has no error flag). */
export const TOOL_ERROR_PREFIX = "error: ";

const resultOutput = (p: Extract<Part, { type: "tool_result" }>) =>
  p.isError === true ? `${TOOL_ERROR_PREFIX}${p.output}` : p.output;

/** An output read back: the prefix, when present, marks an error result. */
function readOutput(callId: string, output: string): Part {
  return output.startsWith(TOOL_ERROR_PREFIX)
    ? { type: "tool_result", callId, output: output.slice(TOOL_ERROR_PREFIX.length), isError: true }
    : { type: "tool_result", callId, output };
}

/** A Chat Completions text content part. */
export interface OpenAITextPart {
  type: "text";
  text: string;
}

/** A Chat Completions function tool call. */
export interface OpenAIToolCall {
  id: string;
  type: "function";
  function: { name: string; arguments: string };
}

/** A Chat Completions message this emits (a subset of `ChatCompletionMessageParam`). */
export type OpenAIChatConversationMessage =
  | { role: "user"; content: string | OpenAITextPart[] }
  | { role: "assistant"; content: string | OpenAITextPart[] | null; tool_calls?: OpenAIToolCall[] }
  | { role: "tool"; tool_call_id: string; content: string };

const texts = (m: Message) => m.content.flatMap((p) => (p.type === "text" ? [p.text] : []));
const textContent = (t: string[]) =>
  t.length === 1 ? (t[0] as string) : t.map((text) => ({ type: "text" as const, text }));

/**
 * Neutral messages as Chat Completions messages: a user message's text (a plain string
 * when it is one part); an assistant message's text, then its calls as `tool_calls`
 * (`arguments` = `JSON.stringify(input)`; `content` null when there is no text); one
 * `tool` message per result.
 *
 * @example toOpenAIChatMessages(plan.messages)
 */
export function toOpenAIChatMessages(
  messages: readonly Message[],
): OpenAIChatConversationMessage[] {
  const out: OpenAIChatConversationMessage[] = [];
  for (const m of messages) {
    if (m.role === "user") out.push({ role: "user", content: textContent(texts(m)) });
    else if (m.role === "assistant") {
      const t = texts(m);
      const calls: OpenAIToolCall[] = m.content.flatMap((p) =>
        p.type === "tool_call"
          ? [
              {
                id: p.callId,
                type: "function" as const,
                function: { name: p.name, arguments: JSON.stringify(p.input) },
              },
            ]
          : [],
      );
      out.push({
        role: "assistant",
        content: t.length === 0 ? null : textContent(t),
        ...(calls.length > 0 ? { tool_calls: calls } : {}),
      });
    } else {
      for (const p of m.content) {
        if (p.type === "tool_result") {
          out.push({ role: "tool", tool_call_id: p.callId, content: resultOutput(p) });
        }
      }
    }
  }
  return out;
}

/** Text of a message content: a string, or its text parts (every other part is refused). */
function readText(content: unknown, path: (string | number)[], kinds: string[]): string[] {
  if (typeof content === "string") return [content];
  if (!Array.isArray(content)) return unsupported("message content of this shape", path);
  return content.map((p, k) =>
    isRecord(p) && kinds.includes(String(p.type)) && typeof p.text === "string"
      ? p.text
      : unsupported(`a ${String(isRecord(p) ? p.type : typeof p)} part`, [...path, k]),
  );
}

/** Collects the neutral messages and the leading system texts of a reader. */
class Reader {
  readonly ids = new MessageIds();
  readonly messages: Message[] = [];
  readonly system: string[] = [];
  private open: { role: Message["role"]; content: Part[] } | null = null;

  /** Adds parts to the message of `role` being built, or starts one (`fresh`: always start). */
  add(role: Message["role"], parts: Part[], fresh = false): void {
    if (this.open === null || this.open.role !== role || fresh) {
      this.flush();
      this.open = { role, content: [] };
    }
    this.open.content.push(...parts);
  }

  addSystem(text: string, path: (string | number)[]): void {
    if (this.messages.length > 0 || this.open !== null) {
      unsupported("a system message after the conversation began", path);
    }
    this.system.push(text);
  }

  flush(): void {
    if (this.open === null) return;
    const { role, content } = this.open;
    this.messages.push({ id: this.ids.next(role, content), role, content });
    this.open = null;
  }

  done(): ReadConversation {
    this.flush();
    return { messages: this.messages, system: this.system };
  }
}

function readChatCall(call: unknown, path: (string | number)[]): Part {
  if (!isRecord(call) || call.type !== "function" || !isRecord(call.function)) {
    return unsupported("a tool call that is not a function call", path);
  }
  const { name, arguments: args } = call.function;
  if (typeof call.id !== "string" || typeof name !== "string" || typeof args !== "string") {
    return unsupported("a function call without id, name and arguments", path);
  }
  return { type: "tool_call", callId: call.id, name, input: parseArguments(args) };
}

function readChatAssistant(m: Record<string, unknown>, path: (string | number)[], r: Reader) {
  const parts: Part[] =
    m.content === null || m.content === undefined
      ? []
      : readText(m.content, [...path, "content"], ["text"]).map((text) => ({
          type: "text",
          text,
        }));
  const calls = Array.isArray(m.tool_calls) ? m.tool_calls : [];
  calls.forEach((c, k) => {
    parts.push(readChatCall(c, [...path, "tool_calls", k]));
  });
  r.add("assistant", parts.length > 0 ? parts : [{ type: "text", text: "" }], true);
}

/**
 * Reads Chat Completions messages back into the neutral model: `system` / `developer`
 * messages before the conversation into `system`; each user and assistant message into
 * one message (`tool_calls` as tool calls, arguments parsed; arguments that are not JSON
 * kept as a string); each run of `tool` messages into one `tool` message. Parts the
 * neutral model cannot hold (images, audio, legacy `function` messages) are invalid input.
 *
 * @example fromOpenAIChatMessages(body.messages).messages
 */
export function fromOpenAIChatMessages(messages: readonly unknown[]): ReadConversation {
  const r = new Reader();
  messages.forEach((m, i) => {
    const path = ["messages", i];
    if (!isRecord(m)) unsupported("a message that is not an object", path);
    if (m.role === "system" || m.role === "developer") {
      r.addSystem(readText(m.content, [...path, "content"], ["text"]).join(""), path);
    } else if (m.role === "user") {
      const t = readText(m.content, [...path, "content"], ["text"]);
      if (t.length === 0) unsupported("an empty message", [...path, "content"]);
      r.add(
        "user",
        t.map((text) => ({ type: "text", text })),
        true,
      );
    } else if (m.role === "assistant") readChatAssistant(m, path, r);
    else if (m.role === "tool" && typeof m.tool_call_id === "string") {
      const output = readText(m.content, [...path, "content"], ["text"]).join("");
      r.add("tool", [readOutput(m.tool_call_id, output)]);
    } else unsupported(`role ${JSON.stringify(m.role)}`, [...path, "role"]);
  });
  return r.done();
}

/** A Responses input item this emits (a subset of `ResponseInputItem`). */
export type OpenAIResponsesItem =
  | { role: "user"; content: string | { type: "input_text"; text: string }[] }
  | { role: "assistant"; content: string }
  | { type: "function_call"; call_id: string; name: string; arguments: string }
  | { type: "function_call_output"; call_id: string; output: string };

/**
 * Neutral messages as Responses `input` items, in part order: a user message as one
 * message item (a plain string when it is one part, else `input_text` parts); each
 * assistant text as an assistant message item and each call as a `function_call` item;
 * each result as a `function_call_output` item.
 *
 * @example toOpenAIResponsesInput(plan.messages)
 */
export function toOpenAIResponsesInput(messages: readonly Message[]): OpenAIResponsesItem[] {
  const out: OpenAIResponsesItem[] = [];
  for (const m of messages) {
    if (m.role === "user") {
      const t = texts(m);
      out.push({
        role: "user",
        content:
          t.length === 1 ? (t[0] as string) : t.map((text) => ({ type: "input_text", text })),
      });
      continue;
    }
    for (const p of m.content) {
      if (p.type === "text") out.push({ role: "assistant", content: p.text });
      else if (p.type === "tool_call") {
        const args = JSON.stringify(p.input);
        out.push({ type: "function_call", call_id: p.callId, name: p.name, arguments: args });
      } else {
        out.push({ type: "function_call_output", call_id: p.callId, output: resultOutput(p) });
      }
    }
  }
  return out;
}

function readResponsesItem(item: unknown, path: (string | number)[], r: Reader): void {
  if (!isRecord(item)) unsupported("an input item that is not an object", path);
  const type = item.type ?? "message";
  if (type === "function_call") {
    if (typeof item.call_id !== "string" || typeof item.name !== "string") {
      unsupported("a function_call without call_id and name", path);
    }
    const args = typeof item.arguments === "string" ? item.arguments : "";
    const input = parseArguments(args);
    r.add("assistant", [{ type: "tool_call", callId: item.call_id, name: item.name, input }]);
  } else if (type === "function_call_output" && typeof item.call_id === "string") {
    const output = readText(item.output, [...path, "output"], ["input_text", "output_text"]);
    r.add("tool", [readOutput(item.call_id, output.join(""))]);
  } else if (type === "message" && (item.role === "system" || item.role === "developer")) {
    const kinds = ["input_text"];
    r.addSystem(readText(item.content, [...path, "content"], kinds).join(""), path);
  } else if (type === "message" && item.role === "user") {
    const t = readText(item.content, [...path, "content"], ["input_text"]);
    if (t.length === 0) unsupported("an empty message", [...path, "content"]);
    r.add(
      "user",
      t.map((text) => ({ type: "text", text })),
      true,
    );
  } else if (type === "message" && item.role === "assistant") {
    const t = readText(item.content, [...path, "content"], ["output_text", "input_text"]);
    if (t.length === 0) unsupported("an empty message", [...path, "content"]);
    r.add(
      "assistant",
      t.map((text) => ({ type: "text", text })),
    );
  } else unsupported(`a ${String(type)} item`, [...path, "type"]);
}

/**
 * Reads Responses `input` items back into the neutral model: leading system / developer
 * messages into `system`; each user message item into a `user` message; each run of
 * assistant message items and `function_call` items into one `assistant` message (parts
 * in order); each run of `function_call_output` items into one `tool` message. Reasoning
 * items, images, files and other item types are invalid input. A plain string `input` is
 * one user message.
 *
 * @example fromOpenAIResponsesInput(body.input).messages
 */
export function fromOpenAIResponsesInput(input: string | readonly unknown[]): ReadConversation {
  const r = new Reader();
  if (typeof input === "string") {
    r.add("user", [{ type: "text", text: input }]);
    return r.done();
  }
  input.forEach((item, i) => {
    readResponsesItem(item, ["input", i], r);
  });
  return r.done();
}
