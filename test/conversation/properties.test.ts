import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  type ConversationPlan,
  type ConversationPolicyInput,
  type MessageInput,
  planConversation,
} from "../../src/conversation/index.js";
import { PromptBudgetError } from "../../src/errors/index.js";
import { getTokenCounter, type TokenCounter } from "../../src/tokens/index.js";
import {
  assertNoOrphans,
  o200kReference,
  outcome,
  planInput,
  recount,
  referenceUnits,
} from "./helpers.js";

interface Input {
  messages: MessageInput[];
  policy: ConversationPolicyInput;
  budgetTokens: number;
}

// A cleared result: the notice, then (when it quoted any) lines of the output.
const CLEARED =
  /^\[tool result cleared \(call [^,]+, ([^)]+)\)(?:; \d+ lines? of it quoting ids or numbers follows?)?\](?:\n[^\n]*)*$/;
const ELIDED =
  /\n\[… \d+ chars of tool output elided \(call [^)]*\)(?: …\]|; \d+ lines? of it quoting ids or numbers follows? …\])\n/;

/** The kept messages' required tokens, from a plan of the same input with room for all. */
function requiredTokens(input: Input, counter: () => TokenCounter): number {
  const roomy = planConversation({
    ...input,
    budgetTokens: 10_000_000,
    tokenizer: counter(),
    policy: { ...input.policy, anchor: null },
  });
  return roomy.decisions
    .filter((d) => d.reason === "required" || d.reason === "pinned")
    .reduce((s, d) => s + d.tokens, 0);
}

/** Every rule of docs/conversation.md that can be read off one plan. */
function checkPlan(input: Input, p: ConversationPlan, count: (t: string) => number): void {
  const { messages, policy, budgetTokens } = input;
  expect(p.decisions.map((d) => d.messageId)).toEqual(messages.map((m) => m.id));
  const keptIds = p.decisions.filter((d) => d.status === "kept").map((d) => d.messageId);
  expect(p.messages.map((m) => m.id)).toEqual(keptIds);
  expect(p.droppedMessageIds).toEqual(
    p.decisions.filter((d) => d.status === "dropped").map((d) => d.messageId),
  );
  assertNoOrphans(p.messages);
  // Exact usage, recounted from the formula, within the budget.
  const used = p.messages.reduce((s, m) => s + recount(m, count), 0);
  expect(p.usedTokens).toBe(used);
  expect(p.usedTokens).toBeLessThanOrEqual(budgetTokens);
  p.messages.forEach((m) => {
    const d = p.decisions.find((x) => x.messageId === m.id);
    expect(d?.tokens).toBe(recount(m, count));
  });
  // Transforms: only on tool results, and the text says what was done.
  p.messages.forEach((m) => {
    const original = messages.find((x) => x.id === m.id) as MessageInput;
    m.content.forEach((part, k) => {
      const before = original.content[k];
      if (part.type !== "tool_result" || before?.type !== "tool_result") {
        expect(part).toEqual(before);
      } else if (part.output !== before.output) {
        expect(CLEARED.test(part.output) || ELIDED.test(part.output)).toBe(true);
        // The lines a cleared result keeps are lines of its output.
        const kept = CLEARED.test(part.output) ? part.output.split("\n").slice(1) : [];
        const lines = new Set(before.output.split("\n"));
        for (const line of kept) expect(lines.has(line) || line.endsWith("…")).toBe(true);
      }
    });
  });
  // Clearing spares the tools and call ids the caller keeps.
  const keptTools = new Set(policy.keepToolResults ?? []);
  const keptCalls = new Set(policy.keepCallIds ?? []);
  p.messages.forEach((m) => {
    for (const part of m.content) {
      if (part.type !== "tool_result" || !CLEARED.test(part.output)) continue;
      expect(keptCalls.has(part.callId)).toBe(false);
      const name = CLEARED.exec(part.output)?.[1] as string;
      expect(keptTools.has(name)).toBe(false);
    }
  });
  // Orphans: exactly the reference's.
  const units = referenceUnits(messages);
  const unitOf = new Map<string, { members: number[]; orphan: boolean }>();
  for (const u of units) for (const k of u.members) unitOf.set((messages[k] as MessageInput).id, u);
  p.decisions.forEach((d) => {
    expect(d.reason === "orphan_removed").toBe(unitOf.get(d.messageId)?.orphan);
  });
  // The current turn is kept whole.
  const lastUser = messages.map((m) => m.role).lastIndexOf("user");
  messages.forEach((m, i) => {
    if (i >= lastUser && !unitOf.get(m.id)?.orphan) {
      expect(p.decisions[i]).toMatchObject({ status: "kept", reason: "required" });
    }
  });
  // Contiguous from firstKeptId (a non-orphan unit's first message) plus pinned units.
  const start = messages.findIndex((m) => m.id === p.firstKeptId);
  const startUnit = unitOf.get(p.firstKeptId);
  expect(startUnit?.members[0]).toBe(start);
  expect(startUnit?.orphan).toBe(false);
  const pinned = new Set(policy.pinned ?? []);
  // A window that dropped a sendable message opens on a user message.
  const cut = p.decisions.some((d) => d.reason === "history_window");
  if (cut) expect(messages[start]?.role).toBe("user");
  messages.forEach((m, i) => {
    const u = unitOf.get(m.id) as { members: number[]; orphan: boolean };
    const d = p.decisions[i];
    if (i >= start && !u.orphan) expect(d?.status).toBe("kept");
    if (i < start && d?.status === "kept") {
      expect(u.members.some((k) => pinned.has((messages[k] as MessageInput).id))).toBe(true);
    }
  });
}

