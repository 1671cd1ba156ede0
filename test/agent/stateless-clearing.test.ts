/**
 * Clearing under pressure without state: which results a whole request clears is derived
 * from the conversation on a grid (largest first, sparing the recent and the kept), so a
 * growing conversation's requests agree on it without anything passed back.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { agentDefaults, type PlannedRequest, planRequest } from "../../src/agent/index.js";
import {
  type ConversationPlan,
  gridClearing,
  type MessageInput,
  planConversation,
  sent,
} from "../../src/conversation/index.js";
import { getTokenCounter } from "../../src/tokens/index.js";
import { MODEL, stableSystem } from "../assemble/wire-fixtures.js";
import {
  assertNoOrphans,
  calls,
  lengthCounter,
  results,
  say,
  user,
} from "../conversation/helpers.js";

/** A tool output of about `chars` characters with one line quoting a build id. */
const output = (chars: number, id: string) =>
  `${"lorem ipsum dolor sit amet\n".repeat(Math.max(1, Math.floor(chars / 27)))}note: build id b-${id}`;

/** One turn per size: ask, one call, its result of that size, answer; then a current turn. */
function conversation(sizes: readonly number[]): MessageInput[] {
  const out: MessageInput[] = [];
  sizes.forEach((size, i) => {
    out.push(
      user(`u${i}`, `ask ${i}`),
      calls(`a${i}`, [`c${i}`, i % 2 === 0 ? "read_file" : "bash", { n: i }]),
      results(`t${i}`, [`c${i}`, output(size, `${1000 + i}`)]),
      say(`r${i}`, `done ${i}`),
    );
  });
  out.push(user("now", "the current ask"));
  return out;
}

function clearing(
  messages: MessageInput[],
  o: {
    atLeastTokens: number;
    keepRecent: number;
    triggerTokens?: number;
    stepTokens?: number;
    batchTokens?: number;
    reachTokens?: number;
    batchReachTokens?: number;
  },
  keep: { keepCallIds?: string[]; keepToolResults?: string[] } = {},
) {
  const counter = lengthCounter();
  const plan = (policy: object): ConversationPlan =>
    planConversation({ messages, budgetTokens: 10_000_000, tokenizer: counter, policy });
  return gridClearing(messages, plan(keep), plan({ ...keep, clearToolResultsAfterTurns: 1 }), {
    stepTokens: 500,
    triggerTokens: 0,
    ...o,
  });
}

describe("gridClearing", () => {
  it("clears the largest results first and spares the smaller ones before the boundary", () => {
    // One grid line past the first three results; the third is the largest, and one step
    // frees at least 1 token: the largest only, which brings the total under the trigger.
    const messages = conversation([600, 400, 3000, 300, 300, 300, 300, 300]);
    const c = clearing(messages, {
      atLeastTokens: 1,
      keepRecent: 2,
      triggerTokens: 5000,
      stepTokens: 4300,
    });
    expect(c?.clearedIds).toEqual(["t2"]);
    expect(c?.clearBeforeTurn).toBe(4);
    // The older, smaller results before the boundary stay whole.
    expect(c?.spareCallIds).toEqual(["c0", "c1"]);
  });

  it("takes steps line after line, each from the results before its line, until under the trigger", () => {
    const messages = conversation([600, 400, 3000, 100, 100, 100, 100, 100]);
    // Lines every 500 tokens: each step clears the largest result settled before its line.
    const byLine = clearing(messages, { atLeastTokens: 1, keepRecent: 2 });
    expect(byLine?.clearedIds.slice(0, 2)).toEqual(["t0", "t1"]);
    // A line every token, trigger 0: every result before the last two is cleared, but
    // those whose notice would take as many tokens as they do (t3–t5).
    const all = clearing(messages, { atLeastTokens: 1, keepRecent: 2, stepTokens: 1 });
    expect(all?.clearedIds).toEqual(["t0", "t1", "t2"]);
    const bigger = conversation([600, 400, 3000, 300, 300, 300, 300, 300]);
    const more = clearing(bigger, { atLeastTokens: 1, keepRecent: 2, stepTokens: 1 });
    expect(more?.clearedIds).toEqual(["t0", "t1", "t2", "t3", "t4", "t5"]);
    expect(all?.spareCallIds).toEqual([]);
    const none = clearing(messages, { atLeastTokens: 1, keepRecent: 2, triggerTokens: 1e6 });
    expect(none).toBeNull();
  });

  it("never clears the last keepRecent tool results, the current turn, or what the caller keeps", () => {
    const messages = conversation([3000, 3000, 3000, 3000, 3000, 3000]);
    messages.push(
      calls("a-now", ["c-now", "bash", {}]),
      results("t-now", ["c-now", output(5000, "ffff")]),
    );
    const c = clearing(
      messages,
      { atLeastTokens: 1, keepRecent: 3 },
      { keepCallIds: ["c1"], keepToolResults: ["bash"] },
    );
    // t-now (current turn), t4, t5 (the last three with t-now) stay; c1 is kept by id,
    // c3 and c5 by tool name (bash): t0 and t2 are what is left to clear.
    expect(c?.clearedIds).toEqual(["t0", "t2"]);
  });

  it("does not depend on the conversation after a line: a longer conversation only adds steps", () => {
    const sizes = [900, 2500, 300, 1800, 700, 2200, 400, 1600, 1200, 300, 2000, 500];
    let prev: string[] = [];
    for (let n = 4; n <= sizes.length; n++) {
      const c = clearing(conversation(sizes.slice(0, n)), { atLeastTokens: 1500, keepRecent: 2 });
      const ids = [...(c?.clearedIds ?? [])];
      expect(ids.filter((id) => prev.includes(id))).toEqual(prev);
      prev = ids;
    }
    expect(prev.length).toBeGreaterThan(2);
  });
});

