/**
 * Selection past its size thresholds: `measureHits` renders and counts hit lines in chunks
 * of 2,048 candidates (src/memory/select.ts), so requests of 2,048 to ~4,600 candidates
 * (one, two and three chunks, full and partial) must still reach exactly the plan of the
 * naive reference. Few runs: each one is thousands of candidates.
 */
import fc from "fast-check";
import { countTokens as countCl100k } from "gpt-tokenizer/encoding/cl100k_base";
import { countTokens as countO200k } from "gpt-tokenizer/encoding/o200k_base";
import { describe, expect, it } from "vitest";
import { selectMemoryContext } from "../../src/memory/index.js";
import {
  CLAUDE_ESTIMATE_MARGIN,
  createTokenCounter,
  estimateTokens,
  type TokenCounter,
  type TokenizerName,
} from "../../src/tokens/index.js";
import { arbCandidatesSized, arbPolicy, type GenRequest } from "./fixtures.js";
import { naiveSelect } from "./naive-select.js";

const AS_TEXT = { allowedSpecial: new Set<string>(), disallowedSpecial: new Set<string>() };

// Raw counting functions from the libraries, unmemoized, for the naive side.
const RAW: Record<TokenizerName, (t: string) => number> = {
  estimate: estimateTokens,
  o200k_base: (t) => countO200k(t, AS_TEXT),
  cl100k_base: (t) => countCl100k(t, AS_TEXT),
  claude_estimate: (t) => Math.ceil(countO200k(t, AS_TEXT) * CLAUDE_ESTIMATE_MARGIN),
};

// A custom counter without newlineCut (whole-block path): UTF-8 bytes / 3, plus one per line.
const lumpy = (cacheSize?: number): TokenCounter =>
  createTokenCounter(
    "lumpy_bytes",
    (t) => (t === "" ? 0 : Math.ceil(Buffer.byteLength(t, "utf8") / 3) + t.split("\n").length),
    cacheSize === undefined ? {} : { cacheSize },
  );

type Name = TokenizerName | "lumpy";
const NAMES: Name[] = ["estimate", "o200k_base", "cl100k_base", "claude_estimate", "lumpy"];

function fast(req: GenRequest, name: Name) {
  return name === "lumpy"
    ? selectMemoryContext(req, { tokenCounter: lumpy() })
    : selectMemoryContext({ ...req, tokenizer: name });
}

function naive(req: GenRequest, name: Name) {
  const counter =
    name === "lumpy" ? lumpy(0) : createTokenCounter(name, RAW[name], { cacheSize: 0 });
  return naiveSelect(req, counter);
}

// Chunk edges (2,048 and 4,096 exactly, one past each) and partial third chunks.
const CHUNK = 2048;
const size = fc.oneof(
  fc.constantFrom(CHUNK, CHUNK + 1, 2 * CHUNK, 2 * CHUNK + 1),
  fc.integer({ min: 2 * CHUNK + 2, max: 2 * CHUNK + 500 }),
);

// The usual policies (topK ≤ 10), or a large topK with a char budget of a few dozen hits,
// so that hits from every chunk are priced and selected.
const policy = fc.oneof(
  arbPolicy,
  fc.record({
    minScore: fc.constantFrom(0, 0.35, 0.7),
    topK: fc.integer({ min: 20, max: 5000 }),
    maxChars: fc.integer({ min: 1000, max: 5000 }),
    maxTokens: fc.oneof(fc.constant(null), fc.integer({ min: 200, max: 1500 })),
  }),
);

const largeRequest: fc.Arbitrary<GenRequest> = size.chain((n) =>
  fc.record({
    userScope: fc.constantFrom("u1", " u1 "),
    policy,
    candidates: arbCandidatesSized(n, n),
  }),
);

describe("selection past 2,048 and 4,096 candidates", () => {
  it("equals the naive reference (identical plan JSON), in any input order", () => {
    fc.assert(
      fc.property(largeRequest, fc.constantFrom(...NAMES), (req, name) => {
        const plan = JSON.stringify(fast(req, name));
        expect(plan).toBe(JSON.stringify(naive(req, name)));
        // Reversed, every candidate sits in another chunk at another offset.
        const reversed = { ...req, candidates: [...req.candidates].reverse() };
        expect(JSON.stringify(fast(reversed, name))).toBe(plan);
      }),
      { numRuns: 6, endOnFailure: true },
    );
  }, 120_000);
});
