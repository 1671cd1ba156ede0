/**
 * Issue 11 item 6: a `block` red line cannot be dodged by position. Patterns scan each line
 * of the whole draft exactly (no windows), spans are the true start and end, and a draft
 * too long to check is withheld (blocked, unchecked) instead of partly checked.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { checkDraft, compileRedLines, DEFAULT_MAX_DRAFT_CHARS } from "../../src/trace/index.js";

const KEY_LINE = compileRedLines([
  { id: "no-key", severity: "block", pattern: "sk-[A-Za-z0-9]{150,}" },
]);

/** A long single line of prose with emoji (so code-point and UTF-16 offsets differ). */
const FILLER = "Here is the report you asked for 🚀 with notes, figures and caveats. ".repeat(60);
const FILLER_CPS = Array.from(FILLER);

function key(n: number): string {
  const alnum = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
  let out = "sk-";
  for (let i = 0; i < n; i++) out += alnum[(i * 7 + 3) % alnum.length];
  return out;
}

describe("checkDraft: exact pattern scan", () => {
  it("finds a 203-character key at the offsets the windowed scan missed", () => {
    const k = key(200);
    for (const off of [0, 300, 350, 371, 372, 375, 381, 384, 500, 1000, 2047]) {
      const draft = `${FILLER_CPS.slice(0, off).join("")}${k} ${FILLER}`;
      const r = checkDraft(draft, KEY_LINE);
      expect(r.blocked).toBe(true);
      expect(r.violations.map((v) => v.span)).toEqual([{ start: off, end: off + 203 }]);
    }
  });

  it("property: a secret planted at any offset of a long line is found with its exact span", () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 0, max: FILLER_CPS.length }),
        fc.integer({ min: 150, max: 900 }),
        fc.integer({ min: 0, max: 3 }),
        (off, len, lineBreaksBefore) => {
          const head = "Intro line.\n".repeat(lineBreaksBefore);
          const k = key(len);
          const draft = `${head}${FILLER_CPS.slice(0, off).join("")}${k} ${FILLER}`;
          const r = checkDraft(draft, KEY_LINE);
          const start = Array.from(head).length + off;
          expect(r.violations.map((v) => v.span)).toEqual([{ start, end: start + 3 + len }]);
          expect(r.blocked).toBe(true);
          expect(r.truncated).toBe(false);
        },
      ),
      { numRuns: 150, seed: 11 },
    );
  });

  it("anchors and word boundaries see the true line edges on a long line", () => {
    const line = `${"word ".repeat(400)}END`;
    const r = checkDraft(`${line}\n${line}`, [
      { id: "end", severity: "warn", pattern: "\\bEND$" },
      { id: "start", severity: "warn", pattern: "^word\\b" },
    ]);
    const n = Array.from(line).length;
    expect(r.violations.map((v) => [v.redLineId, v.span.start, v.span.end])).toEqual([
      ["start", 0, 4],
      ["end", n - 3, n],
      ["start", n + 1, n + 5],
      ["end", 2 * n + 1 - 3, 2 * n + 1],
    ]);
  });

  it("property: spans equal a native line-by-line scan (short drafts, where it is cheap)", () => {
    const patterns = [
      "sk-[a-z0-9]{3,}",
      "\\bab+\\b",
      "xy+",
      "a[^b]",
      "^ab|c$",
      "😀+b",
      "(?:a|ab)(?:c|bcd)",
      "\\s+é",
      "\\Bk",
    ];
    const set = compileRedLines(
      patterns.map((pattern, i) => ({ id: `p${i}`, severity: "warn", pattern })),
    );
    const alphabet = ["a", "b", "c", "x", "y", "s", "k", "-", "0", " ", "\n", "😀", "é"];
    fc.assert(
      fc.property(fc.array(fc.constantFrom(...alphabet), { maxLength: 60 }), (chars) => {
        const draft = chars.join("");
        const got = checkDraft(draft, set, { maxMatchesPerLine: 1000 }).violations.map(
          (v) => `${v.redLineId}@${v.span.start}-${v.span.end}`,
        );
        expect(got.sort()).toEqual(nativeSpans(draft, patterns).sort());
      }),
      { numRuns: 400, seed: 7 },
    );
  });

  it("a check over its scan budget stops and withholds the draft (fail closed)", () => {
    const draft = `${"a".repeat(5000)}!`;
    const lines = [{ id: "w", severity: "warn" as const, pattern: "\\w{150,}!" }];
    const r = checkDraft(draft, lines, { maxScanSteps: 10_000 });
    expect(r).toMatchObject({ incomplete: "scan_budget_exceeded", blocked: true, checkedChars: 0 });
    const full = checkDraft(draft, lines);
    expect(full).toMatchObject({ incomplete: null, blocked: false, checkedChars: 5001 });
    expect(full.violations.map((v) => v.span)).toEqual([{ start: 0, end: 5001 }]);
    expect(() => checkDraft("x", lines, { maxScanSteps: 0 })).toThrow(/positive integer/);
  });

  it("a draft over maxDraftChars is withheld unchecked (fail closed), not partly checked", () => {
    const draft = `${"x ".repeat(60)}nothing to see`;
    const r = checkDraft(draft, KEY_LINE, { maxDraftChars: 100 });
    expect(r).toMatchObject({
      truncated: true,
      blocked: true,
      flagged: true,
      checkedChars: 0,
      violations: [],
      incomplete: "draft_too_long",
    });
    const ok = checkDraft("short and clean", KEY_LINE);
    expect(ok).toMatchObject({ blocked: false, incomplete: null, truncated: false });
    expect(DEFAULT_MAX_DRAFT_CHARS).toBe(200_000);
  });
});

/** Native global `exec` per line (`\n`-split): `id@start-end` in code points. */
function nativeSpans(draft: string, patterns: string[]): string[] {
  const out: string[] = [];
  let lineStart = 0;
  for (const line of draft.split("\n")) {
    patterns.forEach((p, i) => {
      const re = new RegExp(p, "gu");
      for (let m = re.exec(line); m !== null; m = re.exec(line)) {
        if (m[0] === "") {
          re.lastIndex = m.index + ((line.codePointAt(m.index) ?? 0) > 0xffff ? 2 : 1);
          continue;
        }
        const s = lineStart + Array.from(line.slice(0, m.index)).length;
        out.push(`p${i}@${s}-${s + Array.from(m[0]).length}`);
      }
    });
    lineStart += Array.from(line).length + 1;
  }
  return out;
}
