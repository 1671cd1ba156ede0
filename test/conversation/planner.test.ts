import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  type ConversationPlan,
  createConversationPlanner,
  type MessageInput,
  oneCallPlanner,
  planConversation,
} from "../../src/conversation/index.js";
import { getTokenCounter } from "../../src/tokens/index.js";
import { conversation, outcome, planInput, policyFor, say, user } from "./helpers.js";

/** What changes before a call, besides the messages the turn appended. */
const CHANGES = ["none", "policy", "budget", "copy", "shrink", "unfollow"] as const;

const life = conversation.chain((messages) =>
  fc.record({
    messages: fc.constant(messages),
    policy: policyFor(messages),
    budgetTokens: fc.integer({ min: 0, max: 1000 }),
    steps: fc.array(
      fc.record({
        grow: fc.integer({ min: 0, max: 4 }),
        change: fc.oneof(
          { weight: 8, arbitrary: fc.constant("none" as const) },
          { weight: 1, arbitrary: fc.constantFrom(...CHANGES) },
        ),
        policy: policyFor(messages),
        budgetTokens: fc.integer({ min: 0, max: 1000 }),
      }),
      { minLength: 1, maxLength: 14 },
    ),
  }),
);

describe("createConversationPlanner", () => {
  // A fresh one-call planner counts everything, as the planner does (planConversation
  // leaves what no window can reach uncounted: within-window.test.ts compares those).
  it("plans exactly like a fresh planner, call after call, whatever changed between", () => {
    fc.assert(
      fc.property(life, (life) => {
        const { messages, steps } = life;
        const counter = getTokenCounter("estimate");
        const planner = createConversationPlanner();
        let current = messages;
        let length = 1;
        let { policy, budgetTokens } = life;
        let prev: ConversationPlan | null = null;
        for (const step of steps) {
          length = Math.min(current.length, length + step.grow);
          if (step.change === "shrink") length = Math.max(1, length - 3);
          if (step.change === "copy") current = structuredClone(current);
          if (step.change === "policy") policy = step.policy;
          if (step.change === "budget") budgetTokens = step.budgetTokens;
          if (step.change === "unfollow") prev = null;
          const sent = current.slice(0, length);
          const ids = new Set(sent.map((m) => m.id));
          const request = {
            messages: sent,
            budgetTokens,
            policy: {
              ...policy,
              pinned: (policy.pinned ?? []).filter((id) => ids.has(id)),
              anchor: prev?.firstKeptId ?? policy.anchor ?? null,
              clearBeforeTurn: prev?.clearBeforeTurn ?? policy.clearBeforeTurn ?? null,
            },
          };
          const got = outcome(() => planner.plan({ ...request, tokenizer: counter }));
          const want = outcome(() => oneCallPlanner().plan({ ...request, tokenizer: counter }));
          expect(got).toBe(want);
          prev = got.startsWith('{"code"') ? null : (JSON.parse(got) as ConversationPlan);
        }
      }),
      { numRuns: 300 },
    );
  });

  it("plans exactly like a fresh planner when messages are replaced in place", () => {
    // A replacement of the same skeleton (text added or changed, a result's output changed)
    // is put in the planner's layout and priced again; one with another id, or an invalid
    // one, is planned from scratch or refused as a new planner would.
    const EDITS = ["prepend", "retext", "reid", "break"] as const;
    type Edit = (typeof EDITS)[number];
    const edited = (m: MessageInput, edit: Edit, k: number): MessageInput => {
      if (edit === "reid") return { ...m, id: `${m.id}~${k}` };
      if (edit === "break") return { ...m, content: [] };
      if (m.role === "tool") {
        const content = m.content.map((p, j) =>
          p.type === "tool_result" && j === 0 ? { ...p, output: `${p.output} (again ${k})` } : p,
        );
        return { ...m, content };
      }
      const note = { type: "text" as const, text: `digest ${k}` };
      if (edit === "prepend") return { ...m, content: [note, ...m.content] as never };
      return {
        ...m,
        content: m.content.map((p) =>
          p.type === "text" ? { ...p, text: `${p.text}!` } : p,
        ) as never,
      };
    };
    const edits = planInput.chain((input) =>
      fc.record({
        input: fc.constant(input),
        rounds: fc.array(
          fc.array(
            fc.record({
              at: fc.nat({ max: input.messages.length - 1 }),
              edit: fc.oneof(
                { weight: 6, arbitrary: fc.constantFrom<Edit>("prepend", "retext") },
                { weight: 1, arbitrary: fc.constantFrom(...EDITS) },
              ),
            }),
            { maxLength: 3 },
          ),
          { minLength: 1, maxLength: 4 },
        ),
        anchor: fc.boolean(),
      }),
    );
    fc.assert(
      fc.property(edits, ({ input, rounds, anchor }) => {
        const counter = getTokenCounter("estimate");
        const planner = createConversationPlanner();
        let messages = input.messages;
        let prev: ConversationPlan | null = null;
        for (const [r, round] of [[], ...rounds].entries()) {
          messages = messages.slice();
          for (const { at, edit } of round) {
            messages[at] = edited(messages[at] as MessageInput, edit, r);
          }
          const request = {
            messages,
            budgetTokens: input.budgetTokens,
            tokenizer: counter,
            policy: {
              ...input.policy,
              pinned: [],
              ...(anchor && prev ? { anchor: prev.firstKeptId } : {}),
            },
          };
          const got = outcome(() => planner.plan(request));
          expect(got).toBe(outcome(() => oneCallPlanner().plan(request)));
          prev = got.startsWith('{"code"') ? null : (JSON.parse(got) as ConversationPlan);
        }
      }),
      { numRuns: 300 },
    );
  });

  it("reuses nothing across a tool result that completes the last unit", () => {
    const planner = createConversationPlanner();
    const messages: MessageInput[] = [
      user("u1", "go"),
      {
        id: "a1",
        role: "assistant",
        content: [{ type: "tool_call", callId: "c1", name: "grep", input: {} }],
      },
    ];
    const first = planner.plan({ messages, budgetTokens: 100 });
    expect(first.decisions[1]?.reason).toBe("orphan_removed");
    messages.push({
      id: "t1",
      role: "tool",
      content: [{ type: "tool_result", callId: "c1", output: "x" }],
    });
    const second = planner.plan({ messages, budgetTokens: 100 });
    expect(second.decisions.map((d) => d.reason)).toEqual(["required", "required", "required"]);
    expect(second).toEqual(planConversation({ messages, budgetTokens: 100 }));
  });

  it("hands out frozen messages and decisions, and never the caller's objects", () => {
    const planner = createConversationPlanner();
    const messages = [user("u1", "go"), say("a1", "ok"), user("u2", "more")];
    const p = planner.plan({ messages, budgetTokens: 100 });
    expect(Object.isFrozen(p.decisions[0])).toBe(true);
    expect(Object.isFrozen(p.messages[0]?.content[0])).toBe(true);
    expect(p.messages[0]).not.toBe(messages[0]);
    expect(Object.isFrozen(messages[0])).toBe(false);
    // The arrays are the caller's to change: the next plan is unaffected.
    p.decisions.length = 0;
    p.droppedMessageIds.push("x");
    expect(planner.plan({ messages, budgetTokens: 100 })).toEqual(
      planConversation({ messages, budgetTokens: 100 }),
    );
  });

  it("starts over after an invalid request", () => {
    const planner = createConversationPlanner();
    const messages = [user("u1", "go"), say("a1", "ok")];
    planner.plan({ messages, budgetTokens: 100 });
    const bad = [...messages, user("u1", "duplicate id")];
    expect(() => planner.plan({ messages: bad, budgetTokens: 100 })).toThrow(
      /duplicate message id/,
    );
    const good = [...messages, user("u2", "next")];
    expect(planner.plan({ messages: good, budgetTokens: 100 })).toEqual(
      planConversation({ messages: good, budgetTokens: 100 }),
    );
  });
});
