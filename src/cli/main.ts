/**
 * The `promptctx` command. Each verb is a thin edge over the library: parse flags, read
 * input, call a pure stage, print JSON or a table, exit 0 / 2 (invalid input) / 3
 * (prompt_budget_exceeded).
 */
import { Command, CommanderError, Option } from "commander";
import { TOKENIZER_NAMES } from "../tokens/index.js";
import { loadWorkspaceConfig, WORKSPACE_BUDGET_CHARS } from "../workspace/index.js";
import {
  assemblyJson,
  exampleWorkspace,
  formatAssembly,
  registerAssembleCommand,
  runWorkspaceDemo,
} from "./assemble-cmd.js";
import { registerChatCommand } from "./chat/index.js";
import { registerCheckDraftCommand } from "./check-draft-cmd.js";
import { budgetFromEnv, formatDemo, runDemo } from "./demo.js";
import { EXIT, reportError } from "./io.js";
import {
  planConversationHandler,
  planPromptHandler,
  runJsonVerb,
  selectMemoryHandler,
} from "./json-verbs.js";
import { registerMemoryCommands } from "./memory-cmd.js";
import { Repl, type ReplFlags, runRepl } from "./repl.js";
import { registerServeCommand } from "./serve-cmd.js";
import { tableStyle } from "./table.js";

type SetExit = (code: number) => void;

/** `select-memory`, `plan-prompt` and `plan-conversation`: JSON request in, JSON response out. */
function registerJsonVerbs(program: Command, setExit: SetExit): void {
  program
    .command("select-memory")
    .description("select recalled memories for a prompt (spec 02): JSON request in, plan out")
    .option("--input <file>", "request file (default: stdin)")
    .option("--jsonl", "one request per line, one response or error object per line")
    .action(async (opts: { input?: string; jsonl?: boolean }) => {
      setExit(await runJsonVerb("select-memory", selectMemoryHandler, opts));
    });

  program
    .command("plan-prompt")
    .description("plan a system prompt under a budget (spec 03): JSON request in, plan out")
    .option("--input <file>", "request file (default: stdin)")
    .option("--jsonl", "one request per line, one response or error object per line")
    .action(async (opts: { input?: string; jsonl?: boolean }) => {
      setExit(await runJsonVerb("plan-prompt", planPromptHandler, opts));
    });

  program
    .command("plan-conversation")
    .description(
      "plan a conversation's messages under a token budget (spec 09): JSON request in, plan out",
    )
    .option("--input <file>", "request file (default: stdin)")
    .option("--jsonl", "one request per line, one response or error object per line")
    .action(async (opts: { input?: string; jsonl?: boolean }) => {
      setExit(await runJsonVerb("plan-conversation", planConversationHandler, opts));
    });
}

interface DemoFlags {
  tokenizer: string;
  json?: boolean;
  wide?: boolean;
  segments?: boolean;
  renderer?: "en" | "zh-CN" | "tagged";
}

/** Runs `demo`: the example workspace, or the offline ten-segment fixture with `--segments`. */
async function runDemoCommand(opts: DemoFlags): Promise<number> {
  try {
    if (opts.segments) {
      const budgetChars = budgetFromEnv(process.env.PROMPT_BUDGET_CHARS, 12000);
      const result = runDemo({ budgetChars, tokenizer: opts.tokenizer });
      process.stdout.write(
        opts.json ? `${JSON.stringify(result)}\n` : formatDemo(result, tableStyle(opts.wide)),
      );
    } else {
      const config = await loadWorkspaceConfig(exampleWorkspace());
      const fallback = config.budgets?.chars ?? WORKSPACE_BUDGET_CHARS;
      const out = await runWorkspaceDemo({
        budgetChars: budgetFromEnv(process.env.PROMPT_BUDGET_CHARS, fallback),
        tokenizer: opts.tokenizer,
        ...(opts.renderer ? { renderer: opts.renderer } : {}),
      });
      process.stdout.write(
        opts.json ? `${assemblyJson(out)}\n` : formatAssembly(out, tableStyle(opts.wide)),
      );
    }
    return EXIT.ok;
  } catch (err) {
    return reportError(err, "demo");
  }
}

