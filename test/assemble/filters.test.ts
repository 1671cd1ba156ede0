/**
 * The per-slot layer of the two-layer budget (docs/assembler.md): every filter reason with its
 * detail, topK / maxAge zero meaning "no limit", atomic packing in rank order, pinned
 * items that are never dropped, and pinned overflow failing closed.
 */
import { describe, expect, it } from "vitest";
import { assemble } from "../../src/assemble/index.js";
import { PromptBudgetError } from "../../src/errors/index.js";
import { constraintsSource, type SourceItem } from "../../src/sources/index.js";
import { createTokenCounter, getTokenCounter } from "../../src/tokens/index.js";
import { assembleKb, hoursAgo, reactInput, reactWorld, reasons, rejectsWith } from "./helpers.js";

describe("filter reasons", () => {
  it("gives every filtered item its reason and a detail naming the rule, in rank order", async () => {
    const items: SourceItem[] = [
      { id: "young", text: "fresh doc", category: "doc", tags: ["x"], score: 0.7 },
      { id: "note", text: "a note", category: "note", tags: ["x"], score: 0.99 },
      { id: "untagged", text: "no tag", category: "doc", tags: ["y"], score: 0.95 },
      { id: "weak", text: "weak doc", category: "doc", tags: ["x"], score: 0.3 },
      {
        id: "old",
        text: "old doc",
        category: "doc",
        tags: ["x"],
        score: 0.9,
        createdAt: hoursAgo(30),
      },
      { id: "best", text: "best doc", category: "doc", tags: ["x", "y"], score: 0.8 },
      { id: "third", text: "third doc", category: "doc", tags: ["x"], score: 0.6 },
      { id: "nocat", text: "no category", tags: ["x"], score: 0.97 },
    ];
    const { layer, prompt } = await assembleKb(
      { categories: ["doc"], requireTags: ["x"], minScore: 0.5, maxAgeHours: 24, topK: 2 },
      items,
    );
    // Rank order: score desc, whatever the order the source returned them in.
    expect(reasons(layer)).toEqual([
      ["note", "category_filtered"],
      ["nocat", "category_filtered"],
      ["untagged", "tag_filtered"],
      ["old", "too_old"],
      ["best", "selected"],
      ["young", "selected"],
      ["third", "top_k_reached"],
      ["weak", "low_confidence"],
    ]);
    const detail = Object.fromEntries(layer.items.map((d) => [d.id, d.detail]));
    expect(detail).toEqual({
      note: 'category "note" is not one of doc',
      nocat: "category null is not one of doc",
      untagged: "missing required tags x",
      old: "30h old; maxAgeHours is 24",
      best: "selected as item 1",
      young: "selected as item 2",
      third: "topK 2 already selected",
      weak: "score 0.300000 is below minScore 0.500000",
    });
    for (const d of layer.items) {
      expect(d.sourceId).toBe("kb-src");
      expect(d.status).toBe(d.reason === "selected" ? "selected" : "rejected");
      expect(d.score).toBe(items.find((i) => i.id === d.id)?.score);
    }
    expect(prompt).toBe("## kb\n- best doc\n- fresh doc");
  });

  it("measures age against the `now` parameter, never the system clock", async () => {
    const items: SourceItem[] = [
      { id: "a", text: "written 2026-08-16T12:00Z", createdAt: "2026-08-16T12:00:00Z" },
    ];
    const young = await assembleKb({ maxAgeHours: 24 }, items, { now: "2026-08-17T11:59:59Z" });
    expect(reasons(young.layer)).toEqual([["a", "selected"]]);
    const old = await assembleKb({ maxAgeHours: 24 }, items, { now: "2026-08-17T12:00:01Z" });
    expect(reasons(old.layer)).toEqual([["a", "too_old"]]);
    expect(old.layer.items[0]?.detail).toBe("24h old; maxAgeHours is 24");
    // Exactly maxAgeHours old is still young enough.
    const edge = await assembleKb({ maxAgeHours: 24 }, items, { now: "2026-08-17T12:00:00Z" });
    expect(reasons(edge.layer)).toEqual([["a", "selected"]]);
    // A clock far in the past makes the item "from the future": never too old.
    const past = await assembleKb({ maxAgeHours: 1 }, items, { now: "2000-01-01T00:00:00Z" });
    expect(reasons(past.layer)).toEqual([["a", "selected"]]);
  });

  it("treats topK 0 as no cap and maxAgeHours 0 as no age limit", async () => {
    const items: SourceItem[] = Array.from({ length: 12 }, (_, i) => ({
      id: `i${String(i).padStart(2, "0")}`,
      text: `item ${i}`,
      createdAt: hoursAgo(10_000 * (i + 1)),
    }));
    const { layer } = await assembleKb({ topK: 0, maxAgeHours: 0 }, items);
    expect(layer.items).toHaveLength(12);
    expect(layer.items.every((d) => d.reason === "selected")).toBe(true);
    const capped = await assembleKb({ topK: 2, maxAgeHours: 35_000 }, items);
    expect(capped.layer.items.map((d) => d.reason)).toEqual([
      "selected",
      "selected",
      "top_k_reached",
      ...Array(9).fill("too_old"),
    ]);
  });

  it("packs items atomically: a smaller later item still fits after a big one is dropped", async () => {
    const big = `big ${"x".repeat(100)}`;
    const items: SourceItem[] = [
      { id: "a", text: "alpha", score: 0.9 },
      { id: "b", text: big, score: 0.8 },
      { id: "c", text: "gamma", score: 0.7 },
    ];
    const budget = "## kb\n- alpha\n- gamma".length;
    const { layer, prompt } = await assembleKb({ charBudget: budget }, items);
    expect(prompt).toBe("## kb\n- alpha\n- gamma");
    expect(reasons(layer)).toEqual([
      ["a", "selected"],
      ["b", "char_budget_exceeded"],
      ["c", "selected"],
    ]);
    const wouldUse = `## kb\n- alpha\n- ${big}`.length;
    expect(layer.items[1]?.detail).toBe(`would use ${wouldUse} chars; slot budget is ${budget}`);
    expect(layer.used.chars).toBe(budget);
    expect(layer.budget).toEqual({ chars: budget });
    // Nothing is cut: every item in the prompt is whole, the dropped one entirely absent.
    expect(prompt).not.toContain("big");
  });

  it("applies a token budget with an injected counter", async () => {
    const lines = createTokenCounter("lines", (t) => (t === "" ? 0 : t.split("\n").length));
    const items: SourceItem[] = [
      { id: "a", text: "one", score: 0.9 },
      { id: "b", text: "two", score: 0.8 },
    ];
    const { layer, manifest } = await assembleKb({ tokenBudget: 2 }, items, {
      tokenCounter: lines,
    });
    expect(reasons(layer)).toEqual([
      ["a", "selected"],
      ["b", "token_budget_exceeded"],
    ]);
    expect(layer.items[1]?.detail).toBe("would use 3 tokens; slot budget is 2");
    expect(layer.used).toEqual({ chars: "## kb\n- one".length, tokens: 2 });
    expect(layer.budget).toEqual({ tokens: 2 });
    expect(manifest.tokenizer).toBe("lines");
  });

  it("applies a token budget with a named tokenizer (o200k_base)", async () => {
    const o200k = getTokenCounter("o200k_base");
    const first = "## kb\n- The deploy pipeline runs on Fridays";
    const budget = o200k.count(first);
    const items: SourceItem[] = [
      { id: "a", text: "The deploy pipeline runs on Fridays", score: 0.9 },
      { id: "b", text: "Rollbacks need two approvals", score: 0.8 },
    ];
    const { layer, manifest } = await assembleKb({ tokenBudget: budget }, items, {
      tokenizer: "o200k_base",
    });
    expect(manifest.tokenizer).toBe("o200k_base");
    expect(reasons(layer)).toEqual([
      ["a", "selected"],
      ["b", "token_budget_exceeded"],
    ]);
    const both = o200k.count(`${first}\n- Rollbacks need two approvals`);
    expect(layer.items[1]?.detail).toBe(`would use ${both} tokens; slot budget is ${budget}`);
    expect(layer.used.tokens).toBe(budget);
  });

  it("checks the char budget before the token budget", async () => {
    const items: SourceItem[] = [
      { id: "a", text: "one", score: 0.9 },
      { id: "b", text: "two", score: 0.8 },
    ];
    const lines = createTokenCounter("lines", (t) => (t === "" ? 0 : t.split("\n").length));
    const { layer } = await assembleKb({ charBudget: 11, tokenBudget: 2 }, items, {
      tokenCounter: lines,
    });
    expect(reasons(layer)).toEqual([
      ["a", "selected"],
      ["b", "char_budget_exceeded"],
    ]);
  });

  it("explains an empty filter as selecting everything", async () => {
    const { layer } = await assembleKb({}, [
      { id: "a", text: "one", category: "x" },
      { id: "b", text: "two", tags: [] },
    ]);
    expect(reasons(layer)).toEqual([
      ["a", "selected"],
      ["b", "selected"],
    ]);
  });
});

