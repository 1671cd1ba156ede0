/**
 * Skills (docs/sources.md): discovery in real temp dirs, every validation rule with the others
 * still loading, root precedence and shadowing, triggers, selection order, cap, ties,
 * overlaps, abstention, the catalog text and the source's two kinds.
 */
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import fc from "fast-check";
import { afterAll, describe, expect, it } from "vitest";
import { shortHash } from "../../src/cache/index.js";
import { InvalidInputError } from "../../src/errors/index.js";
import {
  type ContextSource,
  discoverSkills,
  type InvalidSkill,
  isInvalidSkill,
  parseSkill,
  type Skill,
  type SkillCatalog,
  SourceItemSchema,
  type SourceQuery,
  selectSkills,
  skillCatalogText,
  skillsSource,
} from "../../src/sources/index.js";

const tmp: string[] = [];
afterAll(() => {
  for (const d of tmp) rmSync(d, { recursive: true, force: true });
});

function tempDir(): string {
  const d = mkdtempSync(join(tmpdir(), "promptctx-skills-"));
  tmp.push(d);
  return d;
}

function writeSkill(root: string, dir: string, text: string): string {
  mkdirSync(join(root, dir), { recursive: true });
  const path = join(root, dir, "SKILL.md");
  writeFileSync(path, text);
  return path;
}

function md(frontmatter: string, body = "Body."): string {
  return `---\n${frontmatter}\n---\n${body}\n`;
}

const ok = (name: string, extra = "") =>
  md(`name: ${name}\ndescription: The ${name} skill${extra}`);

function parsed(text: string, dir = "s"): Skill {
  const r = parseSkill("x/SKILL.md", text, dir);
  if (isInvalidSkill(r)) throw new Error(`unexpected invalid: ${r.reason}`);
  return r;
}
function rejected(text: string, dir = "s"): string {
  const r = parseSkill("x/SKILL.md", text, dir);
  if (!isInvalidSkill(r)) throw new Error("expected invalid");
  return r.reason;
}

function skill(name: string, priority: number, triggers: Skill["triggers"], body = "b"): Skill {
  return {
    name,
    description: `about ${name}`,
    path: `/r/${name}/SKILL.md`,
    sha256: shortHash(name),
    triggers,
    priority,
    redLines: [],
    body,
  };
}
function catalogOf(...skills: Skill[]): SkillCatalog {
  return {
    skills: [...skills].sort((a, b) => (a.name < b.name ? -1 : 1)),
    invalid: [],
    shadowed: [],
  };
}

