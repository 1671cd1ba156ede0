/**
 * Section `recall-meaning`: recall by meaning (docs/sources.md "Recall by meaning").
 *
 * - The embedded encoder (USE lite on tfjs wasm), **real**: load time, texts/s in batches
 *   and one at a time, resident memory after loading and embedding.
 * - Import with the embedded encoder, **real** vectors: records/s of `importJsonl` on a
 *   hybrid SQLite store (write + embed + vector write), 2,000 generated English memories.
 * - Vector search at scale, **random unit vectors** of 512 dimensions (not the encoder's):
 *   100,000 vectors in one scope (`RECALL_MEANING_N` to change), p50 of the sqlite-vec
 *   search (k = 50, the hybrid recall's) and of a search with the query's embedding
 *   computed by the real encoder.
 *
 * Quality figures (paraphrase top 3, abstention) are the labelled set's, printed by
 * test/store/recall-meaning.test.ts.
 */
import { mkdtempSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { performance } from "node:perf_hooks";
import { median, round3 } from "../lib/measure.mjs";
import { importDist } from "../lib/modules.mjs";
import { createRng, sentence } from "../lib/prng.mjs";
import { heading, ms, table } from "../lib/report.mjs";

export const meta = {
  name: "recall-meaning",
  order: 42,
  title: "Recall by meaning: the embedded encoder, import with vectors, vector search at scale",
};

const SCALE_N = Number(process.env.RECALL_MEANING_N ?? 100_000);
const IMPORT_N = 2_000;
const DIMS = 512;

export function record(i, scope, content) {
  return {
    memoryId: `m${i}`,
    userScope: scope,
    content,
    source: {
      sourceId: "bench",
      sourceType: "chat",
      title: "bench",
      capturedAt: "2026-06-01T00:00:00Z",
    },
  };
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

export async function run(_ctx) {
  heading(meta.title);
  const { createEmbedder } = await importDist("embed/index.js");
  const { openStore, hybridStore } = await importDist("store/index.js");
  const { unitVector } = await importDist("embed/index.js");
  const r = createRng(32);
  const t0 = performance.now();
  const embedder = await createEmbedder({ kind: "embedded" });
  const loadMs = round3(performance.now() - t0);
  const enc = await encoderFigures(embedder, r);
  const rssMb = Math.round(process.memoryUsage().rss / 1e6);
  const dir = mkdtempSync(path.join(os.tmpdir(), "promptctx-bench-meaning-"));
  try {
    // Import with the real encoder.
    const store = hybridStore(openStore(path.join(dir, "import.db")), embedder);
    const lines = Array.from({ length: IMPORT_N }, (_, i) =>
      JSON.stringify(record(i, "u1", sentence(r))),
    ).join("\n");
    let t1 = performance.now();
    const imported = await store.importJsonl(lines);
    const importPerS = Math.round(imported.imported / ((performance.now() - t1) / 1000));
    store.close();

    // Vector search at scale: random unit vectors (not the encoder's).
    const base = openStore(path.join(dir, "scale.db"));
    base.vectors.bind({ id: "random@bench/512", dimensions: DIMS });
    const gauss = () => r.float() - 0.5;
    const BATCH = 5_000;
    t1 = performance.now();
    for (let start = 0; start < SCALE_N; start += BATCH) {
      const recs = [];
      for (let i = start; i < Math.min(SCALE_N, start + BATCH); i++)
        recs.push(record(i, "big", `memory ${i}`));
      base.add(recs);
      const ids = base.rowidsOf(
        "big",
        recs.map((x) => x.memoryId),
      );
      base.vectors.put(
        recs.map((x) => ({
          rowid: ids.get(x.memoryId),
          userScope: "big",
          content: x.content,
          vector: unitVector(Array.from({ length: DIMS }, gauss)),
        })),
      );
    }
    const fillS = round3((performance.now() - t1) / 1000);
    const searchMs = [];
    for (let i = 0; i < 25; i++) {
      const q = unitVector(Array.from({ length: DIMS }, gauss));
      const t2 = performance.now();
      base.vectors.search("big", q, 50);
      searchMs.push(performance.now() - t2);
    }
    const withEmbedMs = [];
    for (let i = 0; i < 15; i++) {
      const t2 = performance.now();
      const [q] = await embedder.embed([sentence(r)]);
      base.vectors.search("big", q, 50);
      withEmbedMs.push(performance.now() - t2);
    }
    base.close();
    const figures = {
      encoder: {
        loadMs,
        batchTextsPerS: enc.batchPerS,
        singleTextsPerS: enc.singlePerS,
        rssMbAfterLoad: rssMb,
      },
      import: {
        records: imported.imported,
        embedded: imported.embedded,
        recordsPerS: importPerS,
        vectors: "real (USE lite)",
      },
      scale: {
        n: SCALE_N,
        vectors: "random unit vectors, 512 dimensions",
        fillS,
        searchP50Ms: round3(median(searchMs.slice(5))),
        searchWithEmbeddingP50Ms: round3(median(withEmbedMs.slice(3))),
      },
    };
    table([
      ["figure", "value", "vectors"],
      ["encoder load", ms(loadMs), "real"],
      ["encoder texts/s, batches of 64", String(enc.batchPerS), "real"],
      ["encoder texts/s, one at a time", String(enc.singlePerS), "real"],
      ["RSS after loading + embedding", `${rssMb} MB`, "real"],
      [`import with the encoder (${IMPORT_N} records)`, `${importPerS} records/s`, "real"],
      [`vector search p50, ${SCALE_N} in one scope, k 50`, ms(figures.scale.searchP50Ms), "random"],
      [
        "  same, with the query's embedding",
        ms(figures.scale.searchWithEmbeddingP50Ms),
        "random + real query",
      ],
    ]);
    return figures;
  } finally {
    await embedder.close?.();
    rmSync(dir, { recursive: true, force: true });
  }
}
