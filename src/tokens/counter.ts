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
  /**
   * The pieces a tokenizer splits `text` into before merging, with running counts:
   * `[end, tokens]` pairs, `tokens` those of `text[0, end)` (so the last is `count(text)`).
   * Only a tokenizer whose pieces are counted independently (the BPE encodings) has it;
   * cutting a long tool result estimates its probes with it. Not memoized.
   */
  readonly pieceCounts?: (text: string) => Int32Array;
  /**
   * `count(text.slice(0, from) + between + text.slice(to))` given `pieces` =
   * `pieceCounts(text)`, counting only around the seams (a cut of a long tool result is
   * counted this way while its search probes). Only with `pieceCounts`. Not memoized.
   */
  readonly countSplice?: (
    text: string,
    pieces: Int32Array,
    from: number,
    to: number,
    between: string,
  ) => number;
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
  /** See {@link TokenCounter.pieceCounts}. */
  pieceCounts?: (text: string) => Int32Array;
  /** See {@link TokenCounter.countSplice}; must equal the count of the spliced text. */
  countSplice?: TokenCounter["countSplice"];
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
  return new MemoCounter(name, fn, options);
}

/**
 * A counter's memo and function, under a symbol: `count` and `countUncached` are the
 * same two functions for every counter, reading the counter they are called on. Code that
 * counts then calls one function whichever counter it is given — with a closure per
 * counter, every fresh counter was a new call target, and the packer's optimized code was
 * discarded for it (see "Object shapes" in docs/performance.md). A spread copy of a
 * counter (`{ ...counter, name: "mine" }`) carries the symbol, so it counts too.
 */
const STATE = Symbol("promptctx.tokenCounter");

interface CounterState {
  name: string;
  fn: (text: string) => number;
  cache: Map<string, number>;
  cacheSize: number;
}

type Held = { readonly [STATE]: CounterState };

function memoCount(this: Held, text: string): number {
  const s = this[STATE];
  const hit = s.cache.get(text);
  if (hit !== undefined) return hit;
  const n = checked(s.name, s.fn(text));
  if (s.cacheSize > 0) {
    // Bounded memory: a full cache starts over rather than tracking recency per hit.
    if (s.cache.size >= s.cacheSize) s.cache.clear();
    s.cache.set(text, n);
  }
  return n;
}

function uncachedCount(this: Held, text: string): number {
  const s = this[STATE];
  return checked(s.name, s.fn(text));
}

/**
 * The counter of {@link createTokenCounter}: every member an own property, set in one
 * order (one hidden class for every counter, kept alive by the class; see "Object shapes"
 * in docs/performance.md). Optional members the options do not give are `undefined`.
 */
class MemoCounter implements TokenCounter {
  /** An instance kept for the life of the class: see "Object shapes" in docs/performance.md. */
  // biome-ignore lint/correctness/noUnusedPrivateClassMembers: held only to keep the shape alive
  static readonly #shape = new MemoCounter("shape", () => 0, {});
  readonly name: string;
  readonly kind: "exact" | "estimate";
  readonly newlineCut: boolean;
  readonly extendWithNewlines: TokenCounter["extendWithNewlines"];
  readonly countUpTo: TokenCounter["countUpTo"];
  readonly countUpToWithNewlines: TokenCounter["countUpToWithNewlines"];
  readonly pieceCounts: TokenCounter["pieceCounts"];
  readonly countSplice: TokenCounter["countSplice"];
  readonly [STATE]: CounterState;
  readonly countUncached: (this: Held, text: string) => number = uncachedCount;
  readonly count: (this: Held, text: string) => number = memoCount;

  constructor(name: string, fn: (text: string) => number, options: CounterOptions) {
    this.name = name;
    this.kind = options.kind ?? "exact";
    this.newlineCut = options.newlineCut ?? false;
    this.extendWithNewlines = options.extendWithNewlines?.((text) => this.count(text));
    const upTo = options.countUpTo;
    // Not memoized: it reads a text only in part, usually once, and hashing the whole text
    // for a memo lookup would cost what stopping early saves.
    this.countUpTo = upTo && ((text, limit) => checked(name, upTo(text, limit)));
    const upToNl = options.countUpToWithNewlines;
    this.countUpToWithNewlines =
      upToNl && ((text, newlines, limit) => checked(name, upToNl(text, newlines, limit)));
    this.pieceCounts = options.pieceCounts;
    const splice = options.countSplice;
    this.countSplice =
      splice &&
      ((text, pieces, from, to, between) => checked(name, splice(text, pieces, from, to, between)));
    this[STATE] = { name, fn, cache: new Map(), cacheSize: options.cacheSize ?? 50_000 };
  }
}

function checked(name: string, n: number): number {
  if (typeof n !== "number" || !Number.isInteger(n) || n < 0) {
    throw new TokenCounterError(
      `token counter "${name}" returned ${String(n)}; expected a non-negative integer`,
    );
  }
  return n;
}
