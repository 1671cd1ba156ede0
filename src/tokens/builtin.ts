/**
 * The built-in counters: `estimate` (offline heuristic of docs/text-and-tokens.md), exact `o200k_base`
 * and `cl100k_base` BPE counts (./bpe.ts over the rank files gpt-tokenizer ships, no
 * download at run time), and
 * `claude_estimate` (a documented safety margin over o200k_base).
 */
import { InvalidInputError } from "../errors/index.js";
import { WS_CLASS } from "../text/index.js";
import { type BpeCount, type BpeEncoding, isNewlines, sharedBpeCounter } from "./bpe.js";
import { createTokenCounter, type TokenCounter } from "./counter.js";

/** Names accepted wherever a request names a tokenizer. */
export const TOKENIZER_NAMES = [
  "estimate",
  "o200k_base",
  "cl100k_base",
  "claude_estimate",
] as const;
export type TokenizerName = (typeof TOKENIZER_NAMES)[number];

/** Safety margin of `claude_estimate`: o200k_base count × 1.25, rounded up. */
export const CLAUDE_ESTIMATE_MARGIN = 1.25;

const ESTIMATE_UNIT = new RegExp(`[a-zA-Z0-9_]+|[\\u3400-\\u9fff]|[^${WS_CLASS}]`, "gu");

/**
 * Exact BPE counting per encoding: the tables are loaded on the first count (a few tenths
 * of a second, so never at import time) and shared by every counter. The
 * functions are made once, here, not per counter: V8's optimized code for their callers
 * then never points at a function that dies with a counter.
 */
const BPE: Readonly<Record<BpeEncoding, BpeCount>> = {
  o200k_base: {
    count: (text) => sharedBpeCounter("o200k_base").count(text),
    countUpTo: (text, limit) => sharedBpeCounter("o200k_base").countUpTo(text, limit),
    countUpToWithNewlines: (text, newlines, limit) =>
      sharedBpeCounter("o200k_base").countUpToWithNewlines(text, newlines, limit),
    pieceCounts: (text) => sharedBpeCounter("o200k_base").pieceCounts(text),
    countSplice: (text, pieces, from, to, between) =>
      sharedBpeCounter("o200k_base").countSplice(text, pieces, from, to, between),
  },
  cl100k_base: {
    count: (text) => sharedBpeCounter("cl100k_base").count(text),
    countUpTo: (text, limit) => sharedBpeCounter("cl100k_base").countUpTo(text, limit),
    countUpToWithNewlines: (text, newlines, limit) =>
      sharedBpeCounter("cl100k_base").countUpToWithNewlines(text, newlines, limit),
    pieceCounts: (text) => sharedBpeCounter("cl100k_base").pieceCounts(text),
    countSplice: (text, pieces, from, to, between) =>
      sharedBpeCounter("cl100k_base").countSplice(text, pieces, from, to, between),
  },
};

/**
 * The `estimate` heuristic: a Latin word run, one CJK character, or any other
 * non-space character each count 1. An estimate, never a provider tokenizer.
 *
 * @example estimateTokens("Hello, 世界!") // 5
 */
export function estimateTokens(text: string): number {
  return estimateUpTo(text, Number.POSITIVE_INFINITY);
}

/** {@link estimateTokens}, stopping once the count passes `limit`. */
function estimateUpTo(text: string, limit: number): number {
  if (Number.isNaN(limit)) limit = Number.POSITIVE_INFINITY;
  let n = 0;
  ESTIMATE_UNIT.lastIndex = 0;
  while (n <= limit && ESTIMATE_UNIT.exec(text) !== null) n++;
  return n;
}

const MARK = /\p{M}/u;
const WORD = /[\p{L}\p{N}]/u;
const SPACE = /\s/u;

// An ASCII letter or digit (\p{L}, \p{N}) or whitespace (\s); no ASCII unit is a mark.
function isAsciiWordOrSpace(c: number): boolean {
  return (
    (c >= 0x30 && c <= 0x39) ||
    ((c | 0x20) >= 0x61 && (c | 0x20) <= 0x7a) ||
    c === 0x20 ||
    (c >= 0x09 && c <= 0x0d)
  );
}

/**
 * `count(text + newlines)` from `count(text)` for the o200k_base / cl100k_base
 * pre-tokenizers. Appending newlines only changes the last pre-token piece:
 * - text ends with a letter or digit: the newlines form a piece of their own;
 * - text ends with a run R of other non-space characters: the piece is R (with the one
 *   space before it, if any) and the newlines join it (` ?[^\s\p{L}\p{N}]+[\r\n]*`).
 * Anything else (trailing whitespace, combining marks, "/") returns null: count it whole.
 * The test suite checks the identity on random text for both encodings.
 */
function bpeExtendWithNewlines(count: (text: string) => number) {
  return (text: string, tokens: number, newlines: string): number | null => {
    if (!isNewlines(newlines) || text === "") return null;
    let start = text.length;
    while (start > 0) {
      let i = start - 1;
      const low = text.charCodeAt(i);
      if (low < 0x80) {
        // ASCII, classified without a regex (it is most text, and every hit line's end).
        if (low === 0x2f) return null;
        if (isAsciiWordOrSpace(low)) break;
        start = i;
        continue;
      }
      // A low surrogate after a high one ends a pair: read the code point whole. A lone
      // one is a character of its own.
      if (low >= 0xdc00 && low <= 0xdfff && i > 0) {
        const high = text.charCodeAt(i - 1);
        if (high >= 0xd800 && high <= 0xdbff) i--;
      }
      const ch = text.slice(i, start);
      // Marks join letter pieces in o200k; "/" after a newline may belong to the piece
      // before it (`[\r\n/]*`): both are left to a whole count.
      if (MARK.test(ch) || ch === "/") return null;
      if (WORD.test(ch) || SPACE.test(ch)) break;
      start = i;
    }
    if (start === text.length) {
      const last = text.slice(-1);
      return SPACE.test(last) ? null : tokens + count(newlines);
    }
    const from = start > 0 && text[start - 1] === " " ? start - 1 : start;
    const piece = text.slice(from);
    return tokens - count(piece) + count(piece + newlines);
  };
}

