import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  type ConversationDecision,
  type ConversationPlan,
  compactConversation,
  createConversationPlanner,
  type MessageInput,
  planConversation,
} from "../../src/conversation/index.js";
import { getTokenCounter, sharedTokenCounter, type TokenCounter } from "../../src/tokens/index.js";
import { calls, outcome, planInput, results, say, user } from "./helpers.js";

// planConversation with a tokenizer named prices only what a window can reach; a
// createConversationPlanner prices everything. Everything but the figures of what no
// window can reach must be the same.
function sameBut(within: ConversationPlan, exact: ConversationPlan): void {
  const { decisions: wd, ...wRest } = within;
  const { decisions: ed, ...eRest } = exact;
  expect(wRest).toEqual(eRest);
  expect(wd.length).toBe(ed.length);
  wd.forEach((w, i) => {
    const e = ed[i] as ConversationDecision;
    if (w.counted !== false) {
      expect(w).toEqual(e);
      return;
    }
    expect(e.counted).toBeUndefined();
    expect(w.status).toBe("dropped");
    expect(["history_window", "orphan_removed"]).toContain(w.reason);
    expect([w.messageId, w.status, w.reason, w.turn, w.unit]).toEqual([
      e.messageId,
      e.status,
      e.reason,
      e.turn,
      e.unit,
    ]);
    // A lower bound, with only the stray parts removed recorded.
    expect(w.tokens).toBeLessThanOrEqual(e.tokens);
    const strays = (d: ConversationDecision) =>
      d.transforms.filter((t) => t.kind === "stray_part_removed").map((t) => t.callId);
    expect(w.transforms.every((t) => t.kind === "stray_part_removed")).toBe(true);
    expect(strays(w)).toEqual(strays(e));
  });
}

// A counter of the caller's own (a plain object, not one of the library's).
const mine = (): TokenCounter => {
  const inner = getTokenCounter("o200k_base");
  return { name: "mine", kind: "exact", newlineCut: false, count: (t) => inner.count(t) };
};

