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

/** Most characters of tool outputs one counter's output memo holds before it starts over. */
export const OUTPUT_MEMO_CHARS = 64 * 1024 * 1024;
/** Outputs at least this long are found by length, then compared (never hashed). */
const LONG_OUTPUT = 1024;
/** Most long outputs of one length the memo holds (a bound on a lookup's comparisons). */
const SAME_LENGTH = 16;

/** What is remembered of one tool output under one counter. */
export interface OutputFacts {
  readonly output: string;
  readonly tokens: number;
  /** Truncation results, filled by the transforms (by `${maxTokens} ${callId}`). */
  cuts: Map<string, string | null> | null;
  /**
   * The output's pieces (`TokenCounter.pieceCounts`) when it was counted by them for a cut
   * about to be made: held only until the cut is (see `outputFacts`'s `forCut`).
   */
  pieces: Int32Array | null;
}

interface OutputMemo {
  readonly short: Map<string, OutputFacts>;
  readonly long: Map<number, OutputFacts[]>;
  chars: number;
}

// Tool outputs by content, per counter. A stateless caller sends the whole history as
// new strings on every request, and a string-keyed map hashes each new string (reading
// all of it) before comparing it: long outputs are found by length, then compared.
const outputMemos = new WeakMap<TokenCounter, OutputMemo>();

function memoOf(counter: TokenCounter): OutputMemo {
  let memo = outputMemos.get(counter);
  if (memo === undefined) {
    memo = { short: new Map(), long: new Map(), chars: 0 };
    outputMemos.set(counter, memo);
  }
  return memo;
}

function remember(memo: OutputMemo, facts: OutputFacts): void {
  const n = facts.output.length;
  if (memo.chars + n > OUTPUT_MEMO_CHARS) {
    memo.short.clear();
    memo.long.clear();
    memo.chars = 0;
  }
  memo.chars += n;
  if (n < LONG_OUTPUT) {
    memo.short.set(facts.output, facts);
    return;
  }
  const list = memo.long.get(n);
  if (list === undefined) memo.long.set(n, [facts]);
  else {
    if (list.length >= SAME_LENGTH) list.shift();
    list.push(facts);
  }
}

function lookup(memo: OutputMemo, output: string): OutputFacts | undefined {
  if (output.length < LONG_OUTPUT) return memo.short.get(output);
  const list = memo.long.get(output.length);
  for (let i = 0; list !== undefined && i < list.length; i++) {
    if ((list[i] as OutputFacts).output === output) return list[i] as OutputFacts;
  }
  return undefined;
}

/**
 * A tool output's count under `counter`, with room for its truncation results,
 * remembered by content for the counter's lifetime (bounded: a full memo starts over).
 * `forCut`: the output is about to be cut, so a counter with `pieceCounts` counts it by
 * its pieces, which the facts hold until the cut takes them (one pass over the output for
 * both; the memo never keeps them).
 *
 * @example outputFacts("ok", getTokenCounter("o200k_base")).tokens // 1
 */
export function outputFacts(output: string, counter: TokenCounter, forCut = false): OutputFacts {
  const memo = memoOf(counter);
  const hit = lookup(memo, output);
  if (hit !== undefined) return hit;
  const pieces = forCut && counter.pieceCounts ? counter.pieceCounts(output) : null;
  const tokens =
    pieces === null ? counter.count(output) : pieces.length === 0 ? 0 : (pieces.at(-1) as number);
  const facts: OutputFacts = { output, tokens, cuts: null, pieces };
  remember(memo, facts);
  return facts;
}

/**
 * Remembers that `output` counts `tokens` under `counter` (a cut, counted as it was made),
 * so pricing the message it is sent in does not count it again.
 */
export function rememberOutput(output: string, tokens: number, counter: TokenCounter): void {
  const memo = memoOf(counter);
  if (lookup(memo, output) === undefined) {
    remember(memo, { output, tokens, cuts: null, pieces: null });
  }
}

/** Tokens of one part under `counter` (text, name + canonical input, or output). */
export function partTokens(part: Part, counter: TokenCounter): number {
  switch (part.type) {
    case "text":
      return counter.count(part.text);
    case "tool_call":
      return counter.count(part.name) + counter.count(canonicalJson(part.input));
    case "tool_result":
      return outputFacts(part.output, counter).tokens;
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

/**
 * A lower bound of a message's tokens under any counter and any transform, found without
 * reading it: the framing overhead (a counter may count any text as 0 — the `estimate`
 * counter counts whitespace so). What a stateless plan reports for a message it never
 * counted (decisions with `counted: false`).
 *
 * @example messageLowerBound({ id: "u1", role: "user", content: [{ type: "text", text: "hello there" }] }) // 4
 */
export function messageLowerBound(_message: Message): number {
  return MESSAGE_OVERHEAD_TOKENS;
}
