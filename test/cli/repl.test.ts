/**
 * `promptctx repl` end to end: the real built CLI driven through stdin. Each step of a
 * script prints what was reassembled (rebuilt segments or the reused plan) and the
 * decision tables; memory shows up only for its own user and query.
 */
import { spawnSync } from "node:child_process";
import { closeSync, openSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { BIN, runCli } from "./run-cli.js";

interface Step {
  cmd: string;
  out: string;
}

/** Splits a non-TTY transcript at the `> COMMAND` echo lines. */
function steps(stdout: string): Step[] {
  const parts = stdout.split(/^> /m);
  expect(parts[0]).toBe(""); // nothing before the first command
  return parts.slice(1).map((p) => {
    const nl = p.indexOf("\n");
    return { cmd: p.slice(0, nl), out: p.slice(nl + 1) };
  });
}

// `--wide`: these tests read whole cells (ids, refs); fitting tables is tested in table.test.ts.
function repl(lines: string[], args: string[] = []) {
  const r = runCli(["repl", "--wide", ...args], { input: `${lines.join("\n")}\n` });
  return { ...r, steps: steps(r.stdout) };
}

const ALL_SEGMENTS =
  "base_rules, identity, project_context, tools, expert, skills, connectors, regional_conventions, working_mode";
const MEMORY_IDS = [
  "mem-default-lang",
  "mem-workspace-lang",
  "mem-turn-lang",
  "mem-tests",
  "mem-weak",
  "mem-other-user",
];
const OTHER_USERS_SECRET = "kv/acme/prod";

/** The row of `name` in the first table of `out` that has one. */
function row(out: string, name: string): string[] {
  const line = out.split("\n").find((l) => l.startsWith(`${name} `));
  expect(line, `row ${name}`).toBeDefined();
  return (line as string).trim().split(/\s{2,}/);
}

const promptOf = (out: string) => out.slice(out.indexOf("Prompt\n======\n"));

const SCRIPT = [
  "show",
  "skill load sql-review",
  "mode plan",
  "connector github on",
  "memory",
  "show",
  "memory clear",
  "user someone-else",
  "stats",
  "quit",
  "show", // after quit: never runs
];

describe("promptctx repl: the scripted session", () => {
  const r = repl(SCRIPT);
  const out = (i: number) => (r.steps[i] as Step).out;

  it("runs every command up to quit, exit 0, nothing on stderr, no prompt or colour off a TTY", () => {
    expect(r.code).toBe(0);
    expect(r.stderr).toBe("");
    expect(r.steps.map((s) => s.cmd)).toEqual(SCRIPT.slice(0, 10));
    expect(r.stdout).not.toContain("promptctx>");
    expect(r.stdout).not.toMatch(/\u001b\[/);
    expect(out(9)).toBe("");
  });

  it("show (first): every segment built, the layers and the prompt", () => {
    const o = out(0);
    expect(o.split("\n")[0]).toBe(`rebuilt: ${ALL_SEGMENTS}`);
    expect(o).toContain("reassembled at 2026-11-30T09:00:00Z, schema chat");
    expect(o).toContain("Layers — schema chat, renderer en, tokenizer estimate, budget 2400 chars");
    expect(row(o, "base_rules").slice(0, 5)).toEqual([
      "base_rules",
      "static",
      "yes",
      "included",
      "required",
    ]);
    expect(row(o, "constraints").slice(0, 4)).toEqual([
      "constraints",
      "static",
      "included",
      "never_truncate", // red lines: reserved like required content (spec 07)
    ]);
    expect(row(o, "skills").slice(0, 3)).toEqual(["skills", "session", "inactive"]);
    expect(row(o, "connectors").slice(0, 3)).toEqual(["connectors", "session", "inactive"]);
    expect(row(o, "recall_memory").slice(0, 3)).toEqual(["recall_memory", "dynamic", "inactive"]);
    expect(row(o, "working_mode").slice(0, 5)).toEqual([
      "working_mode",
      "dynamic",
      "yes",
      "included",
      "required",
    ]);
    expect(o).toContain("Memory selection — inactive");
    const p = promptOf(o);
    expect(p).toContain("[forbid] no rm -rf");
    expect(p).toContain("[warn] network needs approval");
    expect(p).toContain("You are a careful coding agent.");
    expect(p).toContain("Working mode: craft");
    expect(p).toContain("<!-- cache-boundary -->");
    for (const id of MEMORY_IDS) expect(o).not.toContain(id);
  });

  it("skill load sql-review rebuilds only skills and breaks the session cache tier", () => {
    const o = out(1);
    expect(o.split("\n").slice(0, 2)).toEqual(["rebuilt: skills", "changed layers: skills"]);
    expect(o).toContain("reassembled at 2026-11-30T09:01:00Z, schema chat, cache break: session");
    expect(o).toContain("Prompt plan — budget 2400 chars");
    expect(row(o, "skills").slice(0, 5)).toEqual(["skills", "60", "40", "included", "fits_budget"]);
  });

  it("mode plan rebuilds only working_mode (dynamic tier)", () => {
    const o = out(2);
    expect(o.split("\n").slice(0, 2)).toEqual([
      "rebuilt: working_mode",
      "changed layers: working_mode",
    ]);
    expect(o).toContain("2026-11-30T09:02:00Z, schema chat, cache break: dynamic");
  });

  it("connector github on rebuilds only connectors", () => {
    const o = out(3);
    expect(o.split("\n").slice(0, 2)).toEqual([
      "rebuilt: connectors",
      "changed layers: connectors",
    ]);
    expect(o).toContain("cache break: session");
    expect(row(o, "connectors")).toContain("included");
  });

  it("memory reselects the recall slot without rebuilding a segment", () => {
    const o = out(4);
    expect(o.split("\n").slice(0, 2)).toEqual([
      "rebuilt: none (slots refetched)",
      "changed layers: recall_memory",
    ]);
    expect(o).toContain("cache break: dynamic");
    expect(o).toContain('Memory selection — scope "user-42"');
    expect(row(o, "1").slice(0, 4)).toEqual(["1", "mem-turn-lang", "selected", "selected"]);
    expect(o).toMatch(/mem-tests\s+selected/);
    expect(o).toMatch(/mem-other-user\s+rejected\s+scope_mismatch/);
    expect(o).toMatch(/mem-weak\s+rejected\s+low_confidence/);
    expect(o).not.toContain(OTHER_USERS_SECRET);
  });

  it("show (unchanged state) reuses the cached plan and shows the memory in the prompt", () => {
    const o = out(5);
    expect(o.split("\n")[0]).toBe("reused cached plan (now 2026-11-30T09:04:00Z; nothing changed)");
    expect(row(o, "recall_memory").slice(0, 4)).toEqual([
      "recall_memory",
      "dynamic",
      "included",
      "fits_budget",
    ]);
    expect(o).toContain("memory:mem-turn-lang memory:mem-tests");
    const p = promptOf(o);
    expect(p).toContain("## Related memories");
    expect(p).toContain("For this task, write the migration script in TypeScript.");
    expect(p).toContain("Prefers small commits, each with its tests passing.");
    expect(p).toContain("Skills loaded: sql-review");
    expect(p).toContain("Connectors online: github (read/write).");
    expect(p).toContain("Working mode: plan");
    expect(p).not.toContain(OTHER_USERS_SECRET);
    expect(p).not.toContain("Bash"); // the authority loser
  });

  it("memory clear: the memory layer goes inactive, no memory id is printed", () => {
    const o = out(6);
    expect(o.split("\n").slice(0, 2)).toEqual([
      "rebuilt: none (slots refetched)",
      "changed layers: recall_memory",
    ]);
    expect(o).toContain("Memory selection — inactive");
    expect(row(o, "recall_memory")).toContain("inactive");
    for (const id of MEMORY_IDS) expect(o).not.toContain(id);
  });

  it("user someone-else: another user's profile and memory never show", () => {
    const o = out(7);
    expect(o.split("\n").slice(0, 2)).toEqual([
      "rebuilt: none (slots refetched)",
      "changed layers: profile",
    ]);
    expect(row(o, "profile")).toContain("inactive");
    expect(o).toContain("Memory selection — inactive");
    for (const id of MEMORY_IDS) expect(o).not.toContain(id);
  });

  it("stats: builder calls per segment, reassemblies, reuses, cache keys and the last break", () => {
    const o = out(8);
    expect(o).toContain(
      'Session — user "someone-else", schema chat, working mode plan, expert none',
    );
    expect(o).toContain("skills: sql-review; connectors online: github; memory: none");
    expect(o).toContain("reassemblies: 7, cache reuses: 1, errors: 0, now 2026-11-30T09:06:00Z");
    const calls = Object.fromEntries(
      ALL_SEGMENTS.split(", ").map((name) => [name, Number(row(o, name)[1])]),
    );
    expect(calls).toEqual({
      base_rules: 1,
      identity: 1,
      project_context: 1,
      tools: 1,
      expert: 1,
      skills: 2,
      connectors: 2,
      regional_conventions: 1,
      working_mode: 2,
    });
    expect(o).toMatch(
      /^cache keys: static [0-9a-f]{16}, session [0-9a-f]{16}, dynamic [0-9a-f]{16}$/m,
    );
    expect(o).toContain("last cache break: session (previous assembly → last assembly)");
  });

  it("replays byte for byte", () => {
    expect(repl(SCRIPT).stdout).toBe(r.stdout);
  });
});

describe("promptctx repl: memory belongs to its user", () => {
  it("user-7 sees its own memory and none of user-42's", () => {
    const r = repl(["memory", "user user-7", "memory", "show"]);
    expect(r.code).toBe(0);
    const [, , install, show] = r.steps as [Step, Step, Step, Step];
    expect(install.out).toContain('Memory selection — scope "user-7"');
    expect(install.out).toMatch(/mem-other-user\s+selected/);
    expect(install.out).toMatch(/mem-turn-lang\s+rejected\s+scope_mismatch/);
    const p = promptOf(show.out);
    expect(p).toContain(OTHER_USERS_SECRET);
    expect(p).not.toContain("TypeScript.");
    expect(p).not.toContain("small commits");
    expect(p).toContain("name: Kai");
    expect(p).not.toContain("name: Dana");
  });

  it("a new query clears the last query's memory", () => {
    const r = repl(["memory", "query what changed since Friday?", "show"]);
    const show = (r.steps[2] as Step).out;
    expect(show).toContain("Memory selection — inactive");
    for (const id of MEMORY_IDS) expect(show).not.toContain(id);
  });
});

describe("promptctx repl: errors and flags", () => {
  it("a bad command prints error: <code>: <message> and the repl continues", () => {
    const r = repl([
      "skill load nope",
      "mode bogus",
      "frobnicate",
      "connector fax on",
      "expert wizard",
      "skill",
      "skill load changelog",
      "stats",
    ]);
    expect(r.code).toBe(0);
    const outs = r.steps.map((s) => s.out.split("\n")[0]);
    expect(outs.slice(0, 6)).toEqual([
      'error: invalid_input: unknown skill "nope" (known: changelog, incident-triage, sql-review) (at skill)',
      "error: invalid_input: working mode must be one of craft, plan, ask (at workingMode)",
      'error: invalid_input: unknown command "frobnicate" (type help for the commands) (at command)',
      'error: invalid_input: unknown connector "fax" (known: github, postgres-staging, slack) (at connector)',
      'error: invalid_input: unknown expert "wizard" (known: db-migrations, frontend, security, or none) (at expert)',
      "error: invalid_input: usage: skill load|unload NAME (at command)",
    ]);
    expect(outs[6]).toBe(`rebuilt: ${ALL_SEGMENTS}`);
    expect((r.steps[7] as Step).out).toContain("reassemblies: 1, cache reuses: 0, errors: 6");
  });

  it("an event that repeats the state reuses the plan; an undo rebuilds again", () => {
    const r = repl(["expert db-migrations", "expert db-migrations", "expert none", "show"]);
    const first = r.steps.map((s) => s.out.split("\n")[0]);
    expect(first[1]).toBe("reused cached plan (now 2026-11-30T09:00:00Z; nothing changed)");
    expect(first[2]).toBe("rebuilt: expert");
    expect(first[3]).toBe("reused cached plan (now 2026-11-30T09:01:00Z; nothing changed)");
  });

  it("a budget too small for the required layers fails closed per command, exit 0 at EOF", () => {
    const r = repl(["show", "mode ask", "stats"], ["--budget", "100"]);
    expect(r.code).toBe(0);
    expect((r.steps[0] as Step).out).toMatch(
      /^error: prompt_budget_exceeded: required and neverTruncate segments \(base_rules, constraints,/,
    );
    expect((r.steps[1] as Step).out).toMatch(/^error: prompt_budget_exceeded/);
    expect((r.steps[2] as Step).out).toContain("reassemblies: 0, cache reuses: 0, errors: 2");
  });

  it("--renderer, --tokenizer, --mode and --budget reach the assembly", () => {
    const zh = repl(["show"], ["--renderer", "zh-CN", "--tokenizer", "o200k_base"]);
    expect(zh.stdout).toContain("renderer zh-CN, tokenizer o200k_base");
    expect(zh.stdout).toContain("【硬性约束】");
    const tagged = repl(["show"], ["--renderer", "tagged", "--mode", "react", "--budget", "5000"]);
    expect(tagged.stdout).toContain("Layers — schema react, renderer tagged");
    expect(tagged.stdout).toContain("budget 5000 chars");
    expect(tagged.stdout).toContain("<planner>");
    expect(row((tagged.steps[0] as Step).out, "planner").slice(0, 4)).toEqual([
      "planner",
      "dynamic",
      "yes",
      "included",
    ]);
    const fallback = repl(["schema nonesuch"]);
    expect(fallback.stdout).toContain('schema chat (fallback from "nonesuch")');
  });

  it("invalid flags exit 2 with the error object", () => {
    const budget = runCli(["repl", "--budget", "lots"]);
    expect(budget.code).toBe(2);
    expect(JSON.parse(budget.stdout)).toEqual({
      error: {
        code: "invalid_input",
        message: '--budget must be a non-negative integer, got "lots"',
        path: "--budget",
      },
    });
    expect(budget.stderr).toContain("promptctx repl: invalid_input");
    expect(runCli(["repl", "--renderer", "klingon"]).code).toBe(2);
    expect(runCli(["repl", "--tokenizer", "nope"]).code).toBe(2);
  });

  it("EOF without quit exits 0; blank lines and # comments are skipped; exit works like quit", () => {
    const r = runCli(["repl"], { input: "\n# a comment\nhelp\nexit\nshow\n" });
    expect(r.code).toBe(0);
    expect(steps(r.stdout).map((s) => s.cmd)).toEqual(["# a comment", "help", "exit"]);
    expect(r.stdout).toContain("skill load|unload NAME");
    expect(runCli(["repl"], { input: "" })).toEqual({ code: 0, stdout: "", stderr: "" });
  });

  it("--help documents the repl and exits 0", () => {
    const r = runCli(["repl", "--help"]);
    expect(r.code).toBe(0);
    expect(r.stdout).toContain("--renderer");
    expect(r.stdout).toContain("--budget");
  });

  it("stdin that cannot be read exits 2", () => {
    const fd = openSync("/", "r");
    try {
      const r = spawnSync(process.execPath, [BIN, "repl"], {
        stdio: [fd, "pipe", "pipe"],
        encoding: "utf8",
      });
      expect(r.status).toBe(2);
      expect(r.stderr).toContain("promptctx repl: cannot read input");
    } finally {
      closeSync(fd);
    }
  });
});
