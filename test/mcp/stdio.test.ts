import { spawnSync } from "node:child_process";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { BIN } from "../cli/run-cli.js";
import { call, NOW, read, tempWorkspace } from "./helpers.js";

// The real CLI (`promptctx mcp`), driven by the SDK's own stdio client.
async function connect(args: string[]): Promise<Client> {
  const client = new Client({ name: "promptctx-test", version: "0.0.0" });
  await client.connect(
    new StdioClientTransport({
      command: process.execPath,
      args: [BIN, "mcp", ...args],
      stderr: "pipe",
    }),
  );
  return client;
}

describe("promptctx mcp (stdio)", () => {
  const ws = tempWorkspace();
  let alice: Client;
  let bob: Client;
  beforeAll(async () => {
    alice = await connect(["--user", "alice", "--workspace", ws.root]);
    bob = await connect(["--user", "bob", "--workspace", ws.root]);
  }, 30_000);
  afterAll(async () => {
    await alice?.close();
    await bob?.close();
    ws.done();
  });

  it("lists its tools, resources and prompts", async () => {
    const tools = (await alice.listTools()).tools.map((t) => t.name).sort();
    expect(tools).toEqual(["assemble_context", "forget", "recall", "remember"]);
    const templates = (await alice.listResourceTemplates()).resourceTemplates.map(
      (t) => t.uriTemplate,
    );
    expect(templates.sort()).toEqual(["instructions:///{+path}", "memory://{memoryId}"]);
    const prompts = (await alice.listPrompts()).prompts.map((p) => p.name);
    expect(prompts).toEqual(["system"]);
    const resources = (await alice.listResources()).resources.map((r) => r.uri);
    expect(resources).toContain("manifest://last");
    expect(resources).toContain("instructions:///AGENTS.md");
  });

  it("remembers, recalls with explanations, reads the memory; another user cannot", async () => {
    const w = await call(alice, "remember", {
      content: "Prefers pytest over unittest for Python tests",
      memoryId: "m-pytest",
      category: "preference",
      now: NOW,
    });
    expect(w.isError).toBe(false);
    expect(w.json).toMatchObject({ memoryId: "m-pytest", status: "inserted" });
    const r = await call(alice, "recall", { query: "which python test framework", now: NOW });
    expect(r.isError).toBe(false);
    const hit = (r.json as { hits: Array<Record<string, unknown>> }).hits[0];
    expect(hit).toMatchObject({
      memoryId: "m-pytest",
      why: { matchedTerms: expect.arrayContaining(["python"]) },
    });
    expect(hit?.gate).toMatchObject({ status: expect.any(String), reason: expect.any(String) });
    const mine = await read(alice, "memory://m-pytest");
    expect(JSON.parse(mine.text ?? "null")).toMatchObject({
      memoryId: "m-pytest",
      userScope: "alice",
    });
    const theirs = await read(bob, "memory://m-pytest");
    const missing = await read(bob, "memory://m-nothing");
    expect(theirs.error).toBeDefined();
    expect(theirs.error?.replace("m-pytest", "X")).toBe(missing.error?.replace("m-nothing", "X"));
    const bobRecall = await call(bob, "recall", { query: "which python test framework", now: NOW });
    expect((bobRecall.json as { hits: unknown[] }).hits).toEqual([]);
  });

  it("assembles the workspace's context and keeps the last manifest", async () => {
    const a = await call(alice, "assemble_context", {
      query: "add an index on invoices.created_at",
      now: NOW,
    });
    expect(a.isError).toBe(false);
    const out = a.json as { prompt: string; manifest: { layers: unknown[]; dropped: unknown[] } };
    expect(out.prompt.length).toBeGreaterThan(0);
    expect(out.manifest.layers.length).toBeGreaterThan(0);
    const last = await read(alice, "manifest://last");
    expect(JSON.parse(last.text ?? "null")).toMatchObject({
      query: "add an index on invoices.created_at",
    });
    const p = await alice.getPrompt({ name: "system", arguments: { query: "add an index" } });
    expect(p.messages[0]?.content).toMatchObject({ type: "text" });
    const agents = await read(alice, "instructions:///AGENTS.md");
    expect(agents.text?.length).toBeGreaterThan(0);
  });

  it("a line that is not JSON-RPC is said on stderr; every request is answered before stdin's end stops it", () => {
    const lines = [
      "not json",
      JSON.stringify({
        jsonrpc: "2.0",
        id: 1,
        method: "initialize",
        params: {
          protocolVersion: "2025-06-18",
          capabilities: {},
          clientInfo: { name: "raw", version: "0" },
        },
      }),
      JSON.stringify({ jsonrpc: "2.0", method: "notifications/initialized" }),
      JSON.stringify({ jsonrpc: "2.0", id: 2, method: "tools/list" }),
      // Stdin ends right after: the slowest request is still answered.
      JSON.stringify({
        jsonrpc: "2.0",
        id: 3,
        method: "tools/call",
        params: { name: "assemble_context", arguments: { query: "add an index", now: NOW } },
      }),
    ];
    const r = spawnSync(process.execPath, [BIN, "mcp", "--user", "raw", "--workspace", ws.root], {
      input: `${lines.join("\n")}\n`,
      encoding: "utf8",
    });
    expect(r.status).toBe(0);
    expect(r.stderr).toMatch(/^promptctx mcp: .*not valid JSON/m);
    const answers = r.stdout
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l) as { id: number });
    expect(answers.map((a) => a.id).sort()).toEqual([1, 2, 3]);
  });

  it("answers bad input with a clear error and keeps serving", async () => {
    const unknown = await alice.callTool({ name: "nope", arguments: {} });
    expect(unknown.isError).toBe(true);
    const wrong = await call(alice, "recall", { query: 5 });
    expect(wrong.isError).toBe(true);
    expect(wrong.text).toContain("query");
    const extra = await call(alice, "recall", { query: "x", userScope: "bob" });
    expect(extra.isError).toBe(true);
    const big = await call(alice, "remember", { content: "x".repeat(9000) });
    expect(big.isError).toBe(true);
    expect(big.text).toContain("content");
    const out = await call(alice, "assemble_context", { query: "x", workspace: "../outside" });
    expect(out.isError).toBe(true);
    expect(out.json).toMatchObject({ error: { code: "path_refused" } });
    const secret = await read(alice, "instructions:///../secret.md");
    expect(secret.error).toBeDefined();
    const still = await call(alice, "recall", { query: "pytest", now: NOW });
    expect(still.isError).toBe(false);
  });
});
