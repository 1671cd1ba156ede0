import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { PromptBudgetError, toErrorObject } from "../../src/errors/index.js";
import { type PlanPromptRequest, type PromptPlan, planPrompt } from "../../src/plan/index.js";
import { cpLength } from "../../src/text/index.js";
import { createTokenCounter, getTokenCounter, type TokenCounter } from "../../src/tokens/index.js";
import { request, requestAndShuffle } from "./arbitraries.js";
import { alignBoundedDrops, naivePlanPrompt } from "./naive-planner.js";

// A custom counter that is not additive at newlines (ceil rounds per piece), so it must
// be counted on the full rendering; it declares no newlineCut.
const quarter = () => createTokenCounter("quarter", (t) => Math.ceil(cpLength(t) / 4));

const counters: Record<string, () => TokenCounter> = {
  estimate: () => getTokenCounter("estimate"),
  o200k_base: () => getTokenCounter("o200k_base"),
  cl100k_base: () => getTokenCounter("cl100k_base"),
  quarter,
};

/** The plan as JSON, or the error object plus names when it fails closed. */
function outcome(run: () => PromptPlan): string {
  try {
    return JSON.stringify(run());
  } catch (err) {
    if (!(err instanceof PromptBudgetError)) throw err;
    return JSON.stringify({ ...toErrorObject(err), names: err.names });
  }
}

describe.each(Object.keys(counters))("planPrompt with %s", (name) => {
  const make = counters[name]!;

  it("decides exactly like the naive planner", () => {
    fc.assert(
      fc.property(request, (req) => {
        const fast = outcome(() => planPrompt(req, { tokenCounter: make() }));
        const naive = outcome(() => naivePlanPrompt(req, make()));
        expect(alignBoundedDrops(fast, naive)).toBe(naive);
      }),
      { numRuns: 600 },
    );
  });

  it("does not depend on input order", () => {
    fc.assert(
      fc.property(requestAndShuffle, ([req, shuffled]) => {
        expect(outcome(() => planPrompt(shuffled, { tokenCounter: make() }))).toBe(
          outcome(() => planPrompt(req, { tokenCounter: make() })),
        );
      }),
      { numRuns: 300 },
    );
  });

  it("never exceeds a budget and reports exact usage", () => {
    fc.assert(
      fc.property(request, (req) => {
        const counter = make();
        let plan: PromptPlan;
        try {
          plan = planPrompt(req, { tokenCounter: counter });
        } catch (err) {
          expect(err).toBeInstanceOf(PromptBudgetError);
          return;
        }
        const tokens = make().count(plan.prompt);
        expect(plan.usedChars).toBe(cpLength(plan.prompt));
        expect(plan.usedTokens).toBe(tokens);
        if (plan.budgetChars !== null) expect(plan.usedChars).toBeLessThanOrEqual(plan.budgetChars);
        if (plan.budgetTokens !== null) expect(tokens).toBeLessThanOrEqual(plan.budgetTokens);
      }),
      { numRuns: 300 },
    );
  });

  it("never drops a required segment: all are included or the plan fails closed", () => {
    fc.assert(
      fc.property(request, (req) => {
        let plan: PromptPlan;
        try {
          plan = planPrompt(req, { tokenCounter: make() });
        } catch (err) {
          expect(err).toBeInstanceOf(PromptBudgetError);
          const e = err as PromptBudgetError;
          expect(e.code).toBe("prompt_budget_exceeded");
          expect(e.names.length).toBeGreaterThan(0);
          return;
        }
        for (const d of plan.decisions) {
          if (d.required) expect(["included", "inactive"]).toContain(d.status);
          if (d.status === "dropped") expect(d.required).toBe(false);
        }
      }),
      { numRuns: 300 },
    );
  });
});

describe("replay", () => {
  it("the same request (also after a JSON round trip) gives a byte-identical plan", () => {
    fc.assert(
      fc.property(request, fc.constantFrom("estimate", "o200k_base", "cl100k_base"), (req, tk) => {
        const withTokenizer: PlanPromptRequest = { ...req, tokenizer: tk };
        const first = outcome(() => planPrompt(withTokenizer));
        const replayed = outcome(() =>
          planPrompt(JSON.parse(JSON.stringify(withTokenizer)) as PlanPromptRequest),
        );
        expect(replayed).toBe(first);
        expect(outcome(() => planPrompt(withTokenizer))).toBe(first);
      }),
      { numRuns: 200 },
    );
  });

  it("the recorded tokenizer name reproduces the plan", () => {
    fc.assert(
      fc.property(request, (req) => {
        const first = outcome(() =>
          planPrompt(req, { tokenCounter: getTokenCounter("o200k_base") }),
        );
        if (first.includes('"error"')) return;
        const recorded = JSON.parse(first) as PromptPlan;
        expect(outcome(() => planPrompt({ ...req, tokenizer: recorded.tokenizer }))).toBe(first);
      }),
      { numRuns: 100 },
    );
  });
});
