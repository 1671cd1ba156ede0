/**
 * `promptctx memory` by meaning, through the built CLI: import + recall find a paraphrase
 * with no flag and no network; `--embedder none` is full-text only; an unreachable remote
 * embedder keeps the records (pending, exit 1 with connection_refused and the URL);
 * `memory reembed` fills them; a store recorded with another embedder is refused.
 */
import { mkdirSync, writeFileSync } from "node:fs";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { tempDir } from "../store/helpers.js";
import { runCli, spawnCli } from "./run-cli.js";

let dir: string;
let cleanup: () => void;
const NOW = "2026-08-17T00:00:00Z";
const line = (id: string, content: string) =>
  JSON.stringify({
    memoryId: id,
    userScope: "u1",
    content,
    source: { sourceId: "s", sourceType: "chat", title: "t", capturedAt: "2026-08-01T00:00:00Z" },
  });

beforeAll(() => {
  ({ dir, cleanup } = tempDir());
  writeFileSync(
    join(dir, "m.jsonl"),
    [
      line("dark", "The user prefers a dark theme"),
      line("review", "Every change needs an approving review before it is merged"),
      line("deploy", "The deploy runs on Fridays"),
    ].join("\n"),
  );
});
afterAll(() => cleanup());

describe("memory recall by meaning (CLI)", () => {
  it("import then recall finds a paraphrase with no flag, showing both ranks", () => {
    const store = join(dir, "a.db");
    const imp = runCli(["memory", "import", join(dir, "m.jsonl"), "--store", store]);
    expect(imp.code, imp.stderr).toBe(0);
    expect(imp.stderr).toContain("vectors: 3 embedded, 0 pending");
    const r = runCli([
      "memory",
      "recall",
      "--store",
      store,
      "--user",
      "u1",
      "--query",
      "which editor colours does the user like?",
      "--now",
      NOW,
      "--json",
    ]);
    expect(r.code, r.stderr).toBe(0);
    const hits = JSON.parse(r.stdout).hits;
    expect(hits[0]).toMatchObject({ memoryId: "dark", match: { semanticRank: 1 } });
    expect(hits[0].match.similarity).toBeGreaterThan(0.4);
    const table = runCli([
      "memory",
      "recall",
      "--store",
      store,
      "--user",
      "u1",
      "--query",
      "which editor colours does the user like?",
      "--now",
      NOW,
      "--wide",
    ]);
    expect(table.stdout).toMatch(/lex#\s+sem#\s+similarity/);
    const none = runCli([
      "memory",
      "recall",
      "--store",
      store,
      "--user",
      "u1",
      "--query",
      "editor colours",
      "--now",
      NOW,
      "--json",
      "--embedder",
      "none",
    ]);
    expect(JSON.parse(none.stdout).hits).toEqual([]);
  });

  it("an unreachable embedder keeps the records pending (connection_refused, the URL, exit 1); reembed fills them", async () => {
    const store = join(dir, "b.db");
    const closed = createServer();
    await new Promise<void>((r) => closed.listen(0, "127.0.0.1", r));
    const port = (closed.address() as AddressInfo).port;
    await new Promise<void>((r) => closed.close(() => r()));
    const url = `http://127.0.0.1:${port}/v1`;
    const env = { OPENAI_BASE_URL: url, PROMPTCTX_EMBEDDER: "openai:fake:8" };
    const imp = await spawnCli(
      ["memory", "import", join(dir, "m.jsonl"), "--store", store],
      "",
      env,
      dir,
    );
    expect(imp.code).toBe(1);
    expect(imp.stderr).toContain("connection_refused");
    expect(imp.stderr).toContain(`${url}/embeddings`);
    expect(imp.stderr).toContain("3 vector(s) pending");
    // The records are there: full-text finds them.
    const words = await spawnCli(
      [
        "memory",
        "recall",
        "--store",
        store,
        "--user",
        "u1",
        "--query",
        "dark theme",
        "--now",
        NOW,
        "--json",
        "--embedder",
        "none",
      ],
      "",
      env,
      dir,
    );
    expect(JSON.parse(words.stdout).hits[0].memoryId).toBe("dark");
    // A loopback server speaking the wire format now answers on the same port.
    const server = createServer((req, res) => {
      let body = "";
      req.on("data", (c) => (body += c));
      req.on("end", () => {
        const input = JSON.parse(body).input as string[];
        const data = input.map((t, index) => ({
          object: "embedding",
          index,
          embedding: Array.from({ length: 8 }, (_, i) => (t.length % (i + 2)) + 1),
        }));
        res
          .writeHead(200, { "content-type": "application/json" })
          .end(JSON.stringify({ object: "list", data, model: "fake" }));
      });
    });
    await new Promise<void>((r) => server.listen(port, "127.0.0.1", r));
    try {
      const re = await spawnCli(["memory", "reembed", "--store", store, "--json"], "", env, dir);
      expect(re.code, re.stderr).toBe(0);
      expect(JSON.parse(re.stdout)).toMatchObject({
        embedder: "openai:fake/8",
        embedded: 3,
        pending: 0,
      });
      // The store now records openai:fake/8: the embedded encoder is refused, naming both.
      const mismatch = await spawnCli(
        [
          "memory",
          "recall",
          "--store",
          store,
          "--user",
          "u1",
          "--query",
          "x",
          "--now",
          NOW,
          "--embedder",
          "embedded",
        ],
        "",
        env,
        dir,
      );
      expect(mismatch.code).toBe(2);
      const err = JSON.parse(mismatch.stdout).error;
      expect(err.code).toBe("embedder_mismatch");
      expect(err.message).toContain("openai:fake/8");
      expect(err.message).toContain("use-lite@");
      expect(err.message).toContain("promptctx memory reembed --embedder embedded");
      expect(err.message).toContain("or configure openai:fake:8 again");
    } finally {
      await new Promise<void>((r) => server.close(() => r()));
    }
  });

  it("rejects an unknown --embedder with exit 2 and the flag as path", () => {
    const r = runCli([
      "memory",
      "recall",
      "--store",
      join(dir, "a.db"),
      "--user",
      "u1",
      "--query",
      "x",
      "--embedder",
      "bert",
    ]);
    expect(r.code).toBe(2);
    expect(JSON.parse(r.stdout).error).toMatchObject({ code: "invalid_input", path: "--embedder" });
  });
});

describe("a remote embedder named by a workspace config (CLI assemble)", () => {
  it("reads its base URL and key from the environment", async () => {
    const ws = join(dir, "ws");
    mkdirSync(join(ws, ".promptctx"), { recursive: true });
    writeFileSync(
      join(ws, ".promptctx", "config.json"),
      JSON.stringify({ user: "u1", memory: { embedder: "openai:fake:8" } }),
    );
    const seen: { url: string; auth: string; input: string[] }[] = [];
    const server = createServer((req, res) => {
      let body = "";
      req.on("data", (c) => (body += c));
      req.on("end", () => {
        const input = JSON.parse(body).input as string[];
        seen.push({ url: req.url ?? "", auth: String(req.headers.authorization), input });
        const data = input.map((_, index) => ({
          object: "embedding",
          index,
          embedding: Array.from({ length: 8 }, (_, i) => i + 1),
        }));
        res
          .writeHead(200, { "content-type": "application/json" })
          .end(JSON.stringify({ object: "list", data, model: "fake" }));
      });
    });
    await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
    const port = (server.address() as AddressInfo).port;
    try {
      const env = {
        PROMPTCTX_EMBEDDER_BASE_URL: `http://127.0.0.1:${port}/v1`,
        PROMPTCTX_EMBEDDER_API_KEY: "k-workspace",
      };
      const add = await spawnCli(
        [
          "memory",
          "add",
          "--store",
          join(ws, ".promptctx", "memory.db"),
          "--embedder",
          "openai:fake:8",
          "--user",
          "u1",
          "--text",
          "The user prefers a dark theme",
        ],
        "",
        env,
        ws,
      );
      expect(add.code, add.stderr).toBe(0);
      const out = await spawnCli(
        [
          "assemble",
          "--workspace",
          ws,
          "--query",
          "which editor colours does the user like?",
          "--now",
          NOW,
          "--no-user-files",
          "--json",
        ],
        "",
        env,
        ws,
      );
      expect(out.code, out.stderr).toBe(0);
      const queried = seen.find((s) =>
        s.input.includes("which editor colours does the user like?"),
      );
      expect(queried).toMatchObject({ url: "/v1/embeddings", auth: "Bearer k-workspace" });
    } finally {
      await new Promise<void>((r) => server.close(() => r()));
    }
  });
});
