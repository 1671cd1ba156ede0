/**
 * `--store postgres://…` on every CLI verb that takes `--store` (memory add, import,
 * export, recall; assemble), as real child processes against a throwaway cluster, each
 * answered exactly as over an SQLite file.
 */
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { PG_TESTS, PGVECTOR_TESTS, usePostgres } from "../store/pg-helpers.js";
import { runCli } from "./run-cli.js";

const EXAMPLE = join(import.meta.dirname, "../../examples/workspace");
const NOW = "2026-11-30T09:00:00Z";
const QUERY = "add an index on invoices.created_at in a new migration";

describe.runIf(PG_TESTS)("promptctx --store postgres://…", () => {
  const pg = usePostgres();
  let dir: string;
  let home: string;
  let url: string;
  let sqlite: string;
  const env = () => ({ HOME: home });
  const cli = (args: string[], input = "") => runCli(args, { env: env(), input });

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), "promptctx-ws-"));
    home = mkdtempSync(join(tmpdir(), "promptctx-home-"));
    cpSync(EXAMPLE, dir, { recursive: true });
    // Recall by meaning on PostgreSQL needs pgvector in the database (store init makes it).
    if (PGVECTOR_TESTS) await pg.vector();
    url = (await pg.schema()).url;
    sqlite = join(dir, "copy.db");
    for (const store of [url, sqlite]) {
      const r = cli(["memory", "import", "--store", store, join(dir, "memories.jsonl")]);
      expect(r.code, r.stderr).toBe(0);
    }
  });
  afterAll(() => {
    rmSync(dir, { recursive: true, force: true });
    rmSync(home, { recursive: true, force: true });
  });

  it("memory import and export: the same bytes as over SQLite", () => {
    const fromPg = cli(["memory", "export", "--store", url]);
    const fromSqlite = cli(["memory", "export", "--store", sqlite]);
    expect(fromPg.code, fromPg.stderr).toBe(0);
    expect(fromPg.stdout.length).toBeGreaterThan(100);
    expect(fromPg.stdout).toBe(fromSqlite.stdout);
  });

  it("memory recall --json: the same hits and breakdowns as over SQLite (words and meaning)", () => {
    for (const query of ["migration scripts", "how should database changes be shipped?"]) {
      const args = ["--user", "user-42", "--query", query, "--now", NOW, "--json"];
      // Without pgvector here, PostgreSQL recalls by words: compare SQLite's words then.
      const words = PGVECTOR_TESTS ? [] : ["--embedder", "none"];
      const fromPg = cli(["memory", "recall", "--store", url, ...args, ...words]);
      const fromSqlite = cli(["memory", "recall", "--store", sqlite, ...args, ...words]);
      expect(fromPg.code, fromPg.stderr).toBe(0);
      expect(JSON.parse(fromPg.stdout)).toEqual(JSON.parse(fromSqlite.stdout));
    }
  });

  it.runIf(PGVECTOR_TESTS)(
    "memory reembed on PostgreSQL: pending vectors filled, then none",
    () => {
      const r = cli(["memory", "reembed", "--store", url, "--json"]);
      expect(r.code, r.stderr).toBe(0);
      expect(JSON.parse(r.stdout)).toMatchObject({
        embedder: expect.stringMatching(/^use-lite@/),
        migratedFrom: null,
        pending: 0,
      });
      const again = cli([
        "memory",
        "add",
        "--store",
        url,
        "--user",
        "u9",
        "--text",
        "Ana likes green tea",
        "--id",
        "t1",
        "--now",
        NOW,
        "--embedder",
        "none",
      ]);
      expect(again.code, again.stderr).toBe(0);
      const filled = JSON.parse(cli(["memory", "reembed", "--store", url, "--json"]).stdout);
      expect(filled).toMatchObject({ embedded: 1, pending: 0 });
      const hits = JSON.parse(
        cli([
          "memory",
          "recall",
          "--store",
          url,
          "--user",
          "u9",
          "--query",
          "which drink does Ana enjoy?",
          "--now",
          NOW,
          "--json",
        ]).stdout,
      );
      expect(hits.hits[0]).toMatchObject({ memoryId: "t1", match: { semanticRank: 1 } });
    },
  );

  it("a database without pgvector: recall by words, with the recall_full_text_only hint", async () => {
    const plain = await pg.database("noext");
    const add = ["--user", "zoe", "--text", "Zoe deploys on Fridays", "--id", "z1", "--now", NOW];
    expect(cli(["memory", "add", "--store", plain, ...add]).code).toBe(0);
    const args = [
      "memory",
      "recall",
      "--store",
      plain,
      "--user",
      "zoe",
      "--query",
      "fridays",
      "--now",
      NOW,
    ];
    const json = cli([...args, "--json"]);
    expect(json.code, json.stderr).toBe(0);
    const answer = JSON.parse(json.stdout);
    expect(answer.hits.map((h: { memoryId: string }) => h.memoryId)).toEqual(["z1"]);
    expect(answer.hints.map((h: { code: string }) => h.code)).toEqual(["recall_full_text_only"]);
    const text = cli(args);
    expect(text.stdout).toContain("hint: recall is by words only");
    expect(text.stdout).toContain("(recall_full_text_only)");
    const reembed = cli(["memory", "reembed", "--store", plain]);
    expect(reembed.code).toBe(2);
    expect(reembed.stderr).toContain("pgvector");
    // A workspace assembly recalling by meaning (its config names the embedder) from
    // that store: the same hint, in its manifest.
    const ws = mkdtempSync(join(tmpdir(), "promptctx-ws-"));
    cpSync(EXAMPLE, ws, { recursive: true });
    const configPath = join(ws, ".promptctx/config.json");
    const config = JSON.parse(readFileSync(configPath, "utf8"));
    writeFileSync(configPath, JSON.stringify({ ...config, memory: { embedder: "embedded" } }));
    const assembled = cli([
      ...["assemble", "--workspace", ws, "--store", plain, "--user", "zoe"],
      ...["--query", "when does zoe deploy on fridays?", "--now", NOW, "--format", "json"],
    ]);
    rmSync(ws, { recursive: true, force: true });
    expect(assembled.code, assembled.stderr).toBe(0);
    const { manifest } = JSON.parse(assembled.stdout);
    expect(manifest.memoryDecisions.map((d: { memoryId: string }) => d.memoryId)).toEqual(["z1"]);
    expect(manifest.hints).toEqual([
      {
        slot: "recall_memory",
        sourceId: expect.any(String),
        code: "recall_full_text_only",
        message: answer.hints[0].message,
      },
    ]);
  });

  it("memory add, then recall finds it; the store is named without its password", () => {
    const withPassword = url.replace("promptctx@", "promptctx:pw@");
    const added = cli([
      ...["memory", "add", "--store", withPassword, "--user", "zoe"],
      ...["--text", "Zoe deploys on Fridays", "--id", "z1", "--now", NOW],
    ]);
    expect(added.code, added.stderr).toBe(0);
    expect(added.stdout).toContain("inserted z1");
    expect(added.stdout).toContain("promptctx:***@");
    expect(added.stdout).not.toContain(":pw@");
    const r = cli(["memory", "recall", "--store", url, "--user", "zoe", "--query", "fridays"]);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain("z1");
  });

  it("store init: both roles; serve's role writes and recalls, only the owner's exports", async () => {
    const { adminUrl, name } = await pg.schema();
    const init = cli(["store", "init", adminUrl, "--json"]);
    expect(init.code, init.stderr).toBe(0);
    const done = JSON.parse(init.stdout);
    expect(done).toMatchObject({
      schema: name,
      ownerRole: "promptctx_owner",
      appRole: "promptctx_app",
    });
    // The URLs to use: the administrator's, as each role (the schema kept).
    const app: string = done.urls.app;
    expect(app).toBe(adminUrl.replace("postgres@", "promptctx_app@"));
    const add = ["--user", "zoe", "--text", "Zoe deploys on Fridays", "--id", "z1", "--now", NOW];
    const added = cli(["memory", "add", "--store", app, ...add, "--json"]);
    expect(added.code, added.stderr).toBe(0);
    expect(JSON.parse(added.stdout)).toMatchObject({
      status: "inserted",
      record: { userScope: "zoe" },
    });
    const refused = cli(["memory", "export", "--store", app]);
    expect(refused.code).toBe(2);
    expect(refused.stderr).toMatch(/reads every scope.*owner/);
    const exported = cli(["memory", "export", "--store", done.urls.owner]);
    expect(exported.code, exported.stderr).toBe(0);
    expect(exported.stdout).toContain('"memoryId":"z1"');
    const text = cli(["store", "init", adminUrl]);
    expect(text.code, text.stderr).toBe(0);
    expect(text.stdout).toMatch(/owner role promptctx_owner \(existed\)/);
    const bad = cli(["store", "init", "/tmp/not-a-url"]);
    expect(bad.code).toBe(2);
  });

  it("a database without a store: read verbs exit 2 and create nothing", async () => {
    const empty = (await pg.schema()).url;
    const r = cli(["memory", "recall", "--store", empty, "--user", "u", "--query", "x"]);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/no promptctx memory store/);
    expect(cli(["memory", "export", "--store", empty]).code).toBe(2);
  });

  it("assemble --store postgres://…: the same prompt as with the SQLite file", async () => {
    // Fresh copies of both (the tests above wrote to the first ones).
    const pgCopy = (await pg.schema()).url;
    const sqliteCopy = join(dir, "copy2.db");
    for (const store of [pgCopy, sqliteCopy]) {
      const r = cli(["memory", "import", "--store", store, join(dir, "memories.jsonl")]);
      expect(r.code, r.stderr).toBe(0);
    }
    const run = (store: string) =>
      cli([
        ...["assemble", "--workspace", dir, "--query", QUERY, "--now", NOW],
        ...["--format", "json", "--store", store],
      ]);
    const fromPg = run(pgCopy);
    const fromSqlite = run(sqliteCopy);
    expect(fromPg.code, fromPg.stderr).toBe(0);
    const a = JSON.parse(fromPg.stdout);
    const b = JSON.parse(fromSqlite.stdout);
    expect(a.prompt).toBe(b.prompt);
    expect(a.memoryPlan).toEqual(b.memoryPlan);
    expect(a.prompt).toMatch(/invoices/);
  });
});
