/**
 * `POST /v1/memories` and `POST /v1/recall` over real HTTP on 127.0.0.1 (SQLite store;
 * the PostgreSQL store is exercised through several `promptctx serve` processes in
 * multi-instance.test.ts), and bearer tokens: open service, unscoped and scoped tokens.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import {
  authFromEnv,
  RecallRequestSchema,
  ROUTES,
  type RunningServer,
  startServer,
} from "../../src/server/index.js";
import { type MemoryRecordInput, MemoryRecordSchema, openStore } from "../../src/store/index.js";
import { rec } from "../store/helpers.js";
import { expectErrorObject, get, post, WORKSPACE } from "./helpers.js";

const ASOF = "2026-08-17T00:00:00Z";
const CLOCK = "2026-09-01T12:00:00.000Z";
const ADMIN = "admin-token-0123456789";
const ALICE = "alice-token-0123456789";

let dir: string;
beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), "promptctx-memroutes-"));
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const servers: RunningServer[] = [];
afterEach(async () => {
  for (const s of servers.splice(0)) await s.close();
});

let n = 0;
/** A server on a fresh SQLite store (or none), with the given tokens. */
async function serve(
  options: { store?: boolean; tokens?: Array<{ token: string; scope: string | null }> } = {},
) {
  const path = join(dir, `m${++n}.db`);
  if (options.store !== false) openStore(path).close();
  const s = await startServer({
    port: 0,
    workspace: WORKSPACE,
    store: options.store === false ? null : path,
    clock: () => new Date(CLOCK),
    ...(options.tokens ? { auth: { tokens: options.tokens } } : {}),
  });
  servers.push(s);
  return { base: s.url, path };
}

/** POST with an optional bearer token. */
async function call(base: string, route: string, body: unknown, token?: string) {
  const res = await fetch(`${base}${route}`, {
    method: "POST",
    headers: {
      "content-type": "application/json",
      ...(token ? { authorization: `Bearer ${token}` } : {}),
    },
    body: JSON.stringify(body),
  });
  const text = await res.text();
  return { status: res.status, json: JSON.parse(text) as Record<string, unknown>, res, text };
}

const records: MemoryRecordInput[] = [
  rec("m1", "deploys happen on fridays", { capturedAt: "2026-08-10T00:00:00Z" }),
  rec("m2", "python for automation", { importance: 0.9 }),
  rec("b1", "bob deploys on mondays", { userScope: "bob" }),
];

describe("POST /v1/memories and POST /v1/recall (open service)", () => {
  it("writes a batch, idempotently; recall answers what `memory recall --json` prints", async () => {
    const { base, path } = await serve();
    const first = await post(base, "/v1/memories", { records });
    expect(first.status, first.text).toBe(200);
    expect(first.json).toEqual({ written: 3, memoryIds: ["m1", "m2", "b1"] });
    const again = await post(base, "/v1/memories", { records });
    expect(again.json).toEqual(first.json);
    const r = await post(base, "/v1/recall", { userScope: "u1", query: "deploys", asOf: ASOF });
    expect(r.status, r.text).toBe(200);
    const store = openStore(path, { mustExist: true });
    try {
      expect(store.count()).toBe(3);
      const hits = store.recall("deploys", { userScope: "u1", asOf: ASOF, limit: 20 });
      expect(r.json).toEqual(
        JSON.parse(
          JSON.stringify({ userScope: "u1", query: "deploys", asOf: ASOF, hits, hints: [] }),
        ),
      );
      // storedAt defaults to source.capturedAt: the service reads no clock for writes.
      expect(store.get("m1")?.storedAt).toBe("2026-08-10T00:00:00Z");
    } finally {
      store.close();
    }
  });

  it("recall without asOf uses the server's clock and echoes it; limit and categories", async () => {
    const { base } = await serve();
    await post(base, "/v1/memories", {
      records: [rec("a", "alpha", { category: "x" }), rec("b", "alpha beta")],
    });
    const r = await post(base, "/v1/recall", { userScope: "u1", query: "alpha", limit: 1 });
    expect(r.json).toMatchObject({ asOf: CLOCK });
    expect((r.json as { hits: unknown[] }).hits).toHaveLength(1);
    const c = await post(base, "/v1/recall", {
      userScope: "u1",
      query: "alpha",
      categories: ["x"],
    });
    expect((c.json as { hits: Array<{ memoryId: string }> }).hits.map((h) => h.memoryId)).toEqual([
      "a",
    ]);
  });

  it("400 on any invalid record, with its path, and nothing is written", async () => {
    const { base } = await serve();
    const bad = await post(base, "/v1/memories", {
      records: [rec("ok", "fine"), { ...rec("x", "y"), importance: 3 }],
    });
    expectErrorObject(bad, 400, "invalid_input");
    expect((bad.json as { error: { path: string } }).error.path).toBe("records[1].importance");
    const unknown = await post(base, "/v1/memories", {
      records: [{ ...rec("x", "y"), colour: 1 }],
    });
    expectErrorObject(unknown, 400, "unknown_field");
    expect((unknown.json as { error: { path: string } }).error.path).toBe("records[0].colour");
    const r = await post(base, "/v1/recall", { userScope: "u1", query: "fine", asOf: ASOF });
    expect(r.json).toMatchObject({ hits: [] });
    for (const body of [{}, { records: [] }, { records: "x" }]) {
      expectErrorObject(await post(base, "/v1/memories", body), 400, "invalid_input");
    }
    const extra = await post(base, "/v1/memories", { records: [], extra: 1 });
    expectErrorObject(extra, 400, "unknown_field");
  });

  it("400 on a bad recall request, with the field path", async () => {
    const { base } = await serve();
    const cases: Array<[Record<string, unknown>, string]> = [
      [{ query: "x" }, "userScope"],
      [{ userScope: "u1" }, "query"],
      [{ userScope: "u1", query: "x", limit: 0 }, "limit"],
      [{ userScope: "u1", query: "x", asOf: "soon" }, "asOf"],
      [{ userScope: "u1", query: "x", categories: [" "] }, "categories[0]"],
    ];
    for (const [body, path] of cases) {
      const a = await post(base, "/v1/recall", body);
      expectErrorObject(a, 400, "invalid_input");
      expect((a.json as { error: { path: string | null } }).error.path ?? "").toBe(path);
    }
    // A query of stop words only says why nothing can match.
    const stop = await post(base, "/v1/recall", {
      userScope: "u1",
      query: "what is the",
      asOf: ASOF,
    });
    expect(stop.json).toMatchObject({ hits: [], hints: [{ code: "query_only_stop_words" }] });
    // A misspelt `asOf` must not fall back to the server's clock.
    const misspelt = await post(base, "/v1/recall", { userScope: "u1", query: "x", asof: ASOF });
    expectErrorObject(misspelt, 400, "unknown_field");
    expect(misspelt.json).toMatchObject({
      error: { path: "asof", message: "asof: unknown field; did you mean `asOf`?" },
    });
  });

  it("a server without a store answers 409 store_not_configured, saying how to start one", async () => {
    const { base } = await serve({ store: false });
    const w = await post(base, "/v1/memories", { records });
    expectErrorObject(w, 409, "store_not_configured");
    expect((w.json as { error: { message: string } }).error.message).toContain("--store FILE");
    const r = await post(base, "/v1/recall", { userScope: "u1", query: "x", asOf: ASOF });
    expectErrorObject(r, 409, "store_not_configured");
  });
});

