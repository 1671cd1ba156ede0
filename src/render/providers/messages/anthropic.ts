/**
 * Neutral messages ↔ Anthropic Messages API `messages`: text, `tool_use` and
 * `tool_result` blocks, consecutive same-side messages merged (the API alternates user
 * and assistant; a `tool` message rides on the user side, its results first).
 */
import type { Message, Part } from "../../../conversation/index.js";
import type { AnthropicCacheControl } from "../breakpoints.js";
import {
  cachedBlocks,
  isRecord,
  MessageIds,
  type ReadConversation,
  type ToolInput,
  unsupported,
} from "./common.js";

/** A content block this emits (a subset of the SDK's `ContentBlockParam`). */
export type AnthropicContentBlock =
  | { type: "text"; text: string; cache_control?: AnthropicCacheControl }
  | {
      type: "tool_use";
      id: string;
      name: string;
      input: ToolInput;
      cache_control?: AnthropicCacheControl;
    }
  | {
      type: "tool_result";
      tool_use_id: string;
      content: string;
      is_error?: boolean;
      cache_control?: AnthropicCacheControl;
    };

/** A Messages API `MessageParam` this emits. */
export interface AnthropicConversationMessage {
  role: "user" | "assistant";
  content: string | AnthropicContentBlock[];
}

/** Options of {@link toAnthropicMessages}. */
export interface AnthropicMessagesOptions {
  /** Index of the message whose last block gets `cacheControl` (-1 or absent: none). */
  cacheAfter?: number;
  /** Blocks that get `cacheControl`, as indexes over every part of every message in order. */
  cacheBlocks?: Iterable<number>;
  cacheControl?: AnthropicCacheControl;
}

function toBlock(part: Part): AnthropicContentBlock {
  switch (part.type) {
    case "text":
      return { type: "text", text: part.text };
    case "tool_call":
      return { type: "tool_use", id: part.callId, name: part.name, input: part.input };
    case "tool_result":
      return {
        type: "tool_result",
        tool_use_id: part.callId,
        content: part.output,
        ...(part.isError !== undefined ? { is_error: part.isError } : {}),
      };
  }
}

/**
 * Neutral messages as Anthropic `messages`. `user` and `tool` messages go to the user
 * side, `assistant` to the assistant side; consecutive messages of one side are merged
 * into one API message (blocks in order), as the API expects alternating turns. A user
 * message that is a single text block without `cache_control` is sent as a plain string.
 * With `cacheAfter`, the last block of that message carries `cacheControl`; with
 * `cacheBlocks`, each block named (counted over every part of every message) does.
 *
 * @example toAnthropicMessages(plan.messages, { cacheAfter: 3, cacheControl: { type: "ephemeral" } })
 */
export function toAnthropicMessages(
  messages: readonly Message[],
  options: AnthropicMessagesOptions = {},
): AnthropicConversationMessage[] {
  const cached = cachedBlocks(messages, options.cacheAfter, options.cacheBlocks);
  const out: { role: "user" | "assistant"; content: AnthropicContentBlock[] }[] = [];
  let at = 0;
  for (const m of messages) {
    const role = m.role === "assistant" ? "assistant" : "user";
    const blocks = m.content.map(toBlock);
    for (const b of blocks) {
      if (cached.has(at++))
        b.cache_control = { ...(options.cacheControl ?? { type: "ephemeral" }) };
    }
    const open = out.at(-1);
    if (open?.role === role) open.content.push(...blocks);
    else out.push({ role, content: blocks });
  }
  return out.map((m) => {
    const only = m.content[0];
    const plain =
      m.role === "user" &&
      m.content.length === 1 &&
      only?.type === "text" &&
      only.cache_control === undefined;
    return plain ? { role: m.role, content: only.text } : m;
  });
}

/** A `MessageParam` as a reader takes it, blocks of every type (unknown ones are refused). */
export interface AnthropicMessageLike {
  role: string;
  content: string | readonly unknown[];
}

