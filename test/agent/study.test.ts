/**
 * The agent-loop study of the bench (bench/sections/agent-study.mjs) at small sizes: the
 * prompt-cache simulator on hand-made cases (prefix match, lookback, the 4-breakpoint
 * limit, the minimum length, prices), then the three loops over a small generated session,
 * where promptctx's defaults must never exceed the window, orphan a call, or start on an
 * assistant message.
 */
import { describe, expect, it } from "vitest";
import { runLoop } from "../../bench/lib/agent-loops.mjs";
import { makeAgentSession, sessionRequests } from "../../bench/lib/agent-session.mjs";
import { anthropicOrphans, createCacheSim, type SimBlock } from "../../bench/lib/cache-sim.mjs";
import * as pc from "../../src/index.js";

/** `n` blocks of `tokens` each, keyed `k0…`, breakpoints at `marks`. */
const blocks = (n: number, tokens: number, marks: number[], prefix = "k"): SimBlock[] =>
  Array.from({ length: n }, (_, i) => ({ key: `${prefix}${i}`, tokens, cache: marks.includes(i) }));

describe("the prompt-cache simulator", () => {
  it("writes at a breakpoint, reads the same prefix back, bills read 0.1×, write 1.25×, base 1×", () => {
    const sim = createCacheSim();
    const first = sim.request(blocks(12, 200, [9]));
    expect(first).toMatchObject({ input: 2400, read: 0, write: 2000, uncached: 400 });
    expect(first.cost).toBeCloseTo(2000 * 1.25 + 400);
    const again = sim.request(blocks(14, 200, [13]));
    // Blocks 0–9 read (the entry at 9 is 4 blocks back), 10–13 written.
    expect(again).toMatchObject({ read: 2000, write: 800, uncached: 0, brokeCache: false });
    expect(again.cost).toBeCloseTo(2000 * 0.1 + 800 * 1.25);
  });

  it("looks back 20 blocks from a breakpoint, no further", () => {
    const sim = createCacheSim();
    sim.request(blocks(20, 200, [9]));
    expect(sim.request(blocks(40, 200, [28])).read).toBe(2000); // 19 blocks back: found
    const far = createCacheSim();
    far.request(blocks(20, 200, [9]));
    const miss = far.request(blocks(40, 200, [29])); // 20 blocks back: not found
    expect(miss.read).toBe(0);
    expect(miss.brokeCache).toBe(true);
  });

  it("matches prefixes: a changed block before the entry misses it", () => {
    const sim = createCacheSim();
    sim.request(blocks(12, 100, [11]));
    const changed = blocks(12, 100, [11]);
    changed[3] = { key: "other", tokens: 100, cache: false };
    expect(sim.request(changed).read).toBe(0);
  });

  it("ignores breakpoints below the minimum and refuses more than 4", () => {
    const sim = createCacheSim({ minTokens: 1024 });
    const small = sim.request(blocks(12, 100, [5, 11]));
    expect(small.write).toBe(1200); // 5 (600 tokens) is below the minimum: only 11 writes
    expect(sim.request(blocks(12, 100, [5])).read).toBe(0);
    expect(() => sim.request(blocks(12, 100, [1, 3, 5, 7, 9]))).toThrow(/at most 4/);
  });

  it("counts orphans in an Anthropic body", () => {
    const use = { type: "tool_use", id: "c1", name: "grep", input: {} };
    const result = { type: "tool_result", tool_use_id: "c1", content: "ok" };
    expect(
      anthropicOrphans({
        messages: [
          { role: "user", content: "hi" },
          { role: "assistant", content: [use] },
          { role: "user", content: [result] },
        ],
      }),
    ).toBe(0);
    expect(anthropicOrphans({ messages: [{ role: "assistant", content: [use] }] })).toBe(1);
    expect(anthropicOrphans({ messages: [{ role: "user", content: [result] }] })).toBe(1);
  });
});

describe("the generated session", () => {
  it("is deterministic, holds the asked number of tool results, and needs only earlier facts", () => {
    const a = makeAgentSession({ turns: 20, toolResults: 30, scale: 0.05 });
    const b = makeAgentSession({ turns: 20, toolResults: 30, scale: 0.05 });
    expect(JSON.stringify(a)).toBe(JSON.stringify(b));
    const results = a.turns.flatMap((t) => t.rounds.flatMap((r) => r.results));
    expect(results).toHaveLength(30);
    const seen: string[] = [];
    for (const t of a.turns) {
      for (const f of t.needs) expect(seen.some((s) => s.includes(f))).toBe(true);
      for (const r of t.rounds) for (const m of r.results) seen.push(JSON.stringify(m));
    }
    const requests = [...sessionRequests(a)];
    expect(requests).toHaveLength(20 + a.turns.reduce((n, t) => n + t.rounds.length, 0));
    expect(requests.every((q) => q.messages.at(-1)?.role !== "assistant")).toBe(true);
  });
});

describe("the three loops at small sizes", () => {
  const session = makeAgentSession({
    turns: 16,
    toolResults: 24,
    scale: 0.5,
    instructionsChars: 2_500,
  });

  it("promptctx defaults: nothing over the window, no orphan, never an assistant message first; cheaper than the hand-built loop", async () => {
    const window = 16_000;
    const hand = await runLoop(pc, session, "hand-built", window);
    const ours = await runLoop(pc, session, "promptctx", window);
    const naive = await runLoop(pc, session, "naive", window);
    expect(ours.requests).toBe(hand.requests);
    expect(ours.overWindow).toBe(0);
    expect(ours.orphans).toBe(0);
    expect(ours.assistantFirst).toBe(0);
    expect(hand.overWindow).toBe(0);
    // The whole history overflows this window: the naive loop sends requests that do not fit.
    expect(naive.overWindow).toBeGreaterThan(0);
    expect(ours.cost).toBeLessThan(hand.cost);
    expect(ours.readShare).toBeGreaterThan(hand.readShare);
  }, 60_000);
});
