/**
 * Starting and stopping the service: listen, then on SIGTERM/SIGINT stop accepting, let
 * in-flight requests finish, close the shared store and report the exit code.
 */
import type { AddressInfo } from "node:net";
import type { FastifyInstance } from "fastify";
import { InvalidInputError, nodeErrorCode } from "../errors/index.js";
import { buildServer, type ServerOptions } from "./app.js";
import { isLoopbackHost } from "./host-guard.js";

/** Default port of `promptctx serve`. */
export const DEFAULT_PORT = 8787;
/** Default host: loopback only. */
export const DEFAULT_HOST = "127.0.0.1";
/** How long in-flight requests may take to finish after a shutdown signal. */
export const DEFAULT_GRACE_MS = 10_000;

/** Options of {@link startServer}. */
export interface StartOptions extends ServerOptions {
  /** Port (default 8787; 0 picks a free one). */
  port?: number;
  /**
   * Interface to bind (default 127.0.0.1). Another than loopback (`0.0.0.0`, a LAN
   * address) needs `allowHosts`: the names clients reach the service by.
   */
  host?: string;
}

/** A listening server. */
export interface RunningServer {
  app: FastifyInstance;
  /** `http://HOST:PORT` */
  url: string;
  port: number;
  /** Stops accepting, waits for in-flight requests, closes the shared store it opened. */
  close(): Promise<void>;
}

/**
 * Builds the app and listens.
 *
 * @example const s = await startServer({ port: 0, workspace: "examples/workspace" }); await s.close();
 */
export async function startServer(options: StartOptions = {}): Promise<RunningServer> {
  const port = options.port ?? DEFAULT_PORT;
  if (!Number.isInteger(port) || port < 0 || port > 65535) {
    throw new InvalidInputError(`port must be an integer in [0, 65535], got ${port}`, "port");
  }
  const host = options.host ?? DEFAULT_HOST;
  if (!isLoopbackHost(host) && (options.allowHosts ?? []).length === 0) {
    throw new InvalidInputError(
      `binding ${host} (not loopback) needs the Host names clients use: --allow-host NAME (allowHosts)`,
      "allowHosts",
    );
  }
  const app = await buildServer(options);
  try {
    await app.listen({ port, host });
  } catch (err) {
    await app.close();
    const code = nodeErrorCode(err);
    throw new InvalidInputError(
      `cannot listen on ${host}:${port}${code === undefined ? "" : ` (${code})`}`,
      "port",
    );
  }
  const address = app.server.address() as AddressInfo;
  const shownHost = address.family === "IPv6" ? `[${address.address}]` : address.address;
  return {
    app,
    url: `http://${shownHost}:${address.port}`,
    port: address.port,
    close: () => app.close(),
  };
}

/** Options of {@link runServer}. */
export interface RunOptions {
  /** Called once listening, with the URL (the CLI prints `listening on URL`). */
  onListening?: (url: string) => void;
  /** Signals that shut the server down (default SIGTERM, SIGINT). */
  signals?: readonly NodeJS.Signals[];
  /** See {@link DEFAULT_GRACE_MS}; after it, open connections are cut and the code is 1. */
  graceMs?: number;
  /**
   * Receives the function that asks for a shutdown as a signal would (a cluster worker is
   * stopped by its primary this way); a second call cuts open connections at once.
   */
  onStopHandle?: (stop: () => void) => void;
}

/**
 * Runs the service until a shutdown signal; resolves with the exit code: 0 after a
 * graceful shutdown, 1 when in-flight requests had to be cut or closing failed. A second
 * signal cuts open connections at once.
 *
 * @example process.exitCode = await runServer({ port: 8787 }, { onListening: console.log });
 */
export async function runServer(options: StartOptions, run: RunOptions = {}): Promise<number> {
  const running = await startServer(options);
  run.onListening?.(running.url);
  const signals = run.signals ?? ["SIGTERM", "SIGINT"];
  const graceMs = run.graceMs ?? DEFAULT_GRACE_MS;
  return new Promise<number>((resolveExit) => {
    let stopping = false;
    let forced = false;
    const cut = (): void => {
      forced = true;
      running.app.server.closeAllConnections();
    };
    const onSignal = (signal: NodeJS.Signals | "stop"): void => {
      if (stopping) {
        cut();
        return;
      }
      stopping = true;
      running.app.log.info({ signal }, "shutting down: finishing in-flight requests");
      const timer = setTimeout(cut, graceMs);
      timer.unref();
      running.close().then(
        () => finish(timer, forced ? 1 : 0),
        (err: unknown) => {
          running.app.log.error({ err }, "shutdown failed");
          finish(timer, 1);
        },
      );
    };
    const finish = (timer: NodeJS.Timeout, code: number): void => {
      clearTimeout(timer);
      for (const s of signals) process.off(s, onSignal);
      running.app.log.info({ code }, "stopped");
      resolveExit(code);
    };
    for (const s of signals) process.on(s, onSignal);
    run.onStopHandle?.(() => onSignal("stop"));
  });
}
