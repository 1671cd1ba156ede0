/**
 * Section `recall-meaning`: recall by meaning (docs/sources.md "Recall by meaning").
 *
 * - The embedded encoder (USE lite on tfjs wasm), **real**: load time and texts/s on one
 *   thread (this process), and the resident memory of a fresh process that loaded it as
 *   the CLI does (kernels on 2 threads) and embedded 256 texts.
 * - Import with the embedded encoder, **real** vectors, in a fresh process as `memory
 *   import` runs (one model, kernels on 2 threads): records/s of `importJsonl` on a hybrid
 *   SQLite store (write + embed + vector write) and its RSS; median of 3 runs of 1,000
 *   memories (RSS: the largest).
 * - Quality, **real** encoder: the labelled set test/fixtures/recall-meaning/ (105
 *   memories, English and Chinese), through test/store/recall-meaning.test.ts.
 * - Vector search at scale, **random unit vectors** of 512 dimensions (bench/lib/
 *   vector-scale.mjs): 100,000 in one scope (`RECALL_MEANING_N`), and many small scopes —
 *   100,000 over 1,000 scopes by default, `RECALL_MEANING_MANY=1000000
 *   RECALL_MEANING_SCOPES=10000` for the 1,000,000 over 10,000 (slow to fill: 34
 *   minutes at load ~13, 2.9 GB of disk).
 */
import { spawnSync } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { performance } from "node:perf_hooks";
import { fileURLToPath } from "node:url";
import { median, round3 } from "../lib/measure.mjs";
import { importDist } from "../lib/modules.mjs";
import { createRng, sentence } from "../lib/prng.mjs";
import { heading, judge, judgeNone, ms, table, targetTable } from "../lib/report.mjs";
import { manyScopes, oneScope } from "../lib/vector-scale.mjs";

export const meta = {
  name: "recall-meaning",
  order: 42,
  title: "Recall by meaning: the encoder, import with vectors, quality, vector search at scale",
};

const ROOT = fileURLToPath(new URL("../..", import.meta.url));
const CHILD = fileURLToPath(new URL("../lib/encoder-child.mjs", import.meta.url));
const SCALE_N = Number(process.env.RECALL_MEANING_N ?? 100_000);
const MANY_N = Number(process.env.RECALL_MEANING_MANY ?? 100_000);
const MANY_SCOPES = Number(process.env.RECALL_MEANING_SCOPES ?? 1_000);
const IMPORT_N = 1_000;
const IMPORT_RUNS = 3;

function child(args) {
  const res = spawnSync(process.execPath, [CHILD, ...args], { encoding: "utf8", cwd: ROOT });
  if (res.status !== 0) throw new Error(`encoder child ${args[0]} failed: ${res.stderr}`);
  return JSON.parse(res.stdout.trim().split("\n").pop());
}

async function encoderFigures(embedder, r) {
  const texts = Array.from({ length: 256 }, () => sentence(r));
  await embedder.embed(texts.slice(0, 8)); // warm-up
  let t0 = performance.now();
  await embedder.embed(texts);
  const batchPerS = texts.length / ((performance.now() - t0) / 1000);
  t0 = performance.now();
  for (const t of texts.slice(0, 32)) await embedder.embed([t]);
  const singlePerS = 32 / ((performance.now() - t0) / 1000);
  return { batchPerS: Math.round(batchPerS), singlePerS: Math.round(singlePerS) };
}

/** The labelled set's figures, from the quality test (it prints them as one JSON line). */
function quality() {
  const vitest = path.join(ROOT, "node_modules/vitest/vitest.mjs");
  const res = spawnSync(process.execPath, [vitest, "run", "test/store/recall-meaning.test.ts"], {
    encoding: "utf8",
    cwd: ROOT,
  });
  const line = res.stdout.split("\n").find((l) => l.includes("recall-meaning figures: "));
  if (line === undefined) throw new Error(`the quality test printed no figures:\n${res.stdout}`);
  return JSON.parse(line.slice(line.indexOf("{")));
}

