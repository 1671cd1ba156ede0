/**
 * Several instances, one store: three `promptctx serve --store postgres://…` processes
 * (the built bin; `npm test` builds first) on one throwaway PostgreSQL cluster. Writes go
 * concurrently through every instance, reads through the others: no write is lost, no read
 * crosses a scope, every instance sees every other's writes. The instances connect as the
 * app role of `store init`. One instance runs with
 * tokens from the environment, so scoped tokens are checked across processes too.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openPostgresStore } from "../../src/store/index.js";
import { rec } from "../store/helpers.js";
import { PG_TESTS, usePostgres } from "../store/pg-helpers.js";
import { ROOT, WORKSPACE } from "./helpers.js";

const BIN = join(ROOT, "bin/promptctx.js");
const ASOF = "2026-08-17T00:00:00Z";
const SCOPES = ["alpha", "beta", "gamma", "delta"];
const BATCHES = 12;
const PER_BATCH = 5;
const ADMIN = "admin-token-0123456789";
const ALPHA = "alpha-token-0123456789";

interface Instance {
  child: ChildProcess;
  url: string;
  token?: string;
  exit: Promise<number | null>;
}

/** Spawns `promptctx serve` and waits for its `listening on URL` line. */
function serve(store: string, env: Record<string, string> = {}): Promise<Instance> {
  const child = spawn(
    process.execPath,
    [BIN, "serve", "--store", store, "--port", "0", "--workspace", WORKSPACE, "--no-log"],
    { cwd: ROOT, stdio: ["ignore", "pipe", "pipe"], env: { ...process.env, ...env } },
  );
  const exit = new Promise<number | null>((resolve) => child.on("exit", (code) => resolve(code)));
  let out = "";
  let err = "";
  child.stderr?.on("data", (c: Buffer) => {
    err += c.toString("utf8");
  });
  return new Promise((resolve, reject) => {
    child.stdout?.on("data", (c: Buffer) => {
      out += c.toString("utf8");
      const m = /listening on (\S+)/.exec(out);
      if (m) resolve({ child, url: m[1]!, exit, ...(env.PROMPTCTX_TOKEN ? { token: ADMIN } : {}) });
    });
    void exit.then((code) => reject(new Error(`serve exited ${code}: ${err}`)));
  });
}

async function call(i: Instance, route: string, body: unknown, token = i.token) {
  const res = await fetch(`${i.url}${route}`, {
    method: "POST",
    headers: {
      "content-type": "application/json",
      ...(token ? { authorization: `Bearer ${token}` } : {}),
    },
    body: JSON.stringify(body),
  });
  const json = (await res.json()) as Record<string, unknown>;
  if (res.status !== 200) throw new Error(`${route} → ${res.status}: ${JSON.stringify(json)}`);
  return json;
}

type Hit = { memoryId: string; userScope: string };
const hitsOf = (json: Record<string, unknown>) => json.hits as Hit[];

/** The record written by instance `i`, batch `b`, slot `k`, in `scope`. */
function record(scope: string, i: number, b: number, k: number) {
  const id = `${scope}-i${i}-b${b}-k${k}`;
  return rec(id, `shared words ${scope}word unique${id.replaceAll("-", "")}`, { userScope: scope });
}

describe.runIf(PG_TESTS)("several serve instances, one PostgreSQL store", () => {
  const pg = usePostgres();
  const instances: Instance[] = [];
  let url: string;
  let ownerUrl: string;

  beforeAll(async () => {
    // The roles of `store init`: the instances connect as the app role, which owns nothing.
    ({ appUrl: url, ownerUrl } = await pg.roles());
    instances.push(await serve(url), await serve(url));
    instances.push(
      await serve(url, { PROMPTCTX_TOKEN: ADMIN, PROMPTCTX_TOKENS: `${ALPHA}:alpha` }),
    );
  });
  afterAll(async () => {
    for (const i of instances) i.child.kill("SIGTERM");
    for (const i of instances) await i.exit;
  });

  it("concurrent writes through every instance: none lost, each visible through every other", async () => {
    // Every instance writes every scope, all at once; plus ids every instance writes alike.
    const writes = instances.flatMap((inst, i) =>
      SCOPES.flatMap((scope) =>
        Array.from({ length: BATCHES }, (_, b) =>
          call(inst, "/v1/memories", {
            records: [
              ...Array.from({ length: PER_BATCH }, (_, k) => record(scope, i, b, k)),
              rec(`${scope}-common-${b}`, `shared words ${scope}word common`, { userScope: scope }),
            ],
          }),
        ),
      ),
    );
    const answers = await Promise.all(writes);
    expect(answers.every((a) => a.written === PER_BATCH + 1)).toBe(true);

    const perScope = instances.length * BATCHES * PER_BATCH + BATCHES;
    for (const [n, inst] of instances.entries()) {
      for (const scope of SCOPES) {
        const r = await call(inst, "/v1/recall", {
          userScope: scope,
          query: `${scope}word`,
          limit: 1000,
          asOf: ASOF,
        });
        const hits = hitsOf(r);
        expect(hits.length, `${scope} through instance ${n}`).toBe(perScope);
        expect(hits.every((h) => h.userScope === scope)).toBe(true);
      }
    }
    // Each record written through instance i is found through instance i + 1.
    for (const [i] of instances.entries()) {
      const reader = instances[(i + 1) % instances.length]!;
      for (const scope of SCOPES) {
        const b = i % BATCHES;
        const id = record(scope, i, b, 0).memoryId;
        const r = await call(reader, "/v1/recall", {
          userScope: scope,
          query: `unique${id.replaceAll("-", "")}`,
          asOf: ASOF,
        });
        expect(hitsOf(r).map((h) => h.memoryId)).toEqual([id]);
      }
    }
    const store = await openPostgresStore(ownerUrl); // the store-wide count: the owner's
    try {
      expect(await store.count()).toBe(perScope * SCOPES.length);
    } finally {
      await store.close();
    }
  });

  it("no read crosses a scope, through any instance, with or without a scoped token", async () => {
    for (const inst of instances) {
      const r = await call(inst, "/v1/recall", {
        userScope: "beta",
        query: "alphaword",
        asOf: ASOF,
      });
      expect(hitsOf(r)).toEqual([]);
    }
    const tokened = instances[2]!;
    const r = await call(
      tokened,
      "/v1/recall",
      { userScope: "beta", query: "betaword alphaword", limit: 5, asOf: ASOF },
      ALPHA,
    );
    expect(r.userScope).toBe("alpha");
    expect(hitsOf(r).every((h) => h.userScope === "alpha")).toBe(true);
    const res = await fetch(`${tokened.url}/v1/recall`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ userScope: "beta", query: "x" }),
    });
    expect(res.status).toBe(401);
  });

  it("SIGTERM stops every instance cleanly (exit 0)", async () => {
    for (const i of instances) i.child.kill("SIGTERM");
    for (const i of instances) expect(await i.exit).toBe(0);
  });
});
