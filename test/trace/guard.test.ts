/**
 * The red-line check of docs/manifest-wire-guard.md: load-time validation (patterns the
 * linear-time engine cannot run are refused), literal and regex hits with code-point
 * spans, caps, and hostile drafts that must not hang.
 */

import { RE2JS } from "re2js";
import { describe, expect, it } from "vitest";
import { type PromptctxError, UnsupportedPatternError } from "../../src/errors/index.js";
import type { RedLine, Skill } from "../../src/sources/index.js";
import {
  checkDraft,
  compileRedLines,
  DEFAULT_MAX_DRAFT_CHARS,
  redLinesFromSkills,
} from "../../src/trace/index.js";

function loadError(lines: unknown): PromptctxError {
  try {
    compileRedLines(lines);
  } catch (e) {
    return e as PromptctxError;
  }
  throw new Error("accepted");
}

const cpIndexOf = (s: string, sub: string) => Array.from(s.slice(0, s.indexOf(sub))).length;

describe("compileRedLines", () => {
  it("accepts literals and safe patterns", () => {
    const set = compileRedLines([
      { id: "a", severity: "block", literal: "rm -rf /" },
      { id: "b", severity: "warn", pattern: "\\bsk-[A-Za-z0-9_-]{20,}" },
      { id: "c", severity: "review", pattern: "ignore\\s+(all\\s+)?previous\\s+instructions" },
      { id: "d", severity: "warn", pattern: "\\bpassword\\s*[:=]\\s*\\S+" },
      { id: "e", severity: "warn", pattern: "[\\w.-]+@[\\w-]+\\.[a-z]{2,}" },
      { id: "f", severity: "warn", pattern: "(?:\\d{1,3}\\.){3}\\d{1,3}" },
      { id: "g", severity: "warn", pattern: "(?:cat|dog)+s?" },
    ]);
    expect(set.lines.map((l) => l.kind)).toEqual([
      "literal",
      "pattern",
      "pattern",
      "pattern",
      "pattern",
      "pattern",
      "pattern",
    ]);
  });

  it("compiles the classic catastrophic shapes for the linear-time engine and checks at once", () => {
    const hostile = ["(a+)+$", "(x*)*y", "(\\w+\\s?)+$", "(a|a)*b", "(a|ab)+c", "a*a*b", ".*x.*y"];
    const set = compileRedLines(
      hostile.map((pattern, i) => ({ id: `h${i}`, severity: "warn", pattern })),
    );
    for (const line of set.lines) expect(line.pattern?.engine).toBeInstanceOf(RE2JS);
    const r = checkDraft(`${"a".repeat(20_000)}!\n${"x".repeat(20_000)}`, set);
    expect(r.incomplete).toBeNull();
    expect(r.violations.map((v) => [v.redLineId, v.span.start, v.span.end])).toEqual([
      ["h2", 20_002, 40_002], // (\w+\s?)+$ over the whole second line
    ]);
  });

  it.each([
    ["a(?=b)", /lookahead/],
    ["(?<!a)b", /lookbehind/],
    ["(.)\\1+", /backreference/],
    ["a{2000}", /repeat count/],
  ])(
    "refuses %s at load with unsupported_pattern, naming the line and the reason",
    (pattern, why) => {
      const e = loadError([
        { id: "ok", severity: "warn", literal: "fine" },
        { id: "bad", severity: "block", pattern },
      ]);
      expect(e).toBeInstanceOf(UnsupportedPatternError);
      expect([e.code, e.path]).toEqual(["unsupported_pattern", "redLines[1].pattern"]);
      expect(e.message).toContain(`/${pattern}/`);
      expect(e.message).toMatch(why);
    },
  );

  it("rejects bad shapes with the field path", () => {
    const cases: Array<[unknown, string, RegExp]> = [
      [{}, "redLines", /list/],
      [[{ id: "x", severity: "block", literal: "  " }], "redLines[0].literal", /blank/],
      [[{ id: "x", severity: "block" }], "redLines[0]", /exactly one/],
      [[{ id: "x", severity: "block", literal: "a", pattern: "b" }], "redLines[0]", /exactly one/],
      [[{ id: "x", severity: "fatal", literal: "a" }], "redLines[0].severity", /./],
      [[{ id: " ", severity: "block", literal: "a" }], "redLines[0].id", /./],
      [
        [
          { id: "x", severity: "block", literal: "a" },
          { id: "x", severity: "warn", literal: "b" },
        ],
        "redLines[1].id",
        /duplicate/,
      ],
      [[{ id: "x", severity: "block", pattern: "(" }], "redLines[0].pattern", /invalid regex/],
      [[{ id: "x", severity: "block", pattern: "[z-a]" }], "redLines[0].pattern", /invalid regex/],
      [[{ id: "x", severity: "block", pattern: "x?" }], "redLines[0].pattern", /empty string/],
      [
        [{ id: "x", severity: "block", pattern: "a".repeat(501) }],
        "redLines[0].pattern",
        /limit is 500/,
      ],
    ];
    for (const [input, path, message] of cases) {
      const e = loadError(input);
      expect([e.code, e.path]).toEqual(["invalid_input", path]);
      expect(e.message).toMatch(message);
    }
    // An unknown field is `unknown_field` at its own path, with the close known one.
    const flags = loadError([{ id: "x", severity: "block", literal: "a", flags: "i" }]);
    expect([flags.code, flags.path]).toEqual(["unknown_field", "redLines[0].flags"]);
    const typo = loadError([{ id: "x", severity: "block", litteral: "a" }]);
    expect(typo.message).toContain("did you mean `literal`?");
  });
});