describe("planConversation with a tokenizer named: O(window)", () => {
  it("keeps, counts and explains what a window can reach exactly as a planner that counts everything", () => {
    let uncounted = 0;
    fc.assert(
      fc.property(
        planInput,
        fc.constantFrom("estimate", "o200k_base"),
        ({ messages, policy, budgetTokens }, tokenizer) => {
          const request = { messages, policy, budgetTokens, tokenizer };
          const within = outcome(() => planConversation(request));
          const exact = outcome(() => createConversationPlanner().plan(request));
          if (within.startsWith('{"code"') || exact.startsWith('{"code"')) {
            expect(within).toBe(exact);
            return;
          }
          const w = JSON.parse(within) as ConversationPlan;
          sameBut(w, JSON.parse(exact) as ConversationPlan);
          expect(w.usedTokens).toBeLessThanOrEqual(w.budgetTokens);
          if (w.decisions.some((d) => d.counted === false)) uncounted++;
        },
      ),
      { numRuns: 300 },
    );
    // The generator reaches the bound often enough for the property to mean something.
    expect(uncounted).toBeGreaterThan(10);
  });

  const long: MessageInput[] = [];
  for (let t = 0; t < 60; t++) {
    long.push(
      user(`u${t}`, `ask ${t} `.repeat(20)),
      calls(`a${t}`, [`c${t}`, "read", { t }]),
      results(`r${t}`, [`c${t}`, `line ${t}\n`.repeat(400)]),
      say(`s${t}`, `answer ${t}`),
    );
  }

  it("leaves the old history uncounted, and says so in each decision", () => {
    const plan = planConversation({ messages: long, budgetTokens: 4000, tokenizer: "o200k_base" });
    const first = plan.decisions[0] as ConversationDecision;
    expect(first).toMatchObject({ status: "dropped", reason: "history_window", counted: false });
    expect(first.detail).toContain("not counted");
    const kept = plan.decisions.filter((d) => d.status === "kept");
    expect(kept.every((d) => d.counted === undefined)).toBe(true);
    // The same plan from a counter object counts everything.
    const exact = createConversationPlanner().plan({
      messages: long,
      budgetTokens: 4000,
      tokenizer: "o200k_base",
    });
    expect(exact.decisions.some((d) => d.counted === false)).toBe(false);
    expect(plan.messages).toEqual(exact.messages);
    // One rule for every counter: the process's counter of the name (what a server's pool
    // hands out), a fresh one and a counter of the caller's own give the same plan.
    const pooled = {
      messages: long,
      budgetTokens: 4000,
      tokenizer: sharedTokenCounter("o200k_base"),
    };
    expect(planConversation(pooled)).toEqual(plan);
    const fresh = planConversation({ ...pooled, tokenizer: getTokenCounter("o200k_base") });
    expect(fresh).toEqual(plan);
    const ours = planConversation({ ...pooled, tokenizer: mine() });
    expect(ours).toEqual({ ...plan, tokenizer: "mine" });
  });

  it("every counter object gets lower bounds for what no window can reach", () => {
    fc.assert(
      fc.property(planInput, ({ messages, policy, budgetTokens }) => {
        const own = mine();
        const request = { messages, policy, budgetTokens, tokenizer: own };
        const within = outcome(() => planConversation(request));
        const exact = outcome(() => createConversationPlanner().plan(request));
        const named = outcome(() => planConversation({ ...request, tokenizer: "o200k_base" }));
        if (within.startsWith('{"code"') || exact.startsWith('{"code"')) {
          expect(within).toBe(exact);
          return;
        }
        sameBut(JSON.parse(within) as ConversationPlan, JSON.parse(exact) as ConversationPlan);
        expect(JSON.parse(within)).toEqual({ ...JSON.parse(named), tokenizer: "mine" });
      }),
      { numRuns: 100 },
    );
  });

  it("compactConversation counts a plan of the caller's own counter with that counter", async () => {
    const own = mine();
    const within = planConversation({ messages: long, budgetTokens: 4000, tokenizer: own });
    expect(within.decisions.some((d) => d.counted === false)).toBe(true);
    const summarize = () => "summary";
    const base = { messages: long, plan: within, summarize, thresholdTokens: 1 };
    await expect(compactConversation(base)).rejects.toMatchObject({
      code: "invalid_input",
      path: "tokenizer",
    });
    const exact = createConversationPlanner().plan({
      messages: long,
      budgetTokens: 4000,
      tokenizer: "o200k_base",
    });
    const want = exact.decisions
      .filter((d) => d.reason === "history_window")
      .reduce((n, d) => n + d.tokens, 0);
    const done = await compactConversation({ ...base, tokenizer: own });
    expect(done.summary?.summarizedTokens).toBe(want);
  });

  it("compactConversation counts the uncounted dropped run by the plan's tokenizer", async () => {
    const request = { messages: long, budgetTokens: 4000, tokenizer: "o200k_base" };
    const within = planConversation(request);
    const exact = createConversationPlanner().plan(request);
    const run = exact.decisions.filter((d) => d.reason === "history_window");
    const want = run.reduce((n, d) => n + d.tokens, 0);
    const summarize = () => "summary";
    const a = await compactConversation({
      messages: long,
      plan: within,
      summarize,
      thresholdTokens: want,
    });
    const b = await compactConversation({
      messages: long,
      plan: exact,
      summarize,
      thresholdTokens: want,
    });
    expect(a.compacted).toBe(true);
    expect(a.summary?.summarizedTokens).toBe(want);
    expect(a).toEqual(b);
    const under = await compactConversation({
      messages: long,
      plan: within,
      summarize,
      thresholdTokens: want + 1,
    });
    expect(under.compacted).toBe(false);
  });
});
