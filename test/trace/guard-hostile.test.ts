/**
 * Issue 25 item 2: red-line patterns run on the linear-time engine, so no pattern can make
 * the check hang. Generated hostile patterns — nested and sequenced bounded repetitions,
 * overlapping alternations, long classes, the classic catastrophic shapes — are compiled
 * for RE2 (or refused at load with a clear error, for what RE2 cannot run) and checked
 * against drafts of up to 200 KB built to blow up a backtracking engine. The check always
 * finishes (complete, or withheld by its deterministic work budget); on small inputs the
 * engine agrees with the native one (the reference). No timing is asserted: a regression
 * would hang the run, not flake it (`scripts/measure-hostile-patterns.mjs` reports times).
 */
import fc from "fast-check";
import { RE2JS } from "re2js";
import { describe, expect, it } from "vitest";
import type { PromptctxError } from "../../src/errors/index.js";
import {
  type CompiledRedLines,
  checkDraft,
  compileRedLines,
  DEFAULT_MAX_DRAFT_CHARS,
} from "../../src/trace/index.js";

const atom = fc.constantFrom("a", "b", "x", "\\w", "\\d", "[ab]", "[a-z0-9_]", ".", "\\s", "[^!]");
const bounded = fc
  .tuple(atom, fc.integer({ min: 0, max: 15 }), fc.integer({ min: 0, max: 20 }))
  .map(([a, lo, extra]) => `${a}{${lo},${lo + extra}}`);
const quant = fc.constantFrom("+", "*", "?", "{0,15}", "{1,15}", "{2,8}");
/** `(?:(?:X{0,a}){0,b})…`: repetitions nested two or three deep. */
const nested = fc
  .tuple(bounded, quant, fc.option(quant, { nil: "" }))
  .map(([inner, q1, q2]) => (q2 === "" ? `(?:${inner})${q1}` : `(?:(?:${inner})${q1})${q2}`));
/** `X{0,15}` repeated up to 8 times, as in `'\w{0,15}'.repeat(8) + 'xy'`. */
const sequenced = fc.tuple(bounded, fc.integer({ min: 2, max: 8 })).map(([b, n]) => b.repeat(n));
/** Alternatives that overlap (`a|aa|ab|\w`), repeated. */
const overlapping = fc
  .tuple(
    fc.uniqueArray(fc.constantFrom("a", "aa", "ab", "ba", "\\w", "\\w\\w", "[a-c]", "a?b", "x+"), {
      minLength: 2,
      maxLength: 5,
    }),
    quant,
  )
  .map(([alts, q]) => `(?:${alts.join("|")})${q}`);
/** A long class: many single characters and ranges. */
const longClass = fc
  .tuple(
    fc.uniqueArray(
      fc.constantFrom("a-z", "A-Z", "0-9", "_", ".", "+", "-", "\\u00e0-\\u00ff", "\\s", "😀"),
      {
        minLength: 3,
        maxLength: 10,
      },
    ),
    fc.integer({ min: 0, max: 300 }),
  )
  .map(([items, n]) => `[${items.join("")}]{0,${n}}`);
const classic = fc.constantFrom(
  "(a+)+",
  "(a|aa)+",
  "(.*a){12}",
  "(\\w+\\s?)+",
  "(x+x+)+",
  "(.*,){11}",
);
const piece = fc.oneof(nested, sequenced, overlapping, longClass, classic);
const tail = fc.constantFrom("", "", "", "xy", "!", "$", "b", "\\d!", "z$");
/** A hostile pattern: one to three hostile pieces and a tail that often nearly matches. */
const hostile = fc
  .tuple(
    fc.array(piece, { minLength: 1, maxLength: 3 }),
    tail,
    fc.integer({ min: 0, max: 3 }).map((n) => n === 0),
  )
  .map(([ps, t, anchored]) => `${anchored ? "^" : ""}${ps.join("")}${t}`);

