/** fast-check generators of plan-prompt requests with text that stresses the planner. */
import fc from "fast-check";
import type { PlanPromptRequest, SegmentInput } from "../../src/plan/index.js";
import type { TokenCounter } from "../../src/tokens/index.js";

// Pieces chosen to break naive assumptions at segment edges: leading/trailing whitespace
// and newlines, punctuation, "/", the separator's own "---", CJK, emoji, special tokens.
const piece = fc.constantFrom(
  "a",
  "word",
  "Hello",
  "'s",
  "123",
  "世界",
  "界",
  "🚀",
  "😀",
  "é",
  " ",
  "  ",
  "\t",
  "\n",
  "\n\n",
  "\r\n",
  "\u3000",
  ".",
  ",",
  "!",
  "-",
  "---",
  "\n\n---\n\n",
  "/",
  "//",
  "<",
  "</x>",
  "&amp;",
  '"',
  "_",
  "(",
  "<|endoftext|>",
  "<|im_start|>",
);

/** Tricky non-empty text. */
export const trickyText = fc
  .array(piece, { minLength: 1, maxLength: 14 })
  .map((parts) => parts.join(""));

const names = fc.constantFrom(
  "base",
  "identity",
  "memory",
  "project",
  "tools",
  "expert",
  "skills",
  "mode",
  "a",
  "b",
  "B",
  "é",
  "😀",
  "\uffff",
  "世",
);

const segment: fc.Arbitrary<SegmentInput> = fc.record(
  {
    name: names,
    content: fc.oneof(
      { weight: 8, arbitrary: trickyText },
      { weight: 1, arbitrary: fc.constant(null) },
      { weight: 1, arbitrary: fc.constant("") },
    ),
    // Integers of a small range take the planner's packed-key sort; a fraction (0.5),
    // -0 (equal to 0) or a wide range (1e12) take its comparator sort.
    priority: fc.oneof(fc.integer({ min: -2, max: 4 }), fc.constantFrom(0.5, 50, -0, 1e12)),
    required: fc.oneof(
      { weight: 5, arbitrary: fc.constant(false) },
      { weight: 1, arbitrary: fc.constant(true) },
    ),
    budgetPriority: fc.oneof(
      { weight: 6, arbitrary: fc.integer({ min: 0, max: 3 }) },
      { weight: 1, arbitrary: fc.constantFrom(-0, 1.5, 1e12) },
    ),
    provenance: fc.constantFrom("runtime", "AGENTS.md"),
    cacheTier: fc.constantFrom("static" as const, "session" as const, "dynamic" as const),
    condition: fc.oneof(
      { weight: 6, arbitrary: fc.constant(true) },
      { weight: 1, arbitrary: fc.constant(false) },
    ),
  },
  { requiredKeys: ["name", "content"] },
);

/** Segments with unique names. */
export const segments = fc.uniqueArray(segment, { selector: (s) => s.name, maxLength: 10 });

/** A request with small budgets, so that drops and budget errors are frequent. */
export const request: fc.Arbitrary<PlanPromptRequest> = fc.record({
  budgetChars: fc.oneof(fc.constant(null), fc.integer({ min: 0, max: 250 })),
  budgetTokens: fc.oneof(fc.constant(null), fc.integer({ min: 0, max: 80 })),
  segments,
});

/** The same request with its segments in another order. */
export const requestAndShuffle = request.chain((req) =>
  fc
    .shuffledSubarray(req.segments, {
      minLength: req.segments.length,
      maxLength: req.segments.length,
    })
    .map((shuffled) => [req, { ...req, segments: shuffled }] as const),
);

/**
 * Cache boundaries of every kind: the default, custom ones of the `"\n\n" + J'` shape
 * (priced by the split ledger), and ones without it (priced by counting the whole prompt):
 * no leading "\n\n", or J' starting with whitespace, "/" or U+FEFF.
 */
export const SHAPED_BOUNDARIES = [
  "\n\n<!-- cache-boundary -->\n\n",
  "\n\n=== turn ===\n\n",
  "\n\nBOUNDARY",
  "\n\n🚀\n",
  "\n\n's\n\n",
  "\n\n-",
  "\n\n<|endoftext|>\n\n",
] as const;
export const UNSHAPED_BOUNDARIES = [
  "<hr>",
  "\n<hr>\n",
  "\n\n/cache/\n\n",
  "\n\n//",
  "\n\n cache\n\n",
  "\n\n\ncache\n\n",
  "\n\n\u3000x",
  "\n\n\ufeffx",
  "\n\n\r\nx",
  "x\n\n",
] as const;