describe("checkDraft", () => {
  const lines: RedLine[] = [
    { id: "share-pw", severity: "block", literal: "share the password" },
    { id: "promise", severity: "review", literal: "Guaranteed Returns" },
    { id: "token", severity: "warn", pattern: "sk-[A-Za-z0-9]{8,}" },
  ];

  it("finds literals case-insensitively and regexes, with code-point spans after emoji", () => {
    const draft =
      "🚀🚀 Please SHARE  THE\nPassword now. Key: sk-ABCdef123456 👍 guaranteed returns!";
    const r = checkDraft(draft, lines);
    expect(r.violations.map((v) => [v.redLineId, v.severity, v.kind, v.flagged])).toEqual([
      ["share-pw", "block", "literal", false],
      ["token", "warn", "pattern", false],
      ["promise", "review", "literal", true],
    ]);
    const [pw, token, promise] = r.violations;
    expect(pw?.span).toEqual({ start: 10, end: 10 + cpLength("SHARE  THE\nPassword") });
    expect(Array.from(draft).slice(pw?.span.start, pw?.span.end).join("")).toBe(
      "SHARE  THE\nPassword",
    );
    const tokenStart = cpIndexOf(draft, "sk-");
    expect(token?.span).toEqual({ start: tokenStart, end: tokenStart + 15 });
    const promiseStart = cpIndexOf(draft, "guaranteed");
    expect(promise?.span).toEqual({ start: promiseStart, end: promiseStart + 18 });
    expect(pw?.excerpt).not.toMatch(/\n/);
    expect(pw?.excerpt).toContain("SHARE THE Password");
    expect(r).toMatchObject({
      checkedChars: cpLength(draft),
      truncated: false,
      capped: [],
      redLineIds: ["promise", "share-pw", "token"],
      blocked: true,
      flagged: true,
    });
  });

  it("misses: whole words only, case-sensitive regexes, nothing across a line for a regex", () => {
    const r = checkDraft("We overshare the passwords. SK-ABCDEFGHIJ. sk-\nABCDEFGHIJ", lines);
    expect(r.violations).toEqual([]);
    expect(r).toMatchObject({ blocked: false, flagged: false, redLineIds: [] });
  });

  it("matches NFKC and full case folding, mapping spans back to the original", () => {
    const draft = "Ａｔｔｅｎｔｉｏｎ: die STRASSE heißt Straße. Café́ ok";
    const r = checkDraft(draft, [
      { id: "street", severity: "warn", literal: "strasse" },
      { id: "attn", severity: "warn", literal: "attention" },
      { id: "cafe", severity: "warn", literal: "café́" },
    ]);
    const hits = r.violations.map((v) => [
      v.redLineId,
      Array.from(draft).slice(v.span.start, v.span.end).join(""),
    ]);
    expect(hits).toEqual([
      ["attn", "Ａｔｔｅｎｔｉｏｎ"],
      ["street", "STRASSE"],
      ["street", "Straße"],
      ["cafe", "Café́"],
    ]);
  });

  it("reports multiple matches per line, leftmost and non-overlapping, capped", () => {
    const draft = Array.from({ length: 30 }, (_, i) => `token sk-${"A".repeat(8)}${i}`).join("\n");
    const r = checkDraft(draft, lines, { maxMatchesPerLine: 5 });
    expect(r.violations).toHaveLength(5);
    expect(r.capped).toEqual(["token"]);
    const all = checkDraft(draft, lines, { maxMatchesPerLine: 100 });
    expect(all.violations).toHaveLength(30);
    expect(all.capped).toEqual([]);
    const lit = checkDraft("aha aha aha", [{ id: "x", severity: "warn", literal: "aha" }]);
    expect(lit.violations.map((v) => v.span)).toEqual([
      { start: 0, end: 3 },
      { start: 4, end: 7 },
      { start: 8, end: 11 },
    ]);
  });

  it("finds every short match on an over-long line", () => {
    const sentence = "The quick brown fox jumps over the lazy dog. ";
    const draft = sentence.repeat(100); // one long line
    expect(draft.length).toBeGreaterThan(4000);
    const r = checkDraft(draft, [{ id: "fox", severity: "warn", pattern: "\\bfox\\s+jumps\\b" }], {
      maxMatchesPerLine: 1000,
    });
    expect(r.violations).toHaveLength(100);
    r.violations.forEach((v, i) => {
      expect(v.span.start).toBe(i * sentence.length + sentence.indexOf("fox"));
    });
  });

  it("withholds a draft over maxDraftChars unchecked: blocked and flagged (fail closed)", () => {
    const draft = `${"x ".repeat(60)}share the password`;
    const r = checkDraft(draft, lines, { maxDraftChars: 100 });
    expect(r).toMatchObject({
      checkedChars: 0,
      truncated: true,
      incomplete: "draft_too_long",
      violations: [],
      blocked: true,
      flagged: true,
    });
  });

  it("returns promptly on a hostile draft (200k × 'a' then '!') against safe patterns", () => {
    const draft = `${"a".repeat(DEFAULT_MAX_DRAFT_CHARS - 1)}!`;
    const r = checkDraft(draft, [
      { id: "p1", severity: "block", pattern: "a+b" },
      { id: "p2", severity: "warn", pattern: "\\w+@" },
      { id: "p3", severity: "warn", pattern: ".*secret" },
      { id: "p4", severity: "review", pattern: "a+!" },
      { id: "l1", severity: "warn", literal: "aaa!" },
    ]);
    expect(r.truncated).toBe(false);
    expect(r.checkedChars).toBe(DEFAULT_MAX_DRAFT_CHARS);
    expect(r.violations.map((v) => v.redLineId)).toEqual(["p4"]);
    expect(r.violations[0]?.span.end).toBe(DEFAULT_MAX_DRAFT_CHARS);
    expect(r.violations[0]?.excerpt.endsWith("a!")).toBe(true);
  });

  it("reuses compiled red lines and validates options", () => {
    const set = compileRedLines(lines);
    expect(checkDraft("share the password", set).blocked).toBe(true);
    expect(() => checkDraft("x", set, { maxDraftChars: 0 })).toThrow(/positive integer/);
    expect(() => checkDraft("x", set, { maxMatchesPerLine: 1.5 })).toThrow(/positive integer/);
  });
});

describe("redLinesFromSkills", () => {
  it("namespaces ids by skill and keeps order", () => {
    const skills = [
      {
        name: "deploy",
        redLines: [{ id: "no-force", severity: "block", literal: "push --force" }],
      },
      {
        name: "finance",
        redLines: [{ id: "no-force", severity: "review", pattern: "\\bguarantee" }],
      },
    ] as Array<Pick<Skill, "name" | "redLines">>;
    const out = redLinesFromSkills(skills);
    expect(out.map((l) => l.id)).toEqual(["deploy:no-force", "finance:no-force"]);
    const r = checkDraft("I guarantee it; git push --force", out);
    expect(r.redLineIds).toEqual(["deploy:no-force", "finance:no-force"]);
  });
});

function cpLength(s: string): number {
  return Array.from(s).length;
}
