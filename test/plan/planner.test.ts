import { describe, expect, it } from "vitest";
import { PromptBudgetError, toErrorObject } from "../../src/errors/index.js";
import {
  type PlanDecision,
  type PlanPromptRequest,
  planPrompt,
  SEGMENT_SEPARATOR,
} from "../../src/plan/index.js";
import { createTokenCounter, getTokenCounter } from "../../src/tokens/index.js";
import { spyCounter } from "./arbitraries.js";

const words = () =>
  createTokenCounter("words", (t) => t.split(/\s+/).filter((w) => w !== "").length, {
    kind: "estimate",
  });

const byName = (decisions: PlanDecision[], name: string) => {
  const d = decisions.find((x) => x.name === name);
  if (d === undefined) throw new Error(`no decision for ${name}`);
  return d;
};

function budgetError(run: () => unknown): PromptBudgetError {
  try {
    run();
  } catch (err) {
    if (err instanceof PromptBudgetError) return err;
    throw err;
  }
  throw new Error("expected PromptBudgetError");
}

describe("planPrompt: rendering and order", () => {
  it("renders required segments in display order, joined by the separator", () => {
    const plan = planPrompt({
      segments: [
        { name: "tools", content: "TOOLS", required: true, priority: 30 },
        { name: "base", content: "BASE", required: true, priority: 0 },
        { name: "identity", content: "ID", required: true, priority: 10 },
      ],
    });
    expect(SEGMENT_SEPARATOR).toBe("\n\n---\n\n");
    expect(plan.prompt).toBe("BASE\n\n---\n\nID\n\n---\n\nTOOLS");
    expect(plan.includedNames).toEqual(["base", "identity", "tools"]);
    expect(plan.decisions.map((d) => d.reason)).toEqual(["required", "required", "required"]);
  });

  it("keeps value order (budgetPriority) apart from display order (priority)", () => {
    // The working mode is shown last but is required; among optional segments the
    // high-value one shown late wins the scarce budget over a low-value one shown early.
    const plan = planPrompt({
      budgetChars: 30,
      segments: [
        { name: "mode", content: "MODE", required: true, priority: 100, budgetPriority: 0 },
        { name: "notes", content: "N".repeat(10), priority: 1, budgetPriority: 10 },
        { name: "memory", content: "M".repeat(10), priority: 90, budgetPriority: 80 },
      ],
    });
    expect(plan.prompt).toBe(`${"M".repeat(10)}\n\n---\n\nMODE`);
    expect(plan.includedNames).toEqual(["memory", "mode"]);
    expect(plan.droppedNames).toEqual(["notes"]);
    expect(plan.decisions.map((d) => d.name)).toEqual(["notes", "memory", "mode"]);
    expect(byName(plan.decisions, "mode").reason).toBe("required");
    expect(byName(plan.decisions, "notes")).toMatchObject({
      status: "dropped",
      reason: "char_budget_exceeded",
      detail: "would use 38 chars; budget is 30",
      originalChars: 10,
      renderedChars: 0,
    });
  });

  it("breaks priority ties by name in code-point order, never by locale", () => {
    const plan = planPrompt({
      segments: [
        { name: "😀", content: "e" },
        { name: "b", content: "b" },
        { name: "\uffff", content: "f" },
        { name: "B", content: "B" },
        { name: "é", content: "é" },
      ],
    });
    expect(plan.includedNames).toEqual(["B", "b", "é", "\uffff", "😀"]);
  });

  it("accepts non-integer priorities", () => {
    const plan = planPrompt({
      segments: [
        { name: "b", content: "B", priority: 1.5, budgetPriority: 0.25 },
        { name: "a", content: "A", priority: 1.75 },
      ],
    });
    expect(plan.prompt).toBe("B\n\n---\n\nA");
  });

  it("orders admission by budgetPriority desc → priority asc → name asc", () => {
    // Each segment alone fits; only one can fit. Ties on budgetPriority go to the
    // lower priority, then to the smaller name.
    const seg = (name: string, priority: number, budgetPriority: number) => ({
      name,
      content: "xxxxxxxxxx",
      priority,
      budgetPriority,
    });
    const budgetChars = 10;
    expect(
      planPrompt({ budgetChars, segments: [seg("a", 5, 1), seg("b", 9, 2)] }).includedNames,
    ).toEqual(["b"]);
    expect(
      planPrompt({ budgetChars, segments: [seg("a", 5, 2), seg("b", 4, 2)] }).includedNames,
    ).toEqual(["b"]);
    expect(
      planPrompt({ budgetChars, segments: [seg("b", 4, 2), seg("a", 4, 2)] }).includedNames,
    ).toEqual(["a"]);
  });

  it("records every field of a decision in the documented order", () => {
    const plan = planPrompt({
      segments: [
        {
          name: "rules",
          content: "Be brief.",
          required: true,
          provenance: "AGENTS.md",
          cacheTier: "static",
        },
      ],
    });
    expect(plan.decisions[0]).toEqual({
      name: "rules",
      priority: 50,
      required: true,
      budgetPriority: 50,
      provenance: "AGENTS.md",
      cacheTier: "static",
      status: "included",
      reason: "required",
      detail: "required: reserved before optional segments",
      originalChars: 9,
      renderedChars: 9,
      originalTokens: 3,
      renderedTokens: 3,
    });
    expect(Object.keys(plan)).toEqual([
      "prompt",
      "usedChars",
      "usedTokens",
      "budgetChars",
      "budgetTokens",
      "tokenizer",
      "includedNames",
      "droppedNames",
      "decisions",
      "tiers",
      "cacheBoundary",
    ]);
    expect(plan.tokenizer).toBe("estimate");
  });

  it("plans an empty request to an empty prompt", () => {
    expect(planPrompt({ segments: [] })).toEqual({
      prompt: "",
      usedChars: 0,
      usedTokens: 0,
      budgetChars: 12000,
      budgetTokens: null,
      tokenizer: "estimate",
      includedNames: [],
      droppedNames: [],
      decisions: [],
      tiers: [],
      cacheBoundary: null,
    });
  });
});

