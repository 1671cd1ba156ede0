/**
 * What every provider message builder shares: ids for messages read from a provider's
 * shape, the tool name of each call, tool-call arguments as JSON, and the text moved
 * into the current turn.
 */
import { shortHash } from "../../../cache/index.js";
import {
  canonicalJson,
  type Message,
  type Part,
  type ToolCallPart,
} from "../../../conversation/index.js";
import { type FieldPath, InvalidInputError } from "../../../errors/index.js";

/** A tool call's input (any JSON value). */
export type ToolInput = ToolCallPart["input"];

/** A conversation read back from a provider's shape. */
export interface ReadConversation {
  /** The neutral messages, ids derived from their content ({@link MessageIds}). */
  messages: Message[];
  /** Texts of the system / developer messages found before the first other message. */
  system: string[];
}

/**
 * Ids for messages read from a provider's shape (which has none): `role:` + the first 16
 * hex of the SHA-256 of the role and the canonical JSON of the content, with `#2`, `#3`, …
 * on a repeat. The same message gets the same id on every call, wherever it sits, so a
 * plan's `firstKeptId` can be passed back as the next call's anchor.
 *
 * @example new MessageIds().next("user", [{ type: "text", text: "hi" }]) // "user:…16 hex…"
 */
export class MessageIds {
  private readonly seen = new Map<string, number>();

  next(role: Message["role"], content: readonly Part[]): string {
    const base = `${role}:${shortHash(`${role}\n${canonicalJson(content)}`)}`;
    const n = (this.seen.get(base) ?? 0) + 1;
    this.seen.set(base, n);
    return n === 1 ? base : `${base}#${n}`;
  }
}

/** The tool name of every call id in the messages. */
export function toolNamesOf(messages: readonly Message[]): Map<string, string> {
  const names = new Map<string, string>();
  for (const m of messages) {
    for (const p of m.content) if (p.type === "tool_call") names.set(p.callId, p.name);
  }
  return names;
}

/**
 * A tool call's arguments string as JSON; arguments that are not JSON (a model can emit
 * those) are kept as the string itself, so nothing is lost.
 */
export function parseArguments(raw: string): ToolInput {
  if (raw.trim() === "") return {};
  try {
    return JSON.parse(raw) as ToolInput;
  } catch {
    return raw;
  }
}

/**
 * The messages with `texts` (layers moved out of the system side) opening the current
 * turn's user message (the last `user` message), so the history before it stays
 * byte-identical between turns. Returns the messages themselves when there is nothing
 * to move.
 */
export function withTurnPrefix(messages: readonly Message[], texts: readonly string[]): Message[] {
  if (texts.length === 0) return [...messages];
  const at = messages.findLastIndex((m) => m.role === "user");
  if (at < 0) throw new InvalidInputError("the conversation has no user message", ["messages"]);
  const out = [...messages];
  const turn = out[at] as Message;
  out[at] = {
    ...turn,
    content: [...texts.map((text) => ({ type: "text" as const, text })), ...turn.content],
  };
  return out;
}

/** Throws the error every reader throws on a part it cannot represent. */
export function unsupported(what: string, path: FieldPath): never {
  throw new InvalidInputError(
    `${what} has no place in the neutral message model (text, tool calls, tool results)`,
    path,
  );
}

/** Checks that an emitted message index for the cache breakpoint is in range. */
export function checkCacheAfter(cacheAfter: number | undefined, length: number): number {
  if (cacheAfter === undefined) return -1;
  if (!Number.isInteger(cacheAfter) || cacheAfter < -1 || cacheAfter >= length) {
    throw new InvalidInputError(
      `cacheAfter must be a message index in [-1, ${length - 1}], got ${String(cacheAfter)}`,
      "cacheAfter",
    );
  }
  return cacheAfter;
}

/**
 * The content blocks that carry a breakpoint, as global block indexes over the messages
 * (every part is one block, in message then part order: Anthropic's blocks one for one,
 * merging included): `cacheBlocks`, plus the last block of message `cacheAfter`.
 */
export function cachedBlocks(
  messages: readonly Message[],
  cacheAfter: number | undefined,
  cacheBlocks: Iterable<number> | undefined,
): Set<number> {
  const at = checkCacheAfter(cacheAfter, messages.length);
  const out = new Set<number>(cacheBlocks ?? []);
  if (at >= 0) {
    let end = 0;
    for (let i = 0; i <= at; i++) end += (messages[i] as Message).content.length;
    out.add(end - 1);
  }
  return out;
}

/** A plain object (not null, not an array). */
export function isRecord(x: unknown): x is Record<string, unknown> {
  return typeof x === "object" && x !== null && !Array.isArray(x);
}
