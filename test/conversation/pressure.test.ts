import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  type ConversationPlan,
  type ConversationPolicyInput,
  clearedNotice,
  createConversationPlanner,
  type MessageInput,
  planConversation,
} from "../../src/conversation/index.js";
import { getTokenCounter } from "../../src/tokens/index.js";
import {
  assertNoOrphans,
  calls,
  conversation,
  lengthCounter,
  outcome,
  results,
  say,
  user,
} from "./helpers.js";

// Turn t: an ask, one call of `name` with a result of `size` chars, an answer.
const turn = (t: number, name: string, size: number): MessageInput[] => [
  user(`u${t}`, `ask ${t}`),
  calls(`a${t}`, [`c${t}`, name, { t }]),
  results(`t${t}`, [`c${t}`, "x".repeat(size)]),
  say(`r${t}`, `done ${t}`),
];

const history = (n: number, size = 1000): MessageInput[] =>
  Array.from({ length: n }, (_, t) => turn(t, t % 3 === 0 ? "read_file" : "grep", size)).flat();

const plan = (messages: MessageInput[], budgetTokens: number, policy: ConversationPolicyInput) =>
  planConversation({ messages, budgetTokens, tokenizer: lengthCounter(), policy });

const cleared = (p: ConversationPlan) =>
  p.decisions.filter((d) => d.transforms.some((x) => x.kind === "tool_result_cleared"));

describe("clearing under pressure", () => {
  const PRESSURE = {
    clearTrigger: 0.8,
    clearAtLeastTokens: 2500,
    keepRecentToolResults: 2,
    lowWaterRatio: 0.5,
  };

  it("changes nothing while the total is under the trigger", () => {
    const messages = history(8); // about 8,300 tokens
    const p = plan(messages, 11_000, PRESSURE);
    expect(p.droppedMessageIds).toEqual([]);
    expect(cleared(p)).toEqual([]);
    expect(p.clearBeforeTurn).toBeNull();
  });

  it("above it clears the oldest turns' results, at least the amount asked, in one step", () => {
    const messages = history(8);
    // 8,300 > 0.8 × 9,000; after the step ≤ 0.7 × 9,000, so no turn is dropped.
    const p = plan(messages, 9_000, { ...PRESSURE, lowWaterRatio: 0.7 });
    expect(p.droppedMessageIds).toEqual([]);
    // Each cleared result frees ~970 tokens: 3 turns free ≥ 2,500.
    expect(cleared(p).map((d) => d.messageId)).toEqual(["t0", "t1", "t2"]);
    expect(p.clearBeforeTurn).toBe(4);
    const t0 = p.messages.find((m) => m.id === "t0") as MessageInput;
    expect(t0.content[0]).toMatchObject({ output: clearedNotice("c0", "read_file") });
    expect(p.usedTokens).toBeLessThanOrEqual(Math.floor(0.8 * 9_000));
  });

  it("spares kept tools, kept call ids and the last K tool results", () => {
    const messages = history(6);
    const p = plan(messages, 3_000, {
      ...PRESSURE,
      clearAtLeastTokens: 100_000,
      keepToolResults: ["read_file"],
      keepCallIds: ["c1"],
    });
    const ids = cleared(p).map((d) => d.messageId);
    expect(ids).not.toContain("t0"); // read_file
    expect(ids).not.toContain("t1"); // kept call id
    for (const id of ids) expect(["t4", "t5"]).not.toContain(id); // the last 2
    assertNoOrphans(p.messages);
  });

  it("then drops whole old turns down to the low-water mark, opening on a user message", () => {
    const messages = history(12);
    const p = plan(messages, 3_000, PRESSURE);
    expect(p.usedTokens).toBeLessThanOrEqual(1_500);
    expect(p.messages[0]?.role).toBe("user");
    const d = p.decisions.find((x) => x.messageId === "u0");
    expect(d).toMatchObject({ status: "dropped", reason: "history_window" });
    expect(d?.detail).toContain("low-water mark");
    assertNoOrphans(p.messages);
  });

  it("holds the window and the boundary passed back while the total stays under the trigger", () => {
    const messages = history(8);
    const first = plan(messages, 9_000, PRESSURE);
    const grown = [...messages, ...turn(8, "grep", 10)];
    const next = plan(grown, 9_000, {
      ...PRESSURE,
      anchor: first.firstKeptId,
      clearBeforeTurn: first.clearBeforeTurn,
    });
    expect(next.clearBeforeTurn).toBe(first.clearBeforeTurn);
    expect(next.messages.slice(0, first.messages.length)).toEqual(first.messages);
  });
});