describe("planPrompt: budgets", () => {
  it("counts separators: a segment that fits only without them is dropped", () => {
    const segments = [
      { name: "a", content: "a".repeat(10), priority: 1 },
      { name: "b", content: "b".repeat(10), priority: 2 },
    ];
    const tight = planPrompt({ budgetChars: 20, segments });
    expect(tight.includedNames).toEqual(["a"]);
    expect(byName(tight.decisions, "b")).toMatchObject({
      reason: "char_budget_exceeded",
      detail: "would use 27 chars; budget is 20",
    });
    const roomy = planPrompt({ budgetChars: 27, segments });
    expect(roomy.includedNames).toEqual(["a", "b"]);
    expect(roomy.usedChars).toBe(27);
  });

  it("counts chars as code points", () => {
    const plan = planPrompt({
      budgetChars: 3,
      segments: [{ name: "emoji", content: "🚀🚀🚀" }],
    });
    expect(plan.includedNames).toEqual(["emoji"]);
    expect(plan.usedChars).toBe(3);
    expect(byName(plan.decisions, "emoji").originalChars).toBe(3);
  });

  it("still fits a smaller lower-value segment after a bigger one is dropped", () => {
    const plan = planPrompt({
      budgetChars: 40,
      segments: [
        { name: "base", content: "B".repeat(10), required: true },
        { name: "big", content: "G".repeat(40), budgetPriority: 90 },
        { name: "small", content: "S".repeat(5), budgetPriority: 10 },
      ],
    });
    expect(plan.includedNames).toEqual(["base", "small"]);
    expect(plan.droppedNames).toEqual(["big"]);
    expect(byName(plan.decisions, "small")).toMatchObject({
      status: "included",
      reason: "fits_budget",
      detail: "fits: prompt at 22 chars of 40",
      renderedChars: 5,
    });
  });

  it("enforces a token budget with an injected counter", () => {
    const counter = words();
    const plan = planPrompt(
      {
        budgetChars: null,
        budgetTokens: 6,
        tokenizer: "o200k_base", // overridden by the injected counter
        segments: [
          { name: "a", content: "one two three", priority: 1, budgetPriority: 3 },
          { name: "b", content: "four five six seven", priority: 2, budgetPriority: 2 },
          { name: "c", content: "eight", priority: 3, budgetPriority: 1 },
        ],
      },
      { tokenCounter: counter },
    );
    // The separator adds one word ("---"): a + c = 3 + 1 + 1 = 5 ≤ 6; a + b = 8 > 6.
    expect(plan.tokenizer).toBe("words");
    expect(plan.prompt).toBe("one two three\n\n---\n\neight");
    expect(plan.usedTokens).toBe(5);
    expect(plan.usedTokens).toBe(counter.count(plan.prompt));
    expect(byName(plan.decisions, "b")).toMatchObject({
      status: "dropped",
      reason: "token_budget_exceeded",
      detail: "would use 8 tokens; budget is 6",
      originalTokens: 4,
      renderedTokens: 0,
    });
    expect(byName(plan.decisions, "c").detail).toBe("fits: prompt at 25 chars, 5 of 6 tokens");
  });

  it("checks the char budget before the token budget", () => {
    const plan = planPrompt(
      {
        budgetChars: 5,
        budgetTokens: 1,
        segments: [{ name: "a", content: "one two three" }],
      },
      { tokenCounter: words() },
    );
    expect(byName(plan.decisions, "a").reason).toBe("char_budget_exceeded");
  });

  it("uses the named tokenizer of the request", () => {
    const plan = planPrompt({
      tokenizer: "cl100k_base",
      budgetTokens: 100,
      segments: [
        { name: "a", content: "hello world" },
        { name: "b", content: "<|endoftext|>" },
      ],
    });
    expect(plan.tokenizer).toBe("cl100k_base");
    expect(plan.usedTokens).toBe(getTokenCounter("cl100k_base").count(plan.prompt));
  });

  it("treats null budgets as unbounded", () => {
    const big = "word ".repeat(5000);
    const plan = planPrompt({
      budgetChars: null,
      budgetTokens: null,
      segments: [
        { name: "a", content: big },
        { name: "b", content: big },
      ],
    });
    expect(plan.includedNames).toEqual(["a", "b"]);
    expect(plan.budgetChars).toBeNull();
    expect(plan.budgetTokens).toBeNull();
    expect(byName(plan.decisions, "b").detail).toBe(`fits: prompt at ${50007} chars`);
  });

  it("defaults budgetChars to 12000 and budgetTokens to unbounded", () => {
    const plan = planPrompt({
      segments: [
        { name: "fits", content: "x".repeat(12000), budgetPriority: 60 },
        { name: "one_more", content: "y" },
      ],
    });
    expect(plan.budgetChars).toBe(12000);
    expect(plan.budgetTokens).toBeNull();
    expect(plan.includedNames).toEqual(["fits"]);
    expect(byName(plan.decisions, "one_more").detail).toBe(
      "would use 12008 chars; budget is 12000",
    );
  });
});