/** Tokens of history through each tool message, as a plan of everything sends them. */
function toolEnds(messages: MessageInput[]): Map<string, number> {
  const ds = planConversation({
    messages,
    budgetTokens: 10_000_000,
    tokenizer: lengthCounter(),
  }).decisions;
  const ends = new Map<string, number>();
  let total = 0;
  ds.forEach((d, i) => {
    total += sent(d);
    if (messages[i]?.role === "tool") ends.set(d.messageId, total);
  });
  return ends;
}

describe("gridClearing in batches (clearBatchTokens)", () => {
  const ids = (
    messages: MessageInput[],
    o: { batchTokens: number; keepRecent: number; batchReachTokens?: number },
  ) => clearing(messages, { atLeastTokens: 1, triggerTokens: 1e9, ...o })?.clearedIds ?? [];

  it("clears old results oldest first, in whole runs freeing at least batchTokens, under the trigger", () => {
    // Clearing frees each result's size less its notice and quoted line (~110 here).
    const messages = conversation([1500, 1500, 3000, 700, 700, 700, 300, 300]);
    // Runs freeing 1,100 at least: t0, t1, t2, then t3 + t4; t5 alone is not a run yet,
    // t6 and t7 are the last two.
    expect(ids(messages, { batchTokens: 1100, keepRecent: 2 })).toEqual([
      "t0",
      "t1",
      "t2",
      "t3",
      "t4",
    ]);
    // 2,000: t0 + t1, then t2; t3–t5 free too little together.
    expect(ids(messages, { batchTokens: 2000, keepRecent: 2 })).toEqual(["t0", "t1", "t2"]);
    // Nothing settled frees that much: nothing is cleared.
    expect(ids(messages, { batchTokens: 1e6, keepRecent: 2 })).toEqual([]);
  });

  it("takes batches over batchReachTokens of history only; past it steps clear, up to reachTokens", () => {
    const messages = conversation([1500, 1500, 3000, 700, 700, 700, 300, 300]);
    const end = (id: string) => toolEnds(messages).get(id) as number;
    const batches = { batchTokens: 1100, keepRecent: 2 };
    // Runs t0, t1, t2 (then t3 + t4) as above; a run ending past the reach is not taken.
    expect(ids(messages, { ...batches, batchReachTokens: end("t2") })).toEqual(["t0", "t1", "t2"]);
    expect(ids(messages, { ...batches, batchReachTokens: end("t2") - 1 })).toEqual(["t0", "t1"]);
    // The batch reach never goes past the steps' reach.
    const both = { ...batches, batchReachTokens: 1e9, reachTokens: end("t1") };
    expect(
      clearing(messages, { atLeastTokens: 1, triggerTokens: 1e9, ...both })?.clearedIds,
    ).toEqual(["t0", "t1"]);
    // Under pressure (trigger 0), steps go on past the batch reach, up to reachTokens: the
    // batches take t0 and t1, the steps t2 and t3 (a line every 500 tokens: the first line
    // past t3 is within the reach; t4 ends 700 tokens later and more, past it).
    const pressed = clearing(messages, {
      atLeastTokens: 1,
      ...batches,
      batchReachTokens: end("t1"),
      reachTokens: end("t3") + 500,
    });
    expect(pressed?.clearedIds).toEqual(["t0", "t1", "t2", "t3"]);
  });

  it("only adds runs as the conversation grows, oldest first, never the recent (property)", () => {
    fc.assert(
      fc.property(
        // Results large enough that clearing each frees tokens (a notice is ~110).
        fc.array(fc.integer({ min: 300, max: 3000 }), { minLength: 2, maxLength: 14 }),
        fc.integer({ min: 100, max: 6000 }),
        fc.integer({ min: 0, max: 4 }),
        fc.option(fc.integer({ min: 0, max: 40_000 }), { nil: undefined }),
        (sizes, batchTokens, keepRecent, batchReachTokens) => {
          let prev: string[] = [];
          for (let n = 1; n <= sizes.length; n++) {
            const messages = conversation(sizes.slice(0, n));
            const reach = batchReachTokens === undefined ? {} : { batchReachTokens };
            const now = ids(messages, { batchTokens, keepRecent, ...reach });
            // Every result a batch takes ends within the batch reach.
            const ends = toolEnds(messages);
            for (const id of now) {
              expect(ends.get(id) as number).toBeLessThanOrEqual(batchReachTokens ?? Infinity);
            }
            // Oldest first: a prefix of the results, which only grows.
            const all = messages.filter((m) => m.role === "tool").map((m) => m.id);
            expect(now).toEqual(all.slice(0, now.length));
            expect(now.slice(0, prev.length)).toEqual(prev);
            if (keepRecent > 0) {
              for (const id of all.slice(-keepRecent)) expect(now).not.toContain(id);
            }
            prev = [...now];
          }
        },
      ),
      { numRuns: 60 },
    );
  });
});