/** Fillers that make backtracking engines explode, and tails that (nearly) complete a match. */
const FILLERS = ["a", "ab", "1", "a1_", "word ", "x", ",", "aaaaaaaaa\n", "ab1 x!\n"];
const TAILS = ["", "!", "xy", "!xy\nbz", "a!", "b", "z", "1!", "ab xy!"];

function draftOf(filler: string, size: number, t: string): string {
  return `${filler.repeat(Math.ceil(size / filler.length)).slice(0, size - t.length)}${t}`;
}

function compiled(pattern: string): CompiledRedLines | PromptctxError {
  try {
    return compileRedLines([{ id: "h", severity: "block", pattern }]);
  } catch (err) {
    return err as PromptctxError;
  }
}

describe("red lines: generated hostile patterns on the linear-time engine", () => {
  it("property: compiled for RE2 (or refused), every check of a ≤ 200 KB draft finishes", () => {
    const seen = { compiled: 0, refused: 0, hits: 0, withheld: 0 };
    fc.assert(
      fc.property(
        hostile,
        fc.constantFrom(...FILLERS),
        fc.constantFrom(...TAILS),
        fc.integer({ min: 1000, max: DEFAULT_MAX_DRAFT_CHARS }),
        (pattern, filler, t, size) => {
          const set = compiled(pattern);
          if (!("lines" in set)) {
            seen.refused++;
            expect(["unsupported_pattern", "invalid_input"]).toContain(set.code);
            expect(set.path).toBe("redLines[0].pattern");
            return;
          }
          expect(set.lines[0]?.pattern?.engine).toBeInstanceOf(RE2JS);
          const r = checkDraft(draftOf(filler, size, t), set);
          expect([null, "scan_budget_exceeded"]).toContain(r.incomplete);
          if (r.incomplete !== null) expect(r.blocked).toBe(true);
          seen.compiled++;
          if (r.violations.length > 0) seen.hits++;
          if (r.incomplete !== null) seen.withheld++;
        },
      ),
      { numRuns: 80, seed: 2025 },
    );
    // The generator exercises the engine: most patterns compile, and drafts do get hit.
    expect(seen.compiled).toBeGreaterThan(seen.refused);
    expect(seen.hits + seen.withheld).toBeGreaterThan(10);
  });

  it("the issue's bypasses load and check 30 KB and 200 KB drafts", () => {
    const bypasses = [
      [`${"\\w{0,15}".repeat(8)}xy`, "xy "],
      [`${"\\d{1,15}".repeat(5)}!`, "12345! "],
    ];
    for (const [pattern, near] of bypasses as Array<[string, string]>) {
      const set = compiled(pattern) as CompiledRedLines;
      expect(set.lines[0]?.pattern?.engine).toBeInstanceOf(RE2JS);
      for (const size of [30_000, DEFAULT_MAX_DRAFT_CHARS]) {
        for (const filler of ["a", "1", "a1 ", "word\n"]) {
          const r = checkDraft(draftOf(filler, size, ""), set);
          expect([pattern, size, filler, r.incomplete, r.violations]).toEqual([
            pattern,
            size,
            filler,
            null,
            [],
          ]);
        }
        // A near-complete tail: found exactly, or withheld by the work budget (fail closed).
        const hit = checkDraft(draftOf("a", size, near), set);
        expect(hit.blocked).toBe(true);
      }
    }
  });

  it("property: on small inputs the engine agrees with the native one, and every span is a real match", () => {
    fc.assert(
      fc.property(
        hostile,
        fc.array(fc.constantFrom("a", "b", "x", "y", "1", "!", " ", ",", "_", "\n", "é"), {
          maxLength: 9,
        }),
        (pattern, chars) => {
          const set = compiled(pattern);
          if (!("lines" in set)) return;
          const engine = set.lines[0]?.pattern?.engine as RE2JS;
          const native = new RegExp(pattern, "u");
          const draft = chars.join("");
          const lines = draft.split("\n");
          for (const line of lines) {
            const m = engine.matcher(line);
            const found = m.find();
            const ref = native.exec(line);
            expect([pattern, line, found ? m.start() : -1]).toEqual([
              pattern,
              line,
              ref?.index ?? -1,
            ]);
          }
          const r = checkDraft(draft, set, { maxMatchesPerLine: 100 });
          expect(r.incomplete).toBeNull();
          const cps = Array.from(draft);
          for (const v of r.violations)
            expect(isMatch(pattern, cps, v.span.start, v.span.end)).toBe(true);
        },
      ),
      { numRuns: 400, seed: 25 },
    );
  });

  it("property: the whole-draft probe never hides a line's match (anchors, flags, CRLF)", () => {
    const piece = fc.constantFrom(
      "^",
      "$",
      "\\A",
      "\\z",
      "\\b",
      "a",
      "b+",
      "\\s",
      ".",
      "(?m)",
      "(?-m)",
      "(?i)",
      "[^a]",
    );
    fc.assert(
      fc.property(
        fc.array(piece, { minLength: 1, maxLength: 5 }).map((xs) => xs.join("")),
        fc.array(fc.constantFrom("a", "B", "b", " ", "\n", "\r\n", "\r"), { maxLength: 14 }),
        (pattern, chars) => {
          const set = compiled(pattern);
          if (!("lines" in set)) return;
          const draft = chars.join("");
          const got = checkDraft(draft, set, { maxMatchesPerLine: 100 }).violations.map(
            (v) => v.span,
          );
          // Reference: each line searched on its own, no probe.
          const engine = set.lines[0]?.pattern?.engine as RE2JS;
          const want: Array<{ start: number; end: number }> = [];
          let base = 0;
          for (const raw of draft.split("\n")) {
            const line = raw.endsWith("\r") ? raw.slice(0, -1) : raw;
            const m = engine.matcher(line);
            for (let from = 0; from <= line.length && m.find(from); ) {
              if (m.end() === m.start()) from = m.start() + 1;
              else {
                want.push({ start: base + m.start(), end: base + m.end() });
                from = m.end();
              }
            }
            base += raw.length + 1;
          }
          expect([pattern, draft, got]).toEqual([pattern, draft, want]);
        },
      ),
      { numRuns: 500, seed: 9 },
    );
  });

  it("generated patterns with lookaround or backreferences are refused at load, never run", () => {
    const poison = fc.constantFrom("(?=a)", "(?!b)", "(?<=x)", "(?<!y)", "(a)\\1", "(?<n>a)\\k<n>");
    fc.assert(
      fc.property(hostile, poison, fc.boolean(), (pattern, p, before) => {
        const source = before ? `${p}${pattern}` : `${pattern}${p}`;
        const e = compiled(source) as PromptctxError;
        expect([e.code, e.path]).toEqual(["unsupported_pattern", "redLines[0].pattern"]);
        expect(e.message).toContain(`/${source}/`);
        expect(e.message).toMatch(/(lookahead|lookbehind|backreference) .* is not supported/);
      }),
      { numRuns: 100, seed: 3 },
    );
  });
});

/**
 * Native reference: does the pattern match exactly `[start, end)` of its line (code points
 * of the draft), in the line's context? A backtracking search from `start` whose end is
 * pinned by a lookahead — exact whatever the engines' preference between matches.
 */
function isMatch(pattern: string, cps: string[], start: number, end: number): boolean {
  let lineStart = start;
  while (lineStart > 0 && cps[lineStart - 1] !== "\n") lineStart--;
  let lineEnd = end;
  while (lineEnd < cps.length && cps[lineEnd] !== "\n") lineEnd++;
  const line = cps.slice(lineStart, lineEnd).join("");
  const re = new RegExp(`(?:${pattern})(?=[^]{${lineEnd - end}}$)`, "uy");
  re.lastIndex = cps.slice(lineStart, start).join("").length;
  return re.test(line);
}
