/**
 * Section `startup`: what a user waits for when running the CLI — a whole process, from
 * spawn to exit — against `node -e 0` measured in the same rounds (the floor of any Node
 * program on this machine).
 *
 * Commands, each a fresh process (spawnSync, stdout/stderr captured and discarded),
 * interleaved round by round in alternating order:
 * - `node -e 0` (baseline)
 * - `node bin/promptctx.js --help`
 * - `node bin/promptctx.js assemble --workspace examples/workspace --query … --now …
 *   --tokenizer estimate --no-user-files` (the example workspace has no memory store)
 *
 * `bin/promptctx.js` is what `node_modules/.bin/promptctx` runs once installed; `npx
 * promptctx` adds npm's own start-up on top and is not timed here.
 *
 * Targets (issue 15): `--help` ≤ 2× the baseline, `assemble` ≤ 3×; judged on the paired
 * ratio (per round, see bench/lib/measure.mjs) and on the ratio of the raw medians.
 */
import { spawnSync } from "node:child_process";
import { fileURLToPath } from "node:url";
import { measure, pairedRatio, round3 } from "../lib/measure.mjs";
import { heading, judge, ms, ratio, table, targetTable } from "../lib/report.mjs";

export const meta = {
  name: "startup",
  order: 5,
  title: "CLI start-up: whole processes against `node -e 0`",
};

const ROOT = fileURLToPath(new URL("../../", import.meta.url));
const BIN = `${ROOT}bin/promptctx.js`;
const WORKSPACE = `${ROOT}examples/workspace`;
const TARGET_HELP = 2;
const TARGET_ASSEMBLE = 3;

const COMMANDS = {
  baseline: ["-e", "0"],
  help: [BIN, "--help"],
  assemble: [
    BIN,
    "assemble",
    "--workspace",
    WORKSPACE,
    "--query",
    "add an index on invoices.created_at in a new migration",
    "--now",
    "2026-11-30T09:00:00Z",
    "--tokenizer",
    "estimate",
    "--no-user-files",
  ],
};

function runOnce(args) {
  const r = spawnSync(process.execPath, args, { cwd: ROOT, encoding: "utf8" });
  if (r.status !== 0) {
    throw new Error(`node ${args.join(" ")} exited ${r.status}: ${r.stderr.slice(0, 400)}`);
  }
  return r.stdout.length;
}

export async function run(ctx) {
  heading(meta.title);
  // At least 9 rounds: a process start on this shared machine varies far more than a call.
  const runs = Math.max(ctx.runs, 9);
  const variants = Object.fromEntries(
    Object.entries(COMMANDS).map(([name, args]) => [name, { run: () => runOnce(args) }]),
  );
  const { timings: m } = await measure(variants, { runs, warmup: ctx.warmup, forceGc: false });
  const labels = {
    baseline: "node -e 0 (baseline)",
    help: "promptctx --help",
    assemble: "promptctx assemble --workspace examples/workspace",
  };
  console.log(
    `  median of ${runs} interleaved rounds after ${ctx.warmup} warm-up; wall time per process`,
  );
  table([
    ["command", "median", "min", "max", "× baseline (medians)", "× baseline (paired)"],
    ...Object.keys(COMMANDS).map((k) => [
      labels[k],
      ms(m[k].medianMs),
      ms(m[k].minMs),
      ms(m[k].maxMs),
      k === "baseline" ? "" : ratio(m[k].medianMs / m.baseline.medianMs),
      k === "baseline" ? "" : ratio(pairedRatio(m[k].samplesMs, m.baseline.samplesMs)),
    ]),
  ]);
  const figures = {};
  const rows = [];
  for (const [k, limit] of [
    ["help", TARGET_HELP],
    ["assemble", TARGET_ASSEMBLE],
  ]) {
    const raw = round3(m[k].medianMs / m.baseline.medianMs);
    const paired = round3(pairedRatio(m[k].samplesMs, m.baseline.samplesMs));
    figures[k] = { ...strip(m[k]), ratioOfMedians: raw, pairedRatio: paired };
    for (const [how, figure] of [
      ["paired", paired],
      ["raw medians", raw],
    ]) {
      rows.push(
        judge("startup", {
          check: `${labels[k]} / baseline, ${how}`,
          figure,
          shown: ratio(figure),
          op: "<=",
          limit,
          shownLimit: `${limit}x`,
          baseline: `node -e 0 ${ms(m.baseline.medianMs)}`,
        }),
      );
    }
  }
  console.log("");
  targetTable(rows);
  return { runs, warmup: ctx.warmup, baseline: strip(m.baseline), ...figures };
}

function strip(t) {
  const { result: _result, ...rest } = t;
  return rest;
}
