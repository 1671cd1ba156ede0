/**
 * Section `postgres`: the shared memory store over PostgreSQL (spec 06 "scale-out").
 *
 * A throwaway cluster (scripts/pg-cluster.mjs: initdb + pg_ctl in a temp dir, on a free
 * port; durable settings — fsync and synchronous_commit on — with shared_buffers 1 GB and
 * max_wal_size 8 GB so that checkpoints do not dominate a bulk import).
 *
 * 1. Import and recall: the `store` section's records (same generator, seed and scopes)
 *    and queries. Import reads the JSONL file through `importJsonl` (batches of 1,000,
 *    one transaction each) into a store opened as an ordinary role (row-level security
 *    on); records/s covers reading, parsing, validation, the row, its postings and the
 *    document frequencies. Then an untimed `VACUUM ANALYZE` (what autovacuum would do
 *    later), then recall: an untimed warm-up over the first 50 queries, then up to 3
 *    timed passes (time-boxed); a query's latency is the median of its passes; figures
 *    are the median and p95 over queries. First 100,000 records, then grown to
 *    1,000,000 — unless `BENCH_PG_SKIP_1M=1` (the 1M step takes ~15–20 min on 2 cores).
 * 2. Several instances: three `promptctx serve --store postgres://…` processes (the built
 *    bin) on that store; 12 client loops spread round-robin over them for
 *    `BENCH_PG_SECONDS` (default 20) seconds: 80 % `POST /v1/recall` (the same queries),
 *    20 % `POST /v1/memories` (batches of 10 new records in the query's scope). Figures:
 *    requests/s overall and per kind, latency p50/p95, errors (must be 0: the section
 *    fails otherwise), and a final check that every write is in the store.
 *
 * CPU time (this process plus the cluster's server processes, from /proc) is reported
 * beside wall time: on a busy machine it is the steadier figure. The cluster and temp
 * files are removed at the end.
 */
import { spawn } from "node:child_process";
import { createReadStream, mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { performance } from "node:perf_hooks";
import { fileURLToPath } from "node:url";
import pg from "pg";
import { startCluster } from "../../scripts/pg-cluster.mjs";
import { median, round3 } from "../lib/measure.mjs";
import { importDist } from "../lib/modules.mjs";
import { heading, int, ms, table } from "../lib/report.mjs";
import { makeQueries, writeRecords } from "./store.mjs";

export const meta = {
  name: "postgres",
  order: 45,
  title: "Memory store (PostgreSQL): import, recall at 100k / 1M, several serve instances",
};

const SKIP_1M = process.env.BENCH_PG_SKIP_1M === "1";
const SIZES = SKIP_1M ? [100_000] : [100_000, 1_000_000];
const AS_OF = "2026-01-01T00:00:00Z";
const LIMIT = 20;
const MAX_PASSES = 3;
const RECALL_BUDGET_MS = 60_000;
const WARMUP_QUERIES = 50;
const INSTANCES = 3;
const CLIENTS = 12;
const LOAD_SECONDS = Number(process.env.BENCH_PG_SECONDS ?? 20);
const WRITE_SHARE = 0.2;
const BIN = fileURLToPath(new URL("../../bin/promptctx.js", import.meta.url));
const SETTINGS = {
  shared_buffers: "1GB",
  max_wal_size: "8GB",
  checkpoint_timeout: "30min",
  maintenance_work_mem: "512MB",
  work_mem: "16MB",
};

function percentile(xs, p) {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.ceil((p / 100) * s.length) - 1)];
}

function rate(x) {
  return `${int(Math.round(x))}/s`;
}

function mib(bytes) {
  return `${(bytes / 1_048_576).toFixed(0)} MiB`;
}

/**
 * CPU seconds used so far by this process and by the cluster's server processes (the
 * postmaster's children, from /proc): wall time on a busy machine says little, CPU time
 * per record or per query says what the work costs.
 */
