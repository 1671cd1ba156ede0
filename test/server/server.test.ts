/**
 * The HTTP service over real HTTP on 127.0.0.1: each route's success (the same objects as
 * the library and the CLI), the status code and error object of every error class, the
 * OpenAPI document, the request log lines.
 */
import { request as httpRequest } from "node:http";
import { PassThrough } from "node:stream";
import type { FastifyInstance } from "fastify";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import { InvalidInputError, PromptBudgetError } from "../../src/errors/index.js";
import { SelectMemoryRequestSchema, selectMemoryContext } from "../../src/memory/index.js";
import { PlanPromptJsonRequestSchema, planPrompt } from "../../src/plan/index.js";
import {
  AssembleRequestSchema,
  buildServer,
  DEFAULT_BODY_LIMIT,
  ROUTES,
  toHttpError,
} from "../../src/server/index.js";
import { openStore } from "../../src/store/index.js";
import { strictSchema } from "../../src/text/index.js";
import { getTokenCounter } from "../../src/tokens/index.js";
import { assembleWorkspace } from "../../src/workspace/index.js";
import { planRequest, selectRequest } from "../fixtures/requests.js";
import {
  type Answer,
  exampleStore,
  expectErrorObject,
  get,
  NOW,
  post,
  QUERY,
  WORKSPACE,
} from "./helpers.js";

const assembleRequest = { query: QUERY, now: NOW, tokenizer: "o200k_base" };

/** The response minus the manifest's wall-clock timings (the only field that varies). */
function withoutTimings(body: unknown): unknown {
  const copy = structuredClone(body) as { manifest: { timings?: unknown } };
  delete copy.manifest.timings;
  return copy;
}

let app: FastifyInstance;
let base: string;
let storePath: string;
let cleanup: () => void;
const logs = new PassThrough();
const logLines: string[] = [];

beforeAll(async () => {
  ({ path: storePath, cleanup } = await exampleStore());
  logs.setEncoding("utf8");
  let pending = "";
  logs.on("data", (chunk: string) => {
    pending += chunk;
    const lines = pending.split("\n");
    pending = lines.pop() ?? "";
    logLines.push(...lines);
  });
  app = await buildServer({ workspace: WORKSPACE, store: storePath, logger: { stream: logs } });
  await app.listen({ port: 0, host: "127.0.0.1" });
  const address = app.server.address();
  if (address === null || typeof address === "string") throw new Error("no port");
  base = `http://127.0.0.1:${address.port}`;
});

afterAll(async () => {
  await app?.close();
  cleanup?.();
});

