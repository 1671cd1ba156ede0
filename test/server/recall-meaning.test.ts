/**
 * `/v1/memories` + `/v1/recall` by meaning over real HTTP on 127.0.0.1: a server started
 * with an embedder (the embedded encoder) embeds what it writes and recalls a paraphrase,
 * each hit with its match (path, both ranks, similarity); unrelated questions abstain.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type RunningServer, startServer } from "../../src/server/index.js";
import { openStore } from "../../src/store/index.js";
import { rec } from "../store/helpers.js";
import { WORKSPACE } from "./helpers.js";

const ASOF = "2026-08-17T00:00:00Z";
let dir: string;
let server: RunningServer;

async function post(route: string, body: unknown) {
  const res = await fetch(`${server.url}${route}`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify(body),
  });
  return { status: res.status, body: (await res.json()) as Record<string, unknown> };
}

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "promptctx-recall-meaning-"));
  const path = join(dir, "m.db");
  openStore(path).close();
  server = await startServer({ port: 0, workspace: WORKSPACE, store: path, embedder: "embedded" });
});
afterAll(async () => {
  await server.close();
  rmSync(dir, { recursive: true, force: true });
});

describe("/v1/recall by meaning", () => {
  it("recalls a paraphrase, explains both ranks, and abstains on an unrelated question", async () => {
    const w = await post("/v1/memories", {
      records: [
        rec("dark", "The user prefers a dark theme"),
        rec("review", "Every change needs an approving review before it is merged"),
        rec("other", "The dark room is closed", { userScope: "u2" }),
      ],
    });
    expect(w.status).toBe(200);
    const r = await post("/v1/recall", {
      userScope: "u1",
      query: "which editor colours does the user like?",
      asOf: ASOF,
    });
    expect(r.status).toBe(200);
    const hits = r.body.hits as Array<Record<string, unknown>>;
    expect(hits[0]).toMatchObject({
      memoryId: "dark",
      userScope: "u1",
      match: { semanticRank: 1 },
    });
    for (const h of hits) expect(h.userScope).toBe("u1");
    const unrelated = await post("/v1/recall", {
      userScope: "u1",
      query: "how many moons does Jupiter have?",
      asOf: ASOF,
    });
    expect((unrelated.body.hits as Array<{ score: number }>).every((h) => h.score < 0.35)).toBe(
      true,
    );
  });
});
