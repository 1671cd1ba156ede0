/**
 * `promptctx serve`: the HTTP service of docs/surfaces.md (the routes its summary lists;
 * with `--record FILE`, GET /inspect; `--workers N` runs N processes on one port). Prints `listening on URL` on stdout, one JSON log line per
 * request on stderr, and exits 0 after a graceful shutdown (SIGTERM/SIGINT: in-flight
 * requests finish, the store is closed). Bearer tokens come from the environment
 * (PROMPTCTX_TOKEN, PROMPTCTX_TOKENS, PROMPTCTX_TOKENS_FILE), read here, at the edge.
 */
import cluster from "node:cluster";
import { readFileSync } from "node:fs";
import type { Command } from "commander";
import { InvalidInputError } from "../errors/index.js";
import { GATE_MODES, type GateMode } from "../memory/index.js";
import {
  authFromEnv,
  DEFAULT_BODY_LIMIT,
  DEFAULT_HOST,
  DEFAULT_PORT,
  isLoopbackHost,
  runCluster,
  runServer,
  type StartOptions,
} from "../server/index.js";
import { collectHosts, intFlag, reportError } from "./io.js";
import { createStoreIfAbsent } from "./new-store.js";
import { recorderFor } from "./record.js";
import { type SetExit, summaryOf } from "./verbs.js";

interface ServeFlags {
  port: string;
  host: string;
  workspace?: string;
  store?: string;
  embedder?: string;
  bodyLimit: string;
  log: boolean;
  record?: string;
  workers: string;
  allowHost: string[];
  mcp: boolean;
  mcpUser?: string;
  memoryGate?: string;
}

/** `--memory-gate`: one of the gate modes, else invalid input naming the flag. */
function gateFlag(value: string): GateMode {
  if (!(GATE_MODES as readonly string[]).includes(value)) {
    throw new InvalidInputError(
      `--memory-gate must be one of ${GATE_MODES.join(", ")}`,
      "--memory-gate",
    );
  }
  return value as GateMode;
}

/** Registers `serve` on the program. */
export function registerServeCommand(program: Command, setExit: SetExit): void {
  program
    .command("serve")
    .description(summaryOf("serve"))
    .option("--port <port>", "port to listen on (0 picks a free one)", String(DEFAULT_PORT))
    .option("--host <host>", "interface to bind (loopback by default)", DEFAULT_HOST)
    .option(
      "--allow-host <name>",
      "also answer requests whose Host is NAME or NAME:PORT (repeatable; required to bind beyond loopback)",
      collectHosts,
      [],
    )
    .option(
      "--workspace <dir>",
      "workspace root: assemble requests default to it and must stay inside it (default: the current directory)",
    )
    .option(
      "--store <path|url>",
      "shared memory store, opened once: an SQLite file or postgres://… (default: WORKSPACE/.promptctx/memory.db when it exists)",
    )
    .option(
      "--embedder <spec>",
      "/v1/recall by meaning too over an SQLite store: embedded (offline encoder), openai:MODEL[:DIMENSIONS], none (default: PROMPTCTX_EMBEDDER, else none)",
    )
    .option(
      "--memory-gate <mode>",
      "takeover gate of memory writes: quarantine (hold, default) | reject (400 memory_rejected) | off (default: the workspace config's memory.gate)",
    )
    .option(
      "--body-limit <bytes>",
      "largest request body; larger gets 413",
      String(DEFAULT_BODY_LIMIT),
    )
    .option("--no-log", "no per-request JSON log lines on stderr")
    .option("--no-mcp", "no /mcp (the MCP server over streamable HTTP)")
    .option(
      "--mcp-user <scope>",
      "the user scope /mcp serves when the request's token has none (an open service, an unscoped token); without it such requests get 403 scope_required",
    )
    .option(
      "--record <file>",
      "append every /v1/assemble (request, result or error) to FILE; GET /inspect shows it",
    )
    .option(
      "--workers <n>",
      "server processes sharing the port (node:cluster); 1 runs in this process",
      "1",
    )
    .addHelpText(
      "after",
      "\nEvery request names its own clock (`now`; /v1/recall's `asOf` defaults to the server's and echoes it).\nSIGTERM or SIGINT stops accepting, lets in-flight requests finish, closes the store and exits 0\n(with --workers, the primary stops every worker that way).\n\nTokens (environment): PROMPTCTX_TOKEN=T (any scope), PROMPTCTX_TOKENS=T1:scope1,T2:scope2\nor PROMPTCTX_TOKENS_FILE=tokens.json ({\"T\": \"scope\"}): then every request needs\n`Authorization: Bearer T` (401 otherwise), and a scoped token reads and writes its scope only.\nWithout any, the service is open: keep it on loopback.\n\nHost check: only requests whose Host is 127.0.0.1, localhost or [::1] with the bound port\n(or an --allow-host NAME) are answered (421 host_not_allowed otherwise: no DNS rebinding);\na cross-origin request with a body (Origin not one of those, Sec-Fetch-Site: cross-site)\ngets 403 origin_not_allowed. Binding 0.0.0.0 or another non-loopback address needs --allow-host.\n\nMCP (docs/mcp.md): POST /mcp is the MCP server over streamable HTTP; its user scope is the\ntoken's, else --mcp-user's (403 scope_required without either). The same Host/Origin checks apply.",
    )
    .action(async (flags: ServeFlags) => {
      try {
        setExit(await runServe(flags));
      } catch (err) {
        setExit(reportError(err, "serve"));
      }
    });
}

