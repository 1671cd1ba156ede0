/**
 * Section `server`: the HTTP service (docs/surfaces.md) under load, loopback only.
 *
 * The server runs in this process on 127.0.0.1 (port 0) over the example workspace and a
 * temp memory store imported from examples/workspace/memories.jsonl (the demo's store),
 * request logs off. autocannon fires from a worker thread (so the load generator does not
 * share the server's event loop), 10 connections, time-boxed: 2 s of warm-up per target
 * (discarded), then 3 rounds of 5 s per target, the targets interleaved within each round
 * (so a busy spell of the machine falls on every target alike):
 * - `POST /v1/assemble`: one fixed body (the demo query, `now` pinned, o200k_base), so
 *   every request is the full workspace job: config, instruction files, skills, KB,
 *   store recall, packing, rendering.
 * - `POST /v1/assemble` over 64 distinct queries, round robin: the same workspace job, but
 *   no two consecutive requests of a connection ask the same; the warm workspace's layer
 *   memo then reuses only the query-independent slots (instruction files, profile,
 *   constraints) and the recall, skills and KB slots are packed for every request.
 * - `GET /healthz`: the framework's ceiling on this machine (no work per request).
 *
 * The same two targets are then fired at `promptctx serve --workers 2` (node:cluster, both
 * cores) in a child process over the same workspace and store.
 *
 * Figures: per round, requests/s (mean over the seconds) and latency p50/p99 (autocannon's
 * resolution is 1 ms); per target, the median of the rounds (every round is printed too)
 * and the errors, timeouts and non-2xx answers of all rounds, which must all be zero (the
 * section fails otherwise, in either setup). Targets (issue 15), judged for the service as it runs on
 * this machine — `serve --workers 2`, both cores — with `/healthz` of the same setup as the
 * baseline, for the fixed body and for the varied queries alike: `/v1/assemble` ≥ 1,000
 * requests/s, 0 errors, p99 < 30 ms. The one-process figures (one event loop) are printed
 * beside them for reference, marked (meets) / (misses), not judged.
 */
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { median } from "../lib/measure.mjs";
import { importDist, MissingModuleError } from "../lib/modules.mjs";
import { heading, int, judge, ms, reference, table, targetTable } from "../lib/report.mjs";
import { startServe } from "../lib/serve-child.mjs";

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
const SECONDS = Number(process.env.BENCH_SERVER_SECONDS ?? 5);
const ROUNDS = Number(process.env.BENCH_SERVER_ROUNDS ?? 3);
const ASSEMBLE_BODY = JSON.stringify({ query: QUERY, now: NOW, tokenizer: "o200k_base" });
const ASKS = [
  "add an index on",
  "why is there a slow query on",
  "write a migration for",
  "explain the rollback plan for",
  "review the tests of",
  "who owns",
  "document the retention of",
  "rename the column in",
];
const SUBJECTS = [
  "invoices.created_at",
  "the billing service",
  "the nightly export",
  "payments.refunds",
  "the staging deploy",
  "customer invoices",
  "the audit log",
  "the currency column",
];
/** 64 distinct queries: every ask about every subject. */
const VARIED_BODIES = ASKS.flatMap((a) =>
  SUBJECTS.map((s) => JSON.stringify({ query: `${a} ${s}`, now: NOW, tokenizer: "o200k_base" })),
);
const VARIED = `POST /v1/assemble (${VARIED_BODIES.length} queries)`;
const WORKERS = 2;
/** Targets of issue 15 for POST /v1/assemble at 10 connections. */
const TARGET_RPS = 1000;
const TARGET_P99_MS = 30;

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

/** `promptctx serve --workers N` in a child process; resolves once it listens. */
function startCluster(storePath) {
  return startServe([
    "--workers",
    String(WORKERS),
    "--port",
    "0",
    "--workspace",
    WORKSPACE,
    "--store",
    storePath,
    "--no-log",
  ]);
}

/** Fires both targets at `base` (warm-up discarded), in order. */
async function fireTargets(autocannon, base) {
  const targets = {
    "POST /v1/assemble": {
      url: `${base}/v1/assemble`,
      method: "POST",
      headers: { "content-type": "application/json" },
      body: ASSEMBLE_BODY,
    },
    [VARIED]: {
      url: base,
      requests: VARIED_BODIES.map((body) => ({
        method: "POST",
        path: "/v1/assemble",
        headers: { "content-type": "application/json" },
        body,
      })),
    },
    "GET /healthz": { url: `${base}/healthz` },
  };
  const entries = Object.entries(targets);
  for (const [, opts] of entries) await fire(autocannon, { ...opts, duration: WARMUP_SECONDS });
  const rounds = Object.fromEntries(entries.map(([name]) => [name, []]));
  for (let r = 0; r < ROUNDS; r++) {
    for (const [name, opts] of entries) {
      rounds[name].push(figures(await fire(autocannon, { ...opts, duration: SECONDS })));
    }
  }
  return Object.fromEntries(entries.map(([name]) => [name, combined(rounds[name])]));
}

/** A target's rounds as one figure: medians of the rates and latencies, sums of the counts. */
function combined(list) {
  const mid = (key) => median(list.map((f) => f[key]));
  const sum = (key) => list.reduce((n, f) => n + f[key], 0);
  return {
    requests: sum("requests"),
    reqPerSec: Math.round(mid("reqPerSec")),
    p50Ms: mid("p50Ms"),
    p99Ms: mid("p99Ms"),
    meanMs: mid("meanMs"),
    errors: sum("errors"),
    timeouts: sum("timeouts"),
    non2xx: sum("non2xx"),
    rounds: list,
  };
}

