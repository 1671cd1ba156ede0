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

  it("planConversation with a tokenizer name gives the same plan as with a fresh counter", () => {
    const messages = Array.from({ length: 40 }, (_, i) => ({
      id: `m${i}`,
      role: i % 2 === 0 ? ("user" as const) : ("assistant" as const),
      content: [{ type: "text" as const, text: `message ${i} `.repeat(20 + i) }],
    }));
    const request = { messages, budgetTokens: 900, policy: { toolResultMaxTokens: 50 } };
    const named = planConversation({ ...request, tokenizer: "o200k_base" });
    const fresh = planConversation({ ...request, tokenizer: getTokenCounter("o200k_base") });
    expect(named).toEqual(fresh);
    expect(planConversation({ ...request, tokenizer: "o200k_base" })).toEqual(named);
  });
});
