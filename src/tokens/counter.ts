/**
 * Token counters (docs/text-and-tokens.md). A counter is named (the name goes into every plan so a
 * decision log can be replayed), says whether it is exact or an estimate, validates
 * every result, and memoizes by content.
 */
import { TokenCounterError } from "../errors/index.js";

/**
 * A named, validated, memoizing token counter.
 *
 * `newlineCut` declares a property the planners use to avoid recounting a growing
 * prompt: `count(a + b) === count(a) + count(b)` whenever `a` ends with `"\n"` and `b`
 * starts with a character that is neither whitespace nor `/`. It holds for `estimate`,
 * `o200k_base` and `cl100k_base` (their pre-tokenizers always split there; the test suite
 * checks it on random text). Custom counters default to `false`, and then every decision
 * is made by counting the whole proposed rendering.
 *
 * `extendWithNewlines`, when present, returns `count(text + newlines)` from `count(text)`
 * without counting `text` again (`newlines` is one or more "\n"), or `null` when it
 * cannot tell; the planners use it to price a segment's joined form from its own count.
 */
export interface TokenCounter {
  readonly name: string;
  readonly kind: "exact" | "estimate";
  readonly newlineCut: boolean;
  readonly extendWithNewlines?: (text: string, tokens: number, newlines: string) => number | null;
  /** Tokens in `text`: a non-negative integer. Throws {@link TokenCounterError} otherwise. */
  count(text: string): number;
  /**
   * `count(text)` when it is at most `limit`; otherwise some number above `limit`, found
   * without tokenizing all of `text`. The planners use it to reject a candidate that
   * cannot fit after reading only as much of it as the budget has room for. Counters
   * without it are counted whole.
   */
  readonly countUpTo?: (text: string, limit: number) => number;
  /**
   * `countUpTo(text + newlines, limit)` for `newlines` of one or more "\n", without
   * building `text + newlines` when it can tell without: the planners price a segment
   * followed by its separator's newlines this way. Counters without it get the joined text.
   */
  readonly countUpToWithNewlines?: (text: string, newlines: string, limit: number) => number;
  /**
   * `count(text)` without the memo: the text is neither looked up nor remembered. For
   * bulk one-off texts, such as the rendered hits of a selection over thousands of recall
   * candidates: hashing each for a lookup would cost more than it saves, and remembering
   * them would flush the entries worth keeping (segments, instructions) from a shared
   * counter. Same result and validation as `count`. Counters without it use `count`.
   */
  readonly countUncached?: (text: string) => number;
}

/** Options of {@link createTokenCounter}. */
export interface CounterOptions {
  kind?: "exact" | "estimate";
  newlineCut?: boolean;
  /**
   * See {@link TokenCounter.extendWithNewlines}; receives the memoizing `count`.
   */
  extendWithNewlines?: (
    count: (text: string) => number,
  ) => (text: string, tokens: number, newlines: string) => number | null;
  /**
   * See {@link TokenCounter.countUpTo}: must return the count when it is at most `limit`
   * and a number above `limit` otherwise.
   */
  countUpTo?: (text: string, limit: number) => number;
  /** See {@link TokenCounter.countUpToWithNewlines}; same contract as `countUpTo`. */
  countUpToWithNewlines?: (text: string, newlines: string, limit: number) => number;
  /** Distinct texts remembered (default 50,000). 0 disables memoization. */
  cacheSize?: number;
}

/**
 * Wraps a plain `(text) => number` function as a {@link TokenCounter}: results are
 * validated (integer, ≥ 0, not NaN) and memoized by content.
 *
 * @example
 * const words = createTokenCounter("words", (t) => t.split(" ").length, { kind: "estimate" });
 * words.count("a b c"); // 3
 */
export function createTokenCounter(
  name: string,
  fn: (text: string) => number,
  options: CounterOptions = {},
): TokenCounter {
  const cacheSize = options.cacheSize ?? 50_000;
  const cache = new Map<string, number>();
  const checked = (n: number): number => {
    if (typeof n !== "number" || !Number.isInteger(n) || n < 0) {
      throw new TokenCounterError(
        `token counter "${name}" returned ${String(n)}; expected a non-negative integer`,
      );
    }
    return n;
  };
  const remember = (text: string, n: number) => {
    if (cacheSize > 0) {
      // Bounded memory: a full cache starts over rather than tracking recency per hit.
      if (cache.size >= cacheSize) cache.clear();
      cache.set(text, n);
    }
  };
  const count = (text: string): number => {
    const hit = cache.get(text);
    if (hit !== undefined) return hit;
    const n = checked(fn(text));
    remember(text, n);
    return n;
  };
  const upTo = options.countUpTo;
  // Not memoized: it reads a text only in part, usually once, and hashing the whole text
  // for a memo lookup would cost what stopping early saves.
  const countUpTo = upTo && ((text: string, limit: number): number => checked(upTo(text, limit)));
  const upToNl = options.countUpToWithNewlines;
  const countUpToWithNewlines =
    upToNl &&
    ((text: string, newlines: string, limit: number): number =>
      checked(upToNl(text, newlines, limit)));
  const extend = options.extendWithNewlines?.(count);
  return {
    name,
    kind: options.kind ?? "exact",
    newlineCut: options.newlineCut ?? false,
    ...(extend ? { extendWithNewlines: extend } : {}),
    ...(countUpTo ? { countUpTo } : {}),
    ...(countUpToWithNewlines ? { countUpToWithNewlines } : {}),
    countUncached: (text: string): number => checked(fn(text)),
    count,
  };
}
