import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { CASEFOLD_EXCEPTIONS, CASEFOLD_UNICODE_VERSION } from "../../src/text/casefold-table.js";
import { casefold, collapseWs, isBlank, normalizeKey, trimWs } from "../../src/text/index.js";
import fixture from "./fixtures/casefold-python.json" with { type: "json" };

// Python's str.isspace() characters: what `\s`, str.strip() and str.split() use.
const PY_WHITESPACE = [
  "\t",
  "\n",
  "\v",
  "\f",
  "\r",
  "\u001c",
  "\u001d",
  "\u001e",
  "\u001f",
  " ",
  "\u0085",
  "\u00a0",
  "\u1680",
  "\u2000",
  "\u2001",
  "\u2002",
  "\u2003",
  "\u2004",
  "\u2005",
  "\u2006",
  "\u2007",
  "\u2008",
  "\u2009",
  "\u200a",
  "\u2028",
  "\u2029",
  "\u202f",
  "\u205f",
  "\u3000",
];

describe("normalizeKey: the spec examples", () => {
  it('"ＵＳＥ  Python\\n", "use python" and "USE PYTHON" share one key', () => {
    expect(normalizeKey("ＵＳＥ  Python\n")).toBe("use python");
    expect(normalizeKey("use python")).toBe("use python");
    expect(normalizeKey("USE PYTHON")).toBe("use python");
  });

  it('"straße" and "STRASSE" share one key', () => {
    expect(normalizeKey("straße")).toBe("strasse");
    expect(normalizeKey("STRASSE")).toBe("strasse");
    expect(normalizeKey("Straße")).toBe(normalizeKey("STRASSE"));
  });
});

describe("casefold: full Unicode case folding like Python's str.casefold", () => {
  it("folds ß and ẞ to ss", () => {
    expect(casefold("ß")).toBe("ss");
    expect(casefold("ẞ")).toBe("ss");
    expect(casefold("STRAẞE")).toBe("strasse");
  });

  it("folds final sigma to σ, in either direction", () => {
    expect(casefold("ς")).toBe("σ");
    expect(casefold("ΑΣ")).toBe("ασ"); // toLowerCase would give "ας"
    expect("ΑΣ".toLowerCase()).toBe("ας");
    expect(casefold("ΟΔΥΣΣΕΥΣ")).toBe("οδυσσευσ");
    expect(casefold("ὀδυσσεύς")).toBe("ὀδυσσεύσ");
    expect(casefold("ΟΔΥΣΣΕΥΣ ς")).toBe("οδυσσευσ σ"); // slow path (contains ς)
  });

  it("folds Cherokee small letters to capitals (Python semantics, not lowercasing)", () => {
    expect(casefold("\uab70")).toBe("\u13a0"); // ꭰ → Ꭰ
    expect(casefold("\u13f8")).toBe("\u13f0"); // ᏸ → Ᏸ
    expect(casefold("\u13a0")).toBe("\u13a0"); // capitals stay
    expect("\u13a0".toLowerCase()).toBe("\uab70"); // what lowercasing would wrongly do
    expect(casefold("ᎠᎡᎢ")).toBe(casefold("ꭰꭱꭲ"));
  });

  it("folds micro sign, long s, Greek symbol variants", () => {
    expect(casefold("\u00b5")).toBe("\u03bc");
    expect(casefold("\u017f")).toBe("s");
    expect(casefold("\u03d0\u03d1\u03d5\u03d6\u03f0\u03f1\u03f5")).toBe(
      "\u03b2\u03b8\u03c6\u03c0\u03ba\u03c1\u03b5",
    );
    expect(casefold("\u0345")).toBe("\u03b9");
  });

  it("expands multi-character foldings", () => {
    expect(casefold("ﬁ")).toBe("fi");
    expect(casefold("ﬃ")).toBe("ffi");
    expect(casefold("ŉ")).toBe("ʼn");
    expect(casefold("ᾳ")).toBe("αι");
    expect(casefold("և")).toBe("եւ");
    expect(casefold("İ")).toBe("i\u0307");
  });

  it("lowercases everything else, astral scripts included", () => {
    expect(casefold("Hello WORLD")).toBe("hello world");
    expect(casefold("ÀÉÎ")).toBe("àéî");
    expect(casefold("𐐀")).toBe("𐐨"); // Deseret
    expect(casefold("𞤀")).toBe("𞤢"); // Adlam
    expect(casefold("ДОМ")).toBe("дом");
    expect(casefold("")).toBe("");
  });

  it("agrees with Python for every exception code point of the table", () => {
    expect(CASEFOLD_UNICODE_VERSION).toBe(fixture.unicode);
    for (const [cp, folded] of CASEFOLD_EXCEPTIONS) {
      expect(cp).toBeLessThan(0x10000); // the fast path's table covers the BMP only
      const ch = String.fromCodePoint(cp);
      expect(casefold(ch)).toBe(folded);
      expect(casefold(`A${ch}Z`)).toBe(`a${folded}z`);
    }
  });

  it("fast path and per-character path agree", () => {
    // casefold of a concatenation is the concatenation of casefolds (no context).
    const pieces = fc.constantFrom("Σ", "ς", "σ", "A", "ß", "ﬁ", "ꭰ", "Ꭰ", " ", "İ", "𐐀", "x");
    fc.assert(
      fc.property(fc.array(pieces, { maxLength: 12 }), (xs) => {
        expect(casefold(xs.join(""))).toBe(xs.map((x) => casefold(x)).join(""));
      }),
      { numRuns: 3000 },
    );
  });
});

