/**
 * Section `recall-quality`: the recall evaluation set (test/fixtures/recall-eval/, made
 * by scripts/gen-recall-eval.mjs; see its README) on a real SQLite store in a temp dir:
 * 3,000 memories in 40 scopes (English, Chinese, mixed), 320 related queries (one
 * labelled memory each) and 200 unrelated ones (off-topic, and near misses: a topic the
 * scope has, about an entity it does not). Every query is recalled with limit 10 at the
 * set's `asOf`; a hit passes at the default recall slot's `minScore` (docs/memory-selection.md's gate).
 *
 * Figures (see scripts/recall-eval.mjs): recall@k and precision@k (of passing hits),
 * answered@k (a labelled memory in the top k and passing), the abstain rate of related
 * and of unrelated queries. Targets (issue 13): unrelated queries abstain in ≥ 95 % of
 * cases; a labelled memory is in the top 3 for ≥ 90 % of related queries. Also timed:
 * the median recall latency over the set (small scopes: this is not the scale figure,
 * the `store` section is).
 */
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { performance } from "node:perf_hooks";
import { fileURLToPath } from "node:url";
import { AS_OF } from "../../scripts/gen-recall-eval.mjs";
import { evaluate } from "../../scripts/recall-eval.mjs";
import { median, round3 } from "../lib/measure.mjs";
import { importDist } from "../lib/modules.mjs";
import { heading, ms, table, verdict } from "../lib/report.mjs";

export const meta = {
  name: "recall-quality",
  order: 41,
  title: "Recall quality (SQLite): precision@k, recall@k and abstain rate on the evaluation set",
};

const FIXTURE = fileURLToPath(new URL("../../test/fixtures/recall-eval/", import.meta.url));
const LIMIT = 10;
const TARGETS = { unrelatedAbstain: 0.95, relatedRecall3: 0.9 };

function pct(x) {
  return `${(x * 100).toFixed(1)} %`;
}

function readJsonl(name) {
  return readFileSync(path.join(FIXTURE, name), "utf8")
    .trimEnd()
    .split("\n")
    .map((l) => JSON.parse(l));
}

function relatedRows(res) {
  const rows = [
    [
      "related",
      "n",
      "recall@1",
      "recall@3",
      "recall@5",
      "precision@1",
      "precision@3",
      "answered@3",
      "abstain",
    ],
  ];
  const row = (label, m) => [
    label,
    String(m.queries),
    pct(m["recall@1"]),
    pct(m["recall@3"]),
    pct(m["recall@5"]),
    pct(m["precision@1"]),
    pct(m["precision@3"]),
    pct(m["answered@3"]),
    pct(m.abstainRate),
  ];
  rows.push(row("all", res.related));
  for (const [lang, m] of Object.entries(res.relatedByLang)) rows.push(row(lang, m));
  return rows;
}

export async function run(_ctx) {
  heading(meta.title);
  const { openStore } = await importDist("store/index.js");
  const { DEFAULT_POLICY } = await importDist("memory/index.js");
  const minScore = DEFAULT_POLICY.minScore;
  const dir = mkdtempSync(path.join(os.tmpdir(), "promptctx-bench-recall-eval-"));
  const store = openStore(path.join(dir, "eval.db"));
  try {
    const imported = await store.importJsonl(
      readFileSync(path.join(FIXTURE, "memories.jsonl"), "utf8"),
    );
    const queries = readJsonl("queries.jsonl");
    const latencies = [];
    const res = await evaluate(
      queries,
      (q) => {
        const t0 = performance.now();
        const hits = store.recall(q.text, { userScope: q.userScope, asOf: AS_OF, limit: LIMIT });
        latencies.push(performance.now() - t0);
        return hits.map((h) => ({ memoryId: h.memoryId, score: h.score }));
      },
      { minScore },
    );
    console.log(
      `  ${imported.imported} memories, ${queries.length} queries (${res.related.queries} related, ` +
        `${res.unrelated.queries} unrelated); limit ${LIMIT}, minScore ${minScore} (default recall slot)`,
    );
    table(relatedRows(res));
    console.log(
      "  precision@k: share of labelled memories among the top-k hits that pass minScore; " +
        "answered@3: a labelled memory in the top 3 and passing",
    );
    console.log("");
    table([
      ["unrelated", "n", "abstain"],
      ["all", String(res.unrelated.queries), pct(res.unrelated.abstainRate)],
      ...Object.entries(res.unrelatedByKind).map(([k, m]) => [
        k,
        String(m.queries),
        pct(m.abstainRate),
      ]),
    ]);
    const checks = {
      unrelatedAbstain: res.unrelated.abstainRate >= TARGETS.unrelatedAbstain,
      relatedRecall3: res.related["recall@3"] >= TARGETS.relatedRecall3,
    };
    console.log(
      `  targets: unrelated abstain ${pct(res.unrelated.abstainRate)} ≥ 95 % ` +
        `${verdict(checks.unrelatedAbstain)}; related recall@3 ${pct(res.related["recall@3"])} ` +
        `≥ 90 % ${verdict(checks.relatedRecall3)}`,
    );
    const recallMedianMs = round3(median(latencies));
    console.log(`  recall latency over the set: median ${ms(recallMedianMs)}`);
    const { failures, ...figures } = res;
    return {
      ...figures,
      targets: TARGETS,
      pass: checks,
      recallMedianMs,
      failures: failures.length,
    };
  } finally {
    store.close();
    rmSync(dir, { recursive: true, force: true });
  }
}