const tieredSegment: fc.Arbitrary<SegmentInput> = fc
  .record(
    {
      name: names,
      content: fc.oneof(
        { weight: 8, arbitrary: trickyText },
        { weight: 1, arbitrary: fc.constant(null) },
        { weight: 1, arbitrary: fc.constant("") },
      ),
      // Integers of a small range take the planner's packed-key sort; a fraction (0.5),
      // -0 (equal to 0) or a wide range (1e12) take its comparator sort.
      priority: fc.oneof(fc.integer({ min: -2, max: 4 }), fc.constantFrom(0.5, 50, -0, 1e12)),
      required: fc.oneof(
        { weight: 6, arbitrary: fc.constant(false) },
        { weight: 1, arbitrary: fc.constant(true) },
      ),
      budgetPriority: fc.oneof(
        { weight: 6, arbitrary: fc.integer({ min: 0, max: 3 }) },
        { weight: 1, arbitrary: fc.constantFrom(-0, 1.5, 1e12) },
      ),
      provenance: fc.constant("runtime"),
      cacheTier: fc.constantFrom("static" as const, "session" as const, "dynamic" as const),
      condition: fc.oneof(
        { weight: 8, arbitrary: fc.constant(true) },
        { weight: 1, arbitrary: fc.constant(false) },
      ),
    },
    // cacheTier is optional: a tierless segment counts as dynamic in tiered mode.
    { requiredKeys: ["name", "content", "cacheTier"] },
  )
  .chain((s) =>
    fc.boolean().map((keepTier) => {
      if (keepTier) return s;
      const { cacheTier: _, ...rest } = s;
      return rest;
    }),
  );

/** Any cache boundary: omitted (default), shaped or unshaped. */
export const cacheBoundary = fc.oneof(
  { weight: 2, arbitrary: fc.constant(undefined) },
  { weight: 3, arbitrary: fc.constantFrom(...SHAPED_BOUNDARIES) },
  { weight: 3, arbitrary: fc.constantFrom(...UNSHAPED_BOUNDARIES) },
);

/** A request in tiered mode (segment tiers or `tiered: true`), with small budgets. */
export const tieredRequest: fc.Arbitrary<PlanPromptRequest> = fc
  .record({
    budgetChars: fc.oneof(fc.constant(null), fc.integer({ min: 0, max: 300 })),
    budgetTokens: fc.oneof(fc.constant(null), fc.integer({ min: 0, max: 100 })),
    segments: fc.uniqueArray(tieredSegment, { selector: (s) => s.name, maxLength: 10 }),
    tiered: fc.constantFrom(true, undefined),
    cacheBoundary,
  })
  .map((r) => {
    const out: PlanPromptRequest = {
      budgetChars: r.budgetChars,
      budgetTokens: r.budgetTokens,
      segments: r.segments,
    };
    if (r.tiered !== undefined) out.tiered = r.tiered;
    if (r.cacheBoundary !== undefined) out.cacheBoundary = r.cacheBoundary;
    return out;
  });

/** The same tiered request with its segments in another order. */
export const tieredRequestAndShuffle = tieredRequest.chain((req) =>
  fc
    .shuffledSubarray(req.segments, {
      minLength: req.segments.length,
      maxLength: req.segments.length,
    })
    .map((shuffled) => [req, { ...req, segments: shuffled }] as const),
);

/** A counter that records every text the planner asks it about, delegating to `inner`. */
export function spyCounter(inner: TokenCounter): TokenCounter & {
  texts: string[];
  bounded: { text: string; limit: number; result: number }[];
} {
  const texts: string[] = [];
  const bounded: { text: string; limit: number; result: number }[] = [];
  const upTo = inner.countUpTo;
  const upToNl = inner.countUpToWithNewlines;
  return {
    name: inner.name,
    kind: inner.kind,
    newlineCut: inner.newlineCut,
    ...(inner.extendWithNewlines ? { extendWithNewlines: inner.extendWithNewlines } : {}),
    ...(upTo
      ? {
          countUpTo: (t: string, limit: number) => {
            const result = upTo(t, limit);
            bounded.push({ text: t, limit, result });
            return result;
          },
        }
      : {}),
    ...(upToNl
      ? {
          countUpToWithNewlines: (t: string, newlines: string, limit: number) => {
            const result = upToNl(t, newlines, limit);
            bounded.push({ text: t + newlines, limit, result });
            return result;
          },
        }
      : {}),
    texts,
    bounded,
    count: (t: string) => {
      texts.push(t);
      return inner.count(t);
    },
  };
}
