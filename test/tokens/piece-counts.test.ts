/**
 * `pieceCounts`: the pre-tokenizer's pieces with running counts, which a cut's search
 * aims its probes with. Its last running count is the text's count, and every piece is
 * counted as `count` counts it. `countSplice` over them counts a spliced text exactly.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { getTokenCounter, type TokenizerName } from "../../src/tokens/index.js";
import { STRESS_ATOMS } from "./stress-atoms.js";

const text = fc
  .array(fc.oneof(fc.constantFrom(...STRESS_ATOMS), fc.string({ unit: "grapheme" })), {
    maxLength: 40,
  })
  .map((parts) => parts.join(""));

describe.each(["o200k_base", "cl100k_base"] as TokenizerName[])("pieceCounts, %s", (name) => {
  const counter = getTokenCounter(name);
  it("ends at the text's end with its count, ends increasing, counts never falling", () => {
    fc.assert(
      fc.property(text, (t) => {
        const p = counter.pieceCounts?.(t) as Int32Array;
        expect(p.length % 2).toBe(0);
        if (t === "") {
          expect(p.length).toBe(0);
          return;
        }
        expect(p[p.length - 2]).toBe(t.length);
        expect(p[p.length - 1]).toBe(counter.count(t));
        for (let k = 2; k < p.length; k += 2) {
          expect(p[k] as number).toBeGreaterThan(p[k - 2] as number);
          expect(p[k + 1] as number).toBeGreaterThanOrEqual(p[k - 1] as number);
        }
      }),
      { numRuns: 300 },
    );
  });

  it("counts a splice of the text as count counts the spliced text", () => {
    // Lines, so the seam can start after a newline; any text between, notices included.
    const lines = fc.array(text, { maxLength: 12 }).map((ls) => ls.join("\n"));
    const between = fc.oneof(
      fc.constantFrom("\n[… 12 chars of tool output elided (call c1) …]\n", "", "\n", " /"),
      text,
    );
    fc.assert(
      fc.property(lines, between, fc.nat(), fc.nat(), (t, b, x, y) => {
        const pieces = counter.pieceCounts?.(t) as Int32Array;
        const from = t.length === 0 ? 0 : x % (t.length + 1);
        const to = from + (t.length === from ? 0 : y % (t.length - from + 1));
        const spliced = t.slice(0, from) + b + t.slice(to);
        expect(counter.countSplice?.(t, pieces, from, to, b)).toBe(counter.count(spliced));
      }),
      { numRuns: 600 },
    );
  });

  it("grows past its first guess of four code units a piece", () => {
    // "7\n" is two pieces of one unit each: twice as many pieces as the guess holds.
    const t = `${"7\n".repeat(3000)}x's`;
    const p = counter.pieceCounts?.(t) as Int32Array;
    expect(p.length / 2).toBeGreaterThan(t.length / 4 + 16);
    expect(p[p.length - 2]).toBe(t.length);
    expect(p[p.length - 1]).toBe(counter.count(t));
    for (let k = 2; k < p.length; k += 2) expect(p[k]).toBeGreaterThan(p[k - 2] as number);
  });

  it("is only on the counters whose pieces are counted apart", () => {
    expect(getTokenCounter("estimate").pieceCounts).toBeUndefined();
    expect(getTokenCounter("claude_estimate").pieceCounts).toBeUndefined();
    expect(getTokenCounter("estimate").countSplice).toBeUndefined();
    expect(getTokenCounter("claude_estimate").countSplice).toBeUndefined();
  });
});
