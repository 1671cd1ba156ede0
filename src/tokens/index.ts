/**
 * Token counters (docs/text-and-tokens.md): the built-in BPE counters, the estimate, model
 * mapping, custom counters and the counter pool. Imports errors and text.
 */
export {
  CLAUDE_ESTIMATE_MARGIN,
  estimateTokens,
  getTokenCounter,
  isTokenizerName,
  resolveTokenCounter,
  sharedTokenCounter,
  TOKENIZER_NAMES,
  type TokenizerName,
  tokenizerForModel,
} from "./builtin.js";
export { type CounterOptions, createTokenCounter, type TokenCounter } from "./counter.js";
export { type CounterPool, createCounterPool, requestTokenizer } from "./pool.js";