/**
 * A fresh counter (with its own memo cache) for a built-in tokenizer name.
 *
 * @example getTokenCounter("o200k_base").count("hello world") // 2
 */
export function getTokenCounter(name: TokenizerName): TokenCounter {
  switch (name) {
    case "estimate":
      return createTokenCounter(name, estimateTokens, {
        kind: "estimate",
        newlineCut: true,
        // Newlines are whitespace: they never add an estimate unit.
        extendWithNewlines: () => (_text, tokens) => tokens,
        countUpTo: estimateUpTo,
        countUpToWithNewlines: (text, _newlines, limit) => estimateUpTo(text, limit),
      });
    case "o200k_base":
    case "cl100k_base": {
      const bpe = BPE[name];
      return createTokenCounter(name, bpe.count, {
        newlineCut: true,
        extendWithNewlines: bpeExtendWithNewlines,
        countUpTo: bpe.countUpTo,
        countUpToWithNewlines: bpe.countUpToWithNewlines,
        pieceCounts: bpe.pieceCounts,
        countSplice: bpe.countSplice,
      });
    }
    case "claude_estimate": {
      const o200k = BPE.o200k_base;
      const margin = (n: number) => Math.ceil(n * CLAUDE_ESTIMATE_MARGIN);
      return createTokenCounter(name, (t) => margin(o200k.count(t)), {
        kind: "estimate",
        // margin(n) <= limit exactly when n <= floor(limit / margin): stop there.
        countUpTo: (t, limit) =>
          margin(o200k.countUpTo(t, Math.floor(limit / CLAUDE_ESTIMATE_MARGIN))),
        countUpToWithNewlines: (t, newlines, limit) =>
          margin(
            o200k.countUpToWithNewlines(t, newlines, Math.floor(limit / CLAUDE_ESTIMATE_MARGIN)),
          ),
      });
    }
  }
}

/**
 * The encoding a model name maps to: `gpt-4o`, `gpt-4.1`, `gpt-5*`, `o1`/`o3`/`o4*` →
 * `o200k_base`; `gpt-4`, `gpt-3.5-turbo` → `cl100k_base`; `claude-*` → `claude_estimate`.
 * Unknown models are invalid input (no silent fallback to a wrong tokenizer).
 *
 * @example tokenizerForModel("gpt-4o-mini") // "o200k_base"
 */
export function tokenizerForModel(model: string, path = "model"): TokenizerName {
  const m = model.trim().toLowerCase();
  if (/^(gpt-4o|gpt-4\.1|gpt-4\.5|gpt-5|gpt-oss|o1|o3|o4|chatgpt-4o|codex)/.test(m))
    return "o200k_base";
  if (/^(gpt-4|gpt-3\.5|text-embedding-3|text-embedding-ada-002)/.test(m)) return "cl100k_base";
  if (/^claude/.test(m)) return "claude_estimate";
  throw new InvalidInputError(`unknown model "${model}": name a tokenizer instead`, path);
}

/** True when `name` is a built-in tokenizer name. */
export function isTokenizerName(name: string): name is TokenizerName {
  return (TOKENIZER_NAMES as readonly string[]).includes(name);
}

/**
 * The process's memoizing counter of each built-in name, made on first use. Like the BPE
 * tables under it (see sharedBpeCounter), it never changes a result — a count is a pure
 * function of the text — only the time of a count already made: a caller that names a
 * tokenizer on every call (`planConversation({ tokenizer: "o200k_base", … })`) would
 * otherwise count its whole history again each call (3.2 s instead of 81 ms at 11,500
 * messages). Its memo is bounded like every counter's (50,000 texts, then starts over).
 */
const sharedCounters = new Map<TokenizerName, TokenCounter>();

/**
 * The process-wide memoizing counter of a built-in tokenizer name: the same object on
 * every call, so its memo is shared by every call that names the tokenizer.
 *
 * @example sharedTokenCounter("o200k_base") === sharedTokenCounter("o200k_base") // true
 */
export function sharedTokenCounter(name: TokenizerName): TokenCounter {
  let counter = sharedCounters.get(name);
  if (counter === undefined) {
    counter = getTokenCounter(name);
    sharedCounters.set(name, counter);
  }
  return counter;
}

/**
 * Resolves what a request passes as `tokenizer`: a counter is used as is, a name gets the
 * process's shared memoizing counter of that name ({@link sharedTokenCounter}), nothing
 * gives the shared `estimate`.
 *
 * @example resolveTokenCounter(undefined).name // "estimate"
 */
export function resolveTokenCounter(
  tokenizer: TokenCounter | string | undefined | null,
  path = "tokenizer",
): TokenCounter {
  if (tokenizer === undefined || tokenizer === null) return sharedTokenCounter("estimate");
  if (typeof tokenizer !== "string") return tokenizer;
  if (!isTokenizerName(tokenizer)) {
    throw new InvalidInputError(
      `unknown tokenizer "${tokenizer}"; expected one of ${TOKENIZER_NAMES.join(", ")}`,
      path,
    );
  }
  return sharedTokenCounter(tokenizer);
}
