/**
 * `compileUserPattern`: every user pattern is compiled for the linear-time RE2 engine
 * (the compiled object is an `RE2JS`, never a `RegExp`); what RE2 cannot run is refused at
 * load with `unsupported_pattern`, the field path, the pattern and why; the JavaScript
 * spellings it accepts are rewritten; and on small inputs it agrees with the native engine
 * (the reference) on whether and where a match starts, for generated patterns.
 */
import fc from "fast-check";
import { RE2JS } from "re2js";
import { describe, expect, it } from "vitest";
import { type PromptctxError, UnsupportedPatternError } from "../../src/errors/index.js";
import { compileUserPattern, MAX_PATTERN_PROGRAM } from "../../src/text/index.js";

function refusal(source: string, path = "redLines[2].pattern"): PromptctxError {
  try {
    compileUserPattern(source, path);
  } catch (err) {
    return err as PromptctxError;
  }
  throw new Error(`accepted ${source}`);
}

describe("compileUserPattern", () => {
  it("compiles for the linear-time engine, never a native RegExp", () => {
    const p = compileUserPattern("\\bsk-[A-Za-z0-9]{20,}", "p");
    expect(p.engine).toBeInstanceOf(RE2JS);
    expect(Object.values(p).some((v) => v instanceof RegExp)).toBe(false);
    expect(p.engine.test(`key sk-${"x".repeat(20)}`)).toBe(true);
    expect(p.programSize).toBeGreaterThan(0);
  });

  it.each([
    ["a(?=b)", /lookahead \(\?=…\) is not supported/],
    ["a(?!b)", /lookahead \(\?!…\) is not supported/],
    ["(?<=a)b", /lookbehind \(\?<=…\) is not supported/],
    ["(?<!a)b", /lookbehind \(\?<!…\) is not supported/],
    ["(a)\\1", /backreference \\1 is not supported/],
    ["(?<n>a)\\k<n>", /backreference \\k<…> is not supported/],
    ["(?>a+)b", /unsupported Perl syntax/],
    ["a{1001}", /invalid repeat count.*at most 1000/],
    ["(?:a{100}){100}", /invalid repeat count/],
    ["[\\s\\S]{900}[\\s\\S]{900}[\\s\\S]{900}", new RegExp(`the limit is ${MAX_PATTERN_PROGRAM}`)],
  ])(
    "refuses %s at load: unsupported_pattern with the path, the pattern and why",
    (source, why) => {
      const e = refusal(source);
      expect(e).toBeInstanceOf(UnsupportedPatternError);
      expect([e.code, e.path]).toEqual(["unsupported_pattern", "redLines[2].pattern"]);
      expect(e.message.startsWith(`/${source}/: `)).toBe(true);
      expect(e.message).toMatch(why);
      expect(e.message).toMatch(/linear-time RE2 engine|the limit is/);
    },
  );

  it("reports malformed patterns, over-long ones and empty matches as invalid_input", () => {
    const cases: Array<[string, RegExp, object?]> = [
      ["(", /^\/\(\/: invalid regex: missing closing \)/],
      ["[z-a]", /invalid regex: invalid character class range/],
      ["a**", /invalid regex: invalid nested repetition operator/],
      ["\\p{Letter}", /invalid regex: invalid character class range/],
      ["a".repeat(11), /pattern is 11 code points, the limit is 10/, { maxLength: 10 }],
      ["x?", /^\/x\?\/: matches the empty string$/, { refuseEmptyMatch: true }],
      ["", /must not be empty/],
    ];
    for (const [source, why, options] of cases) {
      try {
        compileUserPattern(source, ["triggers", "patterns", 0], options);
        throw new Error(`accepted ${source}`);
      } catch (err) {
        const e = err as PromptctxError;
        expect([e.code, e.path, source]).toEqual(["invalid_input", "triggers.patterns[0]", source]);
        expect(e.message).toMatch(why);
      }
    }
    expect(compileUserPattern("x?", "p").engine.test("")).toBe(true); // allowed unless refused
  });

  it("rewrites JavaScript spellings: \\uXXXX, surrogate pairs, \\u{…}, \\p{Script=…}", () => {
    const t = (source: string, s: string) => compileUserPattern(source, "p").engine.test(s);
    expect(t("caf\\u00e9", "café")).toBe(true);
    expect(t("^\\uD83D\\uDE00$", "😀")).toBe(true);
    expect(t("^\\u{1F600}$", "😀")).toBe(true);
    expect(t("^\\p{Script=Han}+$", "漢字")).toBe(true);
    expect(t("^\\p{sc=Han}+$", "漢a")).toBe(false);
    expect(t("^\\P{Han}$", "a")).toBe(true);
    expect(t("[[:alpha:]]+\\]", "ab]")).toBe(true);
    expect(t("[]a]+", "]")).toBe(true);
    expect(t("\\\\s", "\\s")).toBe(true); // an escaped backslash, then a literal s
    expect(t("^\\Q[(?=\\s\\E$", "[(?=\\s")).toBe(true); // RE2 quoting: all literal
    expect(compileUserPattern("\\Q[\\E(?m)^x", "p").lineProbeSafe).toBe(false);
  });

  it("\\s and \\S are the text rules' whitespace, inside and outside classes", () => {
    const t = (source: string, s: string) => compileUserPattern(source, "p").engine.test(s);
    for (const ws of [" ", "\t", "\u00a0", "\u3000", "\u2028", "\u0085", "\u001f"]) {
      expect([ws, t("^a\\s+b$", `a${ws}b`)]).toEqual([ws, true]);
      expect([ws, t("^a[^\\s]b$", `a${ws}b`)]).toEqual([ws, false]);
      expect([ws, t("^\\S$", ws)]).toEqual([ws, false]);
    }
    expect(t("^[\\S\\s]{3}$", "a 😀")).toBe(true);
    expect(t("^\\S\\S$", "é😀")).toBe(true);
  });

  it("(?i) folds case the RE2 way (simple folding), documented", () => {
    const t = (source: string, s: string) => compileUserPattern(source, "p").engine.test(s);
    expect(t("(?i)^secret$", "SeCrEt")).toBe(true);
    expect(t("(?i)^k$", "\u212a")).toBe(true); // KELVIN SIGN folds to k
    expect(t("(?i)^σ$", "ς")).toBe(true);
    expect(t("(?i)^straße$", "STRASSE")).toBe(false); // no full folding (ß → ss)
    expect(t("^secret$", "SECRET")).toBe(false); // case-sensitive by default
  });

  it("named and numbered groups compile (as non-capturing): nothing reads captures", () => {
    const p = compileUserPattern("(?<year>\\d{4})-(\\d{2})", "p");
    expect(p.re2Source).toBe("(?:\\d{4})-(?:\\d{2})");
    expect(p.engine.groupCount()).toBe(0);
    expect(p.engine.test("on 2024-05")).toBe(true);
  });

  it("property: agrees with the native engine on small inputs (whether and where a match starts)", () => {
    const atom = fc.constantFrom(
      "a",
      "b",
      "c",
      "[ab]",
      "[^a]",
      "\\d",
      "\\w",
      ".",
      "\\.",
      "é",
      "😀",
    );
    const quant = fc.constantFrom("", "", "*", "+", "?", "{0,3}", "{1,2}", "{2}", "*?", "+?");
    const piece = fc.tuple(atom, quant).map(([a, q]) => a + q);
    const assertion = fc.constantFrom("^", "$", "\\b", "\\B");
    const seq = fc
      .array(fc.oneof({ weight: 5, arbitrary: piece }, { weight: 1, arbitrary: assertion }), {
        minLength: 1,
        maxLength: 4,
      })
      .map((xs) => xs.join(""));
    const group = fc.tuple(fc.array(seq, { minLength: 1, maxLength: 3 }), quant, fc.boolean());
    const pattern = fc
      .array(
        fc.oneof(
          seq,
          group.map(([alts, q, cap]) => `(${cap ? "" : "?:"}${alts.join("|")})${q}`),
        ),
        { minLength: 1, maxLength: 3 },
      )
      .map((xs) => xs.join(""));
    const subject = fc
      .array(fc.constantFrom("a", "b", "c", "1", " ", ".", "é", "😀", "-", "_"), { maxLength: 14 })
      .map((xs) => xs.join(""));
    fc.assert(
      fc.property(
        pattern,
        fc.array(subject, { minLength: 1, maxLength: 6 }),
        (source, subjects) => {
          const p = compileUserPattern(source, "p");
          expect(p.engine).toBeInstanceOf(RE2JS);
          const native = new RegExp(source, "u");
          for (const s of subjects) {
            const m = p.engine.matcher(s);
            const found = m.find();
            const ref = native.exec(s);
            // V8 may report an empty match inside a surrogate pair (`\B` on "a😀" at 2):
            // no code-point engine can start there, so that case is not a disagreement.
            const lo = ref === null ? 0 : s.charCodeAt(ref.index);
            if (ref?.[0] === "" && lo >= 0xdc00 && lo <= 0xdfff) continue;
            expect([source, s, found, found ? m.start() : -1]).toEqual([
              source,
              s,
              ref !== null,
              ref?.index ?? -1,
            ]);
          }
        },
      ),
      { numRuns: 600, seed: 25 },
    );
  });
});
