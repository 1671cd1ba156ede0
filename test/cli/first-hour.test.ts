/**
 * A newcomer's first hour with the built CLI: `--version`; usage errors in the error format
 * (exit 2); the same flag names across verbs; a closed stdout is a clean exit; no spec
 * numbers in help; defaults unquoted; strict JSON inputs; `--store FILE` on first use;
 * hints with stable codes.
 */
import { spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import type { AddressInfo } from "node:net";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { formatPath } from "../../src/errors/index.js";
import { conversationRequest, planRequest, selectRequest } from "../fixtures/requests.js";
import { EXAMPLES, FREE_FORM, inject, objectsOf } from "../fixtures/unknown-fields.js";
import { BIN, runCli, spawnCli } from "./run-cli.js";

const WORKSPACE = new URL("../../examples/workspace", import.meta.url).pathname;
const NOW = "2026-11-30T09:00:00Z";
const tmp = mkdtempSync(join(tmpdir(), "promptctx-first-hour-"));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

/** A failure in the documented format: the error object on stdout, one line on stderr. */
function expectFailure(
  r: { code: number; stdout: string; stderr: string },
  verb: string,
  code: string,
  path: string | null,
): void {
  expect(r.code, r.stderr).toBe(code === "connection_refused" ? 1 : 2);
  // The error object is the last line (chat prints its turn header before the failure).
  const last = r.stdout.trim().split("\n").at(-1) ?? "";
  const obj = JSON.parse(last) as { error: { code: string; message: string; path: string } };
  expect(obj.error).toMatchObject({ code, path });
  const at = path === null ? "" : ` (at ${path})`;
  expect(r.stderr).toContain(`promptctx ${verb}: ${code}: ${obj.error.message}${at}\n`);
  expect(r.stderr).not.toMatch(/^error: |\n\s+at /m);
}

describe("the command line", () => {
  it("--version prints the package's version", () => {
    const r = runCli(["--version"]);
    const pkg = JSON.parse(readFileSync(new URL("../../package.json", import.meta.url), "utf8"));
    expect(r).toMatchObject({ code: 0, stdout: `${pkg.version}\n` });
  });

  it("every usage error is invalid input in the error format, exit 2", () => {
    const unknown = runCli(["demo", "--budgetchars", "5"]);
    expectFailure(unknown, "demo", "invalid_input", "--budgetchars");
    expect(unknown.stderr).toContain("--budget-chars");
    expectFailure(runCli(["assemble", "--query", "x"]), "assemble", "invalid_input", "--workspace");
    expectFailure(runCli(["replay"]), "replay", "invalid_input", "file");
    expectFailure(runCli(["demo", "--tokenizer", "nope"]), "demo", "invalid_input", "--tokenizer");
    expectFailure(runCli(["demo", "--budget-chars"]), "demo", "invalid_input", "--budget-chars");
    expectFailure(runCli(["nope"]), "nope", "invalid_input", "nope");
  });

  it("help shows defaults as typed, and no spec section numbers or internal names", () => {
    const serve = runCli(["help", "serve"]);
    expect(serve.stdout).toContain("(default: 8787)");
    expect(serve.stdout).not.toContain('(default: "');
    const verbs = ["select-memory", "plan-prompt", "plan-conversation", "assemble-context"];
    for (const verb of [
      ...verbs,
      "demo",
      "assemble",
      "serve",
      "replay",
      "inspect",
      "chat",
      "repl",
    ]) {
      const help = runCli([verb, "--help"]).stdout;
      expect(help, verb).not.toMatch(/spec ?\d\d|§|spec02/);
      expect(help, verb).not.toMatch(/\(default: "[^"]/);
    }
    expect(runCli(["--help"]).stdout).not.toMatch(/spec ?\d\d|§/);
  });

  it("a closed stdout ends the process cleanly", () => {
    for (const args of ["help serve", "demo", "demo --json"]) {
      for (let i = 0; i < 3; i++) {
        const r = spawnSync(
          "bash",
          ["-c", `node ${BIN} ${args} 2>${tmp}/err | head -c 1 >/dev/null; echo \${PIPESTATUS[0]}`],
          { encoding: "utf8" },
        );
        expect(r.stdout.trim(), args).toBe("0");
        expect(readFileSync(join(tmp, "err"), "utf8"), args).toBe("");
      }
    }
  });
});

/** An assembly's JSON without its timings (the one part that differs between runs). */
function withoutTimings(stdout: string): unknown {
  const out = JSON.parse(stdout) as { manifest: { timings?: unknown } };
  delete out.manifest.timings;
  return out;
}

describe("the same flags across verbs", () => {
  const assemble = ["assemble", "--workspace", WORKSPACE, "--query", "add an index"];
  const pinned = [...assemble, "--now", NOW, "--user", "u-alice"];

  it("assemble --json is --format json; --budget-chars is the budget (--budget still read)", () => {
    const json = runCli([...pinned, "--json", "--budget-chars", "4000"]);
    expect(json.code, json.stderr).toBe(0);
    const same = runCli([...pinned, "--format", "json", "--budget", "4000"]);
    expect(withoutTimings(same.stdout)).toEqual(withoutTimings(json.stdout));
    const plan = JSON.parse(json.stdout) as { segmentPlan: { budgetChars: number } };
    expect(plan.segmentPlan.budgetChars).toBe(4000);
    expectFailure(
      runCli([...pinned, "--json", "--format", "text"]),
      "assemble",
      "invalid_input",
      "--json",
    );
  });

  it("demo --budget-chars sets the budget; PROMPT_BUDGET_CHARS still tightens it", () => {
    const flag = runCli(["demo", "--json", "--budget-chars", "5000"]);
    expect(flag.code, flag.stderr).toBe(0);
    expect(JSON.parse(flag.stdout).segmentPlan.budgetChars).toBe(5000);
    const env = runCli(["demo", "--json"], { env: { PROMPT_BUDGET_CHARS: "5000" } });
    expect(withoutTimings(env.stdout)).toEqual(withoutTimings(flag.stdout));
    const tighter = runCli(["demo", "--json", "--budget-chars", "9000"], {
      env: { PROMPT_BUDGET_CHARS: "5000" },
    });
    expect(withoutTimings(tighter.stdout)).toEqual(withoutTimings(flag.stdout));
    expectFailure(
      runCli(["demo", "--budget-chars", "x"]),
      "demo",
      "invalid_input",
      "--budget-chars",
    );
    const tokens = runCli(["demo", "--json", "--budget-tokens", "900"]);
    expect(JSON.parse(tokens.stdout).segmentPlan.budgetTokens).toBe(900);
    const fixture = runCli(["demo", "--segments", "--json", "--budget-tokens", "900"]);
    expect(JSON.parse(fixture.stdout).segmentPlan.budgetTokens).toBe(900);
  });
});

describe("strict JSON inputs", () => {
  const cases: Array<[string, unknown, string, string]> = [
    ["select-memory", { ...selectRequest, policy: { maxchars: 5 } }, "policy.maxchars", "maxChars"],
    ["plan-prompt", { ...planRequest, budgetchars: 5 }, "budgetchars", "budgetChars"],
    [
      "plan-conversation",
      { ...conversationRequest, policy: { lowWaterRatio: 0.7, pined: [] } },
      "policy.pined",
      "pinned",
    ],
    [
      "assemble-context",
      { mode: "chat", query: { text: "hi", userScope: "u1", now: NOW, nwo: NOW } },
      "query.nwo",
      "now",
    ],
  ];
  for (const [verb, request, path, meant] of cases) {
    it(`${verb}: an unknown field is unknown_field at its path, exit 2`, () => {
      const r = runCli([verb], { input: JSON.stringify(request) });
      expectFailure(r, verb, "unknown_field", path);
      expect(JSON.parse(r.stdout).error.message).toContain(`did you mean \`${meant}\`?`);
    });
  }

  // Every object level of each verb's request: one --jsonl batch per verb (one process per
  // level for assemble-context, which answers one request).
  for (const verb of ["select-memory", "plan-prompt", "plan-conversation", "assemble-context"]) {
    it(`${verb}: an unknown field at each object level is unknown_field at its path`, () => {
      const example = EXAMPLES[`/v1/${verb}` as keyof typeof EXAMPLES];
      const levels = objectsOf(example).filter((p) => !FREE_FORM.has(formatPath(p)));
      const bodies = levels.map((p) => JSON.stringify(inject(example, p, "zzUnknown")));
      const wanted = levels.map((p) => formatPath([...p, "zzUnknown"]));
      const answers =
        verb === "assemble-context"
          ? bodies.map((b) => {
              const r = runCli([verb], { input: b });
              expect(r.code).toBe(2);
              expect(r.stderr).toMatch(new RegExp(`^promptctx ${verb}: unknown_field: `));
              return r.stdout.trim();
            })
          : runCli([verb, "--jsonl"], { input: `${bodies.join("\n")}\n` })
              .stdout.trim()
              .split("\n");
      const got = answers.map(
        (line) => JSON.parse(line) as { error: { code: string; path: string } },
      );
      expect(got.map((a) => [a.error.code, a.error.path])).toEqual(
        wanted.map((w) => ["unknown_field", w]),
      );
    });
  }

  it("memory import: an unknown field of a record is unknown_field at its path", () => {
    const line = JSON.stringify({
      memoryId: "m1",
      userScope: "u1",
      content: "x",
      source: { sourceId: "s", sourceType: "chat", title: "t", capturedAt: NOW },
      improtance: 0.5,
    });
    const r = runCli(["memory", "import", "-", "--json", "--store", join(tmp, "import.db")], {
      input: `${line}\n`,
    });
    expect(r.code).toBe(2);
    const out = JSON.parse(r.stdout) as { errors: Array<{ path: string; message: string }> };
    expect(out.errors[0]).toMatchObject({ path: "improtance" });
    expect(out.errors[0]?.message).toContain("did you mean `importance`?");
  });
});

describe("--store FILE on first use", () => {
  it("memory recall creates an empty store and says so on stderr, once", () => {
    const file = join(tmp, "fresh.db");
    const first = runCli(["memory", "recall", "--store", file, "--user", "u", "--query", "x"]);
    expect(first.code, first.stderr).toBe(0);
    expect(first.stderr).toBe(`promptctx memory: created an empty memory store at ${file}\n`);
    expect(existsSync(file)).toBe(true);
    const again = runCli(["memory", "recall", "--store", file, "--user", "u", "--query", "x"]);
    expect(again.stderr).toBe("");
  });

  it("a missing directory is invalid input at --store, and nothing is created", () => {
    const file = join(tmp, "no-such-dir", "m.db");
    const r = runCli([...["memory", "recall", "--store", file], "--user", "u", "--query", "x"]);
    expectFailure(r, "memory recall", "invalid_input", "--store");
    expect(existsSync(join(tmp, "no-such-dir"))).toBe(false);
  });

  it("serve --store new.db starts with a new store", async () => {
    const file = join(tmp, "served.db");
    const { spawn } = await import("node:child_process");
    const child = spawn(process.execPath, [
      BIN,
      "serve",
      "--store",
      file,
      "--port",
      "0",
      "--no-log",
    ]);
    let stderr = "";
    child.stderr.setEncoding("utf8").on("data", (s: string) => (stderr += s));
    const url = await new Promise<string>((done, fail) => {
      let out = "";
      child.stdout.setEncoding("utf8").on("data", (s: string) => {
        out += s;
        const m = /listening on (\S+)/.exec(out);
        if (m) done(m[1] as string);
      });
      child.on("exit", () => fail(new Error(`serve exited: ${stderr}`)));
    });
    const health = await (await fetch(`${url}/healthz`)).json();
    const closed = new Promise((done) => child.on("exit", done));
    child.kill("SIGTERM");
    await closed;
    expect(health).toEqual({ status: "ok", store: true });
    expect(stderr).toContain(`promptctx serve: created an empty memory store at ${file}\n`);
  });
});

describe("hints", () => {
  it("a recall whose query is only stop words says so (JSON and table)", () => {
    const store = ["--store", join(tmp, "hints.db"), "--user", "u", "--query", "what is the"];
    const json = runCli(["memory", "recall", ...store, "--json"]);
    expect(JSON.parse(json.stdout).hints).toEqual([
      { code: "query_only_stop_words", message: expect.stringContaining("stop word") },
    ]);
    const table = runCli(["memory", "recall", ...store, "--wide"]);
    expect(table.stdout).toMatch(/^hint: .*stop word.* \(query_only_stop_words\)$/m);
    const content = runCli(["memory", "recall", ...store.slice(0, -1), "python", "--json"]);
    expect(JSON.parse(content.stdout).hints).toEqual([]);
  });

  it("--format anthropic under the minimum cacheable length says why there is no cache_control", () => {
    const args = ["assemble", "--workspace", WORKSPACE, "--query", "hi", "--now", NOW];
    const r = runCli([...args, "--user", "u-alice", "--format", "anthropic"]);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).not.toContain("cache_control");
    expect(r.stderr).toMatch(
      /^promptctx assemble: hint: no cache_control .* \(prefix_below_cache_minimum\)$/m,
    );
  });

  it("chat: a provider that cannot be reached is connection_refused, said for people", async () => {
    const home = mkdtempSync(join(tmp, "home-"));
    // A port that was just free: nothing listens on it.
    const probe = createServer();
    await new Promise<void>((done) => probe.listen(0, "127.0.0.1", done));
    const { port } = probe.address() as AddressInfo;
    await new Promise((done) => probe.close(done));
    const env = {
      ANTHROPIC_API_KEY: "test-key",
      MODEL_ID: "claude-sonnet-4-6",
      ANTHROPIC_BASE_URL: `http://127.0.0.1:${port}`,
    };
    const args = ["chat", "--workspace", WORKSPACE, "--now", NOW, "--no-user-files"];
    const r = await spawnCli(args, "hello\n", env, home);
    expectFailure(r, "chat", "connection_refused", "provider");
    expect(r.stderr).toContain("cannot reach the anthropic API (ECONNREFUSED)");
  });
});
