import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { getTokenCounter, type TokenizerName } from "../../src/tokens/index.js";
import { STRESS_ATOMS } from "./stress-atoms.js";

// Text drawn from the characters that stress pre-tokenizers.
const piece = fc.constantFrom(...STRESS_ATOMS);
const text = fc.array(piece, { maxLength: 30 }).map((a) => a.join(""));
const startChar = fc.constantFrom(
  "<",
  "-",
  "a",
  "Z",
  "1",
  "世",
  ".",
  "'",
  "_",
  "🚀",
  '"',
  "&",
  "|",
);

describe.each<TokenizerName>(["estimate", "o200k_base", "cl100k_base"])("%s newlineCut", (name) => {
  const counter = getTokenCounter(name);
  it("declares the property", () => expect(counter.newlineCut).toBe(true));
  it("count(a+b) = count(a)+count(b) when a ends with \\n and b starts with non-space, non-/", () => {
    fc.assert(
      fc.property(text, startChar, text, (a0, s, b0) => {
        const a = `${a0}\n`;
        const b = s + b0;
        expect(counter.count(a + b)).toBe(counter.count(a) + counter.count(b));
      }),
      { numRuns: 3000 },
    );
  });
});

describe.each<TokenizerName>(["estimate", "o200k_base", "cl100k_base"])(
  "%s extendWithNewlines",
  (name) => {
    const counter = getTokenCounter(name);
    const extend = counter.extendWithNewlines;
    it("is declared", () => expect(typeof extend).toBe("function"));
    it("returns count(s + newlines) exactly whenever it answers", () => {
      let answered = 0;
      fc.assert(
        fc.property(text, fc.constantFrom("\n", "\n\n", "\n\n\n"), (s, nl) => {
          const got = extend?.(s, counter.count(s), nl) ?? null;
          if (got === null) return;
          answered++;
          expect(got).toBe(counter.count(s + nl));
        }),
        { numRuns: 4000 },
      );
      expect(answered).toBeGreaterThan(2000);
    });
    it("reads a lone low surrogate as a character of its own", () => {
      const lone = fc.constantFrom(
        "\udc00",
        "\ud800",
        "\udfff",
        "a",
        " ",
        "\u000b",
        "1",
        ".",
        "😀",
      );
      fc.assert(
        fc.property(fc.array(lone, { minLength: 1, maxLength: 6 }), (xs) => {
          const s = xs.join("");
          const got = extend?.(s, counter.count(s), "\n") ?? null;
          if (got !== null) expect(got).toBe(counter.count(`${s}\n`));
        }),
        { numRuns: 3000 },
      );
      for (const s of ["a\udc00", " \u000b\udc00\ud800"]) {
        const got = extend?.(s, counter.count(s), "\n") ?? null;
        if (got !== null) expect(got).toBe(counter.count(`${s}\n`));
      }
    });
    it("answers for closing tags (the memory hit case)", () => {
      const s = '<memory_hit a="1">x</memory_hit>';
      expect(extend?.(s, counter.count(s), "\n")).toBe(counter.count(`${s}\n`));
    });
  },
);
