import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { displayWidth, shorten, WIDE_RANGES, wrapToWidth } from "../../src/text/index.js";

// The plain definitions over the one list of wide ranges: a character's columns, and
// shortening one character at a time (the module's fast paths must agree with them).
const refWidth = (s: string): number =>
  [...s].reduce((w, ch) => {
    const cp = ch.codePointAt(0) as number;
    return w + (WIDE_RANGES.some(([a, b]) => cp >= a && cp <= b) ? 2 : 1);
  }, 0);
function refShorten(s: string, width: number): string {
  if (refWidth(s) <= width) return s;
  let out = "";
  for (const ch of s) {
    if (refWidth(out) + refWidth(ch) > width - 1) break;
    out += ch;
  }
  return `${out}…`;
}

const text = fc.oneof(
  fc.string({ unit: "grapheme", maxLength: 30 }),
  fc.string({ unit: "binary", maxLength: 30 }),
  fc.string({ maxLength: 30 }),
  fc.constantFrom("表表表abc", "한국어", "🙂🙂x", "a\ud800b", "ｆｕｌｌ", "x".repeat(40)),
);

// Prose: words of ASCII, CJK and emoji, runs of spaces, indentation, newlines.
const word = fc.oneof(
  fc.string({ minLength: 1, maxLength: 12, unit: fc.constantFrom("a", "b", "-", ":", "#") }),
  fc.string({ minLength: 1, maxLength: 8, unit: fc.constantFrom("表", "한", "🙂", "ｆ") }),
  fc.constant("x".repeat(70)),
);
const prose = fc
  .array(fc.tuple(fc.constantFrom(" ", "  ", "\n", "\n  "), word), { maxLength: 25 })
  .map((parts) => parts.map(([sep, w]) => sep + w).join(""));
const nonSpace = (s: string) => s.replace(/[ \n]/g, "");

describe("display width", () => {
  it("displayWidth and shorten agree with the character-by-character definitions", () => {
    fc.assert(
      fc.property(text, fc.integer({ min: 0, max: 40 }), (s, width) => {
        expect(displayWidth(s)).toBe(refWidth(s));
        expect(shorten(s, width)).toBe(refShorten(s, width));
      }),
      { numRuns: 2000 },
    );
  });
});

describe("wrapToWidth", () => {
  it("no line is wider than the width; every non-space character stays, in order", () => {
    fc.assert(
      fc.property(
        prose,
        fc.integer({ min: 2, max: 90 }),
        fc.constantFrom("", "  ", "    "),
        (s, width, hang) => {
          const lines = wrapToWidth(s, width, hang);
          for (const l of lines) expect(refWidth(l)).toBeLessThanOrEqual(width);
          expect(nonSpace(lines.join(""))).toBe(nonSpace(s));
          // A paragraph that fits is kept byte for byte.
          for (const para of s.split("\n"))
            if (refWidth(para) <= width) expect(lines).toContain(para);
        },
      ),
      { numRuns: 1500 },
    );
  });

  it("breaks at spaces, keeps indentation, hangs continuation lines", () => {
    expect(wrapToWidth("the quick brown fox", 10)).toEqual(["the quick", "brown fox"]);
    expect(wrapToWidth("  - one two three four", 12, "    ")).toEqual([
      "  - one two",
      "    three",
      "    four",
    ]);
    expect(wrapToWidth("abcdefghij", 4)).toEqual(["abcd", "efgh", "ij"]);
    // A wide character never splits and never overflows.
    expect(wrapToWidth("表表表", 3)).toEqual(["表", "表", "表"]);
    expect(wrapToWidth("a\nb", 5)).toEqual(["a", "b"]);
    expect(wrapToWidth("", 5)).toEqual([""]);
  });
});