describe("pinned items", () => {
  it("are never dropped: they bypass the filters, come first and count toward topK", async () => {
    const items: SourceItem[] = [
      { id: "p", text: "pinned rule", category: "other", pinned: true, createdAt: hoursAgo(999) },
      { id: "a", text: "alpha", category: "doc", score: 0.99 },
      { id: "b", text: "beta", category: "doc", score: 0.98 },
    ];
    const { layer, prompt } = await assembleKb(
      { categories: ["doc"], maxAgeHours: 1, topK: 2, minScore: 0.5 },
      items,
    );
    expect(layer.items).toEqual([
      {
        id: "p",
        sourceId: "kb-src",
        status: "selected",
        reason: "pinned",
        score: null,
        detail: "pinned: never dropped",
      },
      {
        id: "a",
        sourceId: "kb-src",
        status: "selected",
        reason: "selected",
        score: 0.99,
        detail: "selected as item 2",
      },
      {
        id: "b",
        sourceId: "kb-src",
        status: "rejected",
        reason: "top_k_reached",
        score: 0.98,
        detail: "topK 2 already selected",
      },
    ]);
    expect(prompt).toBe("## kb\n- pinned rule\n- alpha");
  });

  it("that fit exactly leave no room for others", async () => {
    const text = "## kb\n- pinned rule";
    const { layer } = await assembleKb({ charBudget: text.length }, [
      { id: "p", text: "pinned rule", pinned: true },
      { id: "a", text: "x", score: 1 },
    ]);
    expect(reasons(layer)).toEqual([
      ["p", "pinned"],
      ["a", "char_budget_exceeded"],
    ]);
  });

  it("fail closed when they alone exceed the slot's char budget, even in an optional slot", async () => {
    const err = await rejectsWith(
      assembleKb({ charBudget: 10 }, [{ id: "p", text: "pinned rule", pinned: true }]),
      PromptBudgetError,
      "prompt_budget_exceeded",
      "slots.kb.charBudget",
    );
    expect(err.names).toEqual(["kb"]);
    expect(err.message).toBe("pinned items of slot kb need 19 chars; its charBudget is 10");
  });

  it("fail closed when they alone exceed the slot's token budget", async () => {
    const lines = createTokenCounter("lines", (t) => (t === "" ? 0 : t.split("\n").length));
    const err = await rejectsWith(
      assembleKb(
        { tokenBudget: 2 },
        [
          { id: "p", text: "one", pinned: true },
          { id: "q", text: "two", pinned: true },
        ],
        { tokenCounter: lines },
      ),
      PromptBudgetError,
      "prompt_budget_exceeded",
      "slots.kb.tokenBudget",
    );
    expect(err.message).toBe("pinned items of slot kb need 3 tokens; its tokenBudget is 2");
  });

  it("every constraint is pinned: too many rules for the react constraints budget fail closed", async () => {
    const w = reactWorld();
    const rules = Array.from({ length: 12 }, (_, i) => ({
      id: `r${i}`,
      level: "forbid",
      text: `never touch production database number ${i}`,
    }));
    const input = reactInput(w);
    const sources = [
      constraintsSource({ rules }),
      ...(input.sources as readonly { id: string }[]).filter((s) => s.id !== "constraints"),
    ] as typeof input.sources;
    await rejectsWith(
      assemble({ ...input, sources }),
      PromptBudgetError,
      "prompt_budget_exceeded",
      "slots.constraints.charBudget",
    );
  });
});