describe("bearer tokens", () => {
  const tokens = [
    { token: ADMIN, scope: null },
    { token: ALICE, scope: "alice" },
  ];

  it("with tokens, every route needs one: 401 and WWW-Authenticate otherwise", async () => {
    const { base } = await serve({ tokens });
    for (const route of ROUTES) {
      const [method, path] = route.split(" ") as [string, string];
      for (const token of [undefined, "wrong-token-0123456789", `${ADMIN}x`]) {
        const res = await fetch(`${base}${path}`, {
          method,
          headers: {
            ...(method === "POST" ? { "content-type": "application/json" } : {}),
            ...(token ? { authorization: `Bearer ${token}` } : {}),
          },
          ...(method === "POST" ? { body: "{}" } : {}),
        });
        expect(res.status, `${route} ${token}`).toBe(401);
        expect(res.headers.get("www-authenticate")).toMatch(/^Bearer/);
        const body = (await res.json()) as { error: { code: string } };
        expect(body.error.code).toBe("unauthorized");
      }
    }
    const ok = await fetch(`${base}/healthz`, { headers: { authorization: `Bearer ${ADMIN}` } });
    expect(ok.status).toBe(200);
  });

  it("an unscoped token takes the scope from the body", async () => {
    const { base } = await serve({ tokens });
    expect((await call(base, "/v1/memories", { records }, ADMIN)).status).toBe(200);
    const r = await call(base, "/v1/recall", { userScope: "bob", query: "deploys" }, ADMIN);
    expect((r.json.hits as Array<{ memoryId: string }>).map((h) => h.memoryId)).toEqual(["b1"]);
  });

  it("another scope's id answers byte for byte as a missing one (no existence probe)", async () => {
    // The same requests to two services: one whose store has bob's b1, one without it.
    const answers: string[][] = [];
    for (const seeded of [true, false]) {
      const { base } = await serve({ tokens });
      if (seeded) await call(base, "/v1/memories", { records: [records[2]] }, ADMIN);
      const out: string[] = [];
      for (const body of [
        { records: [rec("b1", "probe")] },
        { records: [rec("b1", "probe"), rec("b1", "again")] },
        { records: [rec("b1", "bad", { importance: 7 })] },
      ]) {
        const r = await call(base, "/v1/memories", body, ALICE);
        out.push(`${r.status} ${r.text}`);
      }
      const q = await call(base, "/v1/recall", { query: "probe", asOf: ASOF }, ALICE);
      out.push(`${q.status} ${q.text}`);
      answers.push(out);
    }
    expect(answers[0]).toEqual(answers[1]);
    expect(answers[0]![0]).toMatch(/^200 /);
  });

  it("a scoped token reads and writes its own scope only, whatever the body says", async () => {
    const { base, path } = await serve({ tokens });
    await call(base, "/v1/memories", { records }, ADMIN);
    const w = await call(
      base,
      "/v1/memories",
      { records: [rec("a1", "alice deploys too", { userScope: "bob" })] },
      ALICE,
    );
    expect(w.status, w.text).toBe(200);
    const mine = await call(base, "/v1/recall", { userScope: "bob", query: "deploys" }, ALICE);
    expect(mine.json.userScope).toBe("alice");
    expect((mine.json.hits as Array<{ memoryId: string }>).map((h) => h.memoryId)).toEqual(["a1"]);
    // userScope may be left out: the token names it.
    const bare = await call(base, "/v1/recall", { query: "deploys" }, ALICE);
    expect(bare.json).toMatchObject({ userScope: "alice" });
    // An id another scope holds cannot be overwritten through a scoped token: the write
    // makes alice's own b1, and bob's stays.
    const steal = await call(base, "/v1/memories", { records: [rec("b1", "mine now")] }, ALICE);
    expect(steal.status).toBe(200);
    expect(steal.json).toEqual({ written: 1, memoryIds: ["b1"] });
    // assemble reads the token's scope too.
    const asm = await call(
      base,
      "/v1/assemble",
      { query: "deploys", now: ASOF, user: "bob" },
      ALICE,
    );
    expect(asm.status, asm.text).toBe(200);
    expect((asm.json.memoryPlan as { userScope: string }).userScope).toBe("alice");
    const store = openStore(path, { mustExist: true });
    try {
      expect(store.get("a1")?.userScope).toBe("alice");
      expect(store.get("b1", { userScope: "bob" })?.content).toBe("bob deploys on mondays");
      expect(store.get("b1", { userScope: "alice" })?.content).toBe("mine now");
    } finally {
      store.close();
    }
  });

  it("open service: no Authorization needed", async () => {
    const { base } = await serve();
    expect((await get(base, "/healthz")).status).toBe(200);
  });
});