describe("parseSkill", () => {
  it("parses every field, hashes the bytes, trims the body", () => {
    const text = md(
      [
        "name: db-migrate",
        "description: >",
        "  Runs database",
        "  migrations safely",
        "license: MIT",
        "metadata:",
        "  version: '1.0'",
        "  author: me",
        "allowed-tools: Read  Bash(git:*)",
        "triggers:",
        "  keywords: [Migration, Schema Change]",
        "  patterns: ['^fix']",
        "  modes: [react]",
        "  future: ignored",
        "priority: 5",
        "redLines:",
        "  - { id: no-drop, severity: block, literal: DROP TABLE }",
        "  - { id: no-rm, severity: review, pattern: 'rm\\s+-rf' }",
        "unknownKey: whatever",
      ].join("\n"),
      "\n\n# Migrate\r\nStep 1.\n\n",
    );
    const s = parsed(text, "db-migrate");
    expect(s).toEqual({
      name: "db-migrate",
      description: "Runs database migrations safely",
      path: "x/SKILL.md",
      sha256: shortHash(text),
      license: "MIT",
      metadata: { author: "me", version: "1.0" },
      allowedTools: ["Read", "Bash(git:*)"],
      triggers: { keywords: ["migration", "schema change"], patterns: ["^fix"], modes: ["react"] },
      priority: 5,
      redLines: [
        { id: "no-drop", severity: "block", literal: "DROP TABLE" },
        { id: "no-rm", severity: "review", pattern: "rm\\s+-rf" },
      ],
      body: "# Migrate\nStep 1.",
    });
    expect(s.sha256).toMatch(/^[0-9a-f]{16}$/);
  });

  it("defaults: priority 0, no triggers, no red lines; allowed-tools as a list or comma string", () => {
    const s = parsed(ok("s"));
    expect(s.priority).toBe(0);
    expect(s.triggers).toEqual({});
    expect(s.redLines).toEqual([]);
    expect(s.license).toBeUndefined();
    expect(parsed(ok("s", "\nallowed-tools: [Read, Grep]")).allowedTools).toEqual(["Read", "Grep"]);
    expect(parsed(ok("s", "\nallowed-tools: Read, Grep")).allowedTools).toEqual(["Read", "Grep"]);
    // An empty value counts as absent.
    expect(parsed(ok("s", "\nlicense:\ntriggers:")).triggers).toEqual({});
  });

  it("accepts CRLF files and a BOM (hash still over the whole text)", () => {
    const text = `\uFEFF---\r\nname: s\r\ndescription: d\r\n---\r\nline1\r\nline2\r\n`;
    const s = parsed(text);
    expect(s.body).toBe("line1\nline2");
    expect(s.sha256).toBe(shortHash(text));
  });

  it.each([
    ["Upper", 'name "Upper": must be 1-64 chars'],
    ["-lead", 'name "-lead": must be 1-64 chars'],
    ["trail-", 'name "trail-": must be 1-64 chars'],
    ["dou--ble", 'name "dou--ble": must be 1-64 chars'],
    ["under_score", 'name "under_score": must be 1-64 chars'],
    ["a".repeat(65), "must be 1-64 chars"],
  ])("rejects name %s", (name, reason) => {
    expect(rejected(md(`name: "${name}"\ndescription: d`), name)).toContain(reason);
  });

  it("accepts a 64-char name and digits", () => {
    const name = `a1-${"b".repeat(61)}`;
    expect(parsed(md(`name: ${name}\ndescription: d`), name).name).toBe(name);
  });

  it("rejects each broken rule with a precise reason", () => {
    expect(rejected(ok("other"), "s")).toBe('name "other" does not match its directory "s"');
    expect(rejected(md("description: d"))).toBe("name: required string is missing");
    expect(rejected(md("name: s\ndescription: ''"))).toBe("description: must not be empty");
    expect(rejected(md("name: s\ndescription: '   '"))).toBe("description: must not be empty");
    expect(rejected(md("name: s"))).toBe("description: required string is missing");
    expect(rejected(md(`name: s\ndescription: ${"é".repeat(1025)}`))).toBe(
      "description: 1025 chars, the limit is 1024",
    );
    expect(parsed(md(`name: s\ndescription: ${"😀".repeat(1024)}`)).description).toHaveLength(2048);
    expect(rejected(ok("s", "\ntriggers:\n  patterns: ['(unclosed']"))).toMatch(
      /^triggers\.patterns\[0\]: \/\(unclosed\/: invalid regex: missing closing \)/,
    );
    expect(rejected(ok("s", `\ntriggers:\n  patterns: ['${"a".repeat(501)}']`))).toBe(
      "triggers.patterns[0]: pattern is 501 code points, the limit is 500",
    );
    expect(rejected(ok("s", "\ntriggers:\n  keywords: migration"))).toBe(
      "triggers.keywords: must be a list of strings, got string",
    );
    expect(rejected(ok("s", "\ntriggers:\n  modes: [react, 3]"))).toBe(
      "triggers.modes[1]: must be a string, got number",
    );
    expect(rejected(ok("s", "\ntriggers: [a]"))).toBe("triggers: must be a mapping, got a list");
    expect(rejected(ok("s", "\npriority: 1.5"))).toBe("priority: must be an integer, got 1.5");
    expect(rejected(ok("s", "\npriority: high"))).toBe('priority: must be an integer, got "high"');
    expect(rejected(ok("s", "\nlicense: 3"))).toBe("license: must be a string, got number");
    expect(rejected(ok("s", "\nmetadata:\n  version: 1.0"))).toBe(
      "metadata.version: must be a string, got number",
    );
    expect(rejected(ok("s", "\nallowed-tools: [Read, 1]"))).toBe(
      "allowed-tools[1]: must be a string, got number",
    );
  });

  it("rejects bad red lines", () => {
    const rl = (body: string) => rejected(ok("s", `\nredLines:\n${body}`));
    expect(rl("  - { id: a, severity: fatal, literal: x }")).toBe(
      "redLines[0].severity: must be one of block, warn, review",
    );
    expect(rl("  - { id: a, severity: block }")).toBe(
      "redLines[0]: needs exactly one of literal or pattern",
    );
    expect(rl("  - { id: a, severity: block, literal: x, pattern: y }")).toBe(
      "redLines[0]: needs exactly one of literal or pattern",
    );
    expect(rl("  - { severity: block, literal: x }")).toBe(
      "redLines[0].id: must be a non-blank string",
    );
    expect(rl("  - { id: a, severity: warn, pattern: '[z-a]' }")).toMatch(
      /^redLines\[0\]\.pattern: \/\[z-a\]\/: invalid regex/,
    );
    expect(rl("  - { id: a, severity: warn, pattern: 'x*' }")).toBe(
      "redLines[0].pattern: /x*/: matches the empty string",
    );
    expect(
      rl("  - { id: a, severity: warn, literal: x }\n  - { id: a, severity: warn, literal: y }"),
    ).toBe('redLines[1].id: duplicate red line id "a"');
    expect(rejected(ok("s", "\nredLines: {id: a}"))).toBe(
      "redLines: must be a list, got a mapping",
    );
  });

  it("rejects missing, unterminated, malformed and non-mapping frontmatter", () => {
    expect(rejected("# just markdown\n")).toBe(
      "no frontmatter: the file must start with a '---' line",
    );
    expect(rejected("")).toBe("no frontmatter: the file must start with a '---' line");
    expect(rejected("---\nname: s\ndescription: d\n")).toBe(
      "unterminated frontmatter: no closing '---' line",
    );
    expect(rejected(md("name: s\ndescription: [unclosed"))).toMatch(/^malformed YAML: /);
    expect(rejected(md("name: s\nname: s\ndescription: d"))).toMatch(
      /^malformed YAML: Map keys must be unique/,
    );
    expect(rejected(md("- a\n- b"))).toBe("frontmatter must be a YAML mapping, got a list");
    expect(rejected(md(""))).toBe("frontmatter must be a YAML mapping, got null");
  });

  it("never throws on arbitrary text", () => {
    fc.assert(
      fc.property(fc.string(), fc.string(), (a, b) => {
        const r = parseSkill("p", `---\n${a}\n---\n${b}`, "s");
        expect(typeof r).toBe("object");
      }),
      { numRuns: 300 },
    );
  });
});

