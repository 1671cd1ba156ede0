/**
 * Skill decisions in the manifest (issue 11 item 2): matched skills with their trigger
 * reasons and version, ties and overlaps, the cap and what fell over it, invalid skills
 * with their reason, and `abstained` — in the JSON manifest, the wire contract, the CLI's
 * JSON output and the HTTP response.
 */
import { cpSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { assemble, createSchemaRegistry } from "../../src/assemble/index.js";
import { shortHash } from "../../src/cache/index.js";
import { buildServer } from "../../src/server/index.js";
import { type Skill, type SkillCatalog, skillsSource } from "../../src/sources/index.js";
import { parseWireContract, toWireContract } from "../../src/trace/index.js";
import { runCli } from "../cli/run-cli.js";
import { post } from "../server/helpers.js";
import { NOW } from "./helpers.js";

function skill(name: string, priority: number, triggers: Skill["triggers"]): Skill {
  return {
    name,
    description: `about ${name}`,
    path: `/r/${name}/SKILL.md`,
    sha256: shortHash(name),
    triggers,
    priority,
    redLines: [],
    body: `Body of ${name}.`,
  };
}

const CATALOG: SkillCatalog = {
  skills: [
    skill("alpha", 5, { keywords: ["deploy"] }),
    skill("beta", 5, { keywords: ["deploy"], modes: ["t"] }),
    skill("gamma", 1, { patterns: ["^fix"] }),
    skill("delta", 0, { keywords: ["never-said"] }),
  ],
  invalid: [{ path: "/r/broken/SKILL.md", reason: "name: must match the directory" }],
  shadowed: [],
};

const SCHEMAS = createSchemaRegistry().register({
  mode: "t",
  slots: [{ kind: "skills", title: "Active skills", itemStyle: "block" }],
  budgetChars: null,
});

async function run(text: string, cap?: number) {
  return assemble({
    mode: "t",
    query: { text, userScope: "u1" },
    now: NOW,
    schemas: SCHEMAS,
    sources: [
      skillsSource(CATALOG, "skills", cap === undefined ? { root: "/r" } : { cap, root: "/r" }),
    ],
  });
}

describe("manifest.skills", () => {
  it("lists matched skills with their trigger reasons and version, ties, overlaps and the cap", async () => {
    const a = await run("fix the deploy script", 2);
    expect(a.manifest.skills).toEqual({
      slot: "skills",
      matched: [
        {
          name: "alpha",
          priority: 5,
          reasons: ['keyword:"deploy"'],
          version: shortHash("alpha"),
        },
        {
          name: "beta",
          priority: 5,
          reasons: ['keyword:"deploy"', "mode:t"],
          version: shortHash("beta"),
        },
      ],
      abstained: false,
      cap: 2,
      capped: ["gamma"],
      ties: [["alpha", "beta"]],
      overlaps: [{ a: "alpha", b: "beta", on: 'keyword:"deploy"' }],
      invalid: [
        { name: "broken", path: "broken/SKILL.md", reason: "name: must match the directory" },
      ],
      shadowed: [],
    });
    expect(a.prompt).toContain("Body of alpha.");
    expect(a.prompt).not.toContain("Body of gamma.");
  });

  it("says abstained: true when no trigger matches (and no body enters)", async () => {
    const a = await assemble({
      mode: "chat-like",
      query: { text: "hello there", userScope: "u1" },
      now: NOW,
      schemas: createSchemaRegistry().register({
        mode: "chat-like",
        slots: [{ kind: "skills" }],
        budgetChars: null,
      }),
      sources: [skillsSource(CATALOG)],
    });
    expect(a.manifest.skills).toMatchObject({ abstained: true, matched: [], cap: 3, capped: [] });
    expect(a.prompt).toBe("");
  });

  it("is null when no source reports skills", async () => {
    const a = await assemble({
      mode: "chat",
      query: { text: "hi", userScope: "u1" },
      now: NOW,
      sources: [],
    });
    expect(a.manifest.skills).toBeNull();
  });

  it("crosses the service boundary in the wire contract (1.1) and survives validation", async () => {
    const a = await run("fix the deploy script");
    const contract = toWireContract(a, {
      anchors: [],
      tailReserve: 0,
      contextWindow: 100_000,
      responseReserve: 0,
    });
    expect(contract.assemblerVersion).toBe("1.1.0");
    expect(contract.skills).toEqual(a.manifest.skills);
    const received = parseWireContract(JSON.stringify(contract));
    expect(received.skills?.matched.map((m) => m.name)).toEqual(["alpha", "beta", "gamma"]);
    // A 1.0 sender has no skills: still accepted.
    const { skills: _drop, ...old } = contract;
    expect(parseWireContract({ ...old, assemblerVersion: "1.0.0" }).skills).toBeUndefined();
  });
});

describe("skills in the CLI JSON output and the HTTP response", () => {
  let ws: string;
  let home: string;
  beforeAll(() => {
    ws = mkdtempSync(join(tmpdir(), "promptctx-skills-report-"));
    home = mkdtempSync(join(tmpdir(), "promptctx-home-"));
    cpSync(join(import.meta.dirname, "../../examples/workspace"), ws, { recursive: true });
    const bad = join(ws, ".promptctx/skills/Bad_Name");
    mkdirSync(bad, { recursive: true });
    writeFileSync(join(bad, "SKILL.md"), "---\nname: Bad_Name\ndescription: x\n---\nbody\n");
  });
  afterAll(() => {
    rmSync(ws, { recursive: true, force: true });
    rmSync(home, { recursive: true, force: true });
  });

  const cli = (query: string) => {
    const r = runCli(
      ["assemble", "--workspace", ws, "--query", query, "--now", NOW, "--format", "json"],
      { env: { HOME: home } },
    );
    expect(r.code, r.stderr).toBe(0);
    return JSON.parse(r.stdout).manifest.skills;
  };

  it("the JSON manifest says abstained when no trigger matched, and names the invalid skill", () => {
    const skills = cli("what time is it");
    expect(skills.abstained).toBe(true);
    expect(skills.matched).toEqual([]);
    expect(skills.invalid).toHaveLength(1);
    expect(skills.invalid[0]).toMatchObject({
      name: "Bad_Name",
      path: ".promptctx/skills/Bad_Name/SKILL.md",
    });
    expect(skills.invalid[0].reason).toMatch(/name/);
  });

  it("the JSON manifest lists the matched skill with its reasons", () => {
    const skills = cli("add an index in a new migration");
    expect(skills.abstained).toBe(false);
    expect(skills.matched[0]).toMatchObject({ name: "sql-review", priority: 5 });
    expect(skills.matched[0].reasons).toEqual(['keyword:"migration"', 'keyword:"index"']);
  });

  it("POST /v1/assemble returns the same skill report", async () => {
    const app = await buildServer({ workspace: ws });
    try {
      await app.listen({ port: 0, host: "127.0.0.1" });
      const address = app.server.address();
      if (address === null || typeof address === "string") throw new Error("no port");
      const a = await post(`http://127.0.0.1:${address.port}`, "/v1/assemble", {
        query: "what time is it",
        now: NOW,
      });
      expect(a.status, a.text).toBe(200);
      const skills = (a.json as { manifest: { skills: unknown } }).manifest.skills;
      expect(skills).toEqual(cli("what time is it"));
    } finally {
      await app.close();
    }
  });
});
