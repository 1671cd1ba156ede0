import { describe, expect, it } from "vitest";
import { InvalidInputError, PromptBudgetError } from "../../src/errors/index.js";
import {
  DEFAULT_CACHE_BOUNDARY,
  type PlanDecision,
  type PlanPromptRequest,
  planPrompt,
  SEGMENT_SEPARATOR,
} from "../../src/plan/index.js";
import { cpLength } from "../../src/text/index.js";
import { createTokenCounter, getTokenCounter } from "../../src/tokens/index.js";
import { spyCounter } from "./arbitraries.js";

const MARK = "\n\n<!-- cache-boundary -->\n\n";

const byName = (decisions: PlanDecision[], name: string) => {
  const d = decisions.find((x) => x.name === name);
  if (d === undefined) throw new Error(`no decision for ${name}`);
  return d;
};

function invalid(request: unknown): InvalidInputError {
  try {
    planPrompt(request as PlanPromptRequest);
  } catch (err) {
    if (err instanceof InvalidInputError) return err;
    throw err;
  }
  throw new Error("expected InvalidInputError");
}

describe("planPrompt tiered: layout", () => {
  it("orders display by tier → priority → name, a tierless segment counting as dynamic", () => {
    const plan = planPrompt({
      segments: [
        { name: "memory", content: "MEM", priority: 0, cacheTier: "dynamic" },
        { name: "task", content: "TASK", priority: 5 }, // no tier: dynamic
        { name: "project", content: "PROJ", priority: 1, cacheTier: "session" },
        { name: "tools", content: "TOOLS", priority: 40, cacheTier: "static" },
        { name: "base", content: "BASE", priority: 40, cacheTier: "static" },
        { name: "skills", content: "SKILLS", priority: -1, cacheTier: "session" },
      ],
    });
    expect(DEFAULT_CACHE_BOUNDARY).toBe(MARK);
    expect(plan.decisions.map((d) => d.name)).toEqual([
      "base",
      "tools",
      "skills",
      "project",
      "memory",
      "task",
    ]);
    expect(plan.decisions.map((d) => d.cacheTier)).toEqual([
      "static",
      "static",
      "session",
      "session",
      "dynamic",
      "dynamic",
    ]);
    expect(plan.includedNames).toEqual(plan.decisions.map((d) => d.name));
    expect(plan.prompt).toBe(
      `BASE${SEGMENT_SEPARATOR}TOOLS${MARK}SKILLS${SEGMENT_SEPARATOR}PROJ${MARK}MEM${SEGMENT_SEPARATOR}TASK`,
    );
    expect(plan.cacheBoundary).toBe(MARK);
    expect(plan.tiers).toEqual([
      { tier: "static", names: ["base", "tools"], chars: 16, tokens: 5, start: 0, end: 16 },
      { tier: "session", names: ["skills", "project"], chars: 17, tokens: 5, start: 43, end: 60 },
      { tier: "dynamic", names: ["memory", "task"], chars: 14, tokens: 5, start: 87, end: 101 },
    ]);
    for (const t of plan.tiers) {
      expect(plan.prompt.slice(t.start, t.end)).toBe(
        t.names
          .map(
            (n) =>
              ({
                base: "BASE",
                tools: "TOOLS",
                skills: "SKILLS",
                project: "PROJ",
                memory: "MEM",
                task: "TASK",
              })[n],
          )
          .join(SEGMENT_SEPARATOR),
      );
    }
  });

  it("adds the plan fields at the end, in a stable order", () => {
    const plan = planPrompt({ segments: [{ name: "a", content: "A", cacheTier: "session" }] });
    expect(Object.keys(plan).slice(-2)).toEqual(["tiers", "cacheBoundary"]);
    expect(Object.keys(plan.tiers[0]!)).toEqual([
      "tier",
      "names",
      "chars",
      "tokens",
      "start",
      "end",
    ]);
  });

  it("stays untiered without any cacheTier: no marker, tiers [] and cacheBoundary null", () => {
    const plan = planPrompt({
      cacheBoundary: "\n\n=== unused ===\n\n",
      segments: [
        { name: "b", content: "B", priority: 2 },
        { name: "a", content: "A", priority: 1 },
      ],
    });
    expect(plan.prompt).toBe(`A${SEGMENT_SEPARATOR}B`);
    expect(plan.tiers).toEqual([]);
    expect(plan.cacheBoundary).toBeNull();
    expect(plan.decisions.map((d) => d.cacheTier)).toEqual([null, null]);
  });

  it("tiered: true lays out tierless segments as one dynamic tier", () => {
    const plan = planPrompt({
      tiered: true,
      segments: [
        { name: "a", content: "A" },
        { name: "b", content: "B" },
      ],
    });
    expect(plan.prompt).toBe(`A${SEGMENT_SEPARATOR}B`);
    expect(plan.cacheBoundary).toBe(MARK);
    expect(plan.tiers).toEqual([
      { tier: "dynamic", names: ["a", "b"], chars: 9, tokens: 5, start: 0, end: 9 },
    ]);
  });

  it("puts no marker at either end, and none for an empty, dropped or inactive tier", () => {
    const plan = planPrompt({
      budgetChars: 40,
      segments: [
        { name: "rules", content: "RULES", cacheTier: "static" },
        { name: "gone", content: null, cacheTier: "session" },
        { name: "huge", content: "H".repeat(100), cacheTier: "session" },
        { name: "memory", content: "MEM", cacheTier: "dynamic" },
      ],
    });
    expect(plan.prompt).toBe(`RULES${MARK}MEM`);
    expect(plan.droppedNames).toEqual(["huge"]);
    expect(plan.tiers.map((t) => t.tier)).toEqual(["static", "dynamic"]);

    const onlyDynamic = planPrompt({
      segments: [
        { name: "rules", content: "", cacheTier: "static" },
        { name: "memory", content: "MEM", cacheTier: "dynamic" },
      ],
    });
    expect(onlyDynamic.prompt).toBe("MEM");
    expect(onlyDynamic.tiers).toEqual([
      { tier: "dynamic", names: ["memory"], chars: 3, tokens: 1, start: 0, end: 3 },
    ]);

    const nothing = planPrompt({ segments: [{ name: "x", content: null, cacheTier: "static" }] });
    expect(nothing.prompt).toBe("");
    expect(nothing.tiers).toEqual([]);
    expect(nothing.cacheBoundary).toBe(MARK);
  });

  it("uses a custom cacheBoundary and reports it", () => {
    const boundary = "\n\n=== per-turn context ===\n\n";
    const plan = planPrompt({
      cacheBoundary: boundary,
      segments: [
        { name: "rules", content: "RULES", cacheTier: "static" },
        { name: "memory", content: "MEM", cacheTier: "dynamic" },
      ],
    });
    expect(plan.prompt).toBe(`RULES${boundary}MEM`);
    expect(plan.cacheBoundary).toBe(boundary);
    expect(plan.tiers[1]).toMatchObject({ start: 5 + boundary.length, end: plan.prompt.length });
    expect(plan.usedChars).toBe(cpLength(plan.prompt));
  });

  it.each<[string, unknown, string]>([
    ["empty", "", "cacheBoundary"],
    ["whitespace only", " \n\n\u3000", "cacheBoundary"],
    ["not a string", 5, "cacheBoundary"],
    ["null", null, "cacheBoundary"],
  ])("rejects a cacheBoundary that is %s, naming its path", (_, cacheBoundary, path) => {
    const err = invalid({ cacheBoundary, segments: [{ name: "a", content: "A" }] });
    expect(err.code).toBe("invalid_input");
    expect(err.path).toBe(path);
  });

  it("rejects tiered that is not a boolean", () => {
    expect(invalid({ tiered: "yes", segments: [] }).path).toBe("tiered");
  });
});