describe("routes", () => {
  it("GET /healthz: alive, with the shared store open", async () => {
    const a = await get(base, "/healthz");
    expect(a.status).toBe(200);
    expect(a.json).toEqual({ status: "ok", store: true });
  });

  it("POST /v1/select-memory answers the plan the library computes", async () => {
    const a = await post(base, "/v1/select-memory", selectRequest);
    expect(a.status).toBe(200);
    expect(a.contentType).toMatch(/^application\/json/);
    expect(a.json).toEqual(
      JSON.parse(
        JSON.stringify(
          selectMemoryContext(selectRequest, { tokenCounter: getTokenCounter("o200k_base") }),
        ),
      ),
    );
    expect(a.json).toMatchObject({ selectedMemoryIds: ["m1"], tokenizer: "o200k_base" });
  });

  it("POST /v1/plan-prompt answers the plan the library computes", async () => {
    const a = await post(base, "/v1/plan-prompt", planRequest);
    expect(a.status).toBe(200);
    expect(a.json).toEqual(JSON.parse(JSON.stringify(planPrompt(planRequest))));
    expect(a.json).toMatchObject({ includedNames: ["rules"] });
  });

  it("plan-prompt takes the JSON contract: a library-only field is an unknown field", async () => {
    const a = await post(base, "/v1/plan-prompt", {
      segments: [{ name: "a", content: "x", condition: false }],
    });
    expect(a.status).toBe(400);
    expect(a.json).toMatchObject({
      error: { code: "unknown_field", path: "segments[0].condition" },
    });
  });

  it("POST /v1/assemble: the workspace job over the shared store, byte for byte", async () => {
    const a = await post(base, "/v1/assemble", assembleRequest);
    expect(a.status, a.text).toBe(200);
    const store = openStore(storePath, { mustExist: true });
    try {
      const out = await assembleWorkspace({
        workspace: WORKSPACE,
        query: QUERY,
        now: NOW,
        tokenizer: "o200k_base",
        openStore: store,
      });
      const expected = JSON.parse(
        JSON.stringify({
          prompt: out.prompt,
          manifest: out.manifest,
          memoryPlan: out.memoryPlan,
          segmentPlan: out.segmentPlan,
        }),
      );
      expect(withoutTimings(a.json)).toEqual(withoutTimings(expected));
    } finally {
      await store.close();
    }
    const body = a.json as { prompt: string; memoryPlan: { selectedMemoryIds: string[] } | null };
    expect(body.prompt).toContain("Acme platform");
    // Memory came from the shared store (the example workspace has no memory.db of its own).
    expect(body.memoryPlan?.selectedMemoryIds.length).toBeGreaterThan(0);
    // Stateless and clock-free: the same request answers the same (wall timings aside).
    const again = await post(base, "/v1/assemble", assembleRequest);
    expect(JSON.stringify(withoutTimings(again.json))).toBe(JSON.stringify(withoutTimings(a.json)));
  });

  it("assemble honours mode, renderer, budgets and a workspace inside the root", async () => {
    const tagged = await post(base, "/v1/assemble", {
      ...assembleRequest,
      renderer: "tagged",
      mode: "chat",
    });
    expect(tagged.status, tagged.text).toBe(200);
    expect((tagged.json as { prompt: string }).prompt).not.toBe(
      ((await post(base, "/v1/assemble", assembleRequest)).json as { prompt: string }).prompt,
    );
    const sub = await post(base, "/v1/assemble", {
      ...assembleRequest,
      workspace: "services/billing",
      user: "user-42",
    });
    expect(sub.status, sub.text).toBe(200);
    const model = await post(base, "/v1/assemble", { query: QUERY, now: NOW, model: "gpt-4o" });
    expect(model.status, model.text).toBe(200);
    expect((model.json as { segmentPlan: { tokenizer: string } }).segmentPlan.tokenizer).toBe(
      "o200k_base",
    );
  });

  it("HEAD and unknown methods on a known path are handled without a body crash", async () => {
    const res = await fetch(`${base}/healthz`, { method: "HEAD" });
    expect(res.status).toBe(200);
    expectErrorObject(await get(base, "/v1/assemble"), 404, "not_found");
  });
});

describe("stateless instances", () => {
  it("two instances share one store file and answer alike", async () => {
    const second = await buildServer({ workspace: WORKSPACE, store: storePath });
    await second.listen({ port: 0, host: "127.0.0.1" });
    try {
      const address = second.server.address();
      if (address === null || typeof address === "string") throw new Error("no port");
      const a = await post(base, "/v1/assemble", assembleRequest);
      const b = await post(`http://127.0.0.1:${address.port}`, "/v1/assemble", assembleRequest);
      expect(b.status).toBe(200);
      expect(JSON.stringify(withoutTimings(b.json))).toBe(JSON.stringify(withoutTimings(a.json)));
    } finally {
      await second.close();
    }
    // Closing one instance leaves the other's store open.
    expect((await post(base, "/v1/assemble", assembleRequest)).status).toBe(200);
  });

  it("a counter pool that starts over after every request answers the same", async () => {
    const fresh = await buildServer({
      workspace: WORKSPACE,
      store: null,
      counterPoolResetBytes: 1,
    });
    await fresh.listen({ port: 0, host: "127.0.0.1" });
    try {
      const address = fresh.server.address();
      if (address === null || typeof address === "string") throw new Error("no port");
      const expected = (await post(base, "/v1/select-memory", selectRequest)).json;
      for (let i = 0; i < 3; i++) {
        const a = await post(
          `http://127.0.0.1:${address.port}`,
          "/v1/select-memory",
          selectRequest,
        );
        expect(a.status).toBe(200);
        expect(a.json).toEqual(expected);
      }
    } finally {
      await fresh.close();
    }
  });
});

