import { cpSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runCli } from "./run-cli.js";

const EXAMPLE = join(import.meta.dirname, "../../examples/workspace");
const NOW = "2026-11-30T09:00:00Z";
const QUERY = "add an index on invoices.created_at in a new migration";
const OTHER_USER_TEXT = "kv/acme/prod";

let dir: string;
let home: string;
const env = () => ({ HOME: home });

function assembleJson(extra: string[] = [], workspace = dir) {
  const r = runCli(
    [
      "assemble",
      "--workspace",
      workspace,
      "--query",
      QUERY,
      "--now",
      NOW,
      "--format",
      "json",
      ...extra,
    ],
    { env: env() },
  );
  return { ...r, out: r.code === 0 ? JSON.parse(r.stdout) : null };
}

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), "promptctx-ws-"));
  home = mkdtempSync(join(tmpdir(), "promptctx-home-"));
  cpSync(EXAMPLE, dir, { recursive: true });
  const r = runCli(["memory", "import", "--workspace", dir, join(dir, "memories.jsonl")], {
    env: env(),
  });
  expect(r.code, r.stderr).toBe(0);
});

afterAll(() => {
  rmSync(dir, { recursive: true, force: true });
  rmSync(home, { recursive: true, force: true });
});

describe("promptctx assemble --workspace (end to end over a real directory and SQLite store)", () => {
  it("prints {prompt, manifest, memoryPlan, segmentPlan} with every field explained", () => {
    const { code, out } = assembleJson();
    expect(code).toBe(0);
    expect(Object.keys(out)).toEqual(["prompt", "manifest", "memoryPlan", "segmentPlan"]);
    const { prompt, manifest, memoryPlan, segmentPlan } = out;
    expect(typeof prompt).toBe("string");
    expect(segmentPlan.prompt).toBe(prompt);
    expect(manifest).toMatchObject({
      mode: "react",
      fallbackFrom: null,
      tokenizer: "estimate",
      renderer: "en",
      now: NOW,
    });
    expect(manifest.promptVersion).toMatch(/^[0-9a-f]{64}$/);
    for (const tier of ["static", "session", "dynamic"])
      expect(manifest.cacheKeys[tier]).toMatch(/^[0-9a-f]{16}$/);
    const layers = Object.fromEntries(manifest.layers.map((l: { id: string }) => [l.id, l]));
    expect(Object.keys(layers)).toEqual([
      "constraints",
      "identity",
      "instructions",
      "profile",
      "skill_catalog",
      "skills",
      "expert",
      "planner",
      "task_memory",
      "tool_state",
      "recall_memory",
      "kb",
      "working_mode",
    ]);
    expect(layers.constraints).toMatchObject({
      status: "included",
      reason: "required",
      required: true,
      neverTruncate: true,
      cacheTier: "static",
    });
    expect(layers.identity).toMatchObject({
      status: "included",
      cacheTier: "static",
      neverTruncate: true,
    });
    // Instruction files: farthest first, nearest last, each with its content hash.
    const refs: string[] = layers.instructions.sourceRefs;
    expect(refs.map((r) => r.split("#")[0])).toEqual([
      "AGENTS.md",
      "docs/review-checklist.md",
      "services/billing/AGENTS.md",
      "services/billing/CLAUDE.local.md",
    ]);
    for (const r of refs) expect(r).toMatch(/#[0-9a-f]{16}$/);
    expect(prompt.indexOf("# Acme platform")).toBeLessThan(prompt.indexOf("# billing service"));
    // Skills: the catalog always, the body only for the triggered skill.
    expect(layers.skill_catalog.sourceRefs).toHaveLength(3);
    expect(layers.skills.sourceRefs).toEqual([
      expect.stringMatching(/^skill:sql-review@[0-9a-f]{16}$/),
    ]);
    expect(prompt).toContain("[skill sql-review]");
    expect(prompt).not.toContain("[skill incident-triage]");
    // KB: golden first, citation anchors, chunk ids in the manifest.
    expect(layers.kb.sourceRefs[0]).toBe("kb:runbook-migrations#c1");
    expect(prompt).toContain("[doc:runbook-migrations chunk:c1]");
    // Tools, constraints and planner from the workspace config.
    expect(layers.tool_state.sourceRefs).toContain("tool_state:tool:write_file");
    expect(prompt).toContain("task BILL-311");
    // Memory: the current-turn projection wins the slot; the others lose by authority.
    const reasons = Object.fromEntries(
      memoryPlan.decisions.map((d: { memoryId: string; reason: string }) => [d.memoryId, d.reason]),
    );
    expect(reasons).toMatchObject({
      "mem-lang-turn": "selected",
      "mem-lang-workspace": "authority_loser",
      "mem-lang-default": "authority_loser",
      "mem-index-incident": "selected",
      "mem-dark-theme": "low_confidence",
    });
    expect(memoryPlan.userScope).toBe("user-42");
    expect(manifest.memoryDecisions).toEqual(memoryPlan.decisions);
    expect(manifest.segmentDecisions).toEqual(segmentPlan.decisions);
    // Another user's records never leave the store.
    const all = JSON.stringify(out);
    expect(all).not.toContain(OTHER_USER_TEXT);
    expect(all).not.toContain("mem-other-secret");
    expect(all).not.toContain("user-7");
    // Budgets hold.
    expect(manifest.used.chars).toBeLessThanOrEqual(manifest.budget.chars);
  });

  it("is byte-identical on replay with a pinned clock (outside timings)", () => {
    const a = assembleJson().out;
    const b = assembleJson().out;
    delete a.manifest.timings;
    delete b.manifest.timings;
    expect(JSON.stringify(b)).toBe(JSON.stringify(a));
  });

  it("honours --mode, --user, --tokenizer/--model, --budget and --renderer", () => {
    const chat = assembleJson(["--mode", "chat", "--model", "gpt-4o", "--renderer", "zh-CN"]).out;
    expect(chat.manifest.mode).toBe("chat");
    expect(chat.manifest.tokenizer).toBe("o200k_base");
    expect(chat.prompt).toContain("【硬性约束】");
    expect(chat.manifest.layers.map((l: { id: string }) => l.id)).not.toContain("planner");
    const other = assembleJson(["--user", "user-7"]).out;
    expect(JSON.stringify(other.memoryPlan)).not.toContain('user-42"');
    expect(other.prompt).not.toContain("Write new migration scripts in Bash.");
    const unknown = assembleJson(["--mode", "nope"]).out;
    expect(unknown.manifest).toMatchObject({ mode: "chat", fallbackFrom: "nope" });
    const tight = assembleJson(["--budget", "900"]).out;
    expect(tight.manifest.used.chars).toBeLessThanOrEqual(900);
    expect(tight.segmentPlan.droppedNames.length).toBeGreaterThan(0);
  });

  it("--store overrides the store; an absent file is created empty (said on stderr)", () => {
    const file = join(dir, "nowhere.db");
    const r = assembleJson(["--store", file]);
    expect(r.code).toBe(0);
    expect(r.stderr).toBe(`promptctx assemble: created an empty memory store at ${file}\n`);
    expect(r.out.memoryPlan).toMatchObject({ candidateCount: 0, selectedMemoryIds: [] });
    const recall = r.out.manifest.layers.find((l: { id: string }) => l.id === "recall_memory");
    expect(recall.status).not.toBe("included");
  });

  it("prints tables and the prompt in text format", () => {
    const r = runCli(["assemble", "--workspace", dir, "--query", QUERY, "--now", NOW], {
      env: env(),
    });
    expect(r.code).toBe(0);
    expect(r.stdout).toContain("Layers — schema react");
    expect(r.stdout).toContain("Memory selection");
    expect(r.stdout).toContain("Prompt plan");
    expect(r.stdout).toContain("skills: sql-review");
    expect(r.stdout).toContain("Prompt\n======\n");
  });

  it("reads user-level instruction files from HOME unless --no-user-files", () => {
    const h = mkdtempSync(join(tmpdir(), "promptctx-home2-"));
    cpSync(EXAMPLE, join(h, "ws"), { recursive: true });
    const cfg = join(h, ".config/promptctx");
    mkdirSync(cfg, { recursive: true });
    writeFileSync(join(cfg, "AGENTS.md"), "User rule: answer in English.\n");
    const args = [
      "assemble",
      "--workspace",
      join(h, "ws"),
      "--query",
      QUERY,
      "--now",
      NOW,
      "--format",
      "json",
    ];
    const withUser = JSON.parse(runCli(args, { env: { HOME: h } }).stdout);
    expect(withUser.prompt).toContain("User rule: answer in English.");
    expect(withUser.prompt.indexOf("User rule")).toBeLessThan(
      withUser.prompt.indexOf("# Acme platform"),
    );
    const without = JSON.parse(runCli([...args, "--no-user-files"], { env: { HOME: h } }).stdout);
    expect(without.prompt).not.toContain("User rule");
    rmSync(h, { recursive: true, force: true });
  });

  it.each([
    [["--workspace", "/nonexistent/ws", "--query", "q", "--now", NOW], "workspace"],
    [["--workspace", "WS", "--query", "q", "--now", "yesterday"], "--now"],
    [["--workspace", "WS", "--query", "q", "--now", NOW, "--budget", "-5"], "--budget"],
    [["--workspace", "WS", "--query", "q", "--now", NOW, "--model", "mystery-9"], "model"],
  ])("bad input %j → exit 2 with path %s", (args, path) => {
    const r = runCli(["assemble", ...args.map((a) => (a === "WS" ? dir : a))], { env: env() });
    expect(r.code).toBe(2);
    expect(JSON.parse(r.stdout).error).toMatchObject({ code: "invalid_input", path });
  });

  it("an invalid config.json is invalid input naming the field", () => {
    const ws = mkdtempSync(join(tmpdir(), "promptctx-badcfg-"));
    mkdirSync(join(ws, ".promptctx"), { recursive: true });
    writeFileSync(
      join(ws, ".promptctx/config.json"),
      JSON.stringify({ user: "u", tools: [{ name: 3 }] }),
    );
    const r = runCli(["assemble", "--workspace", ws, "--query", "q", "--now", NOW], { env: env() });
    expect(r.code).toBe(2);
    expect(JSON.parse(r.stdout).error.path).toBe("config.tools[0].name");
    rmSync(ws, { recursive: true, force: true });
  });

  it("required content over the budget fails closed with exit 3 and no prompt", () => {
    const r = runCli(
      ["assemble", "--workspace", dir, "--query", QUERY, "--now", NOW, "--budget", "100"],
      { env: env() },
    );
    expect(r.code).toBe(3);
    expect(JSON.parse(r.stdout).error.code).toBe("prompt_budget_exceeded");
    expect(r.stdout).not.toContain("Prompt\n");
  });
});

describe("promptctx demo (the main job on the bundled example workspace)", () => {
  it("runs from a fresh clone with no key and no network, printing tables and the prompt", () => {
    const r = runCli(["demo"], { env: env() });
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain("Layers — schema react");
    expect(r.stdout).toContain("authority_loser");
    expect(r.stdout).toContain("low_confidence");
    expect(r.stdout).toContain("Prompt\n======\n");
    expect(r.stdout).not.toContain(OTHER_USER_TEXT);
  });

  it("is byte-identical across runs", () => {
    expect(runCli(["demo"], { env: env() }).stdout).toBe(runCli(["demo"], { env: env() }).stdout);
  });

  it("PROMPT_BUDGET_CHARS tightens it", () => {
    const out = JSON.parse(
      runCli(["demo", "--json"], { env: { ...env(), PROMPT_BUDGET_CHARS: "1200" } }).stdout,
    );
    expect(out.manifest.budget.chars).toBe(1200);
    expect(out.manifest.used.chars).toBeLessThanOrEqual(1200);
  });
});