describe("discoverSkills", () => {
  it("loads valid skills, reports each invalid one, ignores non-dirs and missing roots", async () => {
    const root = tempDir();
    writeSkill(root, "beta", ok("beta"));
    writeSkill(root, "alpha", ok("alpha"));
    const bad1 = writeSkill(root, "Bad", md("name: Bad\ndescription: d"));
    const bad2 = writeSkill(root, "mismatch", ok("other"));
    const bad3 = writeSkill(root, "noyaml", "# no frontmatter\n");
    const bad4 = writeSkill(root, "regex", ok("regex", "\ntriggers:\n  patterns: ['(']"));
    const bad5 = writeSkill(root, "prio", ok("prio", "\npriority: 2.5"));
    const bad6 = writeSkill(
      root,
      "redline",
      ok("redline", "\nredLines: [{id: r, severity: x, literal: y}]"),
    );
    const bad7 = writeSkill(root, "yaml", md("name: yaml\ndescription: [oops"));
    const bad8 = writeSkill(root, "long", md(`name: long\ndescription: ${"x".repeat(1025)}`));
    const bad9 = writeSkill(root, "empty", md("name: empty\ndescription: ''"));
    writeFileSync(join(root, "README.md"), "not a skill dir");
    mkdirSync(join(root, "no-skill-file"));
    mkdirSync(join(root, "dir-skill", "SKILL.md"), { recursive: true });
    mkdirSync(join(root, "latin1"));
    writeFileSync(join(root, "latin1", "SKILL.md"), Buffer.from([0x2d, 0x2d, 0x2d, 0x0a, 0xff]));

    const cat = await discoverSkills({ roots: [join(root, "missing"), root] });
    expect(cat.skills.map((s) => s.name)).toEqual(["alpha", "beta"]);
    expect(cat.shadowed).toEqual([]);
    const reasons = new Map(cat.invalid.map((i: InvalidSkill) => [i.path, i.reason]));
    expect(reasons.get(bad1)).toContain('name "Bad"');
    expect(reasons.get(bad2)).toBe('name "other" does not match its directory "mismatch"');
    expect(reasons.get(bad3)).toContain("no frontmatter");
    expect(reasons.get(bad4)).toContain("invalid regex");
    expect(reasons.get(bad5)).toBe("priority: must be an integer, got 2.5");
    expect(reasons.get(bad6)).toContain("redLines[0].severity");
    expect(reasons.get(bad7)).toContain("malformed YAML");
    expect(reasons.get(bad8)).toBe("description: 1025 chars, the limit is 1024");
    expect(reasons.get(bad9)).toBe("description: must not be empty");
    expect(reasons.get(join(root, "dir-skill", "SKILL.md"))).toBe("SKILL.md is not a regular file");
    expect(reasons.get(join(root, "latin1", "SKILL.md"))).toBe("SKILL.md is not valid UTF-8");
    expect(cat.invalid).toHaveLength(11);
    // Deterministic: invalid entries in code-point directory order.
    const dirs = cat.invalid.map((i) => i.path.slice(root.length + 1).split("/")[0]);
    expect(dirs).toEqual([...dirs].sort());
  });

  it("earlier roots win on a name clash and the shadowed one is reported", async () => {
    const ws = tempDir();
    const project = join(ws, ".promptctx", "skills");
    const agents = join(ws, ".agents", "skills");
    const user = join(ws, "user");
    const p1 = writeSkill(project, "db", ok("db"));
    const p2 = writeSkill(agents, "db", md("name: db\ndescription: agents version"));
    const p3 = writeSkill(user, "db", md("name: db\ndescription: user version"));
    writeSkill(user, "git", ok("git"));
    // An invalid skill in an earlier root shadows nothing.
    writeSkill(project, "lint", md("name: lint\ndescription: ''"));
    const lint = writeSkill(user, "lint", ok("lint"));

    const cat = await discoverSkills({ roots: [project, agents, user] });
    expect(cat.skills.map((s) => [s.name, s.path])).toEqual([
      ["db", p1],
      ["git", join(user, "git", "SKILL.md")],
      ["lint", lint],
    ]);
    expect(cat.shadowed).toEqual([
      { name: "db", path: p2, by: p1 },
      { name: "db", path: p3, by: p1 },
    ]);
    expect(cat.invalid).toHaveLength(1);
    // Reversed roots flip the winner.
    const rev = await discoverSkills({ roots: [user, agents, project] });
    expect(rev.skills.find((s) => s.name === "db")?.path).toBe(p3);
    // A root listed twice is read once.
    expect((await discoverSkills({ roots: [project, project] })).shadowed).toEqual([]);
  });

  it("follows a symlinked skill directory inside the allowed roots, never one out of them", async () => {
    const root = tempDir();
    const elsewhere = tempDir();
    writeSkill(elsewhere, "linked", ok("linked"));
    symlinkSync(join(elsewhere, "linked"), join(root, "linked"));
    // Out of the roots: not read, and nothing said of what lies there.
    const out = await discoverSkills({ roots: [root] });
    expect(out).toEqual({ skills: [], invalid: [], shadowed: [] });
    // Allowed explicitly: followed.
    const cat = await discoverSkills({ roots: [root], allowed: [root, elsewhere] });
    expect(cat.skills.map((s) => s.name)).toEqual(["linked"]);
  });

  it("rejects a non-list roots option", async () => {
    await expect(discoverSkills({ roots: "x" as unknown as string[] })).rejects.toThrow(
      InvalidInputError,
    );
  });
});