describe("planPrompt: inactive segments", () => {
  it("costs nothing for null, empty, a false condition or a builder returning null", () => {
    const plan = planPrompt({
      budgetChars: 4,
      segments: [
        { name: "kept", content: "KEPT" },
        { name: "null", content: null },
        { name: "empty", content: "" },
        { name: "off", content: "OFF", condition: false },
        { name: "off_fn", content: "OFF", condition: () => false },
        { name: "built_null", builder: () => null },
        { name: "built_empty", builder: () => "" },
        { name: "required_null", content: null, required: true },
      ],
    });
    expect(plan.prompt).toBe("KEPT");
    expect(plan.usedChars).toBe(4);
    const details = Object.fromEntries(
      plan.decisions.filter((d) => d.status === "inactive").map((d) => [d.name, d.detail]),
    );
    expect(details).toEqual({
      null: "content is null",
      empty: "content is empty",
      off: "condition is false",
      off_fn: "condition is false",
      built_null: "builder returned null",
      built_empty: "builder returned an empty string",
      required_null: "content is null",
    });
    for (const d of plan.decisions) {
      if (d.status !== "inactive") continue;
      expect(d).toMatchObject({
        reason: "inactive",
        originalChars: 0,
        renderedChars: 0,
        originalTokens: 0,
        renderedTokens: 0,
      });
    }
    expect(plan.droppedNames).toEqual([]);
    expect(byName(plan.decisions, "required_null").required).toBe(true);
  });

  it("keeps whitespace-only content active and renders it as given", () => {
    const plan = planPrompt({ segments: [{ name: "ws", content: "  \n" }] });
    expect(plan.prompt).toBe("  \n");
    expect(byName(plan.decisions, "ws").status).toBe("included");
  });

  it("calls a builder once, and not at all when the condition is false", () => {
    let built = 0;
    let checked = 0;
    let skipped = 0;
    const plan = planPrompt({
      segments: [
        {
          name: "memory",
          condition: () => {
            checked++;
            return true;
          },
          builder: () => {
            built++;
            return "compact projection";
          },
        },
        {
          name: "skills",
          condition: false,
          builder: () => {
            skipped++;
            return "never";
          },
        },
      ],
    });
    expect(plan.prompt).toBe("compact projection");
    expect([built, checked, skipped]).toEqual([1, 1, 0]);
  });
});

