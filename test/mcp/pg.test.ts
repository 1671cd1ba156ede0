/**
 * `promptctx mcp --store postgres://…` (the app role of a store made by `store init`, on a
 * throwaway cluster): two users' sessions share one store and neither reaches the other's
 * memories, by the scope of the session and by the store's row-level security.
 */
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { BIN } from "../cli/run-cli.js";
import { PG_TESTS, usePostgres } from "../store/pg-helpers.js";
import { call, NOW, read, tempWorkspace } from "./helpers.js";

describe.runIf(PG_TESTS)("promptctx mcp over a PostgreSQL store", () => {
  const pg = usePostgres();
  const ws = tempWorkspace();
  const clients: Client[] = [];

  async function connect(user: string, url: string): Promise<Client> {
    const client = new Client({ name: "pg-test", version: "0" });
    const args = [BIN, "mcp", "--user", user, "--workspace", ws.root, "--store", url];
    await client.connect(
      new StdioClientTransport({ command: process.execPath, args, stderr: "pipe" }),
    );
    clients.push(client);
    return client;
  }

  let alice: Client;
  let bob: Client;
  beforeAll(async () => {
    const { appUrl } = await pg.roles();
    alice = await connect("alice", appUrl);
    bob = await connect("bob", appUrl);
  }, 60_000);
  afterAll(async () => {
    for (const c of clients) await c.close();
    ws.done();
  });

  it("remembers, recalls, reads and forgets in the session's scope only", async () => {
    const w = await call(alice, "remember", {
      content: "Runs Postgres 17 in production",
      memoryId: "m-pg",
      now: NOW,
    });
    expect(w.json).toMatchObject({ status: "inserted", record: { userScope: "alice" } });
    const hits = (await call(alice, "recall", { query: "postgres production", now: NOW })).json as {
      hits: Array<{ memoryId: string }>;
    };
    expect(hits.hits.map((h) => h.memoryId)).toEqual(["m-pg"]);
    expect(
      (await call(bob, "recall", { query: "postgres production", now: NOW })).json,
    ).toMatchObject({ hits: [] });
    const theirs = await read(bob, "memory://m-pg");
    const missing = await read(bob, "memory://m-zz");
    expect(theirs.error?.replace("m-pg", "X")).toBe(missing.error?.replace("m-zz", "X"));
    expect((await call(bob, "forget", { memoryId: "m-pg" })).json).toEqual({
      memoryId: "m-pg",
      forgotten: false,
      removed: 0,
    });
    expect((await call(alice, "forget", { memoryId: "m-pg" })).json).toMatchObject({
      forgotten: true,
    });
    expect((await read(alice, "memory://m-pg")).error).toBeDefined();
  });
});