describe("selectSkills", () => {
  const cat = catalogOf(
    skill("db", 5, { keywords: ["migration", "schema change"] }),
    skill("fixer", 1, { patterns: ["^fix\\b"] }),
    skill("react-mode", 0, { modes: ["react"] }),
    skill("manual", 9, {}),
    skill("cjk", 0, { keywords: ["迁移"] }),
    skill("cpp", 0, { keywords: ["c++"] }),
  );

  it("matches keywords case-insensitively as whole words on normalized text", () => {
    const names = (text: string) =>
      selectSkills(cat, { text, mode: "plan" }).matched.map((m) => m.name);
    expect(names("Run the MIGRATION now")).toEqual(["db"]);
    expect(names("ＭＩＧＲＡＴＩＯＮ?")).toEqual(["db"]);
    expect(names("a Schema\n  Change today")).toEqual(["db"]);
    expect(names("migrations")).toEqual([]);
    expect(names("premigration")).toEqual([]);
    expect(names("数据库迁移怎么做")).toEqual(["cjk"]);
    expect(names("write c++ code")).toEqual(["cpp"]);
    expect(names("abc++")).toEqual([]);
  });

  it("reports reasons for keyword, pattern and mode triggers", () => {
    const sel = selectSkills(cat, { text: "fix the migration", mode: "react" });
    expect(sel.matched).toEqual([
      { name: "db", priority: 5, reasons: ['keyword:"migration"'] },
      { name: "fixer", priority: 1, reasons: ["pattern:/^fix\\b/"] },
      { name: "react-mode", priority: 0, reasons: ["mode:react"] },
    ]);
    expect(sel.abstained).toBe(false);
    // Patterns see the raw (case-sensitive) query.
    expect(selectSkills(cat, { text: "Fix it", mode: "x" }).abstained).toBe(true);
  });

  it("a skill without triggers never auto-matches; nothing matched → abstain", () => {
    const sel = selectSkills(cat, { text: "manual please", mode: "other" });
    expect(sel).toEqual({ matched: [], abstained: true, capped: [], ties: [], overlaps: [] });
  });

  it("any trigger suffices (OR)", () => {
    const c = catalogOf(skill("s", 0, { keywords: ["deploy"], modes: ["ops"] }));
    expect(selectSkills(c, { text: "deploy", mode: "chat" }).matched).toHaveLength(1);
    expect(selectSkills(c, { text: "hello", mode: "ops" }).matched).toHaveLength(1);
    expect(selectSkills(c, { text: "deploy", mode: "ops" }).matched[0]?.reasons).toEqual([
      'keyword:"deploy"',
      "mode:ops",
    ]);
  });

  it("orders priority desc → name asc, caps, reports ties and overlaps", () => {
    const c = catalogOf(
      skill("zeta", 2, { keywords: ["deploy"] }),
      skill("alpha", 2, { keywords: ["deploy"], patterns: ["prod"] }),
      skill("mid", 7, { patterns: ["prod"] }),
      skill("low", 0, { modes: ["ops"] }),
      skill("beta", 0, { keywords: ["deploy"] }),
    );
    const sel = selectSkills(c, { text: "deploy to prod", mode: "ops" });
    expect(sel.matched.map((m) => m.name)).toEqual(["mid", "alpha", "zeta"]);
    expect(sel.capped).toEqual(["beta", "low"]);
    expect(sel.ties).toEqual([
      ["alpha", "zeta"],
      ["beta", "low"],
    ]);
    expect(sel.overlaps).toEqual([
      { a: "alpha", b: "beta", on: 'keyword:"deploy"' },
      { a: "alpha", b: "mid", on: "pattern:/prod/" },
      { a: "alpha", b: "zeta", on: 'keyword:"deploy"' },
      { a: "beta", b: "zeta", on: 'keyword:"deploy"' },
    ]);
    expect(selectSkills(c, { text: "deploy to prod", mode: "ops" }, { cap: 1 }).capped).toEqual([
      "alpha",
      "zeta",
      "beta",
      "low",
    ]);
    const none = selectSkills(c, { text: "deploy", mode: "ops" }, { cap: 0 });
    expect(none.abstained).toBe(true);
    expect(none.capped).toEqual(["alpha", "zeta", "beta", "low"]);
    expect(() => selectSkills(c, { text: "", mode: "" }, { cap: -1 })).toThrow(InvalidInputError);
    expect(() => selectSkills(c, { text: "", mode: "" }, { cap: 1.5 })).toThrow(InvalidInputError);
  });

  it("is independent of catalog order", () => {
    const skills = [
      skill("a", 1, { keywords: ["x"] }),
      skill("b", 1, { keywords: ["x"] }),
      skill("c", 3, { keywords: ["x"] }),
      skill("d", 0, { keywords: ["x"] }),
    ];
    const base = selectSkills(catalogOf(...skills), { text: "x", mode: "m" });
    fc.assert(
      fc.property(fc.shuffledSubarray(skills, { minLength: 4, maxLength: 4 }), (perm) => {
        const cat2 = { skills: perm, invalid: [], shadowed: [] };
        expect(selectSkills(cat2, { text: "x", mode: "m" })).toEqual(base);
      }),
    );
  });

  it("runs patterns only on the first 10,000 code points of the query", () => {
    const c = catalogOf(
      skill("tail", 0, { patterns: ["END$"] }),
      skill("head", 0, { patterns: ["^😀"] }),
    );
    const long = `😀${"a".repeat(9_999)}END`;
    expect(selectSkills(c, { text: long, mode: "m" }).matched.map((m) => m.name)).toEqual(["head"]);
    expect(
      selectSkills(c, { text: `${"a".repeat(9_997)}END`, mode: "m" }).matched.map((m) => m.name),
    ).toEqual(["tail"]);
  });
});