function cpuSeconds(cluster) {
  const own = process.cpuUsage();
  let ticks = 0;
  try {
    const postmaster = readFileSync(path.join(cluster.dir, "data", "postmaster.pid"), "utf8");
    const root = postmaster.split("\n")[0];
    for (const pid of readdirSync("/proc").filter((d) => /^\d+$/.test(d))) {
      try {
        const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
        const f = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
        if (pid === root || f[1] === root) ticks += Number(f[11]) + Number(f[12]);
      } catch {
        // gone meanwhile
      }
    }
  } catch {
    // no /proc: the figure is the process's own
  }
  return (own.user + own.system) / 1e6 + ticks / 100;
}

async function timedImport(store, file, expected, label, cluster) {
  const c0 = cpuSeconds(cluster);
  let nextReport = 100_000;
  const t0 = performance.now();
  const res = await store.importJsonl(createReadStream(file, { highWaterMark: 1 << 20 }), {
    now: AS_OF,
    onProgress: (p) => {
      if (p.imported >= nextReport) {
        const s = (performance.now() - t0) / 1000;
        console.log(`    importing ${label}: ${int(p.imported)} after ${s.toFixed(1)} s`);
        nextReport += 100_000;
      }
    },
  });
  const secs = (performance.now() - t0) / 1000;
  const cpu = cpuSeconds(cluster) - c0;
  if (res.imported !== expected || res.skipped !== 0) {
    throw new Error(`import of ${label}: ${res.imported} imported, ${res.skipped} skipped`);
  }
  return {
    records: res.imported,
    seconds: round3(secs),
    recordsPerSecond: Math.round(res.imported / secs),
    cpuSeconds: round3(cpu),
    recordsPerCpuSecond: Math.round(res.imported / cpu),
  };
}

async function recallPasses(store, queries, cluster) {
  const runOnce = async (qs) => {
    const times = [];
    const hits = [];
    for (const q of qs) {
      const t0 = performance.now();
      const h = await store.recall(q.text, { userScope: q.userScope, limit: LIMIT, asOf: AS_OF });
      times.push(performance.now() - t0);
      hits.push(h.length);
    }
    return { times, hits };
  };
  await runOnce(queries.slice(0, WARMUP_QUERIES));
  const passes = [];
  let hits = null;
  const start = performance.now();
  const c0 = cpuSeconds(cluster);
  while (passes.length < MAX_PASSES) {
    if (passes.length >= 1) {
      const elapsed = performance.now() - start;
      if (elapsed + elapsed / passes.length > RECALL_BUDGET_MS) break;
    }
    const pass = await runOnce(queries);
    passes.push(pass.times);
    hits ??= pass.hits;
  }
  const cpuMsPerQuery = ((cpuSeconds(cluster) - c0) * 1000) / (passes.length * queries.length);
  const perQuery = queries.map((_, i) => median(passes.map((p) => p[i])));
  return {
    passes: passes.length,
    cpuMsPerQuery: round3(cpuMsPerQuery),
    medianMs: round3(median(perQuery)),
    p95Ms: round3(percentile(perQuery, 95)),
    maxMs: round3(Math.max(...perQuery)),
    meanHits: Math.round((hits.reduce((a, b) => a + b, 0) / hits.length) * 10) / 10,
  };
}

/** `promptctx serve` on the store; resolves once it prints its URL. */
function serve(url) {
  const child = spawn(
    process.execPath,
    [BIN, "serve", "--store", url, "--port", "0", "--no-log", "--body-limit", "4194304"],
    { stdio: ["ignore", "pipe", "pipe"] },
  );
  const exit = new Promise((resolve) => child.on("exit", (code) => resolve(code)));
  let out = "";
  let err = "";
  child.stderr.on("data", (c) => {
    err += c;
  });
  return new Promise((resolve, reject) => {
    child.stdout.on("data", (c) => {
      out += c;
      const m = /listening on (\S+)/.exec(out);
      if (m) resolve({ child, url: m[1], exit });
    });
    exit.then((code) => reject(new Error(`serve exited ${code}: ${err.slice(-500)}`)));
  });
}

