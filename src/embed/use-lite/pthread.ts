/**
 * The script of each pthread of the threaded WebAssembly backend (model.ts `wasmModule`,
 * started by lazy-worker.ts): tfjs's own pthread script (`wasmWorkerContents`), which tfjs
 * hands browsers as a Blob URL that Node's `Worker` cannot load. That script is written
 * for a CommonJS scope (`require`, `__filename`), so it runs here as a CommonJS module body
 * would; its string literals hold raw newlines, escaped as tfjs escapes them before making
 * its Blob.
 */
import { createRequire } from "node:module";
import { fileURLToPath } from "node:url";
import { runInThisContext } from "node:vm";
import { isMainThread } from "node:worker_threads";

/** Runs tfjs's pthread script in this worker. */
function runPthread(): void {
  const requireCjs = createRequire(import.meta.url);
  const { wasmWorkerContents } = requireCjs(
    "@tensorflow/tfjs-backend-wasm/wasm-out/tfjs-backend-wasm-threaded-simd.worker.js",
  ) as { wasmWorkerContents: string };
  const body = wasmWorkerContents.replace(/\n/g, "\\n");
  const script = runInThisContext(`(function (require, __filename) {${body}\n})`) as (
    require: (id: string) => unknown,
    filename: string,
  ) => void;
  script(requireCjs, fileURLToPath(import.meta.url));
}

// Only as a worker's script: imported on the main thread (a module walk, a bundler), the
// pthread script would wait for messages from a parent port that does not exist.
if (!isMainThread) runPthread();
