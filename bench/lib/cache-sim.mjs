/**
 * An Anthropic prompt-cache simulator (the `agent-study` section and test/agent/study.test.ts),
 * following the rules of Anthropic's prompt-caching guide:
 *
 * - a request is a sequence of content blocks (tool definitions, system blocks, then every
 *   message's blocks); a block with `cache_control` is a breakpoint; more than 4 is an
 *   error (the API answers 400);
 * - a breakpoint whose prefix (every block through it) is below the minimum cacheable
 *   length (1,024 tokens) neither reads nor writes;
 * - reading: from each breakpoint the cache is looked up at that block and each block
 *   before it, up to `lookback` blocks in all (20: "approximately 20 blocks"); an entry
 *   exists only where an earlier request placed a breakpoint on the same prefix; the
 *   longest hit over all breakpoints is read;
 * - writing: every eligible breakpoint past the hit stores its prefix; the tokens from the
 *   hit to the last eligible breakpoint are billed as cache writes, the rest as input;
 * - prices relative to the base input price: read 0.1×, write 1.25× (5-minute entries),
 *   base 1×. Entries never expire here (an agent loop sends its requests within minutes).
 *
 * Blocks are compared by content: two blocks are the same when their `key` strings are.
 */
import { createHash } from "node:crypto";

export const PRICES = Object.freeze({ read: 0.1, write: 1.25, base: 1 });

const sha = (s) => createHash("sha256").update(s).digest("base64");

/** A fresh cache. Options: lookback (20), maxBreakpoints (4), minTokens (1024), prices. */
export function createCacheSim({
  lookback = 20,
  maxBreakpoints = 4,
  minTokens = 1024,
  prices = PRICES,
} = {}) {
  const store = new Set();
  const keyHashes = new Map();
  const hashOf = (key) => {
    let h = keyHashes.get(key);
    if (h === undefined) {
      h = sha(key);
      keyHashes.set(key, h);
    }
    return h;
  };
  let previousCached = 0;
  return {
    /**
     * Sends one request: `blocks` = [{key, tokens, cache}]. Returns {input, read, write,
     * uncached, cost, cachedThrough, brokeCache, breakpoints}; throws on more than
     * `maxBreakpoints` breakpoints.
     */
    request(blocks) {
      const through = [];
      const prefix = [];
      let total = 0;
      let h = "";
      const bps = [];
      blocks.forEach((b, i) => {
        total += b.tokens;
        through.push(total);
        h = sha(h + hashOf(b.key));
        prefix.push(h);
        if (b.cache) bps.push(i);
      });
      if (bps.length > maxBreakpoints) {
        throw new Error(`${bps.length} breakpoints: the API accepts at most ${maxBreakpoints}`);
      }
      const eligible = bps.filter((p) => through[p] >= minTokens);
      let hit = -1;
      for (const p of eligible) {
        for (let j = p; j >= 0 && j > p - lookback; j--) {
          if (store.has(prefix[j])) {
            hit = Math.max(hit, j);
            break;
          }
        }
      }
      const last = eligible.length > 0 ? eligible[eligible.length - 1] : -1;
      for (const p of eligible) store.add(prefix[p]);
      const read = hit >= 0 ? through[hit] : 0;
      const write = last > hit ? through[last] - read : 0;
      const uncached = total - read - write;
      const cachedThrough = Math.max(read, last >= 0 ? through[last] : 0);
      const brokeCache = previousCached > 0 && read < previousCached;
      previousCached = cachedThrough;
      return {
        input: total,
        read,
        write,
        uncached,
        cost: read * prices.read + write * prices.write + uncached * prices.base,
        cachedThrough,
        brokeCache,
        breakpoints: bps.length,
      };
    },
  };
}

/**
 * The blocks of an Anthropic Messages body as the simulator takes them: each system text
 * block, then each message's blocks (a string content is one text block; `cache_control`
 * marks a breakpoint and is not part of the key), tokens by `count(text)` plus `framing`
 * on a message's first block.
 */
export function anthropicBlocks(body, count, framing = 4) {
  const out = [];
  for (const s of body.system ?? []) {
    out.push({ key: `system\n${s.text}`, tokens: count(s.text), cache: s.cache_control != null });
  }
  for (const m of body.messages) {
    const content = typeof m.content === "string" ? [{ type: "text", text: m.content }] : m.content;
    content.forEach((b, k) => {
      const { cache_control, ...rest } = b;
      const key = `${m.role}\n${JSON.stringify(rest)}`;
      const text =
        b.type === "text"
          ? b.text
          : b.type === "tool_result"
            ? b.content
            : `${b.name}${JSON.stringify(b.input)}`;
      out.push({
        key,
        tokens: count(text) + (k === 0 ? framing : 0),
        cache: cache_control != null,
      });
    });
  }
  return out;
}

/**
 * Orphans of an Anthropic body: `tool_use` blocks whose results are not all in the next
 * (user) message, and `tool_result` blocks whose call is not in the message before.
 */
export function anthropicOrphans(body) {
  let orphans = 0;
  const blocks = (m) => (typeof m.content === "string" ? [] : m.content);
  body.messages.forEach((m, i) => {
    if (m.role === "assistant") {
      const next = body.messages[i + 1];
      const answered = new Set(
        next === undefined
          ? []
          : blocks(next).flatMap((b) => (b.type === "tool_result" ? [b.tool_use_id] : [])),
      );
      for (const b of blocks(m)) if (b.type === "tool_use" && !answered.has(b.id)) orphans++;
    } else {
      const prev = body.messages[i - 1];
      const calls = new Set(
        prev === undefined
          ? []
          : blocks(prev).flatMap((b) => (b.type === "tool_use" ? [b.id] : [])),
      );
      for (const b of blocks(m))
        if (b.type === "tool_result" && !calls.has(b.tool_use_id)) orphans++;
    }
  });
  return orphans;
}