function writeBody(scope, client, n) {
  return {
    records: Array.from({ length: 10 }, (_, k) => ({
      memoryId: `load-c${client}-n${n}-k${k}`,
      userScope: scope,
      content: `load test memory ${client} ${n} ${k} deploy cache invoice`,
      source: { sourceId: "bench", sourceType: "bench", title: "bench", capturedAt: AS_OF },
    })),
  };
}

/** One client loop: requests back to back until `until`, round-robin over the instances. */
async function clientLoop(client, instances, queries, until, tally) {
  let n = 0;
  while (performance.now() < until) {
    const inst = instances[(client + n) % instances.length];
    const q = queries[(client * 7 + n) % queries.length];
    const write = (client * 13 + n) % 10 < WRITE_SHARE * 10;
    const route = write ? "/v1/memories" : "/v1/recall";
    const body = write
      ? writeBody(q.userScope, client, n)
      : { userScope: q.userScope, query: q.text, limit: LIMIT, asOf: AS_OF };
    const t0 = performance.now();
    try {
      const res = await fetch(`${inst.url}${route}`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify(body),
      });
      await res.arrayBuffer();
      if (res.status !== 200) tally.errors++;
      else if (write) tally.written += 10;
    } catch {
      tally.errors++;
    }
    (write ? tally.writeMs : tally.readMs).push(performance.now() - t0);
    n++;
  }
}

async function countOf(storeMod, url) {
  const s = await storeMod.openPostgresStore(url);
  try {
    return await s.count();
  } finally {
    await s.close();
  }
}

async function multiInstance(url, queries, storeMod) {
  const instances = [];
  try {
    for (let i = 0; i < INSTANCES; i++) instances.push(await serve(url));
    // Warm-up: one recall per instance (connections, JIT).
    const warm = performance.now() + 2000;
    const sink = { errors: 0, written: 0, readMs: [], writeMs: [] };
    await Promise.all(
      instances.map((_, c) => clientLoop(c + 1000, instances, queries, warm, sink)),
    );
    const before = await countOf(storeMod, url);
    const tally = { errors: sink.errors, written: 0, readMs: [], writeMs: [] };
    const t0 = performance.now();
    const until = t0 + LOAD_SECONDS * 1000;
    await Promise.all(
      Array.from({ length: CLIENTS }, (_, c) => clientLoop(c, instances, queries, until, tally)),
    );
    const secs = (performance.now() - t0) / 1000;
    const after = await countOf(storeMod, url);
    const requests = tally.readMs.length + tally.writeMs.length;
    return {
      instances: INSTANCES,
      clients: CLIENTS,
      seconds: round3(secs),
      requests,
      reqPerSec: Math.round(requests / secs),
      recallPerSec: Math.round(tally.readMs.length / secs),
      writePerSec: Math.round(tally.writeMs.length / secs),
      recallP50Ms: round3(percentile(tally.readMs, 50)),
      recallP95Ms: round3(percentile(tally.readMs, 95)),
      writeP50Ms: round3(percentile(tally.writeMs, 50)),
      writeP95Ms: round3(percentile(tally.writeMs, 95)),
      errors: tally.errors,
      recordsWritten: tally.written,
      storeGrew: after - before,
    };
  } finally {
    for (const i of instances) i.child.kill("SIGTERM");
    for (const i of instances) await i.exit;
  }
}

async function dbSize(cluster) {
  const c = new pg.Client({ connectionString: cluster.adminUrl });
  await c.connect();
  try {
    const { rows } = await c.query("SELECT pg_database_size('promptctx')::float8 AS n");
    return rows[0].n;
  } finally {
    await c.end();
  }
}

async function vacuumAnalyze(url) {
  const c = new pg.Client({ connectionString: url });
  await c.connect();
  try {
    const t0 = performance.now();
    await c.query("VACUUM ANALYZE");
    return round3((performance.now() - t0) / 1000);
  } finally {
    await c.end();
  }
}