describe("normalizeKey: NFKC, folding, whitespace", () => {
  it("applies NFKC before folding: ligatures, full-width, compatibility forms", () => {
    expect(normalizeKey("ﬁle")).toBe("file");
    expect(normalizeKey("Ｈｅｌｌｏ　Ｗｏｒｌｄ")).toBe("hello world");
    expect(normalizeKey("ＡＢＣ１２３")).toBe("abc123");
    expect(normalizeKey("Ⅻ")).toBe("xii");
    expect(normalizeKey("𝐀𝐁𝐂")).toBe("abc");
    expect(normalizeKey("x²")).toBe("x2");
    expect(normalizeKey("K")).toBe("k"); // Kelvin sign
    expect(normalizeKey("Ω")).toBe("ω"); // Ohm sign
    expect(normalizeKey("e\u0301")).toBe("\u00e9"); // composed
    expect(normalizeKey("ｶﾀｶﾅ")).toBe("カタカナ");
  });

  it("folds µ (U+00B5) to μ (U+03BC), same key as Greek mu", () => {
    expect(normalizeKey("\u00b5")).toBe("\u03bc");
    expect(normalizeKey("\u00b5")).toBe(normalizeKey("\u039c"));
  });

  it("folds final sigma, ẞ, Cherokee as casefold does", () => {
    expect(normalizeKey("ΑΣ")).toBe("ασ");
    expect(normalizeKey("ας")).toBe("ασ");
    expect(normalizeKey("ẞ")).toBe("ss");
    expect(normalizeKey("ꭰ")).toBe("Ꭰ");
  });

  it("collapses every run of Unicode whitespace to one space and trims", () => {
    expect(normalizeKey("\u3000a\u00a0b\u2028c\u0085d\u001ce\u3000")).toBe("a b c d e");
    expect(normalizeKey(" \t\n a \r\n\v\f b \u2029")).toBe("a b");
    for (const ws of PY_WHITESPACE) {
      expect(normalizeKey(`${ws}x${ws}${ws}y${ws}`)).toBe("x y");
      expect(normalizeKey(ws)).toBe("");
    }
  });

  it("does not treat U+FEFF, ZWSP or ZWJ as whitespace (Python semantics)", () => {
    expect(normalizeKey("\ufeffhello\ufeff")).toBe("\ufeffhello\ufeff");
    expect(normalizeKey("a\ufeff b")).toBe("a\ufeff b");
    expect(normalizeKey("a\u200bb")).toBe("a\u200bb");
    expect(normalizeKey("\u200d")).toBe("\u200d");
  });

  it("never leaves leading, trailing or repeated whitespace, nor any but U+0020", () => {
    const ws = fc.constantFrom(...PY_WHITESPACE, "\ufeff", "a", "Ａ", "ß", "Σ", "ﬁ");
    fc.assert(
      fc.property(fc.array(fc.oneof(ws, fc.string({ unit: "grapheme", maxLength: 3 }))), (xs) => {
        const k = normalizeKey(xs.join(""));
        expect(trimWs(k)).toBe(k);
        expect(k).not.toMatch(/ {2}/);
        for (const w of PY_WHITESPACE) if (w !== " ") expect(k).not.toContain(w);
      }),
      { numRuns: 2000 },
    );
  });

  it("ASCII fast path equals NFKC + casefold + collapse", () => {
    const ascii = fc.string({ unit: "binary-ascii", maxLength: 24 });
    const spaced = fc.array(fc.constantFrom(" ", "  ", "\t", "A", "b", "Z1", "\u001c"), {
      maxLength: 10,
    });
    fc.assert(
      fc.property(
        fc.oneof(
          ascii,
          spaced.map((xs) => xs.join("")),
        ),
        (s) => {
          expect(normalizeKey(s)).toBe(collapseWs(casefold(s.normalize("NFKC"))));
        },
      ),
      { numRuns: 5000 },
    );
  });

  it(`equals Python's key for all ${fixture.cases.length} fixture strings`, () => {
    expect(fixture.cases.length).toBeGreaterThan(300);
    const mismatches: Array<{ input: string; python: string; ours: string }> = [];
    for (const { input, key } of fixture.cases) {
      const ours = normalizeKey(input);
      if (ours !== key) mismatches.push({ input, python: key, ours });
    }
    expect(mismatches).toEqual([]);
  });
});