describe("planPrompt: required segments fail closed", () => {
  it("throws PromptBudgetError with the char figures and the required names", () => {
    const err = budgetError(() =>
      planPrompt({
        budgetChars: 20,
        segments: [
          { name: "safety", content: "S".repeat(10), required: true, priority: 0 },
          { name: "mode", content: "M".repeat(10), required: true, priority: 99 },
          { name: "off", content: null, required: true },
          { name: "extra", content: "E" },
        ],
      }),
    );
    expect(err.code).toBe("prompt_budget_exceeded");
    expect(err.names).toEqual(["safety", "mode"]);
    expect(err.path).toBe("budgetChars");
    expect(err.message).toBe("required segments (safety, mode) need 27 chars; budgetChars is 20");
    expect(toErrorObject(err).error.code).toBe("prompt_budget_exceeded");
  });

  it("throws on the token budget too, naming the tokenizer", () => {
    const err = budgetError(() =>
      planPrompt(
        {
          budgetTokens: 3,
          segments: [
            { name: "a", content: "one two", required: true },
            { name: "b", content: "three", required: true },
          ],
        },
        { tokenCounter: words() },
      ),
    );
    expect(err.path).toBe("budgetTokens");
    expect(err.names).toEqual(["a", "b"]);
    expect(err.message).toBe("required segments (a, b) need 4 tokens (words); budgetTokens is 3");
  });

  it("does not throw when an inactive required segment would not fit", () => {
    const plan = planPrompt({
      budgetChars: 1,
      segments: [{ name: "huge", content: "x".repeat(100), required: true, condition: false }],
    });
    expect(plan.decisions[0]).toMatchObject({ status: "inactive", required: true });
  });
});

