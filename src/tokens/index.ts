/** Token counters of spec 01: built-ins, model mapping, custom counters. */
export {
  CLAUDE_ESTIMATE_MARGIN,
  estimateTokens,
  getTokenCounter,
  isTokenizerName,
  resolveTokenCounter,
  TOKENIZER_NAMES,
  type TokenizerName,
  tokenizerForModel,
} from "./builtin.js";
export { type CounterOptions, createTokenCounter, type TokenCounter } from "./counter.js";
export { type CounterPool, createCounterPool } from "./pool.js";
