/**
 * Section `server`: the HTTP service (docs/surfaces.md) under load, loopback only.
 *
 * The server runs in this process on 127.0.0.1 (port 0) over the example workspace and a
 * temp memory store imported from examples/workspace/memories.jsonl (the demo's store),
 * request logs off. autocannon fires from a worker thread (so the load generator does not
 * share the server's event loop), 10 connections, time-boxed: 2 s of warm-up (discarded)
 * and then 10 s measured per target:
 * - `POST /v1/assemble`: one fixed body (the demo query, `now` pinned, o200k_base), so
 *   every request is the full workspace job: config, instruction files, skills, KB,
 *   store recall, packing, rendering.
 * - `GET /healthz`: the framework's ceiling on this machine (no work per request).
 *
 * Figures: requests/s (mean over the seconds), latency p50/p99 (autocannon's resolution is
 * 1 ms), errors, timeouts and non-2xx answers, which must all be zero (the section fails
 * otherwise).
 */
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { importDist, MissingModuleError } from "../lib/modules.mjs";
import { heading, int, ms, table } from "../lib/report.mjs";

export const meta = {
  name: "server",
  order: 60,
  title: "HTTP service: POST /v1/assemble and GET /healthz under load (loopback)",
};

const WORKSPACE = fileURLToPath(new URL("../../examples/workspace/", import.meta.url));
const NOW = "2026-11-30T09:00:00Z";
const QUERY = "add an index on invoices.created_at in a new migration";
const CONNECTIONS = 10;
const WARMUP_SECONDS = 2;
const SECONDS = Number(process.env.BENCH_SERVER_SECONDS ?? 10);
const ASSEMBLE_BODY = JSON.stringify({ query: QUERY, now: NOW, tokenizer: "o200k_base" });

async function loadAutocannon() {
  try {
    return (await import("autocannon")).default;
  } catch {
    throw new MissingModuleError("autocannon is not installed (it is a devDependency: npm ci)");
  }
}

function fire(autocannon, opts) {
  return new Promise((resolve, reject) => {
    autocannon({ connections: CONNECTIONS, workers: 1, ...opts }, (err, result) =>
      err ? reject(err) : resolve(result),
    );
  });
}

/** autocannon measures latency in whole milliseconds. */
function latency(x) {
  return x < 1 ? "<1 ms" : ms(x);
}

function figures(result) {
  return {
    requests: result.requests.total,
    reqPerSec: Math.round(result.requests.average),
    p50Ms: result.latency.p50,
    p99Ms: result.latency.p99,
    meanMs: Math.round(result.latency.average * 100) / 100,
    errors: result.errors,
    timeouts: result.timeouts,
    non2xx: result.non2xx,
  };
}

export async function run() {
  const autocannon = await loadAutocannon();
  const { buildServer } = await importDist("server/index.js");
  const { openStore } = await importDist("store/index.js");

  const dir = mkdtempSync(path.join(os.tmpdir(), "promptctx-bench-server-"));
  let app;
  try {
    const storePath = path.join(dir, "memory.db");
    const store = openStore(storePath);
    try {
      const r = await store.importJsonl(
        readFileSync(path.join(WORKSPACE, "memories.jsonl"), "utf8"),
        { now: NOW },
      );
      if (r.skipped > 0) throw new Error(`example memories: ${r.skipped} lines skipped`);
    } finally {
      await store.close();
    }

    app = await buildServer({ workspace: WORKSPACE, store: storePath, logger: false });
    await app.listen({ port: 0, host: "127.0.0.1" });
    const base = `http://127.0.0.1:${app.server.address().port}`;

    const targets = {
      "POST /v1/assemble": {
        url: `${base}/v1/assemble`,
        method: "POST",
        headers: { "content-type": "application/json" },
        body: ASSEMBLE_BODY,
      },
      "GET /healthz": { url: `${base}/healthz` },
    };

    // Sanity: the fixed body is a real assembly with recalled memory.
    const probe = await fetch(targets["POST /v1/assemble"].url, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: ASSEMBLE_BODY,
    });
    const answer = await probe.json();
    if (probe.status !== 200 || !answer.memoryPlan?.selectedMemoryIds?.length) {
      throw new Error(
        `assemble probe failed: ${probe.status} ${JSON.stringify(answer).slice(0, 200)}`,
      );
    }
    const promptChars = [...answer.prompt].length;

    heading(meta.title);
    console.log(
      `  ${CONNECTIONS} connections, autocannon in a worker thread, ${WARMUP_SECONDS} s warm-up + ${SECONDS} s per target; ` +
        `assemble prompt ${int(promptChars)} chars`,
    );

    const out = { connections: CONNECTIONS, seconds: SECONDS, promptChars, targets: {} };
    for (const [name, opts] of Object.entries(targets)) {
      await fire(autocannon, { ...opts, duration: WARMUP_SECONDS });
      out.targets[name] = figures(await fire(autocannon, { ...opts, duration: SECONDS }));
    }

    table([
      ["target", "requests", "req/s", "p50", "p99", "mean", "errors", "timeouts", "non-2xx"],
      ...Object.entries(out.targets).map(([name, f]) => [
        name,
        int(f.requests),
        int(f.reqPerSec),
        latency(f.p50Ms),
        latency(f.p99Ms),
        ms(f.meanMs),
        f.errors,
        f.timeouts,
        f.non2xx,
      ]),
    ]);
    const assembleRps = out.targets["POST /v1/assemble"].reqPerSec;
    const ceilingRps = out.targets["GET /healthz"].reqPerSec;
    out.assembleShareOfCeiling = Math.round((assembleRps / ceilingRps) * 1000) / 1000;
    console.log(
      `  assemble runs at ${(out.assembleShareOfCeiling * 100).toFixed(1)}% of the /healthz ceiling`,
    );

    const bad = Object.entries(out.targets).filter(([, f]) => f.errors + f.timeouts + f.non2xx > 0);
    if (bad.length > 0) {
      throw new Error(
        `errors or non-2xx answers under load: ${bad.map(([n, f]) => `${n} ${JSON.stringify(f)}`).join("; ")}`,
      );
    }
    return out;
  } finally {
    await app?.close();
    rmSync(dir, { recursive: true, force: true });
  }
}
