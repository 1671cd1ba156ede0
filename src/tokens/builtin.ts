/**
 * The built-in counters: `estimate` (offline heuristic of spec 01), exact `o200k_base`
 * and `cl100k_base` BPE counts (gpt-tokenizer, no download at run time), and
 * `claude_estimate` (a documented safety margin over o200k_base).
 */
import { createRequire } from "node:module";
import { InvalidInputError } from "../errors/index.js";
import { WS_CLASS } from "../text/index.js";
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

// Special-token literals such as <|endoftext|> are untrusted text: count them as text.
const AS_TEXT = { allowedSpecial: new Set<string>(), disallowedSpecial: new Set<string>() };

type BpeCount = (text: string, options: typeof AS_TEXT) => number;
interface BpeModule {
  countTokens: BpeCount;
  setMergeCacheSize(size: number): void;
  clearMergeCache(): void;
}
const requireCjs = createRequire(import.meta.url);

/**
 * Text (UTF-16 units) a counter passes to the BPE library between two clears of the
 * library's merge cache. The library evicts its cache one entry at a time from the front
 * of a Map, which V8 makes O(n) per eviction once the cache is full (a 50k-hit selection
 * ran 3× slower than with no cache at all). So the library's size limit is lifted and the
 * cache is cleared wholesale instead: it never holds more pieces than this many units.
 */
export const BPE_CACHE_WINDOW = 1_000_000;

// The BPE rank tables take ~0.5 s to load, so an encoding is loaded on its first count
// (synchronously, through the package's CommonJS build), never at import time.
function lazyBpe(encoding: "o200k_base" | "cl100k_base"): (text: string) => number {
  let bpe: BpeModule | undefined;
  let sinceClear = 0;
  return (text) => {
    if (bpe === undefined) {
      bpe = requireCjs(`gpt-tokenizer/cjs/encoding/${encoding}`) as BpeModule;
      bpe.setMergeCacheSize(Number.MAX_SAFE_INTEGER);
    }
    sinceClear += text.length;
    if (sinceClear > BPE_CACHE_WINDOW) {
      bpe.clearMergeCache();
      sinceClear = text.length;
    }
    return bpe.countTokens(text, AS_TEXT);
  };
}

/**
 * The `estimate` heuristic: a Latin word run, one CJK character, or any other
 * non-space character each count 1. An estimate, never a provider tokenizer.
 *
 * @example estimateTokens("Hello, 世界!") // 5
 */
export function estimateTokens(text: string): number {
  let n = 0;
  ESTIMATE_UNIT.lastIndex = 0;
  while (ESTIMATE_UNIT.exec(text) !== null) n++;
  return n;
}

const NEWLINES = /^\n+$/;
const MARK = /\p{M}/u;
const WORD = /[\p{L}\p{N}]/u;
const SPACE = /\s/u;

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
    if (!NEWLINES.test(newlines) || text === "") return null;
    let start = text.length;
    while (start > 0) {
      let i = start - 1;
      const low = text.charCodeAt(i);
      if (low >= 0xdc00 && low <= 0xdfff && i > 0) i--;
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
      });
    case "o200k_base":
    case "cl100k_base":
      return createTokenCounter(name, lazyBpe(name), {
        newlineCut: true,
        extendWithNewlines: bpeExtendWithNewlines,
      });
    case "claude_estimate": {
      const o200k = lazyBpe("o200k_base");
      return createTokenCounter(name, (t) => Math.ceil(o200k(t) * CLAUDE_ESTIMATE_MARGIN), {
        kind: "estimate",
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
 * Resolves what a request passes as `tokenizer`: a counter is used as is, a name gets a
 * fresh built-in counter, nothing gives `estimate`.
 *
 * @example resolveTokenCounter(undefined).name // "estimate"
 */
export function resolveTokenCounter(
  tokenizer: TokenCounter | string | undefined | null,
  path = "tokenizer",
): TokenCounter {
  if (tokenizer === undefined || tokenizer === null) return getTokenCounter("estimate");
  if (typeof tokenizer !== "string") return tokenizer;
  if (!isTokenizerName(tokenizer)) {
    throw new InvalidInputError(
      `unknown tokenizer "${tokenizer}"; expected one of ${TOKENIZER_NAMES.join(", ")}`,
      path,
    );
  }
  return getTokenCounter(tokenizer);
}
