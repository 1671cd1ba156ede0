/**
 * The exact linear-time scan of `src/text/regex-scan.ts` against the native engine: for
 * safe patterns (classes, alternation, bounded and unbounded repetition, lazy quantifiers,
 * anchors, word boundaries, lookarounds, astral characters) and random subjects, a match
 * starts at code point i per the scan exactly when a sticky native `exec` at i matches.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  compileScanRegex,
  MAX_SCAN_STATES,
  regexSafetyProblem,
  type ScanRegex,
  scanMatchStarts,
} from "../../src/text/index.js";

const PATTERNS = [
  "sk-[A-Za-z0-9]{3,}",
  "a+b",
  "\\bab\\b",
  "\\Ba",
  "^a|b$",
  "a(?=b)",
  "a(?!b)",
  "(?<=a)b",
  "(?<!a)b",
  "(?<=^|\\s)ab+",
  "a{2,3}c?",
  "(?:ab|c)+d",
  "a.b",
  "[^a]+c",
  "x*?y",
  "😀a",
  "\\uD83D\\uDE00",
  "[😀b]{2}",
  "(a|b)c{0,2}$",
  "\\d{2}-\\d{2}",
  "(?<name>ab)c",
  "a(?=b(?!c))",
  "(?<=(?<!a)b)c",
  "\\p{Lu}\\p{Ll}+",
  "\\s+$",
  "[\\w-]+@",
];

const ALPHABET = ["a", "b", "c", "d", "x", "y", " ", "-", "@", "1", "2", "😀", "A", "\n", "é"];

function cps(s: string): Int32Array {
  return Int32Array.from(Array.from(s), (c) => c.codePointAt(0) as number);
}

function nativeStarts(source: string, s: string): number[] {
  const re = new RegExp(source, "uy");
  const out: number[] = [];
  let unit = 0;
  const chars = Array.from(s);
  for (let i = 0; i <= chars.length; i++) {
    re.lastIndex = unit;
    if (re.test(s)) out.push(i);
    unit += (chars[i] ?? "").length;
  }
  return out;
}

function scanStarts(re: ScanRegex, s: string): number[] {
  const t = scanMatchStarts(re, cps(s), { left: 1e9 });
  if (t === null) throw new Error("budget");
  return [...t.keys()].filter((i) => t[i] === 1);
}

describe("scanMatchStarts", () => {
  it.each(PATTERNS)("agrees with the native engine on random subjects: %s", (source) => {
    expect(regexSafetyProblem(source)).toBeNull();
    const re = compileScanRegex(source);
    if (typeof re === "string") throw new Error(re);
    fc.assert(
      fc.property(fc.array(fc.constantFrom(...ALPHABET), { maxLength: 24 }), (chars) => {
        const s = chars.join("");
        expect(scanStarts(re, s)).toEqual(nativeStarts(source, s));
      }),
      { numRuns: 300, seed: 5 },
    );
  });

  it("refuses what it cannot scan exactly, with the reason", () => {
    expect(compileScanRegex("(a)\\1")).toMatch(/backreferences/);
    expect(compileScanRegex(`(?:a{100}){100}`)).toMatch(`over ${MAX_SCAN_STATES} states`);
    expect(typeof compileScanRegex("a{1000}")).toBe("object");
  });

  it("stops when the budget runs out", () => {
    const re = compileScanRegex("[a-z]{10,}!") as ScanRegex;
    expect(scanMatchStarts(re, cps("a".repeat(1000)), { left: 500 })).toBeNull();
    const budget = { left: 1e7 };
    expect(scanMatchStarts(re, cps(`${"a".repeat(1000)}!`), budget)?.[0]).toBe(1);
    expect(budget.left).toBeGreaterThan(0);
  });
});
