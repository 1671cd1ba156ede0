/**
 * A custom separator between segments (the `priority` layout of spec 10 joins slots with
 * one blank line, `"\n\n"`): the planner decides exactly like the naive reference with any
 * separator, tiered or not, under every counter — including joins that defeat the split
 * token ledger's shortcut (then it prices by rendering).
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { PromptBudgetError, toErrorObject } from "../../src/errors/index.js";
import { type PlanPromptRequest, type PromptPlan, planPrompt } from "../../src/plan/index.js";
import { cpLength } from "../../src/text/index.js";
import { getTokenCounter, type TokenCounter } from "../../src/tokens/index.js";
import { request, tieredRequest } from "./arbitraries.js";
import { alignBoundedDrops, naivePlanPrompt } from "./naive-planner.js";

const SEPARATORS = ["\n\n", "\n\n## ", " | ", "\n", "\n\n---\n\n", "\n\n 。"];

function outcome(run: () => PromptPlan): string {
  try {
    return JSON.stringify(run());
  } catch (err) {
    if (!(err instanceof PromptBudgetError)) throw err;
    return JSON.stringify({ ...toErrorObject(err), names: err.names });
  }
}

const withSeparator = (arb: fc.Arbitrary<PlanPromptRequest>) =>
  fc.tuple(arb, fc.constantFrom(...SEPARATORS)).map(([req, separator]) => ({ ...req, separator }));

describe.each(["estimate", "o200k_base"] as const)(
  "planPrompt with a custom separator (%s)",
  (name) => {
    const make = (): TokenCounter => getTokenCounter(name);

    it("decides exactly like the naive planner, untiered and tiered", () => {
      fc.assert(
        fc.property(fc.oneof(withSeparator(request), withSeparator(tieredRequest)), (req) => {
          const fast = outcome(() => planPrompt(req, { tokenCounter: make() }));
          const naive = outcome(() => naivePlanPrompt(req, make()));
          expect(alignBoundedDrops(fast, naive)).toBe(naive);
        }),
        { numRuns: 150 },
      );
    });
  },
);

describe("separator basics", () => {
  it("joins segments with it, counts it in the budget and reports it", () => {
    const plan = planPrompt({
      separator: "\n\n",
      budgetChars: 6,
      segments: [
        { name: "a", content: "AA", priority: 0 },
        { name: "b", content: "BB", priority: 1 },
        { name: "c", content: "C", priority: 2 },
      ],
    });
    expect(plan.prompt).toBe("AA\n\nBB");
    expect(plan.usedChars).toBe(cpLength(plan.prompt));
    expect(plan.separator).toBe("\n\n");
    expect(plan.droppedNames).toEqual(["c"]);
    expect("separator" in planPrompt({ segments: [] })).toBe(false);
  });

  it("an empty separator is invalid input", () => {
    expect(() => planPrompt({ separator: "", segments: [] })).toThrow(/separator/);
  });
});