describe("whitespace helpers use str.isspace semantics", () => {
  it("trimWs, collapseWs and isBlank", () => {
    const all = PY_WHITESPACE.join("");
    expect(trimWs(`${all}a b${all}`)).toBe("a b");
    expect(collapseWs(`a${all}b`)).toBe("a b");
    expect(isBlank(all)).toBe(true);
    expect(isBlank("")).toBe(true);
    expect(isBlank("\ufeff")).toBe(false);
    expect(isBlank("\u200b")).toBe(false);
    expect(trimWs("\ufeffa\ufeff")).toBe("\ufeffa\ufeff");
  });

  it("treats exactly the Python whitespace set as blank, over every code point", () => {
    const ours: string[] = [];
    for (let cp = 0; cp <= 0x10ffff; cp++) {
      const ch = String.fromCodePoint(cp);
      if (cp >= 0xd800 && cp <= 0xdfff) continue;
      if (isBlank(ch)) ours.push(ch);
    }
    expect(ours).toEqual(PY_WHITESPACE);
  });

  it("trimWs, collapseWs and isBlank agree with regexes over the same set", () => {
    // Reference forms: what the hand-written loops must equal on any string.
    const cls = PY_WHITESPACE.map(
      (w) => `\\u${w.charCodeAt(0).toString(16).padStart(4, "0")}`,
    ).join("");
    const run = new RegExp(`[${cls}]+`, "g");
    const edges = new RegExp(`^[${cls}]+|[${cls}]+$`, "g");
    const nonWs = new RegExp(`[^${cls}]`);
    const atoms = fc.constantFrom(
      ...PY_WHITESPACE,
      "\ufeff",
      "\u200b",
      "a",
      "ß",
      "語",
      "😀",
      "\ud800",
    );
    fc.assert(
      fc.property(
        fc.array(fc.oneof(atoms, fc.string({ maxLength: 3 })), { maxLength: 16 }),
        (xs) => {
          const s = xs.join("");
          expect(trimWs(s)).toBe(s.replace(edges, ""));
          expect(collapseWs(s)).toBe(s.replace(run, " ").replace(edges, ""));
          expect(isBlank(s)).toBe(!nonWs.test(s));
        },
      ),
      { numRuns: 5000 },
    );
  });
});
