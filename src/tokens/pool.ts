/**
 * A pool of built-in counters, one per name, so a long-lived caller (a CLI batch, a
 * server) shares each counter's memo cache across requests.
 */
import {
  getTokenCounter,
  isTokenizerName,
  sharedTokenCounter,
  type TokenizerName,
} from "./builtin.js";
import type { TokenCounter } from "./counter.js";

/** See {@link createCounterPool}. */
export interface CounterPool {
  /** The pooled counter for a built-in name; `undefined` for anything else (let validation report it). */
  forRequest(tokenizer: unknown): TokenCounter | undefined;
  get(name: TokenizerName): TokenCounter;
}

/**
 * A pool over the process's shared counters ({@link sharedTokenCounter}): the library, the
 * CLI and the server count a named tokenizer with one memo. A pool made with its own
 * counters (`{ own: true }`) keeps them apart, for a caller that wants an isolated memo.
 *
 * @example const pool = createCounterPool(); pool.get("o200k_base").count("hi");
 */
export function createCounterPool(options: { own?: boolean } = {}): CounterPool {
  const counters = new Map<TokenizerName, TokenCounter>();
  const get = (name: TokenizerName): TokenCounter => {
    let c = counters.get(name);
    if (!c) {
      c = options.own === true ? getTokenCounter(name) : sharedTokenCounter(name);
      counters.set(name, c);
    }
    return c;
  };
  return {
    get,
    forRequest(tokenizer) {
      if (tokenizer === undefined || tokenizer === null) return get("estimate");
      return typeof tokenizer === "string" && isTokenizerName(tokenizer)
        ? get(tokenizer)
        : undefined;
    },
  };
}

/**
 * The `tokenizer` field of a request not yet validated (`undefined` when it has none), to
 * pick the pooled counter before the stage validates the request.
 *
 * @example pool.forRequest(requestTokenizer({ tokenizer: "o200k_base", budgetChars: 10 }))
 */
export function requestTokenizer(request: unknown): unknown {
  return typeof request === "object" && request !== null && "tokenizer" in request
    ? (request as { tokenizer: unknown }).tokenizer
    : undefined;
}
