/**
 * Issue 11 item 5: skill trigger (and red-line) patterns go through the static regex-safety
 * check of `src/text/regex-safety.ts`. An unsafe pattern makes its skill invalid, with the
 * reason, while the other skills load; selection never runs an unsafe pattern, so a hostile
 * query against the classic catastrophic patterns returns at once (they are rejected, not
 * matched). No timing is asserted: a regression would hang the test run, not flake it.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { shortHash } from "../../src/cache/index.js";
import { InvalidInputError } from "../../src/errors/index.js";
import { discoverSkills, parseSkill, type Skill, selectSkills } from "../../src/sources/index.js";

const tmp: string[] = [];
afterAll(() => {
  for (const d of tmp) rmSync(d, { recursive: true, force: true });
});

/** The classic catastrophic-backtracking shapes, each with a query that would blow it up. */
const CATASTROPHIC: Array<[string, string]> = [
  ["^(a+)+$", `${"a".repeat(5000)}!`],
  ["(a|aa)+$", `${"a".repeat(5000)}!`],
  ["(.*a){12}", "a".repeat(5000)],
  ["(\\w+\\s?)+$", `${"word ".repeat(1000)}!`],
  ["^(\\d+)*$", `${"1".repeat(5000)}x`],
  ["(x+x+)+y", "x".repeat(5000)],
  ["([a-z]+)*$", `${"a".repeat(5000)}1`],
  ["(.*,){11}P", ",".repeat(5000)],
];

function skillMd(name: string, pattern: string): string {
  const quoted = `'${pattern.replace(/'/g, "''")}'`;
  return `---\nname: ${name}\ndescription: The ${name} skill\ntriggers:\n  patterns: [${quoted}]\n---\nBody of ${name}.\n`;
}

describe("skill trigger patterns: regex safety", () => {
  it.each(CATASTROPHIC)("rejects %s at parse time with the reason", (pattern) => {
    const r = parseSkill("x/SKILL.md", skillMd("s", pattern), "s");
    expect("reason" in r).toBe(true);
    const reason = (r as { reason: string }).reason;
    expect(reason.startsWith(`triggers.patterns[0]: unsafe regex /${pattern}/u: `)).toBe(true);
    expect(reason).toMatch(/backtrack|combinations/);
  });

  it("rejects an unsafe red-line pattern in a skill the same way", () => {
    const text = `---\nname: s\ndescription: d\nredLines:\n  - { id: a, severity: block, pattern: '(a+)+$' }\n---\nb\n`;
    const r = parseSkill("x/SKILL.md", text, "s");
    expect((r as { reason: string }).reason).toMatch(
      /^redLines\[0\]\.pattern: unsafe regex \/\(a\+\)\+\$\/u: nested quantifier/,
    );
  });

  it("discovery: the unsafe skills are invalid, the rest load and a long query selects at once", async () => {
    const root = mkdtempSync(join(tmpdir(), "promptctx-skill-regex-"));
    tmp.push(root);
    CATASTROPHIC.forEach(([pattern], i) => {
      mkdirSync(join(root, `bad-${i}`));
      writeFileSync(join(root, `bad-${i}`, "SKILL.md"), skillMd(`bad-${i}`, pattern));
    });
    mkdirSync(join(root, "good"));
    writeFileSync(join(root, "good", "SKILL.md"), skillMd("good", "^a{3}"));
    const catalog = await discoverSkills({ roots: [root] });
    expect(catalog.skills.map((s) => s.name)).toEqual(["good"]);
    expect(catalog.invalid).toHaveLength(CATASTROPHIC.length);
    for (const bad of catalog.invalid) expect(bad.reason).toMatch(/unsafe regex/);
    for (const [, query] of CATASTROPHIC) {
      const sel = selectSkills(catalog, { text: query, mode: "react" });
      expect(sel.matched.map((m) => m.name)).toEqual(query.startsWith("aaa") ? ["good"] : []);
    }
  });

  it("selection refuses a hand-built catalog holding an unsafe pattern (fails closed)", () => {
    const bad: Skill = {
      name: "bad",
      description: "d",
      path: "/r/bad/SKILL.md",
      sha256: shortHash("bad"),
      triggers: { patterns: ["^(a+)+$"] },
      priority: 0,
      redLines: [],
      body: "b",
    };
    const catalog = { skills: [bad], invalid: [], shadowed: [] };
    const run = () => selectSkills(catalog, { text: `${"a".repeat(5000)}!`, mode: "m" });
    expect(run).toThrow(InvalidInputError);
    try {
      run();
    } catch (err) {
      expect((err as InvalidInputError).path).toBe("catalog.skills[0].triggers.patterns[0]");
      expect((err as Error).message).toMatch(/nested quantifier/);
    }
  });
});

describe("skill trigger patterns: exact linear-time matching", () => {
  it("a safe pattern that a native search would scan quadratically matches exactly", () => {
    const s = (name: string, pattern: string): Skill => ({
      name,
      description: "d",
      path: `/r/${name}/SKILL.md`,
      sha256: shortHash(name),
      triggers: { patterns: [pattern] },
      priority: 0,
      redLines: [],
      body: "b",
    });
    const catalog = {
      skills: [s("late", "\\w{150,}!"), s("never", "[a-z]+\\d"), s("anchored", "^fix\\b")],
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
    // Only the first 10,000 code points are tested, as before.
    expect(selectSkills(catalog, { text: `${"a".repeat(10_000)}!`, mode: "m" }).abstained).toBe(
      true,
    );
  });
});
