/**
 * The calling side of the encoder's worker thread (worker.ts): started on the first bulk
 * embed, kept for the embedder's life, unreferenced while idle (an open embedder does not
 * keep a finished process alive). When the compiled worker file is missing (the sources
 * run untranspiled, e.g. under vitest) or the worker fails to load, there is no helper and
 * the calling thread embeds alone: slower, same vectors.
 */
import { existsSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { Worker } from "node:worker_threads";
import type { RunModel } from "./model.js";
import type { RunReply } from "./worker.js";

/** A model running in a worker thread. */
export interface Helper {
  run: RunModel;
  close(): Promise<void>;
}

/**
 * Starts the worker and waits for its model; `null` when it cannot run.
 *
 * @example const helper = await startHelper(); await helper?.run([[6, 7]]);
 */
export async function startHelper(signal?: AbortSignal): Promise<Helper | null> {
  const file = new URL("./worker.js", import.meta.url);
  if (signal?.aborted === true || !existsSync(fileURLToPath(file))) return null;
  // No flags of the parent (`--input-type`, a loader, …): the worker needs none.
  const worker = new Worker(file, { execArgv: [] });
  const waiting = new Map<number, { ok(v: Float32Array[]): void; fail(e: Error): void }>();
  let nextId = 0;
  // Aborted while its model loads (the embedder closed: a small import is done): no helper.
  const ready = await new Promise<boolean>((resolve) => {
    worker.once("error", () => resolve(false));
    worker.once("message", (m: RunReply) => resolve("ready" in m && m.ready));
    signal?.addEventListener("abort", () => resolve(false), { once: true });
  });
  if (!ready) {
    await worker.terminate();
    return null;
  }
  const failAll = (e: Error) => {
    for (const w of waiting.values()) w.fail(e);
    waiting.clear();
  };
  worker.on("message", (m: RunReply) => {
    if (!("id" in m)) return;
    const w = waiting.get(m.id);
    waiting.delete(m.id);
    if (waiting.size === 0) worker.unref();
    if ("error" in m) w?.fail(new Error(`the encoder's worker thread failed: ${m.error}`));
    else w?.ok(m.vectors);
  });
  worker.on("error", failAll);
  worker.on("exit", () => failAll(new Error("the encoder's worker thread exited")));
  worker.unref();
  return {
    run: (rows) =>
      new Promise((ok, fail) => {
        const id = nextId++;
        waiting.set(id, { ok, fail });
        worker.ref();
        worker.postMessage({ id, rows: rows.map((r) => [...r]) });
      }),
    async close() {
      worker.ref(); // an unreferenced worker's exit would not keep the process waiting for it
      await worker.terminate();
    },
  };
}
