#!/usr/bin/env node
/**
 * Benchmark driver. Runs the sections in bench/sections/*.mjs (each exports
 * `meta = {name, order, title}` and `async run(ctx)` returning its figures), prints
 * aligned text, and writes every figure to bench/results.json.
 *
 *   npm run bench                             # build, then every section
 *   node --expose-gc bench/run.mjs selection  # only the named sections
 *   node --expose-gc bench/run.mjs --runs 3 --warmup 1 planner
 *   node bench/run.mjs --list
 *
 * Timing rules: medians of several measured runs after warm-up, interleaved with the
 * baselines/peers they are compared to in the same process; synthetic data from a
 * seeded PRNG; no network (peers are installed before any timing, only if missing).
 */
import { readdirSync, writeFileSync } from "node:fs";
import os from "node:os";
import { fileURLToPath, pathToFileURL } from "node:url";
import { hasGc } from "./lib/measure.mjs";
import { MissingModuleError } from "./lib/modules.mjs";
import { judgedTargets, table } from "./lib/report.mjs";

const SECTIONS_DIR = fileURLToPath(new URL("./sections/", import.meta.url));
const RESULTS_FILE = fileURLToPath(new URL("./results.json", import.meta.url));

function parseArgs(argv) {
  const opts = { runs: 7, warmup: 2, names: [], list: false, seeds: null };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    if (a === "--runs" || a === "--warmup") {
      const v = Number(argv[++i]);
      if (!Number.isInteger(v) || v < (a === "--runs" ? 1 : 0)) {
        throw new Error(`${a} needs a ${a === "--runs" ? "positive" : "non-negative"} integer`);
      }
      opts[a.slice(2)] = v;
    } else if (a === "--seed") {
      // Seeds of the generated workloads that take one (agent-study): `--seed 1,2,3`.
      const seeds = String(argv[++i] ?? "")
        .split(",")
        .map(Number);
      if (seeds.length === 0 || !seeds.every((x) => Number.isInteger(x) && x >= 0)) {
        throw new Error("--seed needs non-negative integers, comma-separated");
      }
      opts.seeds = seeds;
    } else if (a === "--list") {
      opts.list = true;
    } else if (a === "--help" || a === "-h") {
      opts.help = true;
    } else if (a.startsWith("-")) {
      throw new Error(`unknown option ${a}`);
    } else {
      opts.names.push(a);
    }
  }
  return opts;
}

async function loadSections() {
  const files = readdirSync(SECTIONS_DIR).filter((f) => f.endsWith(".mjs"));
  const sections = [];
  for (const f of files) {
    const mod = await import(pathToFileURL(SECTIONS_DIR + f).href);
    if (!mod.meta?.name || typeof mod.run !== "function") {
      throw new Error(`bench/sections/${f} must export meta {name, order, title} and run(ctx)`);
    }
    sections.push(mod);
  }
  return sections.sort(
    (a, b) =>
      (a.meta.order ?? 1000) - (b.meta.order ?? 1000) || (a.meta.name < b.meta.name ? -1 : 1),
  );
}

function round2(x) {
  return Math.round(x * 100) / 100;
}

/** Every target judged in this run, with its verdict: the summary a reader checks first. */
function printTargets(targets, env) {
  if (targets.length === 0) return;
  console.log("");
  console.log("Targets");
  console.log("=======");
  table([
    ["section", "target", "figure", "limit", "result"],
    ...targets.map((t) => [
      t.section,
      t.check,
      String(round2(t.figure)),
      `${t.op} ${t.limit}`,
      t.pass ? "PASS" : "FAIL",
    ]),
  ]);
  const failed = targets.filter((t) => !t.pass).length;
  console.log(
    `  ${targets.length - failed} PASS, ${failed} FAIL; 1-min load average ${env.loadAverageBefore} ` +
      `before, ${env.loadAverageAfter} after, on ${env.cpus} CPUs`,
  );
}

async function main() {
  const opts = parseArgs(process.argv.slice(2));
  const all = await loadSections();
  if (opts.help || opts.list) {
    if (opts.help) {
      console.log(
        "usage: node --expose-gc bench/run.mjs [--runs N] [--warmup N] [--seed N,…] [section ...]",
      );
    }
    console.log("sections:");
    for (const s of all) console.log(`  ${s.meta.name.padEnd(12)} ${s.meta.title}`);
    return 0;
  }
  const unknown = opts.names.filter((n) => !all.some((s) => s.meta.name === n));
  if (unknown.length > 0) {
    console.error(
      `unknown section(s): ${unknown.join(", ")}; known: ${all.map((s) => s.meta.name).join(", ")}`,
    );
    return 2;
  }
  const chosen =
    opts.names.length === 0 ? all : all.filter((s) => opts.names.includes(s.meta.name));

  const env = {
    date: new Date().toISOString(),
    node: process.version,
    platform: `${process.platform} ${process.arch}`,
    cpu: os.cpus()[0]?.model ?? "unknown",
    cpus: os.availableParallelism?.() ?? os.cpus().length,
    exposeGc: hasGc,
    runs: opts.runs,
    warmup: opts.warmup,
    loadAverageBefore: round2(os.loadavg()[0]),
  };
  console.log(
    `promptctx bench: node ${env.node}, ${env.platform}, ${env.cpus} × ${env.cpu}; ` +
      `median of ${opts.runs} runs after ${opts.warmup} warm-up`,
  );
  console.log(
    `  1-min load average ${env.loadAverageBefore} on ${env.cpus} CPUs` +
      (env.loadAverageBefore > env.cpus / 2
        ? ": the machine is busy, wall times are inflated (results.json also has CPU-time medians)"
        : ""),
  );
  if (!hasGc) console.log("  note: run node with --expose-gc to force a GC before each run");

  const ctx = { runs: opts.runs, warmup: opts.warmup, seeds: opts.seeds };
  const results = { env, sections: {} };
  let failed = 0;
  for (const s of chosen) {
    const t0 = Date.now();
    try {
      const figures = await s.run(ctx);
      figures.wallSeconds = Math.round((Date.now() - t0) / 100) / 10;
      results.sections[s.meta.name] = figures;
      // A section may measure what it can and name what it skipped.
      if (figures.skipped !== undefined) failed++;
    } catch (err) {
      failed++;
      const skipped = err instanceof MissingModuleError;
      console.log(`  ${skipped ? "SKIPPED" : "FAILED"} ${s.meta.name}: ${err.message}`);
      if (!skipped) console.log(err.stack);
      results.sections[s.meta.name] = { [skipped ? "skipped" : "failed"]: err.message };
    }
  }
  env.loadAverageAfter = round2(os.loadavg()[0]);
  results.targets = judgedTargets();
  printTargets(results.targets, env);
  writeFileSync(RESULTS_FILE, `${JSON.stringify(results, null, 2)}\n`);
  console.log("");
  console.log(
    `figures written to bench/results.json${failed > 0 ? ` (${failed} section(s) incomplete)` : ""}`,
  );
  return failed > 0 ? 1 : 0;
}

main().then(
  (code) => process.exit(code),
  (err) => {
    console.error(err instanceof Error ? err.message : err);
    process.exit(2);
  },
);