describe("errors: status code and error object for every class", () => {
  it("400 invalid field names its path", async () => {
    const bad = structuredClone(selectRequest);
    (bad.candidates[1] as { score: unknown }).score = 7;
    const a = await post(base, "/v1/select-memory", bad);
    expectErrorObject(a, 400, "invalid_input");
    expect(a.json).toMatchObject({ error: { path: "candidates[1].score" } });

    const b = await post(base, "/v1/plan-prompt", { segments: [{ name: " ", content: "x" }] });
    expectErrorObject(b, 400, "invalid_input");
    expect(b.json).toMatchObject({ error: { path: "segments[0].name" } });

    const c = await post(base, "/v1/assemble", { query: "q", now: "yesterday" });
    expectErrorObject(c, 400, "invalid_input");
    expect(c.json).toMatchObject({ error: { path: "now" } });

    const d = await post(base, "/v1/assemble", { query: "q" });
    expectErrorObject(d, 400, "invalid_input");
    expect(d.json).toMatchObject({ error: { path: "now" } });

    const e = await post(base, "/v1/assemble", { ...assembleRequest, budgetChars: 1e300 });
    expectErrorObject(e, 400, "invalid_input");
    expect(e.json).toMatchObject({ error: { path: "budgetChars" } });

    const f = await post(base, "/v1/assemble", {
      query: QUERY,
      now: NOW,
      tokenizer: "estimate",
      model: "gpt-4o",
    });
    expectErrorObject(f, 400, "invalid_input");
    expect(f.json).toMatchObject({ error: { path: "tokenizer" } });

    const g = await post(base, "/v1/assemble", { query: QUERY, now: NOW, model: "no-such-model" });
    expectErrorObject(g, 400, "invalid_input");
    expect(g.json).toMatchObject({ error: { path: "model" } });
  });

  it("400 for a workspace outside the server's root (no reading arbitrary directories)", async () => {
    const missing = await post(base, "/v1/assemble", { ...assembleRequest, workspace: "nope" });
    expectErrorObject(missing, 400, "path_refused");
    for (const workspace of ["..", "/", "/etc", "../../..", "services/../../.."]) {
      const a = await post(base, "/v1/assemble", { ...assembleRequest, workspace });
      // Outside answers exactly like missing: no existence oracle.
      expect(a.json).toEqual(missing.json);
    }
  });

  it("400 for malformed JSON, with where", async () => {
    const a = await post(base, "/v1/plan-prompt", '{"segments": [');
    expectErrorObject(a, 400, "invalid_input");
    expect(a.json).toMatchObject({
      error: { message: expect.stringMatching(/^request body is not valid JSON: /) },
    });
    expectErrorObject(await post(base, "/v1/plan-prompt", ""), 400, "invalid_input");
    expectErrorObject(await post(base, "/v1/plan-prompt", "null"), 400, "invalid_input");
    expectErrorObject(await post(base, "/v1/plan-prompt", "[]"), 400, "invalid_input");
    expectErrorObject(await post(base, "/v1/select-memory", "7"), 400, "invalid_input");
  });

  it("400 for a wrong or missing content-type and a non-UTF-8 charset", async () => {
    const body = JSON.stringify(planRequest);
    for (const ct of [
      "text/plain",
      "application/x-www-form-urlencoded",
      "application/xml",
      "multipart/form-data; boundary=x",
    ]) {
      const a = await post(base, "/v1/plan-prompt", body, ct);
      expectErrorObject(a, 400, "invalid_input");
    }
    expectErrorObject(await post(base, "/v1/plan-prompt", body, null), 400, "invalid_input");
    expectErrorObject(
      await post(base, "/v1/plan-prompt", body, "application/json; charset=utf-16"),
      400,
      "invalid_input",
    );
    const ok = await post(base, "/v1/plan-prompt", body, "application/json; charset=UTF-8");
    expect(ok.status).toBe(200);
  });

  it("400 for invalid UTF-8, and for lone surrogates in JSON escapes (ill-formed text)", async () => {
    const bytes = new Uint8Array([
      ...Buffer.from('{"segments":[{"name":"a","content":"'),
      0xff,
      0xed,
      0xa0,
      0x80,
      ...Buffer.from('"}]}'),
    ]);
    const a = await post(base, "/v1/plan-prompt", bytes);
    expectErrorObject(a, 400, "invalid_input");
    expect(a.json).toMatchObject({ error: { message: "request body is not valid UTF-8" } });

    const lone = '{"segments":[{"name":"\\ud800","content":"x\\udc00y\\ud83d"}]}';
    const b = await post(base, "/v1/plan-prompt", lone);
    expectErrorObject(b, 400, "invalid_input");
    expect(b.json).toMatchObject({ error: { path: "segments[0].name" } });
    const c = await post(base, "/v1/assemble", `{"query":"\\udfff\\ud800","now":"${NOW}"}`);
    expectErrorObject(c, 400, "invalid_input");
    expect(c.json).toMatchObject({ error: { path: "query" } });
  });

  it("400 for prototype poisoning (__proto__, constructor.prototype)", async () => {
    for (const body of [
      '{"__proto__":{"polluted":1},"segments":[]}',
      '{"segments":[{"name":"a","content":"x","constructor":{"prototype":{"polluted":1}}}]}',
    ]) {
      const a = await post(base, "/v1/plan-prompt", body);
      expectErrorObject(a, 400, "invalid_input");
    }
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });

  it("413 over the body limit, with an error object (declared length and chunked)", async () => {
    const big = JSON.stringify({
      segments: [{ name: "a", content: "x".repeat(DEFAULT_BODY_LIMIT) }],
    });
    const a = await post(base, "/v1/plan-prompt", big);
    expectErrorObject(a, 413, "payload_too_large");
    // Chunked: no content-length, the limit is found while reading.
    const chunked = await new Promise<Answer>((resolve, reject) => {
      const req = httpRequest(
        `${base}/v1/plan-prompt`,
        {
          method: "POST",
          headers: { "content-type": "application/json", "transfer-encoding": "chunked" },
        },
        (res) => {
          let text = "";
          res.setEncoding("utf8");
          res.on("data", (c: string) => {
            text += c;
          });
          res.on("end", () =>
            resolve({
              status: res.statusCode ?? 0,
              contentType: res.headers["content-type"] ?? null,
              text,
              json: JSON.parse(text),
            }),
          );
        },
      );
      req.on("error", reject);
      for (let i = 0; i < 40; i++) req.write("x".repeat(64 * 1024));
      req.end();
    });
    expectErrorObject(chunked, 413, "payload_too_large");
    // The server still serves.
    expect((await get(base, "/healthz")).status).toBe(200);
  });

  it("a server with a smaller limit answers 413 just past it", async () => {
    const small = await buildServer({ workspace: WORKSPACE, store: null, bodyLimit: 64 });
    await small.listen({ port: 0, host: "127.0.0.1" });
    try {
      const address = small.server.address();
      if (address === null || typeof address === "string") throw new Error("no port");
      const url = `http://127.0.0.1:${address.port}`;
      const fits = JSON.stringify({ segments: [{ name: "a", content: "x".repeat(20) }] });
      expect(fits.length).toBeLessThanOrEqual(64);
      expect((await post(url, "/v1/plan-prompt", fits)).status).toBe(200);
      const over = JSON.stringify({ segments: [{ name: "a", content: "x".repeat(40) }] });
      expectErrorObject(await post(url, "/v1/plan-prompt", over), 413, "payload_too_large");
      expect((await get(url, "/healthz")).json).toEqual({ status: "ok", store: false });
    } finally {
      await small.close();
    }
  });

  it("422 for prompt_budget_exceeded (plan-prompt and assemble)", async () => {
    const a = await post(base, "/v1/plan-prompt", { ...planRequest, budgetChars: 3 });
    expectErrorObject(a, 422, "prompt_budget_exceeded");
    expect(a.json).toMatchObject({ error: { path: "budgetChars" } });
    const b = await post(base, "/v1/assemble", { ...assembleRequest, budgetChars: 10 });
    expectErrorObject(b, 422, "prompt_budget_exceeded");
  });

  it("404 for an unknown route, as an error object", async () => {
    expectErrorObject(await get(base, "/nope"), 404, "not_found");
    expectErrorObject(await post(base, "/v1/nope", planRequest), 404, "not_found");
    expectErrorObject(await get(base, `/${"a".repeat(5000)}`), 404, "not_found");
    expectErrorObject(await get(base, "/%E0%A4%A"), 400, "invalid_input");
  });

  it("500 only for internal faults, with a generic message and no detail", () => {
    const secret = new Error("ENOENT /home/someone/secret at Object.<anonymous> (x.js:1:1)");
    const out = toHttpError(secret, DEFAULT_BODY_LIMIT);
    expect(out).toEqual({
      status: 500,
      internal: true,
      body: { error: { code: "internal_error", message: "internal error", path: null } },
    });
    expect(toHttpError(new InvalidInputError("bad", "x"), 1).status).toBe(400);
    expect(toHttpError(new PromptBudgetError("tight", ["a"]), 1).status).toBe(422);
    expect(
      toHttpError({ statusCode: 413, code: "FST_ERR_CTP_BODY_TOO_LARGE" }, 9).body.error,
    ).toEqual({
      code: "payload_too_large",
      message: "request body exceeds the limit of 9 bytes",
      path: null,
    });
  });
});