async function importAndRecall(cluster, storeMod, dir, queries, results) {
  const files = [];
  let from = 0;
  for (const n of SIZES) {
    const file = path.join(dir, `records-${from}-${n}.jsonl`);
    writeRecords(file, from, n);
    files.push({ file, from, to: n });
    from = n;
  }
  const store = await storeMod.openPostgresStore(cluster.url, { maxConnections: 4 });
  const rows = [
    ["records", "import", "records/s", "rec/cpu-s", "vacuum", "db size", "p50", "p95", "cpu/query"],
  ];
  try {
    for (const f of files) {
      const label = `${int(f.from)}–${int(f.to)}`;
      const imp = await timedImport(store, f.file, f.to - f.from, label, cluster);
      const count = await store.count();
      if (count !== f.to) throw new Error(`store holds ${count} records, expected ${f.to}`);
      const vacuumSeconds = await vacuumAnalyze(cluster.url);
      const bytes = await dbSize(cluster);
      const rec = await recallPasses(store, queries, cluster);
      results.sizes[f.to] = { import: imp, vacuumSeconds, dbBytes: bytes, recall: rec };
      rows.push([
        int(f.to),
        `${int(imp.records)} in ${imp.seconds.toFixed(1)} s`,
        rate(imp.recordsPerSecond),
        int(imp.recordsPerCpuSecond),
        `${vacuumSeconds.toFixed(1)} s`,
        mib(bytes),
        ms(rec.medianMs),
        ms(rec.p95Ms),
        ms(rec.cpuMsPerQuery),
      ]);
    }
  } finally {
    await store.close();
  }
  table(rows);
}

export async function run() {
  heading(meta.title);
  const storeMod = await importDist("store/index.js");
  await importDist("cli/serve-cmd.js"); // serve runs the built bin: it must be there
  const queries = makeQueries();
  const dir = mkdtempSync(path.join(os.tmpdir(), "promptctx-bench-pg-"));
  const cluster = await startCluster({ settings: SETTINGS });
  const results = { settings: SETTINGS, skipped1M: SKIP_1M, sizes: {} };
  try {
    console.log(
      `  cluster on port ${cluster.port} (${Object.entries(SETTINGS)
        .map(([k, v]) => `${k}=${v}`)
        .join(", ")}); ${queries.length} queries, limit ${LIMIT}` +
        (SKIP_1M ? "; 1M step skipped (BENCH_PG_SKIP_1M=1)" : ""),
    );
    await importAndRecall(cluster, storeMod, dir, queries, results);
    console.log(
      "  recall p50 / p95 over queries of each query's median latency; rec/cpu-s and " +
        "cpu/query count this process and the PostgreSQL server processes",
    );
    const mi = await multiInstance(cluster.url, queries, storeMod);
    results.multiInstance = mi;
    table([
      [
        "instances",
        "clients",
        "req/s",
        "recall/s",
        "write/s",
        "recall p50/p95",
        "write p50/p95",
        "errors",
      ],
      [
        String(mi.instances),
        String(mi.clients),
        rate(mi.reqPerSec),
        rate(mi.recallPerSec),
        rate(mi.writePerSec),
        `${ms(mi.recallP50Ms)} / ${ms(mi.recallP95Ms)}`,
        `${ms(mi.writeP50Ms)} / ${ms(mi.writeP95Ms)}`,
        String(mi.errors),
      ],
    ]);
    console.log(
      `  ${LOAD_SECONDS} s, ${Math.round(WRITE_SHARE * 100)} % writes (10 records each); ` +
        `${int(mi.recordsWritten)} records written, store grew by ${int(mi.storeGrew)}`,
    );
    if (mi.errors !== 0) throw new Error(`${mi.errors} requests failed`);
    if (mi.storeGrew !== mi.recordsWritten) throw new Error("writes were lost");
  } finally {
    cluster.stop();
    rmSync(dir, { recursive: true, force: true });
  }
  return results;
}