/** `--embedder`, else a non-empty `PROMPTCTX_EMBEDDER`, else none (full-text recall). */
function embedderOf(flags: ServeFlags): { embedder?: string } {
  const env = process.env.PROMPTCTX_EMBEDDER;
  if (flags.embedder !== undefined) return { embedder: flags.embedder };
  return env !== undefined && env.trim() !== "" ? { embedder: env } : {};
}

/** Runs the service for the parsed flags (one process, or a cluster with `--workers`). */
async function runServe(flags: ServeFlags): Promise<number> {
  const port = intFlag(flags.port, "--port") as number;
  const bodyLimit = intFlag(flags.bodyLimit, "--body-limit") as number;
  const workers = intFlag(flags.workers, "--workers") as number;
  const auth = authFromEnv(process.env, (path) => readFileSync(path, "utf8"));
  // Said once: by the primary of a cluster, not again by each worker.
  if (auth === undefined && cluster.isPrimary && !isLoopbackHost(flags.host)) {
    process.stderr.write(
      `promptctx serve: warning: no PROMPTCTX_TOKEN: the service is open to anyone who reaches ${flags.host}\n`,
    );
  }
  if (flags.store !== undefined && cluster.isPrimary)
    await createStoreIfAbsent(flags.store, "serve");
  const recorder = recorderFor(flags.record);
  if (recorder !== null && workers > 1) {
    throw new InvalidInputError(
      "--record writes one file from one process: use it with --workers 1",
      "--record",
    );
  }
  const server: StartOptions = {
    port,
    host: flags.host,
    allowHosts: flags.allowHost,
    bodyLimit,
    logger: flags.log,
    ...(auth !== undefined ? { auth } : {}),
    ...(flags.mcp ? {} : { mcp: false }),
    ...(flags.mcpUser !== undefined ? { mcpUser: flags.mcpUser } : {}),
    ...(flags.workspace !== undefined ? { workspace: flags.workspace } : {}),
    ...(flags.store !== undefined ? { store: flags.store } : {}),
    ...embedderOf(flags),
    ...(flags.memoryGate !== undefined ? { memory: { gate: gateFlag(flags.memoryGate) } } : {}),
    ...(recorder !== null ? { recorder } : {}),
  };
  const onListening = (url: string) => process.stdout.write(`listening on ${url}\n`);
  if (workers === 1) return runServer(server, { onListening });
  return runCluster(server, {
    workers,
    onListening,
    onEvent: (m) => process.stderr.write(`promptctx serve: ${m}\n`),
  });
}
