/**
 * `selectMemoryContext` (which counts tokens piecewise for newline-cut counters and keeps
 * running totals) must reach exactly the plan of the naive reference, which renders and
 * counts the whole proposed block for every candidate.
 */
import fc from "fast-check";
import { countTokens as countCl100k } from "gpt-tokenizer/encoding/cl100k_base";
import { countTokens as countO200k } from "gpt-tokenizer/encoding/o200k_base";
import { describe, expect, it } from "vitest";
import {
  type CandidateInput,
  renderMemoryBlock,
  renderMemoryHit,
  selectMemoryContext,
} from "../../src/memory/index.js";
import { cpLength } from "../../src/text/index.js";
import {
  CLAUDE_ESTIMATE_MARGIN,
  createTokenCounter,
  estimateTokens,
  type TokenCounter,
  type TokenizerName,
} from "../../src/tokens/index.js";
import { arbRequest, cand } from "./fixtures.js";
import { naiveSelect } from "./naive-select.js";

const AS_TEXT = { allowedSpecial: new Set<string>(), disallowedSpecial: new Set<string>() };

// Raw counting functions, written here from the libraries rather than taken from
// src/tokens, and wrapped without memoization for the naive side.
const RAW: Record<TokenizerName, (t: string) => number> = {
  estimate: estimateTokens,
  o200k_base: (t) => countO200k(t, AS_TEXT),
  cl100k_base: (t) => countCl100k(t, AS_TEXT),
  claude_estimate: (t) => Math.ceil(countO200k(t, AS_TEXT) * CLAUDE_ESTIMATE_MARGIN),
};

function naiveCounter(name: TokenizerName): TokenCounter {
  return createTokenCounter(name, RAW[name], { cacheSize: 0 });
}

// A custom counter without newlineCut: UTF-8 bytes / 3, rounded up, plus one per line.
// Not additive over newline cuts, so only the whole-block path is valid for it.
function lumpy(cacheSize?: number): TokenCounter {
  return createTokenCounter(
    "lumpy_bytes",
    (t) => (t === "" ? 0 : Math.ceil(Buffer.byteLength(t, "utf8") / 3) + t.split("\n").length),
    cacheSize === undefined ? {} : { cacheSize },
  );
}

const RUNS = 300;

describe("selectMemoryContext equals the naive reference", () => {
  for (const name of ["estimate", "o200k_base", "cl100k_base", "claude_estimate"] as const) {
    it(`${name}: identical plan JSON on random requests`, () => {
      fc.assert(
        fc.property(arbRequest, (req) => {
          const fast = selectMemoryContext({ ...req, tokenizer: name });
          const slow = naiveSelect(req, naiveCounter(name));
          expect(JSON.stringify(fast)).toBe(JSON.stringify(slow));
        }),
        { numRuns: RUNS },
      );
    });
  }

  it("custom createTokenCounter without newlineCut: identical plan JSON", () => {
    expect(lumpy().newlineCut).toBe(false);
    fc.assert(
      fc.property(arbRequest, (req) => {
        const fast = selectMemoryContext(req, { tokenCounter: lumpy() });
        const slow = naiveSelect(req, lumpy(0));
        expect(JSON.stringify(fast)).toBe(JSON.stringify(slow));
      }),
      { numRuns: RUNS },
    );
  });

  it("budgets exactly at a block's size, and one below, agree", () => {
    // Random budgets rarely land exactly on a proposed block's size; put them there: the
    // sizes of the blocks made of the first k hits of the unbounded selection.
    for (const name of ["estimate", "o200k_base", "cl100k_base", "claude_estimate"] as const) {
      fc.assert(
        fc.property(
          arbRequest,
          fc.nat(),
          fc.boolean(),
          fc.boolean(),
          (req, pick, below, onChars) => {
            const unbounded = { ...req.policy, maxChars: null, maxTokens: null };
            const open = naiveSelect({ ...req, policy: unbounded }, naiveCounter(name));
            const hits = open.selectedMemoryIds.map((id) =>
              renderMemoryHit(req.candidates.find((c) => c.memoryId === id) as CandidateInput),
            );
            if (hits.length === 0) return;
            const k = 1 + (pick % hits.length);
            const block = renderMemoryBlock(open.userScope, hits.slice(0, k));
            const size = onChars ? cpLength(block) : RAW[name](block);
            const budget = Math.max(0, size - (below ? 1 : 0));
            const policy = onChars
              ? { ...unbounded, maxChars: budget }
              : { ...unbounded, maxTokens: budget };
            const fast = selectMemoryContext({ ...req, policy, tokenizer: name });
            const slow = naiveSelect({ ...req, policy }, naiveCounter(name));
            expect(JSON.stringify(fast)).toBe(JSON.stringify(slow));
          },
        ),
        { numRuns: 150 },
      );
    }
  });

  it("the naive reference itself packs by whole-block measurement (sanity)", () => {
    const req = {
      userScope: "u1",
      policy: { topK: 5, maxChars: null, maxTokens: null },
      candidates: [cand("m1", "Use Python"), cand("m2", "Use Bash", { score: 0.5 })],
    };
    const plan = naiveSelect(req, naiveCounter("estimate"));
    expect(plan.selectedMemoryIds).toEqual(["m1", "m2"]);
    expect(plan.usedTokens).toBe(estimateTokens(plan.context));
  });
});