describe("planPrompt: counting work", () => {
  const spy = spyCounter;

  const manySegments = (n: number): PlanPromptRequest["segments"] =>
    Array.from({ length: n }, (_, i) => ({
      name: `s${String(i).padStart(4, "0")}`,
      content: `Segment ${i}: ${"lorem ipsum dolor sit amet ".repeat(3)}end.`,
      priority: i % 17,
      budgetPriority: (i * 7) % 13,
    }));

  it("never recounts the growing prompt when the counter has newlineCut", () => {
    const counter = spy(getTokenCounter("cl100k_base"));
    const segments = manySegments(2000);
    const plan = planPrompt(
      { budgetChars: null, budgetTokens: 4000, segments },
      { tokenCounter: counter },
    );
    expect(plan.includedNames.length).toBeGreaterThan(50);
    expect(plan.droppedNames.length).toBeGreaterThan(1000);
    const longest = Math.max(...segments.map((s) => (s.content ?? "").length));
    // Only single-segment variants are counted ("---\n\n" + content + "\n\n" at most) ...
    expect(Math.max(...counter.texts.map((t) => t.length))).toBeLessThanOrEqual(longest + 9);
    // ... each segment's text tokenized once: its pieces are priced from its own count
    // plus tiny join texts (separator head, trailing-piece variants), counted repeatedly
    // but memoized by the counter.
    const bodies = counter.texts.filter((t) => t.length > 30);
    expect(new Set(bodies).size).toBe(bodies.length);
    expect(bodies.length).toBeLessThanOrEqual(segments.length + plan.includedNames.length);
    expect(plan.usedTokens).toBe(getTokenCounter("cl100k_base").count(plan.prompt));
    expect(plan.usedTokens).toBeLessThanOrEqual(4000);
  });

  it("drops a segment that cannot fit after counting only what the budget had room for", () => {
    const counter = spy(getTokenCounter("cl100k_base"));
    const long = "one two three four five six seven eight nine ten";
    const plan = planPrompt(
      {
        budgetChars: null,
        budgetTokens: 5,
        segments: [
          { name: "a", content: "Hello world.", priority: 1, budgetPriority: 2 },
          { name: "b", content: long, priority: 2, budgetPriority: 1 },
        ],
      },
      { tokenCounter: counter },
    );
    expect(plan.prompt).toBe("Hello world.");
    expect(plan.usedTokens).toBe(3);
    // b's piece ("---\n\n" + b) was counted up to the 2 tokens left, never to its end.
    const b = byName(plan.decisions, "b");
    expect(b).toMatchObject({
      status: "dropped",
      reason: "token_budget_exceeded",
      detail: "would use more than 5 tokens (2 left for it); budget is 5",
      originalChars: long.length,
      renderedChars: 0,
    });
    expect(b.originalTokens).toBeUndefined();
    expect(b.renderedTokens).toBeUndefined();
    expect(counter.texts.some((t) => t.includes("ten"))).toBe(false);
    // a was priced up to the whole budget (3 of 5); of the 2 left, b's head ("---\n\n")
    // took 1, and b's content alone was counted up to the 1 after it (it reached 2).
    expect(counter.bounded.map(({ text, limit, result }) => [text, limit, result])).toEqual([
      ["Hello world.", 5, 3],
      [long, 1, 2],
    ]);
    // The admitted segment keeps its exact figures.
    expect(byName(plan.decisions, "a")).toMatchObject({ originalTokens: 3, renderedTokens: 3 });
  });

  it("reads only a prefix of each candidate left once the budget is full", () => {
    const counter = spy(getTokenCounter("cl100k_base"));
    const segments: PlanPromptRequest["segments"] = [
      ...Array.from({ length: 50 }, (_, i) => ({
        name: `short${String(i).padStart(2, "0")}`,
        content: `Note ${i}: x y z.`,
        budgetPriority: 2,
      })),
      ...Array.from({ length: 1000 }, (_, i) => ({
        name: `long${String(i).padStart(4, "0")}`,
        content: `Long ${i}: ${"lorem ipsum dolor sit amet ".repeat(6)}end.`,
        budgetPriority: 1,
      })),
    ];
    const plan = planPrompt(
      { budgetChars: null, budgetTokens: 200, segments },
      { tokenCounter: counter },
    );
    expect(plan.droppedNames.filter((n) => n.startsWith("long"))).toHaveLength(1000);
    expect(counter.texts.some((t) => t.includes("lorem"))).toBe(false);
    for (const d of plan.decisions.filter((x) => x.name.startsWith("long"))) {
      expect(d.originalTokens).toBeUndefined();
      expect(d.detail).toMatch(
        /^would use more than 200 tokens \(\d+ left for it\); budget is 200$/,
      );
    }
    // Every bounded count stopped within a token of its limit's worth of text.
    for (const { limit, result } of counter.bounded)
      expect(result).toBeLessThanOrEqual(Math.max(limit, 0) + 30);
    expect(plan.usedTokens).toBe(getTokenCounter("cl100k_base").count(plan.prompt));
  });

  it("prices exactly, with every figure, when the counter cannot stop early", () => {
    const { countUpTo: _, ...exactOnly } = getTokenCounter("cl100k_base");
    const counter = spy(exactOnly);
    const plan = planPrompt(
      {
        budgetChars: null,
        budgetTokens: 5,
        segments: [
          { name: "a", content: "Hello world.", priority: 1, budgetPriority: 2 },
          { name: "b", content: "one two three four five six", priority: 2, budgetPriority: 1 },
        ],
      },
      { tokenCounter: counter },
    );
    expect(byName(plan.decisions, "b")).toMatchObject({
      detail: "would use 10 tokens; budget is 5",
      originalTokens: 6,
      renderedTokens: 0,
    });
    expect(counter.texts).toContain("one two three four five six");
  });

  it("counts the full proposed prompt when the counter lacks newlineCut", () => {
    const counter = spy(words());
    const plan = planPrompt(
      {
        budgetTokens: 100,
        segments: [
          { name: "a", content: "alpha", priority: 1 },
          { name: "b", content: "beta", priority: 2 },
        ],
      },
      { tokenCounter: counter },
    );
    expect(counter.newlineCut).toBe(false);
    expect(counter.texts).toContain("alpha\n\n---\n\nbeta");
    expect(plan.usedTokens).toBe(3);
  });
});
