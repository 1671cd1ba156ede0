import { describe, expect, it } from "vitest";
import { planConversation } from "../../src/conversation/index.js";
import {
  createCounterPool,
  getTokenCounter,
  resolveTokenCounter,
  sharedTokenCounter,
  TOKENIZER_NAMES,
} from "../../src/tokens/index.js";

describe("the process's shared counters", () => {
  it("a named tokenizer resolves to one memoizing counter per name", () => {
    for (const name of TOKENIZER_NAMES) {
      const a = resolveTokenCounter(name);
      expect(a).toBe(resolveTokenCounter(name));
      expect(a).toBe(sharedTokenCounter(name));
      expect(a.name).toBe(name);
      expect(createCounterPool().get(name)).toBe(a);
      // A fresh counter and a pool of its own stay apart, and count the same.
      expect(getTokenCounter(name)).not.toBe(a);
      expect(createCounterPool({ own: true }).get(name)).not.toBe(a);
      expect(getTokenCounter(name).count("hello world\n")).toBe(a.count("hello world\n"));
    }
    expect(resolveTokenCounter(undefined)).toBe(sharedTokenCounter("estimate"));
  });

  it("planConversation with a tokenizer name gives a fresh counter's plan, but for what it left uncounted", () => {
    const messages = Array.from({ length: 40 }, (_, i) => ({
      id: `m${i}`,
      role: i % 2 === 0 ? ("user" as const) : ("assistant" as const),
      content: [{ type: "text" as const, text: `message ${i} `.repeat(20 + i) }],
    }));
    const request = { messages, budgetTokens: 900, policy: { toolResultMaxTokens: 50 } };
    const named = planConversation({ ...request, tokenizer: "o200k_base" });
    const fresh = planConversation({ ...request, tokenizer: getTokenCounter("o200k_base") });
    // The named call leaves what no window can reach uncounted (docs/conversation.md);
    // everything else is the fresh counter's plan.
    const uncounted = new Set(
      named.decisions.filter((d) => d.counted === false).map((d) => d.messageId),
    );
    expect(uncounted.size).toBeGreaterThan(0);
    const counted = (p: typeof named) => ({
      ...p,
      decisions: p.decisions.filter((d) => !uncounted.has(d.messageId)),
    });
    expect(counted(named)).toEqual(counted(fresh));
    expect(planConversation({ ...request, tokenizer: "o200k_base" })).toEqual(named);
  });
});