describe("planPrompt tiered: budgets", () => {
  const segments = [
    { name: "rules", content: "r".repeat(10), cacheTier: "static" as const, required: true },
    { name: "memory", content: "m".repeat(10), cacheTier: "dynamic" as const },
  ];

  it("charges the marker like a separator", () => {
    // 10 + 27 (marker) + 10 = 47: one char short of the marker's cost drops it.
    expect(cpLength(MARK)).toBe(27);
    const tight = planPrompt({ budgetChars: 46, segments });
    expect(tight.prompt).toBe("r".repeat(10));
    expect(byName(tight.decisions, "memory")).toMatchObject({
      status: "dropped",
      reason: "char_budget_exceeded",
      detail: "would use 47 chars; budget is 46",
    });
    const exact = planPrompt({ budgetChars: 47, segments });
    expect(exact.includedNames).toEqual(["rules", "memory"]);
    expect(exact.usedChars).toBe(47);
    // In the same tier only the separator is paid: 10 + 7 + 10.
    const sameTier = planPrompt({
      budgetChars: 27,
      segments: segments.map((s) => ({ ...s, cacheTier: "static" as const })),
    });
    expect(sameTier.usedChars).toBe(27);
    expect(sameTier.includedNames).toEqual(["memory", "rules"]);
  });

  it("charges the marker's tokens", () => {
    const counter = getTokenCounter("estimate");
    const markerTokens = counter.count(MARK); // "<", "!", "-", "-", "cache", "-", "boundary", "-", "-", ">"
    expect(markerTokens).toBe(10);
    const budgetTokens = 1 + markerTokens + 1;
    const req = (budget: number): PlanPromptRequest => ({
      budgetChars: null,
      budgetTokens: budget,
      segments: [
        { name: "rules", content: "rules", cacheTier: "static", required: true },
        { name: "memory", content: "memory", cacheTier: "dynamic" },
      ],
    });
    const fits = planPrompt(req(budgetTokens));
    expect(fits.includedNames).toEqual(["rules", "memory"]);
    expect(fits.usedTokens).toBe(budgetTokens);
    expect(fits.usedTokens).toBe(counter.count(fits.prompt));
    // The marker and "memory" need 11 tokens; 10 are left: counting stops past 10.
    const memory = byName(planPrompt(req(budgetTokens - 1)).decisions, "memory");
    expect(memory).toMatchObject({
      reason: "token_budget_exceeded",
      detail: `would use more than ${budgetTokens - 1} tokens (${budgetTokens - 2} left for it); budget is ${budgetTokens - 1}`,
    });
    expect(memory.originalTokens).toBeUndefined();
  });

  it("admits tier first: a low-value static segment beats a high-value dynamic one", () => {
    const plan = planPrompt({
      budgetChars: 10,
      segments: [
        { name: "memory", content: "m".repeat(10), cacheTier: "dynamic", budgetPriority: 99 },
        { name: "conventions", content: "c".repeat(10), cacheTier: "static", budgetPriority: 1 },
      ],
    });
    expect(plan.includedNames).toEqual(["conventions"]);
    expect(plan.droppedNames).toEqual(["memory"]);
  });

  it("still reserves required segments first, whatever their tier", () => {
    const plan = planPrompt({
      budgetChars: 10,
      segments: [
        { name: "mode", content: "m".repeat(10), cacheTier: "dynamic", required: true },
        { name: "conventions", content: "c", cacheTier: "static" },
      ],
    });
    expect(plan.includedNames).toEqual(["mode"]);
    expect(byName(plan.decisions, "conventions").reason).toBe("char_budget_exceeded");
  });

  it("fails closed with markers counted in the required total", () => {
    let err: unknown;
    try {
      planPrompt({ budgetChars: 46, segments: segments.map((s) => ({ ...s, required: true })) });
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(PromptBudgetError);
    expect((err as PromptBudgetError).message).toBe(
      "required segments (rules, memory) need 47 chars; budgetChars is 46",
    );
  });
});

describe("planPrompt tiered: counting work", () => {
  const spy = spyCounter;
  const tiersOf = ["static", "session", "dynamic", undefined] as const;
  const manySegments = (n: number): PlanPromptRequest["segments"] =>
    Array.from({ length: n }, (_, i) => {
      const tier = tiersOf[i % 4];
      return {
        name: `s${String(i).padStart(4, "0")}`,
        content: `Segment ${i}: ${"lorem ipsum dolor sit amet ".repeat(3)}end.`,
        priority: i % 17,
        budgetPriority: (i * 7) % 13,
        // A few required session and dynamic segments, so every tier has content even
        // though the static ones are admitted first and take most of the budget.
        required: i < 12 && tier !== "static",
        ...(tier === undefined ? {} : { cacheTier: tier }),
      };
    });

  it.each([
    ["the default marker", undefined],
    ["a custom shaped marker", "\n\n=== cache ===\n\n"],
  ])("prices each candidate from single-segment pieces with %s", (_, cacheBoundary) => {
    const counter = spy(getTokenCounter("o200k_base"));
    const segments = manySegments(2000);
    const boundary = cacheBoundary ?? MARK;
    const plan = planPrompt(
      {
        budgetChars: null,
        budgetTokens: 4000,
        segments,
        ...(cacheBoundary ? { cacheBoundary } : {}),
      },
      { tokenCounter: counter },
    );
    expect(plan.tiers.map((t) => t.tier)).toEqual(["static", "session", "dynamic"]);
    expect(plan.droppedNames.length).toBeGreaterThan(1000);
    // The per-tier figures count each tier's content once at the end; everything before
    // that is pieces: one segment with at most one join before it and "\n\n" after it.
    const tierTexts = new Set(plan.tiers.map((t) => plan.prompt.slice(t.start, t.end)));
    const pieces = counter.texts.filter((t) => !tierTexts.has(t));
    expect(pieces.length).toBeGreaterThanOrEqual(counter.texts.length - 3);
    const longest = Math.max(...segments.map((s) => (s.content ?? "").length));
    expect(Math.max(...pieces.map((t) => t.length))).toBeLessThanOrEqual(longest + boundary.length);
    // Each segment's text is tokenized once; joins and trailing variants are tiny texts.
    const bodies = pieces.filter((t) => t.length > boundary.length + 8);
    expect(new Set(bodies).size).toBe(bodies.length);
    expect(bodies.length).toBeLessThanOrEqual(segments.length + plan.includedNames.length);
    expect(plan.usedTokens).toBe(getTokenCounter("o200k_base").count(plan.prompt));
    expect(plan.usedTokens).toBeLessThanOrEqual(4000);
  });

  it.each([
    ["without the \\n\\n + J' shape", "<hr>", getTokenCounter("estimate")],
    ["with J' starting with /", "\n\n/cache/\n\n", getTokenCounter("o200k_base")],
    ["with a counter lacking newlineCut", MARK, createTokenCounter("len", (t) => t.length)],
  ])("counts the whole proposed prompt %s", (_, boundary, inner) => {
    const counter = spy(inner);
    const plan = planPrompt(
      {
        budgetTokens: 1000,
        cacheBoundary: boundary,
        segments: [
          { name: "a", content: "alpha", cacheTier: "static" },
          { name: "b", content: "beta", cacheTier: "dynamic" },
        ],
      },
      { tokenCounter: counter },
    );
    expect(plan.prompt).toBe(`alpha${boundary}beta`);
    expect(counter.texts).toContain(plan.prompt);
    expect(plan.usedTokens).toBe(inner.count(plan.prompt));
  });
});
