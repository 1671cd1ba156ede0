/**
 * The worker thread of the embedded encoder (helper.ts starts it): loads its own copy of
 * the model and answers `{ id, rows }` (token ids of one run) with `{ id, vectors }`, so a
 * bulk embed (an import, `memory reembed`) uses a second core. Only model runs cross the
 * thread boundary: tokenizing stays in the calling thread, so every vector is the same
 * whichever thread ran it.
 */
import { parentPort } from "node:worker_threads";
import { loadModel } from "./model.js";

/** A request of the calling thread. */
export interface RunRequest {
  id: number;
  rows: number[][];
}

/** The answer: the vectors, or the failure's message. */
export type RunReply =
  | { id: number; vectors: Float32Array[] }
  | { id: number; error: string }
  | { ready: true }
  | { ready: false; error: string };

async function serve(port: NonNullable<typeof parentPort>): Promise<void> {
  let run: Awaited<ReturnType<typeof loadModel>>;
  try {
    run = await loadModel();
  } catch (err) {
    port.postMessage({ ready: false, error: String(err) } satisfies RunReply);
    return;
  }
  port.on("message", (req: RunRequest) => {
    run(req.rows).then(
      (vectors) =>
        port.postMessage(
          { id: req.id, vectors } satisfies RunReply,
          vectors.map((v) => v.buffer as ArrayBuffer),
        ),
      (err: unknown) => port.postMessage({ id: req.id, error: String(err) } satisfies RunReply),
    );
  });
  port.postMessage({ ready: true } satisfies RunReply);
}

if (parentPort !== null) void serve(parentPort);