// --- The property over growing agent conversations ------------------------------------

const WINDOW = 16_000;
const d = agentDefaults(WINDOW);
const counter = getTokenCounter("claude_estimate");

interface TurnShape {
  rounds: { sizes: number[] }[];
}

const turnShape: fc.Arbitrary<TurnShape> = fc.record({
  rounds: fc.array(
    fc.record({
      sizes: fc.array(fc.integer({ min: 50, max: 4000 }), { minLength: 1, maxLength: 3 }),
    }),
    { minLength: 0, maxLength: 3 },
  ),
});

/** The messages of a session and the message counts at which a request is sent. */
function session(turns: readonly TurnShape[]): { messages: MessageInput[]; at: number[] } {
  const messages: MessageInput[] = [];
  const at: number[] = [];
  turns.forEach((t, i) => {
    messages.push(user(`u${i}`, `ask ${i}: go on with the task`));
    at.push(messages.length);
    t.rounds.forEach((r, k) => {
      const ids = r.sizes.map((_, j) => `c${i}_${k}_${j}`);
      messages.push(
        calls(`a${i}_${k}`, ...ids.map((id): [string, string, unknown] => [id, "bash", { k }])),
      );
      r.sizes.forEach((size, j) => {
        messages.push(
          results(`t${i}_${k}_${j}`, [ids[j] as string, output(size, `${i}${k}${j}abc`)]),
        );
      });
      at.push(messages.length);
    });
    messages.push(say(`r${i}`, `answer ${i}`));
  });
  return { messages, at };
}

function request(messages: MessageInput[]): PlannedRequest<"anthropic"> {
  return planRequest({
    provider: "anthropic",
    model: MODEL,
    system: stableSystem("tool_state", "state"),
    messages,
    contextWindow: WINDOW,
    tokenizer: counter,
    responseReserve: d.responseReserve,
    policy: { ...d.policy, clearTrigger: 0.8, keepCallIds: ["c1_0_0"] },
    windowStepTokens: d.windowStepTokens,
    digestTokens: d.digestTokens,
  });
}

const clearedIds = (r: PlannedRequest): Set<string> =>
  new Set(
    r.conversation.decisions
      .filter((x) => x.transforms.some((t) => t.kind === "tool_result_cleared"))
      .map((x) => x.messageId),
  );

/**
 * Seeds of the property below, fixed so a run in CI cannot fail by the draw: five seeds of
 * five conversations each (the 25 runs it always had), the same conversations every run.
 */
