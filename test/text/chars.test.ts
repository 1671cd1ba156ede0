import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  compareCodePoints,
  cpAt,
  cpBefore,
  cpLength,
  cpOffsets,
  cpPrefix,
  isWellFormedText,
  needsWordBoundary,
} from "../../src/text/index.js";

// Reference: lexicographic comparison of the code-point arrays (lone surrogates are
// their own code point, exactly as Array.from and Python's str see them).
function naiveCompare(a: string, b: string): number {
  const x = Array.from(a, (c) => c.codePointAt(0) as number);
  const y = Array.from(b, (c) => c.codePointAt(0) as number);
  const n = Math.min(x.length, y.length);
  for (let i = 0; i < n; i++) {
    const p = x[i] as number;
    const q = y[i] as number;
    if (p !== q) return p < q ? -1 : 1;
  }
  return x.length === y.length ? 0 : x.length < y.length ? -1 : 1;
}

// Characters around every boundary that matters for UTF-16 vs code-point order.
const tricky = fc.constantFrom(
  "a",
  "b",
  "z",
  "\u007f",
  "\u00e9",
  "\u4e16",
  "\ud7ff",
  "\ue000",
  "\uf8ff",
  "\uff5e",
  "\ufffd",
  "\uffff",
  "\u{10000}",
  "\u{1f600}",
  "\u{1f680}",
  "\u{10ffff}",
  "\ud800",
  "\udbff",
  "\udc00",
  "\udfff",
);
const trickyString = fc.array(tricky, { maxLength: 6 }).map((a) => a.join(""));
const anyString = fc.oneof(
  fc.string({ unit: "binary", maxLength: 8 }),
  fc.string({ unit: "grapheme", maxLength: 8 }),
  trickyString,
);

describe("cpLength", () => {
  it("counts code points, not UTF-16 units", () => {
    expect(cpLength("")).toBe(0);
    expect(cpLength("abc")).toBe(3);
    expect("🚀".length).toBe(2);
    expect(cpLength("🚀")).toBe(1);
    expect(cpLength("🚀a")).toBe(2);
    expect(cpLength("\u{10ffff}")).toBe(1);
  });

  it("counts every code point of a ZWJ family emoji", () => {
    const family = "👨‍👩‍👧‍👦"; // 4 people + 3 ZWJ
    expect(family.length).toBe(11);
    expect(cpLength(family)).toBe(7);
    expect(cpLength(family)).toBe(Array.from(family).length);
    expect(cpLength("👍🏽")).toBe(2); // emoji + skin-tone modifier
    expect(cpLength("🇯🇵")).toBe(2); // two regional indicators
  });

  it("counts a lone surrogate as one", () => {
    expect(cpLength("\ud800")).toBe(1);
    expect(cpLength("\udc00")).toBe(1);
    expect(cpLength("\udc00\ud800")).toBe(2); // reversed pair is two lone surrogates
    expect(cpLength("a\ud800")).toBe(2);
    expect(cpLength("\ud800\ud800\udc00")).toBe(2); // lone high, then a pair
  });

  it("counts CJK and combining marks per code point", () => {
    expect(cpLength("世界")).toBe(2);
    expect(cpLength("こんにちは")).toBe(5);
    expect(cpLength("𠀀")).toBe(1); // CJK extension B (astral)
    expect(cpLength("e\u0301")).toBe(2);
    expect(cpLength("\u00e9")).toBe(1);
    expect(cpLength("a\u0300\u0301\u0302")).toBe(4);
  });

  it("equals Array.from(s).length on any string", () => {
    fc.assert(
      fc.property(anyString, (s) => {
        expect(cpLength(s)).toBe(Array.from(s).length);
      }),
      { numRuns: 3000 },
    );
  });
});