/** 300 turns of an agent loop under 6,000 tokens: cache breaks and what the window held. */
function loop(policy: ConversationPolicyInput) {
  const planner = createConversationPlanner();
  const counter = lengthCounter();
  const messages: MessageInput[] = [];
  let prev: ConversationPlan | null = null;
  let breaks = 0;
  let results = 0;
  for (let t = 0; t < 300; t++) {
    messages.push(...turn(t, t % 4 === 0 ? "read_file" : "grep", 40 + ((t * 37) % 400)));
    const p: ConversationPlan = planner.plan({
      messages,
      budgetTokens: 6_000,
      tokenizer: counter,
      policy: {
        ...policy,
        anchor: prev?.firstKeptId ?? null,
        clearBeforeTurn: prev?.clearBeforeTurn ?? null,
      },
    });
    expect(p.usedTokens).toBeLessThanOrEqual(6_000);
    expect(p.messages[0]?.role).toBe("user");
    assertNoOrphans(p.messages);
    if (prev !== null) {
      const held = p.messages.slice(0, prev.messages.length);
      if (JSON.stringify(held) !== JSON.stringify(prev.messages)) breaks += 1;
    }
    results += p.decisions.filter(
      (d) => d.status === "kept" && d.messageId.startsWith("t") && d.transforms.length === 0,
    ).length;
    prev = p;
  }
  return { breaks, results };
}

describe("a 300-turn loop", () => {
  it("breaks the cache less often under pressure clearing than with age clearing", () => {
    const pressure = loop({
      clearTrigger: 0.9,
      clearAtLeastTokens: 1000,
      keepRecentToolResults: 3,
      lowWaterRatio: 0.6,
    });
    const age = loop({ clearToolResultsAfterTurns: 4, lowWaterRatio: 0.7 });
    console.log(
      `300 turns: cache breaks: pressure ${pressure.breaks}, age clearing ${age.breaks}; ` +
        `whole tool results sent: ${pressure.results} vs ${age.results}`,
    );
    expect(pressure.breaks).toBeLessThan(age.breaks);
    expect(pressure.results).toBeGreaterThan(age.results);
  });
});

describe("an agent loop under pressure clearing (generated conversations)", () => {
  const input = conversation.chain((messages) =>
    fc.record({
      messages: fc.constant(messages),
      budgetTokens: fc.integer({ min: 50, max: 2000 }),
      policy: fc.record({
        clearTrigger: fc.double({ min: 0.3, max: 1, noNaN: true }),
        clearAtLeastTokens: fc.integer({ min: 0, max: 500 }),
        keepRecentToolResults: fc.integer({ min: 0, max: 3 }),
        lowWaterRatio: fc.double({ min: 0.1, max: 1, noNaN: true }),
        toolResultMaxTokens: fc.option(fc.integer({ min: 32, max: 200 })),
      }),
    }),
  );

  it("every request: within budget, no orphans, opens on a user message, one decision per message, stateless == incremental, replayable", () => {
    fc.assert(
      fc.property(input, ({ messages, budgetTokens, policy }) => {
        const counter = getTokenCounter("estimate");
        const planner = createConversationPlanner();
        let prev: ConversationPlan | null = null;
        const ends = messages.flatMap((m, i) => (m.role === "user" ? [i] : []));
        for (const end of [...ends.slice(1), messages.length]) {
          const request = {
            messages: messages.slice(0, end),
            budgetTokens,
            tokenizer: counter,
            policy: {
              ...policy,
              anchor: prev?.firstKeptId ?? null,
              clearBeforeTurn: prev?.clearBeforeTurn ?? null,
            },
          };
          const stateless = outcome(() => planConversation(request));
          expect(outcome(() => planner.plan(request))).toBe(stateless);
          const copy = { ...request, messages: structuredClone(request.messages) };
          expect(outcome(() => planConversation(copy))).toBe(stateless);
          if (stateless.startsWith('{"code"')) {
            prev = null;
            continue;
          }
          const p = JSON.parse(stateless) as ConversationPlan;
          expect(p.usedTokens).toBeLessThanOrEqual(budgetTokens);
          assertNoOrphans(p.messages);
          expect(p.decisions.map((d) => d.messageId)).toEqual(request.messages.map((m) => m.id));
          if (p.decisions.some((d) => d.reason === "history_window")) {
            expect(p.messages[0]?.role).toBe("user");
          }
          prev = p;
        }
      }),
      { numRuns: 200 },
    );
  });
});
