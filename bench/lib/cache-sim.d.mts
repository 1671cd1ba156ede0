/** Types of cache-sim.mjs (the prompt-cache simulator, shared by the bench and the tests). */
export interface SimBlock {
  key: string;
  tokens: number;
  cache: boolean;
}
export interface SimResult {
  input: number;
  read: number;
  write: number;
  uncached: number;
  cost: number;
  cachedThrough: number;
  brokeCache: boolean;
  breakpoints: number;
}
export interface CacheSim {
  request(blocks: readonly SimBlock[]): SimResult;
}
export const PRICES: Readonly<{ read: number; write: number; base: number }>;
export function createCacheSim(options?: {
  lookback?: number;
  maxBreakpoints?: number;
  minTokens?: number;
  prices?: { read: number; write: number; base: number };
}): CacheSim;
export function anthropicBlocks(
  body: {
    system?: readonly { text: string; cache_control?: unknown }[];
    messages: readonly unknown[];
  },
  count: (text: string) => number,
  framing?: number,
): SimBlock[];
export function anthropicOrphans(body: { messages: readonly unknown[] }): number;
