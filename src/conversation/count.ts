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
  const keys = sortKeys(Object.keys(record));
  let out = "{";
  for (const k of keys) {
    const v = record[k];
    if (v === undefined) continue;
    out += `${out.length > 1 ? "," : ""}${JSON.stringify(k)}:${canonicalJson(v)}`;
  }
  return `${out}}`;
}

// Keys by code point, in place: an insertion sort, since an object has few keys and
// Array#sort allocates a work array per call (one per tool call of a history).
function sortKeys(keys: string[]): string[] {
  if (keys.length > 16) return keys.sort(compareCodePoints);
  for (let i = 1; i < keys.length; i++) {
    const k = keys[i] as string;
    let j = i - 1;
    for (; j >= 0 && compareCodePoints(keys[j] as string, k) > 0; j--)
      keys[j + 1] = keys[j] as string;
    keys[j + 1] = k;
  }
  return keys;
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
  const parts = message.content;
  for (let j = 0; j < parts.length; j++) total += partTokens(parts[j] as Part, counter);
  return total;
}