describe("catalog and source", () => {
  const QUERY: SourceQuery = {
    text: "please migrate",
    userScope: "u",
    mode: "react",
    now: "2026-01-01T00:00:00Z",
  };
  const cat = catalogOf(
    skill("migrate", 1, { keywords: ["migrate"] }, "# Migrate\nDo it carefully."),
    skill("always", 0, {}),
    skill("react", 0, { modes: ["react"] }, ""),
  );
  cat.skills[0] = { ...(cat.skills[0] as Skill), description: "multi\n  line   description" };

  async function fetchKind(source: ContextSource, kind: string, query = QUERY) {
    const items = await source.fetch({ kind }, query, new AbortController().signal);
    for (const item of items) expect(SourceItemSchema.safeParse(item).success).toBe(true);
    return items;
  }

  it("renders one compact line per skill", () => {
    expect(skillCatalogText(cat)).toBe(
      ["always — multi line description", "migrate — about migrate", "react — about react"].join(
        "\n",
      ),
    );
    expect(skillCatalogText({ skills: [], invalid: [], shadowed: [] })).toBe("");
  });

  it("serves skill_catalog and skills", async () => {
    const src = skillsSource(cat);
    expect(src.id).toBe("skills");
    expect(src.supports("skill_catalog")).toBe(true);
    expect(src.supports("skills")).toBe(true);
    expect(src.supports("kb")).toBe(false);
    const catalogItems = await fetchKind(src, "skill_catalog");
    expect(catalogItems.map((i) => [i.id, i.rank, i.sourceRef])).toEqual([
      ["always", 0, `skill:always@${shortHash("always")}`],
      ["migrate", 1, `skill:migrate@${shortHash("migrate")}`],
      ["react", 2, `skill:react@${shortHash("react")}`],
    ]);
    expect(catalogItems[0]?.text).toBe("always — multi line description");

    const bodies = await fetchKind(src, "skills");
    expect(bodies).toEqual([
      {
        id: "migrate",
        text: "[skill migrate]\n# Migrate\nDo it carefully.",
        category: "skill",
        rank: 0,
        sourceRef: `skill:migrate@${shortHash("migrate")}`,
      },
      {
        id: "react",
        text: "react — about react",
        category: "skill",
        rank: 1,
        sourceRef: `skill:react@${shortHash("react")}`,
      },
    ]);
    expect(await fetchKind(src, "skills", { ...QUERY, text: "hello", mode: "plan" })).toEqual([]);
    expect(await fetchKind(src, "constraints")).toEqual([]);
    expect(await fetchKind(skillsSource(cat, "sk", { cap: 1 }), "skills")).toHaveLength(1);
    expect(() => skillsSource(cat, " ")).toThrow(InvalidInputError);
  });

  it("works end to end from a workspace directory", async () => {
    const ws = tempDir();
    const root = join(ws, ".promptctx", "skills");
    const text = md(
      "name: review\ndescription: Code review\ntriggers:\n  keywords: [review]\npriority: 2",
      "Check tests first.",
    );
    writeSkill(root, "review", text);
    const catalog = await discoverSkills({ roots: [root, join(ws, ".claude", "skills")] });
    const items = await fetchKind(skillsSource(catalog), "skills", {
      ...QUERY,
      text: "Review this PR",
    });
    expect(items.map((i) => [i.text, i.sourceRef])).toEqual([
      ["[skill review]\nCheck tests first.", `skill:review@${shortHash(text)}`],
    ]);
  });
});
