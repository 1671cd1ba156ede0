/**
 * `promptctx replay FILE [--json]`: reruns every line of a recording against the current
 * code and reports what changed. Exit 0 when nothing changed, 1 when something did, 2
 * when the file cannot be read or is not a valid recording.
 */
import { dirname, resolve } from "node:path";
import type { Command } from "commander";
import { formatReplay, parseRecording, replayRecording } from "../workspace/index.js";
import { EXIT, readRecordingFile, reportError } from "./io.js";
import { fitText } from "./table.js";
import { stdoutStyle } from "./terminal.js";
import { summaryOf } from "./verbs.js";

/** Exit code of a replay in which something changed. */
export const EXIT_CHANGED = 1;

async function runReplay(file: string, opts: ReplayFlags): Promise<number> {
  const path = resolve(file);
  const lines = parseRecording(await readRecordingFile(path));
  const report = await replayRecording(lines, dirname(path));
  process.stdout.write(
    opts.json === true
      ? `${JSON.stringify({ file, ...report })}\n`
      : fitText(formatReplay(report), stdoutStyle(opts.wide)),
  );
  return report.changed === 0 ? EXIT.ok : EXIT_CHANGED;
}

interface ReplayFlags {
  json?: boolean;
  wide?: boolean;
}

/** Registers `replay` on the program. */
export function registerReplayCommand(program: Command, setExit: (code: number) => void): void {
  program
    .command("replay")
    .description(summaryOf("replay"))
    .argument("<file>", "a recording written by --record")
    .option("--json", "print the report as one JSON object")
    .option(
      "--wide",
      "lines at full length (default: fitted to the terminal, else COLUMNS, else 80)",
    )
    .addHelpText(
      "after",
      "\nExit codes: 0 nothing changed, 1 something changed, 2 unreadable or invalid recording.\nRelative paths in a line resolve against the recording's directory.",
    )
    .action(async (file: string, opts: ReplayFlags) => {
      try {
        setExit(await runReplay(file, opts));
      } catch (err) {
        // Never 1 (that means "changed"): a failure of replay itself is 2.
        const code = reportError(err, "replay");
        setExit(code === EXIT_CHANGED ? EXIT.invalid : code);
      }
    });
}
