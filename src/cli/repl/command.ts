/** `promptctx repl`: an interactive runtime session on the process's streams. */
import type { Command } from "commander";
import { rendererOption, tokenizerOption } from "../choices.js";
import { budgetCharsOption, formerBudgetOption, reportError } from "../io.js";
import { stdoutStyle } from "../terminal.js";
import { type SetExit, summaryOf } from "../verbs.js";
import { runRepl } from "./io.js";
import { Repl, type ReplFlags } from "./repl.js";

/** Runs `repl` on the process's streams. */
async function runReplCommand(opts: ReplFlags): Promise<number> {
  let repl: Repl;
  try {
    repl = new Repl(opts, stdoutStyle(opts.wide));
  } catch (err) {
    return reportError(err, "repl");
  }
  return runRepl(repl, {
    input: process.stdin,
    output: process.stdout,
    interactive: Boolean(process.stdin.isTTY),
    color: stdoutStyle().color,
    fd: 0,
  });
}

/** Registers `repl` on the program. */
export function registerReplCommand(program: Command, setExit: SetExit): void {
  program
    .command("repl")
    .description(summaryOf("repl"))
    .addOption(rendererOption("en"))
    .addOption(tokenizerOption("estimate"))
    .addOption(budgetCharsOption("global char budget (default: the schema's, 2400)"))
    .addOption(formerBudgetOption())
    .option(
      "--mode <mode>",
      "initial schema mode: chat, tool, rag, react (others fall back to chat)",
      "chat",
    )
    .option(
      "--wide",
      "tables and text at full width (default: fitted to the terminal, else COLUMNS, else 80)",
    )
    .addHelpText(
      "after",
      "\nReads one command per line until quit, exit or end of input; the prompt `promptctx> ` shows only on a terminal.\nThe clock starts at 2026-11-30T09:00:00Z and advances one minute per reassembly, so a script replays byte for byte.",
    )
    .action(async (opts: ReplFlags) => {
      setExit(await runReplCommand(opts));
    });
}
