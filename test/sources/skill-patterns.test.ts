/**
 * Skill trigger (and red-line) patterns run on the linear-time RE2 engine: the classic
 * catastrophic-backtracking shapes load and select at once against the queries that blow
 * up a backtracking engine; what RE2 cannot run (lookaround, backreferences) makes its
 * skill invalid with `unsupported_pattern`'s reason while the other skills load, and a
 * hand-built catalog holding one is refused with the field path. No timing is asserted:
 * a regression would hang the test run, not flake it.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { shortHash } from "../../src/cache/index.js";
import { UnsupportedPatternError } from "../../src/errors/index.js";
import { discoverSkills, parseSkill, type Skill, selectSkills } from "../../src/sources/index.js";

const tmp: string[] = [];
afterAll(() => {
  for (const d of tmp) rmSync(d, { recursive: true, force: true });
});

/** The classic catastrophic-backtracking shapes, each with a query that would blow it up. */
const CATASTROPHIC: Array<[string, string, boolean]> = [
  ["^(a+)+$", `${"a".repeat(5000)}!`, false],
  ["(a|aa)+$", `${"a".repeat(5000)}!`, false],
  ["(.*a){12}", "a".repeat(5000), true],
  ["(\\w+\\s?)+$", `${"word ".repeat(1000)}!`, false],
  ["^(\\d+)*$", `${"1".repeat(5000)}x`, false],
  ["(x+x+)+y", "x".repeat(5000), false],
  ["([a-z]+)*$", `${"a".repeat(5000)}1`, true],
  ["(.*,){11}P", ",".repeat(5000), false],
  [`${"\\w{0,15}".repeat(8)}xy`, `${"a".repeat(9000)}x`, false],
  [`${"\\d{1,15}".repeat(5)}!`, `${"1".repeat(9000)}?`, false],
];

const UNSUPPORTED: Array<[string, RegExp]> = [
  ["fix(?=ed)", /lookahead/],
  ["(?<!un)fix", /lookbehind/],
  ["(fix)\\1", /backreference/],
];

function skill(name: string, pattern: string): Skill {
  return {
    name,
    description: "d",
    path: `/r/${name}/SKILL.md`,
    sha256: shortHash(name),
    triggers: { patterns: [pattern] },
    priority: 0,
    redLines: [],
    body: "b",
  };
}

function skillMd(name: string, pattern: string): string {
  const quoted = `'${pattern.replace(/'/g, "''")}'`;
  return `---\nname: ${name}\ndescription: The ${name} skill\ntriggers:\n  patterns: [${quoted}]\n---\nBody of ${name}.\n`;
}

describe("skill trigger patterns: the linear-time engine", () => {
  it.each(CATASTROPHIC)(
    "loads %s and selects against its hostile query at once",
    (pattern, query, hit) => {
      const r = parseSkill("x/SKILL.md", skillMd("s", pattern), "s");
      expect("reason" in r).toBe(false);
      const catalog = { skills: [skill("s", pattern)], invalid: [], shadowed: [] };
      expect(selectSkills(catalog, { text: query, mode: "m" }).matched.length).toBe(hit ? 1 : 0);
    },
  );

  it.each(UNSUPPORTED)("makes a skill with %s invalid, with the reason", (pattern, why) => {
    const r = parseSkill("x/SKILL.md", skillMd("s", pattern), "s");
    const reason = (r as { reason: string }).reason;
    expect(reason.startsWith(`triggers.patterns[0]: /${pattern}/: `)).toBe(true);
    expect(reason).toMatch(why);
    expect(reason).toMatch(/linear-time RE2 engine/);
  });

  it("refuses an unsupported red-line pattern in a skill the same way", () => {
    const text = `---\nname: s\ndescription: d\nredLines:\n  - { id: a, severity: block, pattern: '(a)\\1' }\n---\nb\n`;
    const r = parseSkill("x/SKILL.md", text, "s");
    expect((r as { reason: string }).reason).toMatch(
      /^redLines\[0\]\.pattern: \/\(a\)\\1\/: backreference \\1 is not supported/,
    );
  });

  it("discovery: unsupported skills are invalid, the rest (hostile shapes included) load", async () => {
    const root = mkdtempSync(join(tmpdir(), "promptctx-skill-regex-"));
    tmp.push(root);
    UNSUPPORTED.forEach(([pattern], i) => {
      mkdirSync(join(root, `bad-${i}`));
      writeFileSync(join(root, `bad-${i}`, "SKILL.md"), skillMd(`bad-${i}`, pattern));
    });
    CATASTROPHIC.forEach(([pattern], i) => {
      mkdirSync(join(root, `hostile-${i}`));
      writeFileSync(join(root, `hostile-${i}`, "SKILL.md"), skillMd(`hostile-${i}`, pattern));
    });
    const catalog = await discoverSkills({ roots: [root] });
    expect(catalog.skills).toHaveLength(CATASTROPHIC.length);
    expect(catalog.invalid.map((b) => b.path.split("/").at(-2)).sort()).toEqual([
      "bad-0",
      "bad-1",
      "bad-2",
    ]);
    for (const bad of catalog.invalid) expect(bad.reason).toMatch(/is not supported/);
    for (const [, query] of CATASTROPHIC) selectSkills(catalog, { text: query, mode: "react" });
  });

  it("selection refuses a hand-built catalog holding an unsupported pattern (fails closed)", () => {
    const catalog = {
      skills: [skill("ok", "^a"), skill("bad", "a(?=b)")],
      invalid: [],
      shadowed: [],
    };
    const run = () => selectSkills(catalog, { text: "ab", mode: "m" });
    expect(run).toThrow(UnsupportedPatternError);
    try {
      run();
    } catch (err) {
      expect((err as UnsupportedPatternError).path).toBe("catalog.skills[1].triggers.patterns[0]");
      expect((err as Error).message).toMatch(/lookahead/);
    }
  });

  it("matches exactly on long queries, only the first 10,000 code points", () => {
    const catalog = {
      skills: [
        skill("late", "\\w{150,}!"),
        skill("never", "[a-z]+\\d"),
        skill("anchored", "^fix\\b"),
      ],
      invalid: [],
      shadowed: [],
    };
    const words = "a".repeat(9_000);
    const sel = selectSkills(catalog, { text: `${words}!`, mode: "m" });
    expect(sel.matched.map((m) => m.name)).toEqual(["late"]);
    expect(selectSkills(catalog, { text: words, mode: "m" }).abstained).toBe(true);
    expect(selectSkills(catalog, { text: "fix it", mode: "m" }).matched.map((m) => m.name)).toEqual(
      ["anchored"],
    );
    expect(selectSkills(catalog, { text: `${"a".repeat(10_000)}!`, mode: "m" }).abstained).toBe(
      true,
    );
  });

  it("(?i) makes a trigger case-insensitive; without it, patterns are case-sensitive", () => {
    const catalog = {
      skills: [skill("ci", "(?i)\\bdeploy\\b"), skill("cs", "\\bDeploy\\b")],
      invalid: [],
      shadowed: [],
    };
    const names = (text: string) =>
      selectSkills(catalog, { text, mode: "m" }).matched.map((m) => m.name);
    expect(names("please DEPLOY now")).toEqual(["ci"]);
    expect(names("Deploy now")).toEqual(["ci", "cs"]);
  });
});
