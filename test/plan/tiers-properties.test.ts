import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { PromptBudgetError, toErrorObject } from "../../src/errors/index.js";
import {
  type PlanPromptRequest,
  type PromptPlan,
  planPrompt,
  SEGMENT_SEPARATOR,
  type SegmentInput,
} from "../../src/plan/index.js";
import { cpLength } from "../../src/text/index.js";
import { createTokenCounter, getTokenCounter, type TokenCounter } from "../../src/tokens/index.js";
import {
  SHAPED_BOUNDARIES,
  tieredRequest,
  tieredRequestAndShuffle,
  trickyText,
  UNSHAPED_BOUNDARIES,
} from "./arbitraries.js";
import { alignBoundedDrops, naivePlanPrompt } from "./naive-planner.js";

// Not additive at newlines (ceil rounds per piece) and declares no newlineCut.
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

function tryPlan(req: PlanPromptRequest, counter: TokenCounter): PromptPlan | null {
  try {
    return planPrompt(req, { tokenCounter: counter });
  } catch (err) {
    if (err instanceof PromptBudgetError) return null;
    throw err;
  }
}

describe.each(Object.keys(counters))("tiered planPrompt with %s", (name) => {
  const make = counters[name]!;

  it("decides exactly like the naive planner (default, shaped and unshaped markers)", () => {
    fc.assert(
      fc.property(tieredRequest, (req) => {
        const fast = outcome(() => planPrompt(req, { tokenCounter: make() }));
        const naive = outcome(() => naivePlanPrompt(req, make()));
        expect(alignBoundedDrops(fast, naive)).toBe(naive);
      }),
      { numRuns: 500 },
    );
  });

  it.each([
    ["shaped", SHAPED_BOUNDARIES],
    ["unshaped", UNSHAPED_BOUNDARIES],
  ])("decides exactly like the naive planner with every %s marker", (_, boundaries) => {
    fc.assert(
      fc.property(tieredRequest, fc.constantFrom(...boundaries), (req, cacheBoundary) => {
        const withMarker = { ...req, tiered: true, cacheBoundary };
        const fast = outcome(() => planPrompt(withMarker, { tokenCounter: make() }));
        const naive = outcome(() => naivePlanPrompt(withMarker, make()));
        expect(alignBoundedDrops(fast, naive)).toBe(naive);
      }),
      { numRuns: 200 },
    );
  });

  it("does not depend on input order", () => {
    fc.assert(
      fc.property(tieredRequestAndShuffle, ([req, shuffled]) => {
        expect(outcome(() => planPrompt(shuffled, { tokenCounter: make() }))).toBe(
          outcome(() => planPrompt(req, { tokenCounter: make() })),
        );
      }),
      { numRuns: 200 },
    );
  });

  it("reports tiers whose offsets slice the prompt, joined by the marker", () => {
    fc.assert(
      fc.property(tieredRequest, (req) => {
        const counter = make();
        const plan = tryPlan(req, counter);
        if (plan === null) return;
        const tiered = req.tiered === true || req.segments.some((s) => s.cacheTier !== undefined);
        if (!tiered) {
          expect(plan.tiers).toEqual([]);
          expect(plan.cacheBoundary).toBeNull();
          return;
        }
        const marker = plan.cacheBoundary!;
        expect(marker).toBe(req.cacheBoundary ?? "\n\n<!-- cache-boundary -->\n\n");
        const content = new Map(req.segments.map((s) => [s.name, s.content ?? ""]));
        const rank = { static: 0, session: 1, dynamic: 2 };
        let at = 0;
        plan.tiers.forEach((t, i) => {
          if (i > 0) {
            expect(rank[t.tier]).toBeGreaterThan(rank[plan.tiers[i - 1]!.tier]);
            expect(plan.prompt.slice(at, t.start)).toBe(marker);
          } else {
            expect(t.start).toBe(0);
          }
          const text = plan.prompt.slice(t.start, t.end);
          expect(text).toBe(t.names.map((n) => content.get(n)).join(SEGMENT_SEPARATOR));
          expect(t.chars).toBe(cpLength(text));
          expect(t.tokens).toBe(make().count(text));
          for (const n of t.names) {
            const d = plan.decisions.find((x) => x.name === n)!;
            expect(d.cacheTier).toBe(t.tier);
          }
          at = t.end;
        });
        expect(at).toBe(plan.prompt.length);
        expect(plan.tiers.flatMap((t) => t.names)).toEqual(plan.includedNames);
        expect(plan.usedChars).toBe(cpLength(plan.prompt));
        expect(plan.usedTokens).toBe(make().count(plan.prompt));
      }),
      { numRuns: 200 },
    );
  });
});

describe("tiered planPrompt: the static prefix does not churn", () => {
  // One extra optional dynamic segment ("grow", tier given or not) whose content grows
  // (or appears) between two turns at the same budget.
  const growing = fc.record({
    req: tieredRequest,
    before: fc.oneof(fc.constant(null), trickyText),
    extra: fc.array(trickyText, { minLength: 1, maxLength: 4 }).map((a) => a.join("")),
    explicitTier: fc.boolean(),
    priority: fc.integer({ min: -2, max: 4 }),
    budgetPriority: fc.integer({ min: 0, max: 99 }),
    tokenizer: fc.constantFrom("estimate", "o200k_base", "quarter"),
  });

  it("a dynamic segment growing never evicts a static (or session) segment that fit", () => {
    fc.assert(
      fc.property(growing, (g) => {
        const grow = (content: string | null): PlanPromptRequest => {
          const seg: SegmentInput = {
            name: "grow",
            content,
            priority: g.priority,
            budgetPriority: g.budgetPriority,
            ...(g.explicitTier ? { cacheTier: "dynamic" as const } : {}),
          };
          // A tierless "grow" alone would not turn tiered mode on.
          return { ...g.req, tiered: true, segments: [...g.req.segments, seg] };
        };
        const counter = g.tokenizer === "quarter" ? quarter() : counters[g.tokenizer]!();
        const before = tryPlan(grow(g.before), counter);
        const after = tryPlan(grow((g.before ?? "") + g.extra), counter);
        // Only optional content grew: required segments fit or fail the same way.
        expect(after === null).toBe(before === null);
        if (before === null || after === null) return;
        const stable = (plan: PromptPlan) =>
          plan.decisions
            .filter((d) => d.cacheTier !== "dynamic")
            .map((d) => [d.name, d.status, d.reason]);
        expect(stable(after)).toEqual(stable(before));
        for (const d of before.decisions) {
          if (d.cacheTier === "static" && d.status === "included") {
            expect(after.includedNames).toContain(d.name);
          }
        }
        // Hence the static (and session) content, the prompt prefix, is byte-identical.
        const prefix = (plan: PromptPlan) =>
          plan.tiers
            .filter((t) => t.tier !== "dynamic")
            .map((t) => plan.prompt.slice(t.start, t.end));
        expect(prefix(after)).toEqual(prefix(before));
      }),
      { numRuns: 500 },
    );
  });
});
