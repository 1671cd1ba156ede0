/**
 * `promptctx serve`: the HTTP service of spec 08 (POST /v1/select-memory, /v1/plan-prompt,
 * /v1/assemble; GET /healthz, /openapi.json; with `--record FILE`, GET /inspect). Prints `listening on URL` on stdout, one
 * JSON log line per request on stderr, and exits 0 after a graceful shutdown
 * (SIGTERM/SIGINT: in-flight requests finish, the store is closed).
 */
import type { Command } from "commander";
import { DEFAULT_BODY_LIMIT, DEFAULT_HOST, DEFAULT_PORT, runServer } from "../server/index.js";
import { intFlag } from "./assemble-cmd.js";
import { reportError } from "./io.js";
import { recorderFor } from "./record.js";

interface ServeFlags {
  port: string;
  host: string;
  workspace?: string;
  store?: string;
  bodyLimit: string;
  log: boolean;
  record?: string;
}

/** Registers `serve` on the program. */
export function registerServeCommand(program: Command, setExit: (code: number) => void): void {
  program
    .command("serve")
    .description(
      "run the HTTP service: POST /v1/select-memory, /v1/plan-prompt, /v1/assemble; GET /healthz, /openapi.json",
    )
    .option("--port <port>", "port to listen on (0 picks a free one)", String(DEFAULT_PORT))
    .option("--host <host>", "interface to bind (loopback by default)", DEFAULT_HOST)
    .option(
      "--workspace <dir>",
      "workspace root: assemble requests default to it and must stay inside it (default: the current directory)",
    )
    .option(
      "--store <path>",
      "shared memory store, opened once (default: WORKSPACE/.promptctx/memory.db when it exists)",
    )
    .option(
      "--body-limit <bytes>",
      "largest request body; larger gets 413",
      String(DEFAULT_BODY_LIMIT),
    )
    .option("--no-log", "no per-request JSON log lines on stderr")
    .option(
      "--record <file>",
      "append every /v1/assemble (request, result or error) to FILE; GET /inspect shows it",
    )
    .addHelpText(
      "after",
      "\nEvery request names its own clock (`now`): the service never reads it for results.\nSIGTERM or SIGINT stops accepting, lets in-flight requests finish, closes the store and exits 0.",
    )
    .action(async (flags: ServeFlags) => {
      try {
        const port = intFlag(flags.port, "--port") as number;
        const bodyLimit = intFlag(flags.bodyLimit, "--body-limit") as number;
        const recorder = recorderFor(flags.record);
        setExit(
          await runServer(
            {
              port,
              host: flags.host,
              bodyLimit,
              logger: flags.log,
              ...(flags.workspace !== undefined ? { workspace: flags.workspace } : {}),
              ...(flags.store !== undefined ? { store: flags.store } : {}),
              ...(recorder !== null ? { recorder } : {}),
            },
            { onListening: (url) => process.stdout.write(`listening on ${url}\n`) },
          ),
        );
      } catch (err) {
        setExit(reportError(err, "serve"));
      }
    });
}
