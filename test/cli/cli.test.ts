import { spawnSync } from "node:child_process";
import { cpSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { planRequest, selectRequest } from "../fixtures/requests.js";
import { runCli } from "./run-cli.js";

const ROOT = fileURLToPath(new URL("../../", import.meta.url));

function noStack(text: string) {
  expect(text).not.toMatch(/\n\s+at .+:\d+:\d+/);
}

describe("promptctx demo --segments (the offline ten-segment fixture)", () => {
  it("prints both decision tables and the prompt, exit 0", () => {
    const r = runCli(["demo", "--segments"]);
    expect(r.code).toBe(0);
    expect(r.stdout).toContain("Memory selection");
    expect(r.stdout).toContain("Prompt plan");
    for (const reason of ["selected", "authority_loser", "scope_mismatch", "low_confidence"]) {
      expect(r.stdout).toContain(reason);
    }
    // Another user's memory never reaches the prompt.
    const prompt = r.stdout.slice(r.stdout.indexOf("Prompt\n======"));
    expect(prompt).not.toContain("kv/acme/prod");
    expect(prompt).toContain("<recalled_memory");
    expect(r.stdout).not.toMatch(/\u001b\[/); // no colour when not a TTY
  });

  it("is byte-identical across runs", () => {
    expect(runCli(["demo", "--segments"]).stdout).toBe(runCli(["demo", "--segments"]).stdout);
  });

  it("reads its data from the installed package's examples/demo/, whatever the working directory", () => {
    // The package as npm installs it: its "files" (and package.json), elsewhere on disk.
    const pkg = JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8")) as { files: string[] };
    expect(pkg.files).toContain("examples");
    const installed = mkdtempSync(join(tmpdir(), "promptctx-pkg-"));
    const elsewhere = mkdtempSync(join(tmpdir(), "promptctx-cwd-"));
    try {
      for (const entry of [...pkg.files, "package.json"]) {
        cpSync(join(ROOT, entry), join(installed, entry), { recursive: true });
      }
      symlinkSync(join(ROOT, "node_modules"), join(installed, "node_modules"), "dir");
      const run = spawnSync(
        process.execPath,
        [join(installed, "bin/promptctx.js"), "demo", "--segments", "--json"],
        { cwd: elsewhere, encoding: "utf8" },
      );
      expect(run.stderr).toBe("");
      expect(run.status).toBe(0);
      expect(run.stdout).toBe(runCli(["demo", "--segments", "--json"]).stdout);
    } finally {
      rmSync(installed, { recursive: true, force: true });
      rmSync(elsewhere, { recursive: true, force: true });
    }
  });

  it("PROMPT_BUDGET_CHARS tightens the budget and drops optional segments", () => {
    const r = runCli(["demo", "--segments", "--json"], { env: { PROMPT_BUDGET_CHARS: "700" } });
    expect(r.code).toBe(0);
    const out = JSON.parse(r.stdout);
    expect(out.segmentPlan.budgetChars).toBe(700);
    expect(out.segmentPlan.usedChars).toBeLessThanOrEqual(700);
    expect(out.segmentPlan.droppedNames.length).toBeGreaterThan(0);
    expect(out.segmentPlan.includedNames).toEqual(
      expect.arrayContaining(["base_rules", "tools", "working_mode"]),
    );
  });

  it("fails closed when required segments cannot fit (exit 3)", () => {
    const r = runCli(["demo", "--segments"], { env: { PROMPT_BUDGET_CHARS: "50" } });
    expect(r.code).toBe(3);
    expect(JSON.parse(r.stdout).error.code).toBe("prompt_budget_exceeded");
    expect(r.stdout).not.toContain("Prompt\n");
    noStack(r.stderr);
  });

  it.each(["abc", "-1", "1.5", " 12x"])("rejects PROMPT_BUDGET_CHARS=%j with exit 2", (v) => {
    const r = runCli(["demo", "--segments"], { env: { PROMPT_BUDGET_CHARS: v } });
    expect(r.code).toBe(2);
    expect(JSON.parse(r.stdout).error).toMatchObject({
      code: "invalid_input",
      path: "PROMPT_BUDGET_CHARS",
    });
    expect(r.stderr.trim().split("\n")).toHaveLength(1);
  });

  it("counts real tokens with --tokenizer o200k_base", () => {
    const out = JSON.parse(
      runCli(["demo", "--segments", "--json", "--tokenizer", "o200k_base"]).stdout,
    );
    expect(out.memoryPlan.tokenizer).toBe("o200k_base");
    expect(out.segmentPlan.tokenizer).toBe("o200k_base");
  });
});

describe("promptctx select-memory / plan-prompt", () => {
  it("reads a request from stdin and prints the plan", () => {
    const r = runCli(["select-memory"], { input: JSON.stringify(selectRequest) });
    expect(r.code).toBe(0);
    const plan = JSON.parse(r.stdout);
    expect(plan.selectedMemoryIds).toEqual(["m1"]);
    expect(plan.decisions.map((d: { reason: string }) => d.reason)).toEqual([
      "scope_mismatch",
      "selected",
    ]);
    expect(plan.context).not.toContain("secret of u2");
  });

  it("reads a request from --input FILE", () => {
    const dir = mkdtempSync(join(tmpdir(), "promptctx-cli-"));
    const file = join(dir, "req.json");
    writeFileSync(file, JSON.stringify(planRequest));
    const r = runCli(["plan-prompt", "--input", file]);
    expect(r.code).toBe(0);
    const plan = JSON.parse(r.stdout);
    expect(plan.includedNames).toEqual(["rules"]);
    expect(plan.decisions[1]).toMatchObject({
      name: "extra",
      status: "dropped",
      reason: "char_budget_exceeded",
    });
  });

  it("invalid input: exit 2, error object with path on stdout, one line on stderr", () => {
    const bad = structuredClone(selectRequest);
    (bad.candidates[0] as { score: unknown }).score = 7;
    const r = runCli(["select-memory"], { input: JSON.stringify(bad) });
    expect(r.code).toBe(2);
    expect(JSON.parse(r.stdout).error).toMatchObject({
      code: "invalid_input",
      path: "candidates[0].score",
    });
    expect(r.stderr.trim().split("\n")).toHaveLength(1);
    noStack(r.stderr);
  });

  it("malformed JSON is invalid input", () => {
    const r = runCli(["plan-prompt"], { input: "{nope" });
    expect(r.code).toBe(2);
    expect(JSON.parse(r.stdout).error.code).toBe("invalid_input");
  });

  it("prompt_budget_exceeded exits 3", () => {
    const r = runCli(["plan-prompt"], {
      input: JSON.stringify({ ...planRequest, budgetChars: 3 }),
    });
    expect(r.code).toBe(3);
    expect(JSON.parse(r.stdout).error).toMatchObject({
      code: "prompt_budget_exceeded",
      path: "budgetChars",
    });
  });

  it("library-only fields are not data over JSON: an unknown field, exit 2", () => {
    const req = { segments: [{ name: "a", content: "x", condition: false }] };
    const r = runCli(["plan-prompt"], { input: JSON.stringify(req) });
    expect(r.code).toBe(2);
    expect(JSON.parse(r.stdout).error).toMatchObject({
      code: "unknown_field",
      path: "segments[0].condition",
    });
  });

  it("an unreadable --input file is exit 2 with the flag as path", () => {
    const r = runCli(["select-memory", "--input", "/nonexistent/req.json"]);
    expect(r.code).toBe(2);
    expect(JSON.parse(r.stdout).error.path).toBe("--input");
  });

  it("--jsonl answers every line in order; a bad line never stops the rest", () => {
    const lines = [
      JSON.stringify(selectRequest),
      "not json",
      JSON.stringify({ userScope: " ", candidates: [] }),
      "",
      JSON.stringify({ ...selectRequest, tokenizer: "cl100k_base" }),
    ];
    const r = runCli(["select-memory", "--jsonl"], { input: `${lines.join("\n")}\n` });
    expect(r.code).toBe(0);
    const out = r.stdout
      .trimEnd()
      .split("\n")
      .map((l) => JSON.parse(l));
    expect(out).toHaveLength(5);
    expect(out[0].selectedMemoryIds).toEqual(["m1"]);
    expect(out[1].error.code).toBe("invalid_input");
    expect(out[2].error).toMatchObject({ code: "invalid_input", path: "userScope" });
    expect(out[3].error.code).toBe("invalid_input");
    expect(out[4].tokenizer).toBe("cl100k_base");
  });

  it("--jsonl over plan-prompt reports budget errors per line", () => {
    const input = [
      JSON.stringify(planRequest),
      JSON.stringify({ ...planRequest, budgetChars: 1 }),
    ].join("\n");
    const out = runCli(["plan-prompt", "--jsonl"], { input })
      .stdout.trimEnd()
      .split("\n")
      .map((l) => JSON.parse(l));
    expect(out[0].includedNames).toEqual(["rules"]);
    expect(out[1].error.code).toBe("prompt_budget_exceeded");
  });
});

describe("usage", () => {
  it.each([
    [[]],
    [["--help"]],
    [["demo", "--help"]],
    [["select-memory", "--help"]],
    [["plan-prompt", "--help"]],
  ])("%j prints help", (args) => {
    const r = runCli(args);
    expect(r.stdout + r.stderr).toContain("Usage: promptctx");
  });

  it("--help exits 0", () => {
    expect(runCli(["select-memory", "--help"]).code).toBe(0);
  });

  it("an unknown verb or option exits 2 without a stack trace", () => {
    for (const args of [["bogus"], ["demo", "--tokenizer", "nope"], ["select-memory", "--wat"]]) {
      const r = runCli(args);
      expect(r.code).toBe(2);
      noStack(r.stderr);
    }
  });
});

describe("the command registry", () => {
  it("lists each verb with its own description, and loads only the verb a command line names", async () => {
    const { buildProgram } = await import("../../src/cli/main.js");
    const { VERBS } = await import("../../src/cli/verbs.js");
    const full = await buildProgram(() => {});
    expect(full.commands.map((c) => c.name())).toEqual(VERBS.map((v) => v.name));
    for (const v of VERBS) {
      const real = full.commands.find((c) => c.name() === v.name);
      expect(real?.description(), v.name).toBe(v.summary);
      expect((real?.options.length ?? 0) > 0, v.name).toBe(v.options);
    }
    // `--help` lists the same verbs the same way without loading any of them.
    const listed = await buildProgram(() => {}, []);
    expect(listed.helpInformation()).toBe(full.helpInformation());
  });
});
