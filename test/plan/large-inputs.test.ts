/**
 * The planner past its size threshold: display and admission order sort one packed
 * integer key per segment, `(tier × span + offset) × n + index`, only while
 * `3 × span × n ≤ 2^32` (span: the range of the integer priorities, n: the segment count);
 * past it they use the comparators. Requests of 600–1,200 segments with priority ranges
 * at that bound and one past it, long runs of equal priority ordered by name, must plan
 * exactly like the naive planner. Few runs: each one is a thousand segments or so.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { PromptBudgetError, toErrorObject } from "../../src/errors/index.js";
import {
  type PlanPromptRequest,
  type PromptPlan,
  planPrompt,
  type SegmentInput,
} from "../../src/plan/index.js";
import { cpLength } from "../../src/text/index.js";
import { createTokenCounter, getTokenCounter, type TokenCounter } from "../../src/tokens/index.js";
import { trickyText } from "./arbitraries.js";
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

/** The largest span of integer priorities whose keys still pack for `n` segments. */
const packedSpan = (n: number) => Math.floor(2 ** 32 / (3 * n));

/**
 * Integer values for `n` segments over a span at the packing bound, one past it, or small
 * (long runs of equal values): both ends of the span are taken, the rest from a few levels.
 */
const values = (n: number): fc.Arbitrary<number[]> =>
  fc
    .record({
      span: fc.oneof(
        fc.constantFrom(packedSpan(n), packedSpan(n) + 1),
        fc.integer({ min: 1, max: 4 }),
      ),
      min: fc.integer({ min: -3_000_000, max: 3_000_000 }),
      levels: fc.array(fc.double({ min: 0, max: 1, noNaN: true }), { minLength: 1, maxLength: 4 }),
      picks: fc.array(fc.nat(), { minLength: n, maxLength: n }),
    })
    .map(({ span, min, levels, picks }) => {
      const offsets = [0, span - 1, ...levels.map((l) => Math.floor(l * (span - 1)))];
      return picks.map((p, i) => min + (i < 2 ? offsets[i]! : offsets[p % offsets.length]!));
    });

// Name prefixes whose code-point order differs from UTF-16 order ("😀" vs "\uffff").
const PREFIXES = ["s", "S", "é", "😀", "\uffff", "世", "a-", ""];

const largeRequest: fc.Arbitrary<PlanPromptRequest> = fc
  .integer({ min: 600, max: 1200 })
  .chain((n) =>
    fc.record({
      budgetChars: fc.oneof(fc.constant(null), fc.integer({ min: 0, max: 3000 })),
      budgetTokens: fc.oneof(fc.constant(null), fc.integer({ min: 20, max: 600 })),
      tiered: fc.boolean(),
      priorities: values(n),
      budgetPriorities: values(n),
      segments: fc.array(
        fc.record({
          prefix: fc.constantFrom(...PREFIXES),
          content: fc.oneof(
            { weight: 12, arbitrary: trickyText },
            { weight: 1, arbitrary: fc.constant(null) },
          ),
          required: fc.oneof(
            { weight: 1500, arbitrary: fc.constant(false) },
            { weight: 1, arbitrary: fc.constant(true) },
          ),
          tier: fc.constantFrom("static" as const, "session" as const, "dynamic" as const),
          condition: fc.oneof(
            { weight: 20, arbitrary: fc.constant(true) },
            { weight: 1, arbitrary: fc.constant(false) },
          ),
        }),
        { minLength: n, maxLength: n },
      ),
    }),
  )
  .map((r) => ({
    budgetChars: r.budgetChars,
    budgetTokens: r.budgetTokens,
    segments: r.segments.map((s, i): SegmentInput => {
      const seg: SegmentInput = {
        name: `${s.prefix}${i}`,
        content: s.content,
        priority: r.priorities[i]!,
        budgetPriority: r.budgetPriorities[i]!,
        required: s.required,
        condition: s.condition,
      };
      if (r.tiered) seg.cacheTier = s.tier;
      return seg;
    }),
  }));

describe("planPrompt past the packed-key bound, over 600–1,200 segments", () => {
  it.each(Object.keys(counters))(
    "%s: decides like the naive planner, in any input order",
    (name) => {
      const make = counters[name]!;
      fc.assert(
        fc.property(largeRequest, (req) => {
          const fast = outcome(() => planPrompt(req, { tokenCounter: make() }));
          const naive = outcome(() => naivePlanPrompt(req, make()));
          expect(alignBoundedDrops(fast, naive)).toBe(naive);
          const reversed = { ...req, segments: [...req.segments].reverse() };
          expect(outcome(() => planPrompt(reversed, { tokenCounter: make() }))).toBe(fast);
        }),
        { numRuns: 3, endOnFailure: true },
      );
    },
    120_000,
  );
});
