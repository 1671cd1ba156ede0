/**
 * `promptctx memory add|import|export|recall`, run as real child processes against real
 * SQLite files: the tests spawn the built `bin/promptctx.js` (`npm run build` first).
 */
import { spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { renderProgress } from "../../src/cli/memory/command.js";
import { resolveStorePath } from "../../src/cli/memory/flags.js";
import { openStore, STORE_SCHEMA_VERSION } from "../../src/store/index.js";
import { type CliResult, runCli } from "./run-cli.js";

const ROOT = fileURLToPath(new URL("../../", import.meta.url));

function memory(args: string[], input = ""): CliResult {
  return runCli(["memory", ...args], { input });
}

function noStack(text: string) {
  expect(text).not.toMatch(/\n\s+at .+:\d+:\d+/);
}

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), "promptctx-memory-cli-"));
});
afterEach(() => {
  rmSync(dir, { recursive: true, force: true });
});

const NOW = "2026-08-17T09:00:00Z";
const line = (id: string, scope: string, content: string, extra: Record<string, unknown> = {}) =>
  JSON.stringify({
    memoryId: id,
    userScope: scope,
    content,
    source: { sourceId: "s", sourceType: "chat", title: "t", capturedAt: "2026-08-10T00:00:00Z" },
    ...extra,
  });