/** Sanity: the fixed body is a real assembly with recalled memory; its prompt's chars. */
async function probe(base) {
  const res = await fetch(`${base}/v1/assemble`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: ASSEMBLE_BODY,
  });
  const answer = await res.json();
  if (res.status !== 200 || !answer.memoryPlan?.selectedMemoryIds?.length) {
    throw new Error(`assemble probe failed: ${res.status} ${JSON.stringify(answer).slice(0, 200)}`);
  }
  return [...answer.prompt].length;
}

function printSetup(title, targets) {
  console.log(`  ${title}`);
  table([
    [
      "target",
      "requests",
      "req/s",
      "p50",
      "p99",
      "mean",
      "errors",
      "timeouts",
      "non-2xx",
      "rounds: req/s, p99",
    ],
    ...Object.entries(targets).map(([name, f]) => [
      name,
      int(f.requests),
      int(f.reqPerSec),
      latency(f.p50Ms),
      latency(f.p99Ms),
      ms(f.meanMs),
      f.errors,
      f.timeouts,
      f.non2xx,
      f.rounds.map((r) => `${int(r.reqPerSec)}, ${latency(r.p99Ms)}`).join(" · "),
    ]),
  ]);
}

/**
 * The rows of one setup (for the fixed body and the varied queries), /healthz the
 * baseline: judged, or (`judged` false) shown for reference.
 */
function judgeSetup(setup, targets, judged = true) {
  return [
    ...judgeAssemble(`${setup}: POST /v1/assemble`, targets["POST /v1/assemble"], targets, judged),
    ...judgeAssemble(`${setup}: ${VARIED}`, targets[VARIED], targets, judged),
  ];
}

function judgeAssemble(check, a, targets, judged) {
  const h = targets["GET /healthz"];
  const bad = a.errors + a.timeouts + a.non2xx;
  const row = judged ? (t) => judge("server", t) : reference;
  return [
    row({
      check: `${check} req/s`,
      figure: a.reqPerSec,
      shown: int(a.reqPerSec),
      op: ">=",
      limit: TARGET_RPS,
      shownLimit: int(TARGET_RPS),
      baseline: `/healthz ${int(h.reqPerSec)} req/s`,
    }),
    row({
      check: `${check} errors, timeouts, non-2xx`,
      figure: bad,
      shown: int(bad),
      op: "<=",
      limit: 0,
      baseline: `/healthz ${int(h.errors + h.timeouts + h.non2xx)}`,
    }),
    row({
      check: `${check} p99 latency`,
      figure: a.p99Ms,
      shown: latency(a.p99Ms),
      op: "<=",
      // autocannon reports whole milliseconds: under 30 ms means at most 29.
      limit: TARGET_P99_MS - 1,
      shownLimit: `${TARGET_P99_MS - 1} ms (< ${TARGET_P99_MS})`,
      baseline: `/healthz ${latency(h.p99Ms)}`,
    }),
  ];
}

export async function run() {
  const autocannon = await loadAutocannon();
  const { buildServer } = await importDist("server/index.js");
  const { openStore } = await importDist("store/index.js");

  const dir = mkdtempSync(path.join(os.tmpdir(), "promptctx-bench-server-"));
  let app;
  let cluster;
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
    const promptChars = await probe(base);

    heading(meta.title);
    console.log(
      `  ${CONNECTIONS} connections, autocannon in a worker thread, ${WARMUP_SECONDS} s warm-up per target, then ` +
        `${ROUNDS} rounds of ${SECONDS} s per target (targets interleaved; medians of the rounds); ` +
        `assemble prompt ${int(promptChars)} chars`,
    );
    const out = {
      connections: CONNECTIONS,
      seconds: SECONDS,
      rounds: ROUNDS,
      promptChars,
      targets: {},
    };
    out.targets = await fireTargets(autocannon, base);
    await app.close();
    app = undefined;
    printSetup("in this process (buildServer), one event loop:", out.targets);

    cluster = startCluster(storePath);
    const clusterBase = await cluster.url;
    await probe(clusterBase);
    out.clusterWorkers = WORKERS;
    out.clusterTargets = await fireTargets(autocannon, clusterBase);
    const code = await cluster.stop();
    cluster = undefined;
    console.log("");
    printSetup(
      `promptctx serve --workers ${WORKERS} (child process; exit ${code} after SIGTERM):`,
      out.clusterTargets,
    );

    const share = (t) =>
      Math.round((t["POST /v1/assemble"].reqPerSec / t["GET /healthz"].reqPerSec) * 1000) / 1000;
    out.assembleShareOfCeiling = share(out.targets);
    out.clusterAssembleShareOfCeiling = share(out.clusterTargets);
    console.log(
      `  assemble runs at ${(out.assembleShareOfCeiling * 100).toFixed(1)}% of the /healthz ceiling ` +
        `in one process, ${(out.clusterAssembleShareOfCeiling * 100).toFixed(1)}% with ${WORKERS} workers`,
    );
    console.log("");
    // The target is the service on this machine, which `serve --workers N` runs on both
    // cores; one event loop's figures are shown beside it, not judged.
    targetTable([
      ...judgeSetup(`${WORKERS} workers`, out.clusterTargets),
      ...judgeSetup("1 process (reference)", out.targets, false),
    ]);

    const bad = [
      ...Object.entries(out.targets),
      ...Object.entries(out.clusterTargets).map(([n, f]) => [`${n} (workers)`, f]),
    ].filter(([, f]) => f.errors + f.timeouts + f.non2xx > 0);
    if (bad.length > 0) {
      throw new Error(
        `errors or non-2xx answers under load: ${bad.map(([n, f]) => `${n} ${JSON.stringify(f)}`).join("; ")}`,
      );
    }
    return out;
  } finally {
    await app?.close();
    await cluster?.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}
