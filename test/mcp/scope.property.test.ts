/**
 * Property: whatever id a user's memory has, another user's session gets, by every tool,
 * resource URI and argument, exactly the answers it gets for an id nobody has. In process
 * (the SDK's in-memory transport, a real SQLite store), so that many ids can be tried.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { InMemoryTransport } from "@modelcontextprotocol/sdk/inMemory.js";
import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createMcpServer, LastManifests, type McpContext } from "../../src/server/mcp/index.js";
import { type MemoryStore, openStore } from "../../src/store/index.js";
import { createCounterPool } from "../../src/tokens/index.js";
import { WarmWorkspaces } from "../../src/workspace/index.js";
import { call, EXAMPLE, NOW, read } from "./helpers.js";

const memoryUri = (id: string) => `memory://${encodeURIComponent(id)}`;

describe("no session reaches another scope's memories", () => {
  const dir = mkdtempSync(join(tmpdir(), "promptctx-mcp-prop-"));
  let store: MemoryStore;
  let workspaces: WarmWorkspaces;
  const clients: Client[] = [];

  async function session(scope: string): Promise<Client> {
    const counters = createCounterPool();
    const ctx: McpContext = {
      scope,
      root: EXAMPLE,
      workspaces,
      store: () => store,
      clock: () => new Date(NOW),
      counters: () => counters,
      manifests: new LastManifests(),
    };
    const [a, b] = InMemoryTransport.createLinkedPair();
    await createMcpServer(ctx).connect(a);
    const client = new Client({ name: "prop", version: "0" });
    await client.connect(b);
    clients.push(client);
    return client;
  }

  let alice: Client;
  let bob: Client;
  beforeAll(async () => {
    store = openStore(join(dir, "memory.db"));
    workspaces = new WarmWorkspaces({ store });
    alice = await session("alice");
    bob = await session("bob");
  });
  afterAll(async () => {
    for (const c of clients) await c.close();
    await workspaces.close();
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  });

  // Ids a store keeps: non-blank, no NUL, well-formed, at most 200 characters.
  const id = fc
    .string({ minLength: 1, maxLength: 40, unit: "grapheme" })
    .filter((s) => s.trim() !== "" && !s.includes("\u0000"));

  it("read, forget, recall and list answer alike for another scope's id and a missing one", async () => {
    let n = 0;
    await fc.assert(
      fc.asyncProperty(id, async (memoryId) => {
        n++;
        const missing = `absent-${n}-${memoryId}`;
        const content = `zebracode${n} quartz lantern`;
        const w = await call(alice, "remember", { content, memoryId, now: NOW });
        expect(w.isError).toBe(false);
        // The message names the URI as the server parsed it; the rest must be the same.
        const strip = (e: string | undefined, x: string) =>
          e?.replace(`Resource ${new URL(memoryUri(x)).href} `, "Resource URI ");
        const theirs = await read(bob, memoryUri(memoryId));
        const none = await read(bob, memoryUri(missing));
        expect(theirs.error).toBeDefined();
        expect(strip(theirs.error, memoryId)).toBe(strip(none.error, missing));
        const recall = await call(bob, "recall", { query: `zebracode${n}`, now: NOW });
        expect((recall.json as { hits: unknown[] }).hits).toEqual([]);
        const listed = (await bob.listResources()).resources.map((r) => r.uri);
        expect(listed).not.toContain(memoryUri(memoryId));
        const f1 = await call(bob, "forget", { memoryId });
        const f2 = await call(bob, "forget", { memoryId: missing });
        expect(f1.json).toEqual({ memoryId, forgotten: false, removed: 0 });
        expect(f2.json).toEqual({ memoryId: missing, forgotten: false, removed: 0 });
        // Alice's memory is untouched, and hers only.
        const mine = JSON.parse((await read(alice, memoryUri(memoryId))).text ?? "null");
        expect(mine).toMatchObject({ memoryId, userScope: "alice", content });
      }),
      { numRuns: 60 },
    );
  }, 120_000);
});
