/**
 * `promptctx inspect [FILE] [--workspace DIR] [--port P]`: the inspector page
 * (docs/inspector.md) on the service's Fastify app, bound to 127.0.0.1 by default. With
 * FILE it shows the recording turn by turn (read again at every page load); without, one
 * assembly of the workspace for `--query` at `--now`.
 */
import { resolve } from "node:path";
import type { Command } from "commander";
import { toErrorObject } from "../errors/index.js";
import { DEFAULT_HOST, type InspectSource, recordingSource, runServer } from "../server/index.js";
import {
  type AssembleRecordRequest,
  type ParsedLine,
  parseRecording,
  RECORD_VERSION,
  runAssembleRequest,
  toRecordResponse,
} from "../workspace/index.js";
import { collectHosts, intFlag, readRecordingFile, reportError } from "./io.js";
import { nowFlag } from "./now-flag.js";
import { recordedAt } from "./record.js";
import { summaryOf } from "./verbs.js";

/** Default port of `promptctx inspect` (`serve` uses 8787). */
export const INSPECT_PORT = 8788;

interface InspectFlags {
  workspace?: string;
  port: string;
  host: string;
  query: string;
  now?: string;
  allowHost: string[];
}

/** One assembly of the workspace as a one-line recording (its error object when it fails). */
async function assemblySource(flags: InspectFlags): Promise<InspectSource> {
  const request: AssembleRecordRequest = {
    workspace: resolve(flags.workspace ?? "."),
    query: flags.query,
    now: nowFlag(flags.now, () => new Date()),
  };
  let response: ParsedLine["response"];
  try {
    response = toRecordResponse(await runAssembleRequest(request, process.cwd()));
  } catch (err) {
    response = toRecordResponse(toErrorObject(err));
  }
  const line: ParsedLine = {
    recordVersion: RECORD_VERSION,
    at: recordedAt(),
    kind: "assemble",
    request: { ...request },
    response,
    line: 0,
  };
  const title = `${request.workspace} · ${JSON.stringify(request.query)}`;
  return { title, load: async () => [line] };
}

async function runInspect(file: string | undefined, flags: InspectFlags): Promise<number> {
  const port = intFlag(flags.port, "--port") as number;
  let inspect: InspectSource;
  if (file !== undefined) {
    const path = resolve(file);
    // Checked now, so a bad file fails with exit 2 before anything listens.
    parseRecording(await readRecordingFile(path), { anyKind: true });
    inspect = recordingSource(path);
  } else {
    inspect = await assemblySource(flags);
  }
  return runServer(
    {
      port,
      host: flags.host,
      allowHosts: flags.allowHost,
      logger: false,
      inspect,
      ...(flags.workspace !== undefined ? { workspace: flags.workspace } : {}),
    },
    { onListening: (url) => process.stdout.write(`inspector on ${url}/inspect\n`) },
  );
}

/** Registers `inspect` on the program. */
export function registerInspectCommand(program: Command, setExit: (code: number) => void): void {
  program
    .command("inspect")
    .description(summaryOf("inspect"))
    .argument("[file]", "a recording written by --record (default: assemble --workspace once)")
    .option("--workspace <dir>", "workspace: assembled when no FILE is given; the service's root")
    .option("--port <port>", "port to listen on (0 picks a free one)", String(INSPECT_PORT))
    .option("--host <host>", "interface to bind (loopback by default)", DEFAULT_HOST)
    .option(
      "--allow-host <name>",
      "also answer requests whose Host is NAME or NAME:PORT (repeatable; required to bind beyond loopback)",
      collectHosts,
      [],
    )
    .option("--query <text>", "without FILE: the query to assemble", "")
    .option("--now <iso>", "without FILE: the clock (default: the current time)")
    .addHelpText(
      "after",
      "\nPrints `inspector on URL` and serves until SIGINT or SIGTERM. The page loads nothing from the network.\nOnly requests whose Host is 127.0.0.1, localhost or [::1] with the bound port (or an\n--allow-host NAME) are answered: another page cannot read the recording by DNS rebinding.",
    )
    .action(async (file: string | undefined, flags: InspectFlags) => {
      try {
        setExit(await runInspect(file, flags));
      } catch (err) {
        setExit(reportError(err, "inspect"));
      }
    });
}