export async function run(_ctx) {
  heading(meta.title);
  const { createEmbedder, unitVector } = await importDist("embed/index.js");
  const { openStore } = await importDist("store/index.js");
  const r = createRng(32);
  const t0 = performance.now();
  const embedder = await createEmbedder({ kind: "embedded" }, { PROMPTCTX_EMBEDDER_THREADS: "0" });
  const loadMs = round3(performance.now() - t0);
  const enc = await encoderFigures(embedder, r);
  const { rssMb } = child(["rss"]);
  const dir = mkdtempSync(path.join(os.tmpdir(), "promptctx-bench-meaning-"));
  try {
    const imports = [];
    for (let i = 0; i < IMPORT_RUNS; i++) {
      const d = mkdtempSync(path.join(dir, "import-"));
      imports.push(child(["import", String(IMPORT_N), d]));
    }
    const importPerS = median(imports.map((x) => x.recordsPerS));
    const importRss = Math.max(...imports.map((x) => x.rssMb));
    const q = quality();
    const one = await oneScope({ dir, openStore, unitVector, embedder, r, sentence, n: SCALE_N });
    const many = manyScopes({ dir, openStore, unitVector, r, n: MANY_N, scopes: MANY_SCOPES });
    const figures = {
      encoder: { loadMs, batchTextsPerS: enc.batchPerS, singleTextsPerS: enc.singlePerS, rssMb },
      import: {
        records: IMPORT_N,
        runs: imports,
        recordsPerS: importPerS,
        rssMb: importRss,
        vectors: "real (USE lite)",
      },
      quality: q,
      oneScope: one,
      manyScopes: many,
    };
    table([
      ["figure", "value", "vectors"],
      ["encoder load", ms(loadMs), "real"],
      ["encoder texts/s, one call of 256 (one thread)", String(enc.batchPerS), "real"],
      ["encoder texts/s, one at a time", String(enc.singlePerS), "real"],
      ["RSS, fresh process: encoder loaded (2 threads) + 256 texts", `${rssMb} MB`, "real"],
      [
        `import ${IMPORT_N} records (kernels on 2 threads), median of ${IMPORT_RUNS}`,
        `${importPerS} records/s`,
        "real",
      ],
      ["RSS of the importing process (one model), largest", `${importRss} MB`, "real"],
      [`first search, ${one.n} in one scope (sqlite-vec scan)`, ms(one.firstSearchMs), "random"],
      ["  second search: builds the candidate index", ms(one.indexBuildMs), "random"],
      [
        `vector search p50, ${one.n} in one scope, k 50 / k 10`,
        `${ms(one.searchP50Ms)} / ${ms(one.searchK10P50Ms)}`,
        "random",
      ],
      ["  recall@10 against brute-force cosine", String(one.recallAt10), "random"],
      ["  with the query's embedding", ms(one.searchWithEmbeddingP50Ms), "random + real query"],
      [
        `vector search p50, ${many.n} over ${many.scopes} scopes, k 50`,
        ms(many.searchP50Ms),
        "random",
      ],
    ]);
    console.log("");
    const pct = (x) => `${Math.round(x * 1000) / 10} %`;
    const rows = [
      judge(meta.name, {
        check: "paraphrase target in the top 3",
        figure: q.paraphraseTop3,
        shown: pct(q.paraphraseTop3),
        op: ">=",
        limit: 0.7,
        shownLimit: "70 %",
      }),
      ...["en", "zh"].map((l) =>
        judge(meta.name, {
          check: `keyword top 3 (${l}) minus full-text alone`,
          figure: round3(q.keywordTop3[l] - q.lexicalKeywordTop3[l]),
          shown: `${pct(q.keywordTop3[l])} vs ${pct(q.lexicalKeywordTop3[l])}`,
          op: ">=",
          limit: 0,
        }),
      ),
      ...["en", "zh"].map((l) =>
        judge(meta.name, {
          check: `unrelated questions abstain (${l})`,
          figure: q.unrelatedAbstain[l],
          shown: pct(q.unrelatedAbstain[l]),
          op: ">=",
          limit: 0.9,
          shownLimit: "90 %",
        }),
      ),
      ...judgeNone(meta.name, "labelled set:", [["hits from another scope", q.crossScopeHits]]),
      judge(meta.name, {
        check: "import records/s, embedded encoder",
        figure: importPerS,
        shown: String(importPerS),
        op: ">=",
        limit: 150,
      }),
      judge(meta.name, {
        check: "RSS of a process that loaded the encoder (MB)",
        figure: rssMb,
        shown: `${rssMb} MB`,
        op: "<=",
        limit: 300,
      }),
      judge(meta.name, {
        check: "  of the importing process (MB)",
        figure: importRss,
        shown: `${importRss} MB`,
        op: "<=",
        limit: 300,
      }),
      judge(meta.name, {
        check: `search p50, ${one.n} in one scope (ms, random vectors)`,
        figure: one.searchP50Ms,
        shown: ms(one.searchP50Ms),
        op: "<=",
        limit: 10,
      }),
      judge(meta.name, {
        check: "  with the query's embedding (ms)",
        figure: one.searchWithEmbeddingP50Ms,
        shown: ms(one.searchWithEmbeddingP50Ms),
        op: "<=",
        limit: 40,
      }),
      judge(meta.name, {
        check: "  recall@10 against brute force",
        figure: one.recallAt10,
        shown: String(one.recallAt10),
        op: ">=",
        limit: 0.95,
      }),
      judge(meta.name, {
        check: `search p50, ${many.n} over ${many.scopes} scopes (ms, random vectors)`,
        figure: many.searchP50Ms,
        shown: ms(many.searchP50Ms),
        op: "<=",
        limit: 5,
      }),
    ];
    targetTable(rows);
    return figures;
  } finally {
    await embedder.close?.();
    rmSync(dir, { recursive: true, force: true });
  }
}