const SEEDS = [1, 7, 37, 101, 2026];

describe("clearing under pressure, stateless, over growing tool-heavy conversations", () => {
  it("fits the window, orphans nothing, opens on a user message, only ever clears more, and keeps the prefix between steps", () => {
    const seen = { cleared: 0, moved: 0 };
    for (const seed of SEEDS) {
      fc.assert(
        fc.property(fc.array(turnShape, { minLength: 6, maxLength: 16 }), (turns) => {
          const { messages, at } = session(turns);
          let prev: PlannedRequest | null = null;
          let steps = 0;
          for (const n of at) {
            const r = request(messages.slice(0, n));
            const c = r.conversation;
            expect(c.usedTokens).toBeLessThanOrEqual(r.budget.messagesBudget);
            assertNoOrphans(c.messages);
            expect(c.messages[0]?.role).toBe("user");
            const cleared = clearedIds(r);
            seen.cleared += cleared.size > 0 ? 1 : 0;
            seen.moved += c.droppedMessageIds.length > 0 ? 1 : 0;
            // The caller's kept call, the current turn and the last tool results stay whole.
            expect(cleared.has("t1_0_0")).toBe(false);
            const recent = messages
              .slice(0, n)
              .filter((m) => m.role === "tool")
              .slice(-d.policy.keepRecentToolResults);
            for (const m of recent) expect(cleared.has(m.id)).toBe(false);
            if (prev !== null) {
              const before = clearedIds(prev);
              for (const id of before) expect(cleared.has(id)).toBe(true);
              expect(c.clearBeforeTurn ?? 0).toBeGreaterThanOrEqual(
                prev.conversation.clearBeforeTurn ?? 0,
              );
              const same =
                before.size === cleared.size && prev.conversation.firstKeptId === c.firstKeptId;
              if (same) {
                // Between steps the request starts with the previous one, byte for byte.
                const p = prev.conversation.messages;
                expect(c.messages.slice(0, p.length)).toEqual(p);
              } else steps += 1;
            }
            prev = r;
          }
          // A step (clearing or a window move) per grid line of growth at most, each kind.
          const total = messages.reduce((s, m) => s + JSON.stringify(m).length, 0);
          expect(steps).toBeLessThanOrEqual(2 * Math.ceil(total / d.windowStepTokens) + 2);
        }),
        { numRuns: 5, seed },
      );
    }
    // The runs, over all seeds, exercised both: requests that clear, and requests whose
    // window moved (a single seed's five conversations need not do both).
    expect(seen.cleared).toBeGreaterThan(0);
    expect(seen.moved).toBeGreaterThan(0);
  });
});

describe("nothing is truncated while the conversation fits under the trigger", () => {
  const W = 64_000;
  const d64 = agentDefaults(W);
  const plan64 = (messages: MessageInput[]) =>
    planRequest({
      provider: "anthropic",
      model: MODEL,
      system: stableSystem("tool_state", "state"),
      messages,
      contextWindow: W,
      tokenizer: counter,
      responseReserve: d64.responseReserve,
      policy: d64.policy,
      windowStepTokens: d64.windowStepTokens,
      digestTokens: d64.digestTokens,
    });
  const cut = (r: PlannedRequest) =>
    r.conversation.decisions.filter((x) =>
      x.transforms.some((t) => t.kind === "tool_result_truncated"),
    ).length;

  it("a result over toolResultMaxTokens stays whole until the conversation outgrows the trigger", () => {
    expect(d64.policy.clearTrigger).toBe(0.8);
    // One result of about 4 × toolResultMaxTokens characters: over the limit, under the trigger.
    const small = conversation([4 * 4 * d64.policy.toolResultMaxTokens]);
    const whole = plan64(small);
    expect(counter.count(JSON.stringify(small[2]))).toBeGreaterThan(d64.policy.toolResultMaxTokens);
    expect(cut(whole)).toBe(0);
    expect(whole.conversation.droppedMessageIds).toEqual([]);
    // Past the trigger, results over the limit are cut (and the request fits).
    const big = conversation(Array(8).fill(4 * 4 * d64.policy.toolResultMaxTokens));
    const over = plan64(big);
    expect(cut(over)).toBeGreaterThan(0);
    expect(over.conversation.usedTokens).toBeLessThanOrEqual(over.budget.messagesBudget);
  });
});