/** The window start docs/conversation.md prescribes, from the plan's own (verified) token counts. */
function expectedStart(input: Input, p: ConversationPlan): string {
  const { messages, budgetTokens } = input;
  const units = referenceUnits(messages);
  const tokens = units.map((u) => u.members.reduce((s, k) => s + (p.decisions[k]?.tokens ?? 0), 0));
  const lastUser = messages.map((m) => m.role).lastIndexOf("user");
  const pinned = new Set(input.policy.pinned ?? []);
  const required = units.map(
    (u) =>
      !u.orphan &&
      ((u.members[0] as number) >= lastUser ||
        u.members.some((k) => pinned.has((messages[k] as MessageInput).id))),
  );
  const base = units.reduce((s, _u, i) => s + (required[i] ? (tokens[i] as number) : 0), 0);
  const starts = units.flatMap((u, i) =>
    !u.orphan && (u.members[0] as number) <= lastUser ? [i] : [],
  );
  const firstRole = (i: number) =>
    (messages[(units[i] as { members: number[] }).members[0] as number] as MessageInput).role;
  // The window moves by whole turns: a moved window opens on a user message.
  const turnStarts = starts.filter((i) => firstRole(i) === "user");
  const total = (s: number) =>
    units.reduce(
      (t, u, i) => t + (i >= s && !u.orphan && !required[i] ? (tokens[i] as number) : 0),
      base,
    );
  const idOf = (i: number) => {
    const first = (units[i] as { members: number[] }).members[0] as number;
    return (messages[first] as MessageInput).id;
  };
  const anchor = starts.find(
    (i) => idOf(i) === input.policy.anchor && (i === 0 || firstRole(i) === "user"),
  );
  if (anchor !== undefined && total(anchor) <= budgetTokens) return idOf(anchor);
  if (total(starts[0] as number) <= budgetTokens) return idOf(starts[0] as number);
  const low = Math.floor((input.policy.lowWaterRatio ?? 1) * budgetTokens);
  const under = turnStarts.find((s) => total(s) <= low);
  return idOf(under ?? (turnStarts.find((s) => total(s) <= budgetTokens) as number));
}

const counters: Record<string, { make: () => TokenCounter; count: (t: string) => number }> = {
  estimate: {
    make: () => getTokenCounter("estimate"),
    count: (t) => getTokenCounter("estimate").count(t),
  },
  o200k_base: { make: () => getTokenCounter("o200k_base"), count: o200kReference },
};

describe.each(Object.keys(counters))("planConversation with %s", (name) => {
  const { make, count } = counters[name] as (typeof counters)[string];
  const runs = name === "estimate" ? 400 : 120;

  it("keeps every rule of spec 09, or fails closed only when the required part cannot fit", () => {
    fc.assert(
      fc.property(planInput, (input) => {
        let p: ConversationPlan;
        try {
          p = planConversation({ ...input, tokenizer: make() });
        } catch (err) {
          expect(err).toBeInstanceOf(PromptBudgetError);
          expect(requiredTokens(input, make)).toBeGreaterThan(input.budgetTokens);
          return;
        }
        checkPlan(input, p, count);
      }),
      { numRuns: runs },
    );
  });

  it("fails closed only when the required part cannot fit — seed 114885595 (a cleared notice larger than its small result made pinned messages outgrow the budget)", () => {
    fc.assert(
      fc.property(planInput, (input) => {
        try {
          planConversation({ ...input, tokenizer: make() });
        } catch (err) {
          expect(err).toBeInstanceOf(PromptBudgetError);
          expect(requiredTokens(input, make)).toBeGreaterThan(input.budgetTokens);
        }
      }),
      { numRuns: runs, seed: 114885595 },
    );
  });

  it("starts the window where spec 09 says (anchor, all, low-water mark, fits)", () => {
    // Without clearing the anchor's pricing is the plan's own, so the rule reads exactly.
    const noClearing = planInput.map((i) => ({
      ...i,
      policy: { ...i.policy, clearToolResultsAfterTurns: null, clearTrigger: null },
    }));
    fc.assert(
      fc.property(noClearing, (input) => {
        const got = outcome(() => planConversation({ ...input, tokenizer: make() }));
        if (got.startsWith('{"code"')) return;
        const p = JSON.parse(got) as ConversationPlan;
        expect(p.firstKeptId).toBe(expectedStart(input, p));
      }),
      { numRuns: runs },
    );
  });

  it("is deterministic and independent of the order of pinned and keepToolResults", () => {
    fc.assert(
      fc.property(planInput, (input) => {
        const a = outcome(() => planConversation({ ...input, tokenizer: make() }));
        const b = outcome(() => planConversation({ ...input, tokenizer: make() }));
        expect(b).toBe(a);
        const reordered = {
          ...input,
          policy: {
            ...input.policy,
            pinned: [...(input.policy.pinned ?? [])].reverse(),
            keepToolResults: [...(input.policy.keepToolResults ?? [])].reverse(),
          },
        };
        expect(outcome(() => planConversation({ ...reordered, tokenizer: make() }))).toBe(a);
      }),
      { numRuns: Math.ceil(runs / 2) },
    );
  });
});
