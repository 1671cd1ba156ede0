/**
 * `serve --workers N`: N server processes sharing one port (node:cluster), so the service
 * uses every core. The primary only supervises: it forks one worker, then the others once
 * that one listens (bad options fail once), reports the URL once all of them listen, restarts a worker that dies on its own, and stops them all
 * gracefully on SIGTERM/SIGINT (a second signal cuts open connections). Workers ignore
 * signals themselves — a terminal's Ctrl+C reaches the whole process group — and obey
 * the primary's messages instead; a worker whose primary is gone stops too.
 */
import cluster, { type Worker } from "node:cluster";
import { InvalidInputError } from "../errors/index.js";
import { type RunOptions, runServer, type StartOptions } from "./run.js";

/** Messages between the primary and its workers. */
type ToWorker = { promptctx: "stop" } | { promptctx: "cut" };
type ToPrimary = { promptctx: "listening"; url: string };

const isMessage = (m: unknown, kind: string): boolean =>
  typeof m === "object" && m !== null && (m as { promptctx?: unknown }).promptctx === kind;

/** Options of {@link runCluster}. */
export interface ClusterOptions extends Pick<RunOptions, "onListening" | "graceMs"> {
  /** Worker processes (≥ 1). */
  workers: number;
  /** Signals that stop the cluster (default SIGTERM, SIGINT). */
  signals?: readonly NodeJS.Signals[];
  /** Called with what the primary reports (a worker restarted, a worker failed). */
  onEvent?: (message: string) => void;
}

/**
 * Runs the service: in the primary, forks and supervises `options.workers` workers and
 * resolves with the exit code once all have stopped (0 when every worker stopped
 * gracefully); in a worker (the same program, forked), runs one server until the primary
 * stops it.
 *
 * @example process.exitCode = await runCluster({ port: 8787 }, { workers: 2, onListening: console.log });
 */
export function runCluster(server: StartOptions, options: ClusterOptions): Promise<number> {
  if (!Number.isSafeInteger(options.workers) || options.workers < 1) {
    throw new InvalidInputError(
      `workers must be a positive integer, got ${options.workers}`,
      "workers",
    );
  }
  return cluster.isPrimary ? supervise(options) : runWorker(server, options);
}

async function runWorker(server: StartOptions, options: ClusterOptions): Promise<number> {
  const signals = options.signals ?? ["SIGTERM", "SIGINT"];
  // The primary decides when to stop; a signal to the process group must not kill us.
  const ignore = (): void => {};
  for (const s of signals) process.on(s, ignore);
  let stop: () => void = () => {};
  const onMessage = (m: unknown): void => {
    if (isMessage(m, "stop") || isMessage(m, "cut")) stop();
  };
  process.on("message", onMessage);
  process.once("disconnect", () => stop());
  try {
    return await runServer(server, {
      signals: [],
      ...(options.graceMs !== undefined ? { graceMs: options.graceMs } : {}),
      onListening: (url) => process.send?.({ promptctx: "listening", url } satisfies ToPrimary),
      onStopHandle: (s) => {
        stop = s;
      },
    });
  } finally {
    process.off("message", onMessage);
    for (const s of signals) process.off(s, ignore);
    // The IPC channel would keep this process alive. Through the worker, the disconnect
    // counts as intended: the process then ends with its own exit code (not forced to 0).
    if (process.connected) cluster.worker?.disconnect();
  }
}

/** The young generation a worker gets (MB per semi-space) unless its flags set one. */
export const WORKER_SEMI_SPACE_MB = 32;

/**
 * The V8 flags of a worker: the primary's, plus a young generation of
 * {@link WORKER_SEMI_SPACE_MB} MB per semi-space unless the primary's flags or
 * `NODE_OPTIONS` already size it. Every request allocates its answer and its assembly's
 * short-lived objects; with V8's default nursery they are scavenged every few requests
 * and the survivors promoted, and those pauses made the tail of the latency (measured:
 * p99 33 → 25 ms at 10 connections with 2 workers on 2 cores).
 *
 * @example workerExecArgv([], undefined) // ["--max-semi-space-size=32"]
 */
export function workerExecArgv(execArgv: readonly string[], nodeOptions?: string): string[] {
  const sized = [...execArgv, ...(nodeOptions ?? "").split(/\s+/)].some((a) =>
    /^--(max|min)[-_]semi[-_]space[-_]size\b/.test(a),
  );
  return sized ? [...execArgv] : [...execArgv, `--max-semi-space-size=${WORKER_SEMI_SPACE_MB}`];
}

function supervise(options: ClusterOptions): Promise<number> {
  cluster.setupPrimary({ execArgv: workerExecArgv(process.execArgv, process.env.NODE_OPTIONS) });
  const signals = options.signals ?? ["SIGTERM", "SIGINT"];
  const live = new Set<Worker>();
  const listening = new Set<Worker>();
  let stopping = 0; // signals received
  let ready = false; // every worker has listened once
  let exitCode = 0;
  let url: string | null = null;
  return new Promise<number>((resolveExit) => {
    const send = (w: Worker, m: ToWorker) => {
      if (w.isConnected()) w.send(m);
    };
    const fork = (): void => {
      const w = cluster.fork();
      live.add(w);
      w.on("message", (m: unknown) => {
        if (!isMessage(m, "listening")) return;
        listening.add(w);
        url ??= (m as ToPrimary).url;
        if (stopping > 0) send(w, { promptctx: "stop" });
        else if (!ready && live.size < options.workers) {
          // The first worker listens: the options are good, start the others.
          for (let i = live.size; i < options.workers; i++) fork();
        } else if (!ready && listening.size === options.workers) {
          ready = true;
          options.onListening?.(url);
        }
      });
      w.on("exit", (code, signal) => onExit(w, code, signal));
    };
    const onExit = (w: Worker, code: number | null, signal: string | null): void => {
      live.delete(w);
      listening.delete(w);
      if (stopping === 0 && ready) {
        options.onEvent?.(`worker ${w.process.pid} exited (${signal ?? code}); restarting`);
        fork();
        return;
      }
      // A worker that dies before the cluster listens is a startup failure (the worker
      // said why): stop them all, with its exit code.
      if (code !== 0 || signal !== null) exitCode ||= code !== null && code > 0 ? code : 1;
      else if (stopping === 0) exitCode ||= 1;
      if (stopping === 0) onSignal();
      else if (live.size === 0) finish();
    };
    const onSignal = (): void => {
      stopping++;
      for (const w of live) send(w, { promptctx: stopping === 1 ? "stop" : "cut" });
      if (live.size === 0) finish();
    };
    const finish = (): void => {
      for (const s of signals) process.off(s, onSignal);
      resolveExit(exitCode);
    };
    for (const s of signals) process.on(s, onSignal);
    // One worker first: bad options fail once, with one error, before the others start.
    fork();
  });
}
