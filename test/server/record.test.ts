/**
 * `serve --record`: every `/v1/assemble` the service answers (assembly or error object)
 * is one line that replays clean.
 */
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { FastifyInstance } from "fastify";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { buildServer } from "../../src/server/index.js";
import { createRecorder, parseRecording, replayRecording } from "../../src/workspace/index.js";
import { exampleStore, expectErrorObject, NOW, post, QUERY, WORKSPACE } from "./helpers.js";

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
});