describe("GET /openapi.json", () => {
  it("documents both routes from the validating schemas, and the bearer scheme", async () => {
    const { base } = await serve();
    const doc = (await get(base, "/openapi.json")).json as {
      paths: Record<string, { post: { responses: Record<string, unknown> } }>;
      components: { schemas: Record<string, unknown>; securitySchemes: unknown };
    };
    const same = (schema: z.ZodType) => {
      const { $schema: _s, ...rest } = z.toJSONSchema(schema, {
        target: "draft-2020-12",
        io: "input",
      });
      return rest;
    };
    expect(doc.components.schemas.RecallRequest).toEqual(same(RecallRequestSchema));
    const memories = doc.components.schemas.MemoriesRequest as {
      properties: { records: { items: unknown } };
    };
    expect(memories.properties.records.items).toEqual(same(MemoryRecordSchema));
    expect(Object.keys(doc.paths["/v1/recall"]!.post.responses)).toContain("401");
    expect(doc.components.securitySchemes).toEqual({ bearer: { type: "http", scheme: "bearer" } });
  });
});

describe("authFromEnv (the edge reads the environment)", () => {
  const noFile = (): string => {
    throw new Error("ENOENT");
  };

  it("none configured → open; PROMPTCTX_TOKEN, PROMPTCTX_TOKENS and a file combine", () => {
    expect(authFromEnv({}, noFile)).toBeUndefined();
    const file = join(dir, "tokens.json");
    writeFileSync(file, JSON.stringify({ "file-token-0123456789": "team, ops" }));
    expect(
      authFromEnv(
        {
          PROMPTCTX_TOKEN: ADMIN,
          PROMPTCTX_TOKENS: `${ALICE}:alice, bob-token-0123456789:team:b`,
          PROMPTCTX_TOKENS_FILE: file,
        },
        (p) => readFileSync(p, "utf8"),
      ),
    ).toEqual({
      tokens: [
        { token: ADMIN, scope: null },
        { token: ALICE, scope: "alice" },
        { token: "bob-token-0123456789", scope: "team:b" },
        { token: "file-token-0123456789", scope: "team, ops" },
      ],
    });
  });

  it("bad configuration is invalid input naming the variable", () => {
    const cases: Array<[Record<string, string>, RegExp]> = [
      [{ PROMPTCTX_TOKEN: "short" }, /^auth\.tokens\[0\]\.token/],
      [{ PROMPTCTX_TOKENS: "no-colon-token-0123456789" }, /^PROMPTCTX_TOKENS\[0\]/],
      [{ PROMPTCTX_TOKENS: `${ALICE}:a,${ALICE}:b` }, /^auth\.tokens\[1\]/],
      [{ PROMPTCTX_TOKENS_FILE: "/nope.json" }, /^PROMPTCTX_TOKENS_FILE/],
    ];
    for (const [env, path] of cases) {
      let caught: unknown;
      try {
        authFromEnv(env, noFile);
      } catch (err) {
        caught = err;
      }
      expect(caught, JSON.stringify(env)).toMatchObject({ code: "invalid_input" });
      expect((caught as { path: string }).path).toMatch(path);
    }
  });
});
