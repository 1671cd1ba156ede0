/**
 * The pthreads of the threaded WebAssembly backend (model.ts `wasmModule`), started only
 * when one is given a thread to run. The module's glue makes a pool of 8 workers and waits
 * until each has loaded the module, though the backend's thread pool runs on one of them
 * (2 threads): 8 started Node workers cost resident memory the process keeps after 7 of
 * them end (its malloc heap does not shrink back; measured, a process that loaded the
 * encoder and embedded 512 texts: 301 MB with 8 started workers, 245 MB with one). A
 * {@link LazyWorker} answers the glue's `load` at once and starts its Node worker on the
 * first other message, handing it the `load` first: the spare ones never start.
 *
 * It stands in for Node's `Worker` where the glue calls `new Worker(script)`, with the
 * surface the glue uses (`on`, `postMessage`, `ref`, `unref`, `terminate`). Its worker gets
 * no flags of the process (`execArgv: []`): a flag such as `--input-type` stops a worker
 * at start.
 */
import { type TransferListItem, Worker } from "node:worker_threads";

type Listener = (data: unknown) => void;
type Message = { cmd?: string } | null;

/** A pthread's worker, started on its first message after `load` (see the module comment). */
export class LazyWorker {
  readonly #script: string;
  readonly #listeners: [string, Listener][] = [];
  #load: Message = null;
  #worker: Worker | null = null;
  #referenced = true;

  constructor(script: string) {
    this.#script = script;
  }

  on(event: string, listener: Listener): this {
    this.#listeners.push([event, listener]);
    this.#worker?.on(event, this.#forward(event, listener));
    return this;
  }

  postMessage(message: Message, transfer?: readonly TransferListItem[]): void {
    if (this.#worker === null && message?.cmd === "load") {
      this.#load = message;
      // As a started worker answers: on a later turn, once the glue's listeners are set.
      setImmediate(() => {
        for (const [event, l] of this.#listeners) if (event === "message") l({ cmd: "loaded" });
      });
      return;
    }
    const worker = this.#start();
    worker.postMessage(message, transfer);
  }

  ref(): void {
    this.#referenced = true;
    this.#worker?.ref();
  }

  unref(): void {
    this.#referenced = false;
    this.#worker?.unref();
  }

  async terminate(): Promise<number> {
    return this.#worker === null ? 0 : this.#worker.terminate();
  }

  /** Its own "loaded" (once it has loaded for real) was already answered. */
  #forward(event: string, listener: Listener): Listener {
    if (event !== "message") return listener;
    return (data) => {
      if ((data as Message)?.cmd !== "loaded") listener(data);
    };
  }

  #start(): Worker {
    if (this.#worker !== null) return this.#worker;
    const worker = new Worker(this.#script, { execArgv: [] });
    this.#worker = worker;
    for (const [event, l] of this.#listeners) worker.on(event, this.#forward(event, l));
    if (!this.#referenced) worker.unref();
    if (this.#load !== null) worker.postMessage(this.#load);
    this.#load = null;
    return worker;
  }
}
