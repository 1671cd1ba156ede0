/** Token counters pooled across requests, started over after so many request bytes. */
import { type CounterPool, createCounterPool } from "../tokens/index.js";

/** The current pool, and the meter that starts it over. */
export interface RequestCounters {
  /** The pool to take a request's counter from (it changes after a reset). */
  pool(): CounterPool;
  /** Counts `n` request bytes; past `resetBytes` since the last reset, the pool starts over. */
  countBytes(n: number): void;
}

/**
 * A counter pool that starts over after `resetBytes` request bytes: counters memoize by
 * content, so this bounds what a long-running server remembers by what it was sent lately.
 */
export function createRequestCounters(resetBytes: number): RequestCounters {
  let pool: CounterPool = createCounterPool();
  let bytesSinceReset = 0;
  return {
    pool: () => pool,
    countBytes: (n) => {
      bytesSinceReset += n;
      if (bytesSinceReset > resetBytes) {
        pool = createCounterPool();
        bytesSinceReset = 0;
      }
    },
  };
}