describe("GET /openapi.json", () => {
  it("lists every route and carries the request schemas generated from the zod schemas", async () => {
    const a = await get(base, "/openapi.json");
    expect(a.status).toBe(200);
    expect(a.contentType).toMatch(/^application\/json/);
    const doc = a.json as {
      openapi: string;
      paths: Record<
        string,
        Record<string, { requestBody?: { content: Record<string, { schema: { $ref: string } }> } }>
      >;
      components: { schemas: Record<string, unknown> };
    };
    expect(doc.openapi).toBe("3.1.0");
    for (const route of ROUTES) {
      const [method, path] = route.split(" ") as [string, string];
      expect(doc.paths[path]?.[method.toLowerCase()], route).toBeDefined();
    }
    const refOf = (path: string) =>
      doc.paths[path]?.post?.requestBody?.content["application/json"]?.schema.$ref;
    expect(refOf("/v1/select-memory")).toBe("#/components/schemas/SelectMemoryRequest");
    expect(refOf("/v1/plan-prompt")).toBe("#/components/schemas/PlanPromptRequest");
    expect(refOf("/v1/assemble")).toBe("#/components/schemas/AssembleRequest");
    // The published forms are the strict ones (every object closed).
    const same = (schema: z.ZodType) => {
      const { $schema: _s, ...rest } = z.toJSONSchema(strictSchema(schema), {
        target: "draft-2020-12",
        io: "input",
      });
      return rest;
    };
    expect(doc.components.schemas.SelectMemoryRequest).toEqual(same(SelectMemoryRequestSchema));
    expect(doc.components.schemas.PlanPromptRequest).toEqual(same(PlanPromptJsonRequestSchema));
    expect(doc.components.schemas.AssembleRequest).toEqual(same(AssembleRequestSchema));
    expect(doc.components.schemas.AssembleRequest).toMatchObject({ required: ["query", "now"] });
    expect(doc.components.schemas.Error).toBeDefined();
    // Every error response points at the error object.
    expect(JSON.stringify(doc.paths["/v1/assemble"])).toContain('"422"');
  });
});

describe("structured logs", () => {
  it("one JSON line per request: method, route, status, ms, error code", async () => {
    const before = logLines.length;
    await get(base, "/healthz");
    await post(base, "/v1/plan-prompt", "{");
    await get(base, "/missing");
    await new Promise((r) => setTimeout(r, 50));
    const lines = logLines
      .slice(before)
      .map((l) => JSON.parse(l) as Record<string, unknown>)
      .filter((l) => l.msg === "request");
    expect(lines).toHaveLength(3);
    expect(lines[0]).toMatchObject({ method: "GET", route: "/healthz", status: 200, code: null });
    expect(lines[1]).toMatchObject({
      method: "POST",
      route: "/v1/plan-prompt",
      status: 400,
      code: "invalid_input",
    });
    expect(lines[2]).toMatchObject({
      method: "GET",
      route: null,
      url: "/missing",
      status: 404,
      code: "not_found",
    });
    for (const l of lines) expect(typeof l.ms).toBe("number");
  });
});