describe("memory CLI (bin/promptctx.js)", () => {
  it("add → recall (table and --json) in a workspace's default store", () => {
    const add = memory([
      "add",
      "--workspace",
      dir,
      "--user",
      "u1",
      "--text",
      "User prefers Python for automation",
      "--category",
      "preference",
      "--importance",
      "0.9",
      "--conflict-key",
      "preference:automation-language",
      "--now",
      NOW,
      "--id",
      "m1",
    ]);
    expect(add.code).toBe(0);
    expect(add.stdout).toMatch(/^inserted m1 \(scope "u1"\)/);
    expect(existsSync(join(dir, ".promptctx", "memory.db"))).toBe(true);
    expect(
      memory(["add", "--workspace", dir, "--user", "u2", "--text", "python for u2", "--now", NOW])
        .code,
    ).toBe(0);

    const table = memory([
      "recall",
      "--workspace",
      dir,
      "--user",
      "u1",
      "--query",
      "python",
      "--now",
      NOW,
      "--wide",
    ]);
    expect(table.code).toBe(0);
    const [header, rule, row] = table.stdout.split("\n");
    // By words and by meaning (the embedded encoder, the default): both ranks are shown.
    expect(header).toMatch(
      /^rank\s+id\s+total\s+lexical\s+path\s+lex#\s+sem#\s+similarity\s+recency\s+importance\s+snippet$/,
    );
    expect(rule).toMatch(/^-+( +-+)+$/);
    expect(row).toMatch(
      /^\s*1\s+m1\s+0\.\d{6}\s+1\.000000\s+both\s+1\s+1\s+0\.\d{6}\s+1\.000000\s+0\.900000\s+User prefers Python/,
    );
    expect(table.stdout).toContain(
      "total = max(lexical, semantic) × (0.6 + 0.2×recency + 0.2×importance)",
    );
    expect(table.stdout).not.toContain("u2");
    expect(table.stdout).not.toContain("\u001b[");

    const json = memory([
      "recall",
      "--workspace",
      dir,
      "--user",
      "u1",
      "--query",
      "python",
      "--now",
      NOW,
      "--json",
    ]);
    expect(json.code).toBe(0);
    const body = JSON.parse(json.stdout);
    expect(body).toMatchObject({ userScope: "u1", query: "python", asOf: NOW });
    expect(body.hits).toHaveLength(1);
    expect(body.hits[0]).toMatchObject({
      memoryId: "m1",
      rank: 1,
      conflictKey: "preference:automation-language",
      scoreBreakdown: {
        lexical: 1,
        recency: 1,
        importance: 0.9,
        weights: { lexical: 0.6, recency: 0.2, importance: 0.2 },
      },
    });
    expect(body.hits[0].score).toBe(body.hits[0].scoreBreakdown.total);
  });

  it("add: bad flags are invalid input naming the flag (exit 2, error object, no stack)", () => {
    const base = ["add", "--workspace", dir, "--user", "u1", "--text", "x"];
    for (const [extra, path] of [
      [["--importance", "2"], "--importance"],
      [["--now", "tomorrow"], "--now"],
      [["--authority", "system_override"], "--authority"],
      [["--tags", "a, ,b", "--category", " "], "--category"],
    ] as const) {
      const r = memory([...base, ...extra]);
      expect(r.code).toBe(2);
      expect(JSON.parse(r.stdout)).toMatchObject({ error: { code: "invalid_input", path } });
      expect(r.stderr).toMatch(/^promptctx memory add: invalid_input: /);
      noStack(r.stderr);
    }
    const blank = memory(["add", "--workspace", dir, "--user", " ", "--text", "x"]);
    expect(JSON.parse(blank.stdout).error.path).toBe("--user");
    expect(memory(["add", "--workspace", dir, "--text", "x"]).code).toBe(2); // --user missing
  });

  it("import: bad lines reported with line numbers, the rest imported, exit 2; export round trip", () => {
    const store = join(dir, "m.db");
    const file = join(dir, "in.jsonl");
    writeFileSync(
      file,
      [
        line("a", "u1", "alpha"),
        "{oops",
        line("b", "u1", "beta", { importance: 3 }),
        line("c", "u2", "gamma"),
        "",
      ].join("\n"),
    );
    const r = memory(["import", "--store", store, file, "--json"]);
    expect(r.code).toBe(2);
    expect(JSON.parse(r.stdout)).toMatchObject({
      imported: 2,
      skipped: 2,
      errors: [
        { line: 2, path: null },
        { line: 3, path: "importance" },
      ],
    });
    expect(r.stderr).toMatch(/imported 2 record\(s\), skipped 2 line\(s\)/);
    expect(r.stderr).toMatch(/line 2: not valid JSON/);
    expect(r.stderr).toMatch(/line 3: importance: /);

    const ok = memory(
      ["import", "--store", store, "--batch-size", "1", "-"],
      `${line("d", "u1", "delta")}\n`,
    );
    expect(ok.code).toBe(0);
    expect(ok.stdout).toBe("");
    expect(ok.stderr).toMatch(/imported 1 record\(s\), skipped 0 line\(s\) from stdin/);

    const exported = memory(["export", "--store", store]);
    expect(exported.code).toBe(0);
    const ids = exported.stdout
      .trimEnd()
      .split("\n")
      .map((l) => JSON.parse(l).memoryId);
    expect(ids).toEqual(["a", "d", "c"]); // u1 then u2
    const out = join(dir, "out.jsonl");
    expect(memory(["export", "--store", store, "--output", out]).code).toBe(0);
    expect(readFileSync(out, "utf8")).toBe(exported.stdout);

    // Re-import the export into a fresh workspace: byte-identical re-export.
    const ws = join(dir, "ws");
    expect(memory(["import", "--workspace", ws, out]).code).toBe(0);
    expect(memory(["export", "--workspace", ws]).stdout).toBe(exported.stdout);
  });

  it("recall/export in a missing directory, unreadable file, both --store and --workspace → exit 2", () => {
    const missing = memory([
      "recall",
      "--store",
      join(dir, "none", "none.db"),
      "--user",
      "u1",
      "--query",
      "x",
    ]);
    expect(missing.code).toBe(2);
    expect(JSON.parse(missing.stdout).error).toMatchObject({
      code: "invalid_input",
      path: "--store",
    });
    expect(existsSync(join(dir, "none"))).toBe(false);
    expect(memory(["export", "--workspace", dir]).code).toBe(2);
    const nofile = memory(["import", "--store", join(dir, "x.db"), join(dir, "nope.jsonl")]);
    expect(JSON.parse(nofile.stdout).error.path).toBe("FILE");
    const both = memory(["export", "--store", "a.db", "--workspace", dir]);
    expect(JSON.parse(both.stdout).error.path).toBe("--store");
    const limit = memory([
      "recall",
      "--workspace",
      dir,
      "--user",
      "u1",
      "--query",
      "x",
      "--limit",
      "0",
    ]);
    expect(limit.code).toBe(2);
  });

  it("a store from a newer promptctx is refused with a clear message", () => {
    const path = join(dir, "new.db");
    openStore(path).close();
    const r0 = spawnSync(
      process.execPath,
      [
        "-e",
        `const D=require("better-sqlite3");const d=new D(${JSON.stringify(path)});d.pragma("user_version = 99");d.close()`,
      ],
      { cwd: ROOT, encoding: "utf8" },
    );
    expect(r0.status).toBe(0);
    const r = memory(["recall", "--store", path, "--user", "u1", "--query", "x"]);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain(
      `schema version 99; this promptctx supports up to ${STORE_SCHEMA_VERSION}`,
    );
  });

  it("--help on every verb", () => {
    for (const verb of ["add", "import", "export", "recall"]) {
      const r = memory([verb, "--help"]);
      expect(r.code).toBe(0);
      expect(r.stdout).toMatch(/--store <path\|url>/);
    }
    expect(memory(["import", "--help"]).stdout).toMatch(/line number/);
  });
});

describe("memory CLI helpers", () => {
  it("progress bar", () => {
    expect(renderProgress(52000, 100000, 10)).toBe("[#####     ] 52% 52000/100000");
    expect(renderProgress(0, 100000, 4)).toBe("[    ] 0% 0/100000");
    expect(renderProgress(100000, 100000, 4)).toBe("[####] 100% 100000/100000");
    expect(renderProgress(0, 0, 4)).toBe("[####] 100% 0/0");
  });

  it("store path: --store wins, else DIR/.promptctx/memory.db", () => {
    expect(resolveStorePath({ workspace: "/w" })).toBe("/w/.promptctx/memory.db");
    expect(resolveStorePath({ store: "x.db" }, "/cwd")).toBe("/cwd/x.db");
    expect(resolveStorePath({}, "/cwd")).toBe("/cwd/.promptctx/memory.db");
  });
});
