/**
 * Counting messages: `tokens(message) = 4 + Σ tokens(part)` with the request's counter.
 * The 4 approximates a provider's per-message framing (documented as such). The counter
 * memoizes by content, so a message seen on an earlier turn is not tokenized again.
 */
import { compareCodePoints } from "../text/index.js";
import type { TokenCounter } from "../tokens/index.js";
import type { Message, Part } from "./schema.js";

/** Tokens charged per message for the provider's framing (an approximation). */
export const MESSAGE_OVERHEAD_TOKENS = 4;

/**
 * JSON with object keys sorted by code point and no whitespace; strings escaped as
 * `JSON.stringify` escapes them (non-ASCII kept as is). Same value → same text, whatever
 * the key order, so a tool call's count does not depend on how its input was built.
 *
 * @example canonicalJson({ b: 1, a: [true, null] }) // '{"a":[true,null],"b":1}'
 */
export function canonicalJson(value: unknown): string {
  if (value === null || typeof value !== "object") return JSON.stringify(value) ?? "null";
  // Concatenation rather than map/join: every tool call of a history is written per plan.
  if (Array.isArray(value)) {
    let out = "[";
    for (let i = 0; i < value.length; i++) out += `${i > 0 ? "," : ""}${canonicalJson(value[i])}`;
    return `${out}]`;
  }
  const record = value as Record<string, unknown>;
  const keys = Object.keys(record).sort(compareCodePoints);
  let out = "{";
  for (const k of keys) {
    const v = record[k];
    if (v === undefined) continue;
    out += `${out.length > 1 ? "," : ""}${JSON.stringify(k)}:${canonicalJson(v)}`;
  }
  return `${out}}`;
}

/** Tokens of one part under `counter` (text, name + canonical input, or output). */
export function partTokens(part: Part, counter: TokenCounter): number {
  switch (part.type) {
    case "text":
      return counter.count(part.text);
    case "tool_call":
      return counter.count(part.name) + counter.count(canonicalJson(part.input));
    case "tool_result":
      return counter.count(part.output);
  }
}

/**
 * Tokens of a message: the framing overhead plus each part's tokens.
 *
 * @example messageTokens({ id: "u1", role: "user", content: [{ type: "text", text: "hi" }] }, getTokenCounter("o200k_base")) // 5
 */
export function messageTokens(message: Message, counter: TokenCounter): number {
  let total = MESSAGE_OVERHEAD_TOKENS;
  for (const part of message.content) total += partTokens(part, counter);
  return total;
}