function registerDemoCommand(program: Command, setExit: SetExit): void {
  program
    .command("demo")
    .description(
      "run the main job on the bundled example workspace with a temporary memory store (no API key, no network)",
    )
    .addOption(
      new Option("--tokenizer <name>", "token counter")
        .default("estimate")
        .choices([...TOKENIZER_NAMES]),
    )
    .addOption(new Option("--renderer <name>", "slot renderer").choices(["en", "zh-CN", "tagged"]))
    .option("--json", "print {prompt, manifest, memoryPlan, segmentPlan} as JSON")
    .option("--wide", "tables at full width (default: fitted to the terminal, 100 when piped)")
    .option(
      "--segments",
      "the offline ten-segment fixture instead: six recall candidates and the spec 03 planner",
    )
    .addHelpText(
      "after",
      "\nEnvironment:\n  PROMPT_BUDGET_CHARS  tighten the total prompt budget (non-negative integer)",
    )
    .action(async (opts: DemoFlags) => {
      setExit(await runDemoCommand(opts));
    });
}

/** Runs `repl` on the process's streams. */
async function runReplCommand(opts: ReplFlags): Promise<number> {
  let repl: Repl;
  try {
    repl = new Repl(opts, tableStyle(opts.wide));
  } catch (err) {
    return reportError(err, "repl");
  }
  return runRepl(repl, {
    input: process.stdin,
    output: process.stdout,
    interactive: Boolean(process.stdin.isTTY),
    color: tableStyle().color,
    fd: 0,
  });
}

function registerReplCommand(program: Command, setExit: SetExit): void {
  program
    .command("repl")
    .description(
      "an interactive runtime session (spec 05): fire events, see what was reassembled (commands from stdin; type help)",
    )
    .addOption(
      new Option("--renderer <name>", "slot renderer")
        .default("en")
        .choices(["en", "zh-CN", "tagged"]),
    )
    .addOption(
      new Option("--tokenizer <name>", "token counter")
        .default("estimate")
        .choices(["estimate", "o200k_base", "cl100k_base", "claude_estimate"]),
    )
    .option("--budget <chars>", "global char budget (default: the schema's, 2400)")
    .option(
      "--mode <mode>",
      "initial schema mode: chat, tool, rag, react (others fall back to chat)",
      "chat",
    )
    .option("--wide", "tables at full width (default: fitted to the terminal, 100 when piped)")
    .addHelpText(
      "after",
      "\nReads one command per line until quit, exit or end of input; the prompt `promptctx> ` shows only on a terminal.\nThe clock starts at 2026-11-30T09:00:00Z and advances one minute per reassembly, so a script replays byte for byte.",
    )
    .action(async (opts: ReplFlags) => {
      setExit(await runReplCommand(opts));
    });
}

/** Builds the command tree; `setExit` receives each verb's exit code. */
export function buildProgram(setExit: SetExit): Command {
  const program = new Command("promptctx")
    .description("Deterministic, budgeted, explainable context assembly for LLM agents")
    .exitOverride()
    .showHelpAfterError("(run with --help for usage)");
  // Registration order is the order `--help` lists the verbs in.
  registerJsonVerbs(program, setExit);
  registerDemoCommand(program, setExit);
  registerAssembleCommand(program, setExit);
  registerMemoryCommands(program, setExit);
  registerServeCommand(program, setExit);
  registerCheckDraftCommand(program, setExit);
  registerChatCommand(program, setExit);
  registerReplCommand(program, setExit);
  return program;
}

/**
 * Runs the CLI with `argv` (as in `process.argv`) and sets `process.exitCode`.
 *
 * @example await main(["node", "promptctx", "demo"]);
 */
export async function main(argv: string[]): Promise<void> {
  let code: number = EXIT.ok;
  const program = buildProgram((c) => {
    code = c;
  });
  try {
    await program.parseAsync(argv);
  } catch (err) {
    if (err instanceof CommanderError) {
      // --help and --version are successes; every other usage error is invalid input.
      code = err.exitCode === 0 ? EXIT.ok : EXIT.invalid;
    } else {
      code = reportError(err, "promptctx");
    }
  }
  process.exitCode = code;
}
