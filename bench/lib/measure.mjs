/**
 * Timing: warm-up rounds, then measured rounds in which every variant runs once per
 * round, interleaved and in alternating order (A B C, C B A, …) so drift and cache state
 * hit all of them alike. Wall time is the figure; process CPU time (all threads) is kept
 * alongside, as a check when the machine is shared. Each run gets
 * an untimed `setup` (fresh counters, fresh inputs) and a forced GC first when node runs
 * with --expose-gc. Figures are medians of the measured rounds.
 */
import { performance } from "node:perf_hooks";

const gc = typeof globalThis.gc === "function" ? globalThis.gc : null;

/** True when runs are preceded by a forced GC (node --expose-gc). */
export const hasGc = gc !== null;

export function median(xs) {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 === 1 ? s[m] : (s[m - 1] + s[m]) / 2;
}

function summarize(samples, cpu) {
  const sorted = [...samples].sort((a, b) => a - b);
  return {
    medianMs: round3(median(samples)),
    minMs: round3(sorted[0]),
    maxMs: round3(sorted[sorted.length - 1]),
    samplesMs: samples.map(round3),
    cpuMedianMs: round3(median(cpu)),
  };
}

/**
 * Median over measured rounds of `a[i] / b[i]`: two variants timed back to back in the
 * same round saw the same machine, so their ratio holds when this VM's speed drifts
 * between rounds (it swings by up to 1.7× for seconds at a time), where a ratio of two
 * medians may pair a fast round of one with a slow round of the other.
 */
export function pairedRatio(a, b) {
  const n = Math.min(a.length, b.length);
  return median(Array.from({ length: n }, (_, i) => a[i] / b[i]));
}

export function round3(x) {
  return Math.round(x * 1000) / 1000;
}

/**
 * Runs `variants` ({name: {setup?: () => state, run: (state) => result | Promise}})
 * `warmup` + `runs` rounds, interleaved. With `budgetMs`, measured rounds stop early once
 * another round would exceed the budget (counted from the first warm-up), but never
 * before `minRuns` measured rounds. Returns, per variant, the timing summary and the
 * result of its last measured run (for sanity checks and reporting), as `timings`, and
 * the number of measured rounds as `runs`. `forceGc: false` skips the forced GC before
 * each run (steady state: V8 keeps its optimized code, see the planner section).
 */
export async function measure(
  variants,
  { runs, warmup, budgetMs = Infinity, minRuns = 3, forceGc = true },
) {
  const names = Object.keys(variants);
  const samples = Object.fromEntries(names.map((n) => [n, []]));
  const cpu = Object.fromEntries(names.map((n) => [n, []]));
  const last = {};
  const start = performance.now();
  let measured = 0;
  for (let round = 0; round < warmup + runs; round++) {
    if (measured >= Math.min(minRuns, runs)) {
      const elapsed = performance.now() - start;
      if (elapsed + elapsed / round > budgetMs) break;
    }
    // Alternate the order every round so no variant always runs first.
    for (const name of round % 2 === 0 ? names : [...names].reverse()) {
      const v = variants[name];
      const state = v.setup ? await v.setup() : undefined;
      if (gc && forceGc) gc();
      const c0 = process.cpuUsage();
      const t0 = performance.now();
      const result = await v.run(state);
      const ms = performance.now() - t0;
      const c = process.cpuUsage(c0);
      if (round >= warmup) {
        samples[name].push(ms);
        cpu[name].push((c.user + c.system) / 1000);
        last[name] = result;
      }
    }
    if (round >= warmup) measured++;
  }
  const timings = Object.fromEntries(
    names.map((n) => [n, { ...summarize(samples[n], cpu[n]), result: last[n] }]),
  );
  return { timings, runs: measured, warmup };
}