/** The text of a `tool_result` content: a string, or its text blocks joined. */
function resultText(content: unknown, path: (string | number)[]): string {
  if (content === undefined) return "";
  if (typeof content === "string") return content;
  if (!Array.isArray(content)) return unsupported("a tool_result content of this shape", path);
  return content
    .map((b, k) =>
      isRecord(b) && b.type === "text" && typeof b.text === "string"
        ? b.text
        : unsupported(`a ${String(isRecord(b) ? b.type : typeof b)} block in a tool_result`, [
            ...path,
            k,
          ]),
    )
    .join("");
}

/** One block as a neutral part, with the role it belongs to. */
function readBlock(block: unknown, path: (string | number)[]): Part {
  if (!isRecord(block)) return unsupported("a content block that is not an object", path);
  if (block.type === "text" && typeof block.text === "string") {
    return { type: "text", text: block.text };
  }
  if (block.type === "tool_use" && typeof block.id === "string" && typeof block.name === "string") {
    return {
      type: "tool_call",
      callId: block.id,
      name: block.name,
      input: block.input as ToolInput,
    };
  }
  if (block.type === "tool_result" && typeof block.tool_use_id === "string") {
    return {
      type: "tool_result",
      callId: block.tool_use_id,
      output: resultText(block.content, [...path, "content"]),
      ...(typeof block.is_error === "boolean" ? { isError: block.is_error } : {}),
    };
  }
  return unsupported(`a ${String(block.type)} block`, [...path, "type"]);
}

/** Splits one API message into neutral messages: runs of results, of text, of assistant parts. */
function readMessage(m: AnthropicMessageLike, i: number, ids: MessageIds, out: Message[]): void {
  if (m.role !== "user" && m.role !== "assistant") {
    unsupported(`role "${m.role}"`, ["messages", i, "role"]);
  }
  const parts: Part[] =
    typeof m.content === "string"
      ? [{ type: "text", text: m.content }]
      : m.content.map((b, j) => readBlock(b, ["messages", i, "content", j]));
  if (parts.length === 0) unsupported("an empty message", ["messages", i, "content"]);
  const runs: { role: Message["role"]; content: Part[] }[] = [];
  parts.forEach((p, j) => {
    const role = m.role === "assistant" ? "assistant" : p.type === "tool_result" ? "tool" : "user";
    if (m.role === "assistant" && p.type === "tool_result") {
      unsupported("a tool_result on the assistant side", ["messages", i, "content", j]);
    }
    if (m.role === "user" && p.type === "tool_call") {
      unsupported("a tool_use on the user side", ["messages", i, "content", j]);
    }
    const open = runs.at(-1);
    if (open?.role === role) open.content.push(p);
    else runs.push({ role, content: [p] });
  });
  for (const r of runs) out.push({ id: ids.next(r.role, r.content), ...r });
}

/**
 * Reads Anthropic `messages` (and an optional `system`) back into the neutral model: an
 * assistant message becomes one `assistant` message; a user message becomes a `tool`
 * message for each run of `tool_result` blocks and a `user` message for each run of text.
 * A `tool_result` whose content is a list of text blocks is joined into one string.
 * Blocks the neutral model cannot hold (images, documents, thinking, server tools) are
 * invalid input naming the block's path: nothing is dropped silently. Ids come from
 * {@link MessageIds}.
 *
 * @example fromAnthropicMessages(body.messages, body.system).messages
 */
export function fromAnthropicMessages(
  messages: readonly AnthropicMessageLike[],
  system?: string | readonly { type: string; text?: string }[],
): ReadConversation {
  const ids = new MessageIds();
  const out: Message[] = [];
  messages.forEach((m, i) => {
    readMessage(m, i, ids, out);
  });
  const sys =
    system === undefined
      ? []
      : typeof system === "string"
        ? [system]
        : system.map((b, k) =>
            b.type === "text" && typeof b.text === "string"
              ? b.text
              : unsupported(`a ${b.type} system block`, ["system", k]),
          );
  return { messages: out, system: sys };
}