describe("compareCodePoints", () => {
  it("sorts astral characters after U+E000..U+FFFF, where UTF-16 `<` is wrong", () => {
    expect("\u{1f600}" < "\uffff").toBe(true); // naive UTF-16 order
    expect(compareCodePoints("\u{1f600}", "\uffff")).toBe(1);
    expect(compareCodePoints("\uffff", "\u{1f600}")).toBe(-1);
    expect(compareCodePoints("\ue000", "\u{10000}")).toBe(-1);
    expect(compareCodePoints("\uff21", "\u{1f680}")).toBe(-1);
    expect(["b", "😀", "\uffff", "a"].sort(compareCodePoints)).toEqual(["a", "b", "\uffff", "😀"]);
    expect(compareCodePoints("id-\u{1f680}", "id-\ufb01")).toBe(1);
  });

  it("keeps BMP order below the surrogate range and among astral characters", () => {
    expect(compareCodePoints("a", "b")).toBe(-1);
    expect(compareCodePoints("B", "a")).toBe(-1); // code point, never locale
    expect(compareCodePoints("é", "z")).toBe(1);
    expect(compareCodePoints("\ud7ff", "\ue000")).toBe(-1);
    expect(compareCodePoints("\u{10000}", "\u{1f600}")).toBe(-1);
    expect(compareCodePoints("\u{1f600}", "\u{10ffff}")).toBe(-1);
  });

  it("orders a prefix first and returns 0 only for equal strings", () => {
    expect(compareCodePoints("", "")).toBe(0);
    expect(compareCodePoints("abc", "abc")).toBe(0);
    expect(compareCodePoints("🚀", "🚀")).toBe(0);
    expect(compareCodePoints("", "a")).toBe(-1);
    expect(compareCodePoints("a", "")).toBe(1);
    expect(compareCodePoints("ab", "abc")).toBe(-1);
    expect(compareCodePoints("abc", "ab")).toBe(1);
    expect(compareCodePoints("🚀", "🚀a")).toBe(-1);
  });

  it("orders lone surrogates by their code point", () => {
    // U+DC00 (lone) < U+10000; U+D800 (lone) < U+E000.
    expect(compareCodePoints("\udc00", "\u{10000}")).toBe(-1);
    expect(compareCodePoints("\u{10000}", "\udc00")).toBe(1);
    expect(compareCodePoints("\ud800", "\ue000")).toBe(-1);
    expect(compareCodePoints("a\ud800b", "a\ue000")).toBe(-1);
    expect(compareCodePoints("\ud800", "\u{10000}")).toBe(-1);
    expect(compareCodePoints("\ud800\ue000", "\u{10000}")).toBe(-1);
    expect(compareCodePoints("\ud800a", "\ud800b")).toBe(-1);
  });

  it("agrees with comparing code-point arrays lexicographically", () => {
    fc.assert(
      fc.property(anyString, anyString, (a, b) => {
        expect(compareCodePoints(a, b)).toBe(naiveCompare(a, b));
      }),
      { numRuns: 20000 },
    );
  });

  it("is a total order: reflexive, antisymmetric, transitive", () => {
    fc.assert(
      fc.property(anyString, anyString, anyString, (a, b, c) => {
        expect(compareCodePoints(a, a)).toBe(0);
        const ab = compareCodePoints(a, b);
        expect(compareCodePoints(b, a)).toBe(ab === 0 ? 0 : -ab);
        expect(ab === 0).toBe(a === b);
        const bc = compareCodePoints(b, c);
        if (ab <= 0 && bc <= 0) expect(compareCodePoints(a, c)).toBeLessThanOrEqual(0);
        if (ab >= 0 && bc >= 0) expect(compareCodePoints(a, c)).toBeGreaterThanOrEqual(0);
      }),
      { numRuns: 10000 },
    );
  });

  it("sorts samples identically to sorting by code-point arrays", () => {
    fc.assert(
      fc.property(fc.array(anyString, { maxLength: 20 }), (xs) => {
        const ours = [...xs].sort(compareCodePoints);
        const ref = [...xs].sort(naiveCompare);
        expect(ours).toEqual(ref);
      }),
      { numRuns: 2000 },
    );
  });
});

describe("isWellFormedText", () => {
  it("is false exactly when a surrogate is unpaired (the \\p{Cs} definition)", () => {
    const units = fc.oneof(
      fc.integer({ min: 0xd800, max: 0xdfff }),
      fc.integer({ min: 0, max: 0xffff }),
      fc.constantFrom(0x61, 0xd83d, 0xde00),
    );
    fc.assert(
      fc.property(fc.array(units, { maxLength: 12 }), (codes) => {
        const s = String.fromCharCode(...codes);
        expect(isWellFormedText(s)).toBe(!/\p{Cs}/u.test(s));
      }),
      { numRuns: 5000 },
    );
    expect(isWellFormedText("a\u{1F680}")).toBe(true);
    expect(isWellFormedText("\ud800")).toBe(false);
    expect(isWellFormedText("\ude00\ud83d")).toBe(false);
  });
});

describe("cpAt, cpBefore, cpPrefix", () => {
  // Any UTF-16 units: pairs, lone high and low surrogates, and plain characters.
  const units = fc.oneof(
    fc.integer({ min: 0xd800, max: 0xdfff }),
    fc.integer({ min: 0, max: 0xffff }),
    fc.constantFrom(0x61, 0xd83d, 0xde00),
  );

  it("read the code points Array.from sees, at and before every code-point boundary", () => {
    fc.assert(
      fc.property(fc.array(units, { maxLength: 12 }), (codes) => {
        const s = String.fromCharCode(...codes);
        const chars = Array.from(s);
        const offsets = cpOffsets(s);
        chars.forEach((c, k) => {
          expect(cpAt(s, offsets[k] as number)).toBe(c);
          expect(cpBefore(s, offsets[k + 1] as number)).toBe(c);
        });
        expect(cpAt(s, s.length)).toBe("");
        expect(cpBefore(s, 0)).toBe("");
        for (let n = 0; n <= chars.length + 1; n++) {
          expect(cpPrefix(s, n)).toBe(chars.slice(0, n).join(""));
        }
      }),
      { numRuns: 3000 },
    );
  });

  it("a keyword needs a word boundary only beside a word character of a spaced script", () => {
    expect(["a", "é", "7", "_", ".", " ", "漢", "か", "カ", ""].map(needsWordBoundary)).toEqual([
      true,
      true,
      true,
      true,
      false,
      false,
      false,
      false,
      false,
      false,
    ]);
  });
});
