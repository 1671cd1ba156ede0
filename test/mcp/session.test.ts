/**
 * One MCP session in process (the SDK's in-memory transport): what needs a workspace or a
 * server set up in a particular way — no store, an instruction file that links out of the
 * root, the strict `system` prompt arguments, the last manifest before and after.
 */
import { mkdirSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { InMemoryTransport } from "@modelcontextprotocol/sdk/inMemory.js";
import { afterAll, describe, expect, it } from "vitest";
import { createMcpServer, LastManifests } from "../../src/server/mcp/index.js";
import type { MemoryStore } from "../../src/store/index.js";
import { createCounterPool } from "../../src/tokens/index.js";
import { WarmWorkspaces } from "../../src/workspace/index.js";
import { call, NOW, read, tempWorkspace } from "./helpers.js";

async function session(root: string, store: MemoryStore | null): Promise<Client> {
  const counters = createCounterPool();
  const [a, b] = InMemoryTransport.createLinkedPair();
  await createMcpServer({
    scope: "u1",
    root,
    workspaces: new WarmWorkspaces({ store }),
    store: () => store,
    clock: () => new Date(NOW),
    counters: () => counters,
    manifests: new LastManifests(),
  }).connect(a);
  const client = new Client({ name: "session", version: "0" });
  await client.connect(b);
  return client;
}

describe("an MCP session", () => {
  const ws = tempWorkspace();
  afterAll(() => ws.done());

  it("without a store: the memory tools say store_not_configured, assembly still runs", async () => {
    const client = await session(ws.root, null);
    const r = await call(client, "recall", { query: "pytest" });
    expect(r).toMatchObject({ isError: true, json: { error: { code: "store_not_configured" } } });
    const w = await call(client, "remember", { content: "x" });
    expect(w.json).toMatchObject({ error: { code: "store_not_configured" } });
    const uris = (await client.listResources()).resources.map((x) => x.uri);
    expect(uris.filter((u) => u.startsWith("memory://"))).toEqual([]);
    const a = await call(client, "assemble_context", { query: "add an index" });
    expect(a.isError).toBe(false);
    await client.close();
  });

  it("serves no instruction file that links out of the root, and no file off the chain", async () => {
    const root = join(ws.dir, "linked");
    mkdirSync(root);
    writeFileSync(join(root, "CLAUDE.md"), "# Rules\nUse tabs.\n");
    symlinkSync(join(ws.dir, "secret.md"), join(root, "AGENTS.md"));
    mkdirSync(join(root, "notes"));
    writeFileSync(join(root, "notes", "todo.md"), "not an instruction file\n");
    const client = await session(root, null);
    const uris = (await client.listResources()).resources.map((x) => x.uri);
    expect(uris).toContain("instructions:///CLAUDE.md");
    expect(uris).not.toContain("instructions:///AGENTS.md");
    expect((await read(client, "instructions:///CLAUDE.md")).text).toBe("# Rules\nUse tabs.\n");
    const linked = await read(client, "instructions:///AGENTS.md");
    const offChain = await read(client, "instructions:///notes/todo.md");
    const missing = await read(client, "instructions:///NOPE.md");
    for (const [e, p] of [
      [linked.error, "AGENTS.md"],
      [offChain.error, "notes/todo.md"],
    ] as const) {
      expect(e?.replace(p, "P")).toBe(missing.error?.replace("NOPE.md", "P"));
    }
    await client.close();
  });

  it("the system prompt: strict arguments, and it sets the last manifest", async () => {
    const client = await session(ws.root, null);
    expect(JSON.parse((await read(client, "manifest://last")).text ?? "")).toBeNull();
    await expect(
      client.getPrompt({ name: "system", arguments: { query: "q", user: "someone-else" } }),
    ).rejects.toThrow(/user/);
    const p = await client.getPrompt({ name: "system", arguments: { query: "add an index" } });
    const text = (p.messages[0]?.content as { text?: string } | undefined)?.text;
    expect(text).toContain("Acme");
    const last = JSON.parse((await read(client, "manifest://last")).text ?? "null");
    expect(last).toMatchObject({
      query: "add an index",
      workspace: ".",
      manifest: { now: new Date(NOW).toISOString() },
    });
    expect(last.manifest.timings).toBeUndefined();
    await expect(
      client.getPrompt({ name: "system", arguments: { query: "q", workspace: "../outside" } }),
    ).rejects.toThrow(/path_refused/);
    await client.close();
  });
});
