/**
 * `serve --record`: every `/v1/assemble` the service answers (assembly or error object)
 * is one line that replays clean, and the same app serves the inspector's data for it.
 */
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { FastifyInstance } from "fastify";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { buildServer } from "../../src/server/index.js";
import { createRecorder, parseRecording, replayRecording } from "../../src/workspace/index.js";
import { exampleStore, expectErrorObject, get, NOW, post, QUERY, WORKSPACE } from "./helpers.js";

let app: FastifyInstance;
let base: string;
let tmp: string;
let file: string;
let store: { path: string; cleanup: () => void };

beforeAll(async () => {
  tmp = mkdtempSync(join(tmpdir(), "promptctx-serve-record-"));
  file = join(tmp, "serve.jsonl");
  store = await exampleStore();
  const recorder = createRecorder(file, { at: () => "2026-12-01T08:00:00.000Z" });
  app = await buildServer({ workspace: WORKSPACE, store: store.path, recorder });
  await app.listen({ port: 0, host: "127.0.0.1" });
  const address = app.server.address();
  base = `http://127.0.0.1:${typeof address === "object" && address ? address.port : 0}`;
});
afterAll(async () => {
  await app.close();
  store.cleanup();
  rmSync(tmp, { recursive: true, force: true });
});

describe("serve --record", () => {
  it("records assemblies and failures (not malformed requests) and replays them clean", async () => {
    const ok = await post(base, "/v1/assemble", { query: QUERY, now: NOW });
    expect(ok.status).toBe(200);
    expectErrorObject(
      await post(base, "/v1/assemble", { query: QUERY, now: NOW, budgetChars: 50 }),
      422,
      "prompt_budget_exceeded",
    );
    expectErrorObject(await post(base, "/v1/assemble", { query: QUERY }), 400, "invalid_input");

    const lines = parseRecording(readFileSync(file, "utf8"));
    expect(lines.map((l) => l.kind)).toEqual(["assemble", "assemble"]);
    expect(lines[0]?.request).toEqual({
      workspace: WORKSPACE.replace(/\/$/, ""),
      query: QUERY,
      now: NOW,
      store: { path: store.path },
    });
    expect(JSON.stringify(lines[0]?.response)).toContain(
      JSON.stringify((ok.json as { prompt: string }).prompt),
    );
    expect(lines[1]?.response).toMatchObject({ error: { code: "prompt_budget_exceeded" } });
    const report = await replayRecording(lines, tmp);
    expect(report.changed).toBe(0);
  });

  it("serves the recording to the inspector: turns with layer spans, and diffs", async () => {
    const data = await get(base, "/inspect/data");
    expect(data.status).toBe(200);
    const turns = data.json as {
      title: string;
      turns: Array<{ index: number; spans: unknown[]; response: Record<string, unknown> }>;
    };
    expect(turns.title).toBe(file);
    expect(turns.turns.map((t) => t.index)).toEqual([1, 2]);
    expect(turns.turns[0]?.spans.length).toBeGreaterThan(5);
    expect(turns.turns[1]?.spans).toEqual([]);
    const diff = await get(base, "/inspect/diff?a=1&b=2");
    expect(diff.json).toMatchObject({
      a: 1,
      b: 2,
      same: false,
      errors: { before: null, after: "prompt_budget_exceeded" },
    });
    expectErrorObject(await get(base, "/inspect/diff?a=1&b=9"), 400, "invalid_input");
    expectErrorObject(await get(base, "/inspect/diff?a=0&b=1"), 400, "invalid_input");
    expectErrorObject(await get(base, "/inspect/diff?a=1&b=2&bb=3"), 400, "unknown_field");
  });

  it("the page and its assets are served with a same-origin-only policy; nothing else", async () => {
    const page = await fetch(`${base}/inspect`);
    expect(page.status).toBe(200);
    expect(page.headers.get("content-type")).toMatch(/^text\/html/);
    expect(page.headers.get("content-security-policy")).toContain("default-src 'none'");
    expect(page.headers.get("content-security-policy")).toContain("script-src 'self'");
    const html = await page.text();
    expect(html).toContain('<script type="module" src="/inspect/assets/main.js">');
    expect(html).not.toMatch(/https?:\/\//);
    const css = await fetch(`${base}/inspect/assets/inspector.css`);
    expect(css.headers.get("content-type")).toMatch(/^text\/css/);
    expectErrorObject(await get(base, "/inspect/assets/..%2F..%2Fpackage.json"), 404, "not_found");
    expectErrorObject(await get(base, "/inspect/assets/index.html"), 404, "not_found");
  });
});

describe("without a recording", () => {
  it("the data route says there is nothing to inspect", async () => {
    const bare = await buildServer({ workspace: WORKSPACE, store: null });
    try {
      const res = await bare.inject({ method: "GET", url: "/inspect/data" });
      expect(res.statusCode).toBe(404);
      expect(JSON.parse(res.body).error.message).toContain("nothing to inspect");
    } finally {
      await bare.close();
    }
  });
});

describe("with bearer tokens", () => {
  it("records the scope a token is bound to as the user; only an any-scope token reads the recording", async () => {
    const dir = mkdtempSync(join(tmpdir(), "promptctx-serve-record-auth-"));
    const recording = join(dir, "scoped.jsonl");
    const recorder = createRecorder(recording, { at: () => "2026-12-01T08:00:00.000Z" });
    const scoped = await buildServer({
      workspace: WORKSPACE,
      store: store.path,
      recorder,
      auth: {
        tokens: [
          { token: "any-scope-token-0123", scope: null },
          { token: "alice-scoped-token-0123", scope: "alice" },
        ],
      },
    });
    const auth = (token: string) => ({ authorization: `Bearer ${token}` });
    try {
      const res = await scoped.inject({
        method: "POST",
        url: "/v1/assemble",
        headers: auth("alice-scoped-token-0123"),
        payload: { query: QUERY, now: NOW, user: "bob" },
      });
      expect(res.statusCode).toBe(200);
      const lines = parseRecording(readFileSync(recording, "utf8"));
      expect(lines).toHaveLength(1);
      expect(lines[0]?.request).toMatchObject({ query: QUERY, now: NOW, user: "alice" });
      expect(lines[0]?.response).toMatchObject({ prompt: JSON.parse(res.body).prompt });
      expect((await replayRecording(lines, dir)).changed).toBe(0);

      const denied = await scoped.inject({
        method: "GET",
        url: "/inspect/data",
        headers: auth("alice-scoped-token-0123"),
      });
      expect(denied.statusCode).toBe(401);
      expect(JSON.parse(denied.body).error.code).toBe("unauthorized");
      const diff = await scoped.inject({
        method: "GET",
        url: "/inspect/diff?a=1&b=1",
        headers: auth("alice-scoped-token-0123"),
      });
      expect(diff.statusCode).toBe(401);
      const none = await scoped.inject({ method: "GET", url: "/inspect/data" });
      expect(none.statusCode).toBe(401);
      const allowed = await scoped.inject({
        method: "GET",
        url: "/inspect/data",
        headers: auth("any-scope-token-0123"),
      });
      expect(allowed.statusCode).toBe(200);
      expect(JSON.parse(allowed.body).turns).toHaveLength(1);
    } finally {
      await scoped.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
