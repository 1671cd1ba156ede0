/**
 * `promptctx assemble`: the main job over a real workspace, and `promptctx demo`, the same
 * job on the bundled example workspace with a store created in a temporary directory.
 */
import { existsSync } from "node:fs";
import { homedir } from "node:os";
import { join, resolve } from "node:path";
import { type Command, Option } from "commander";
import type { RendererName } from "../render/index.js";
import type { TokenizerName } from "../tokens/index.js";
import type { AssembleRecordRequest } from "../workspace/index.js";
// The modules themselves, not the stage's index: the chat loop it also exports is not needed.
import { storeTarget } from "../workspace/record/assemble-runner.js";
import { assemblyJson, formatAssembly, runRecorded } from "./assembly.js";
import { rendererOption, tokenizerOption } from "./choices.js";
import { hintLines } from "./hints.js";
import {
  budgetCharsFlag,
  budgetCharsOption,
  EXIT,
  formerBudgetOption,
  intFlag,
  reportError,
} from "./io.js";
import { createStoreIfAbsent } from "./new-store.js";
import { nowFlag } from "./now-flag.js";
import type { TableStyle } from "./table.js";
import { stdoutStyle } from "./terminal.js";
import { type SetExit, summaryOf } from "./verbs.js";

/**
 * Output formats of `assemble`: `text` (tables + prompt), `json` ({@link assemblyJson}),
 * `anthropic` / `openai` (a ready request body: provider-format.ts).
 */
export const ASSEMBLE_FORMATS = ["text", "json", "anthropic", "openai"] as const;

interface AssembleFlags {
  workspace: string;
  query: string;
  mode?: string;
  user?: string;
  tokenizer?: TokenizerName;
  model?: string;
  budgetChars?: string;
  budget?: string;
  budgetTokens?: string;
  now?: string;
  format: (typeof ASSEMBLE_FORMATS)[number];
  json?: boolean;
  store?: string;
  cwd?: string;
  renderer?: RendererName;
  userFiles: boolean;
  wide?: boolean;
  record?: string;
}

// User-level instruction files that exist (docs/sources.md): ~/.config/promptctx/AGENTS.md, ~/.claude/CLAUDE.md.
function userInstructionFiles(home: string): string[] {
  return [join(home, ".config/promptctx/AGENTS.md"), join(home, ".claude/CLAUDE.md")].filter((p) =>
    existsSync(p),
  );
}

/** The recorded request of `assemble`: the flags resolved (absolute paths, the clock pinned). */
function assembleRequest(flags: AssembleFlags, home: string): AssembleRecordRequest {
  const budgetChars = budgetCharsFlag(flags);
  const budgetTokens = intFlag(flags.budgetTokens, "--budget-tokens");
  return {
    workspace: resolve(flags.workspace),
    query: flags.query,
    now: nowFlag(flags.now, () => new Date()),
    ...(flags.mode !== undefined ? { mode: flags.mode } : {}),
    ...(flags.user !== undefined ? { user: flags.user } : {}),
    ...(flags.tokenizer !== undefined ? { tokenizer: flags.tokenizer } : {}),
    ...(flags.model !== undefined ? { model: flags.model } : {}),
    ...(budgetChars !== undefined ? { budgetChars } : {}),
    ...(budgetTokens !== undefined ? { budgetTokens } : {}),
    ...(flags.store !== undefined ? { store: { path: storeTarget(flags.store) } } : {}),
    ...(flags.cwd !== undefined ? { cwd: resolve(flags.cwd) } : {}),
    ...(flags.renderer !== undefined ? { renderer: flags.renderer } : {}),
    ...(flags.userFiles ? { userFiles: userInstructionFiles(home), home } : {}),
  };
}

async function runAssemble(flags: AssembleFlags, style: TableStyle): Promise<number> {
  // The recorder (and the replay runners it checks requests with) loads only for --record.
  const recorder =
    flags.record === undefined ? null : (await import("./record.js")).recorderFor(flags.record);
  if (flags.store !== undefined) await createStoreIfAbsent(flags.store, "assemble");
  const out = await runRecorded(assembleRequest(flags, homedir()), recorder);
  if (flags.format === "anthropic" || flags.format === "openai") {
    const { providerRequestJson } = await import("./provider-format.js");
    const body = providerRequestJson(out, flags.format, flags.query, flags.model);
    process.stdout.write(`${body.json}\n`);
    // The body goes to the provider as it is: its hints go to stderr.
    for (const h of body.hints) process.stderr.write(`promptctx assemble: ${hintLines([h])}`);
    return EXIT.ok;
  }
  process.stdout.write(
    flags.format === "json" ? `${assemblyJson(out)}\n` : formatAssembly(out, style),
  );
  return EXIT.ok;
}

/** Registers `assemble` on the program. */
export function registerAssembleCommand(program: Command, setExit: SetExit): void {
  program
    .command("assemble")
    .description(summaryOf("assemble"))
    .requiredOption(
      "--workspace <dir>",
      "workspace directory (reads .promptctx/config.json, skills, kb, memory.db)",
    )
    .requiredOption("--query <text>", "the user's query for this turn")
    .option("--mode <mode>", "schema mode: chat, tool, rag, react (default: config, else react)")
    .option("--user <scope>", "user scope (default: config `user`)")
    .addOption(tokenizerOption().conflicts("model"))
    .option("--model <name>", "pick the tokenizer from a model name (gpt-4o, gpt-4, claude-…)")
    .addOption(budgetCharsOption("global char budget (default: config, else 12000)"))
    .addOption(formerBudgetOption())
    .option("--budget-tokens <n>", "global token budget (default: config, else none)")
    .option(
      "--now <iso>",
      "clock for recency and age filters (default: the current time); pin it to replay",
    )
    .addOption(new Option("--json", "same as --format json").conflicts("format"))
    .addOption(
      new Option(
        "--format <format>",
        "output: text, json, or a request body for anthropic (Messages) / openai (Chat Completions); model from --model, default claude-sonnet-4-6 / gpt-4o",
      )
        .choices([...ASSEMBLE_FORMATS])
        .default("text"),
    )
    .option(
      "--store <path|url>",
      "memory store: an SQLite file or postgres://… (default: WORKSPACE/.promptctx/memory.db)",
    )
    .option(
      "--cwd <path>",
      "where the instruction-file walk starts (default: config cwd, else the workspace)",
    )
    .addOption(rendererOption())
    .option("--no-user-files", "ignore ~/.config/promptctx/AGENTS.md and ~/.claude/CLAUDE.md")
    .option(
      "--wide",
      "tables and text at full width (default: fitted to the terminal, else COLUMNS, else 80)",
    )
    .option("--record <file>", "append the request and its result to FILE as one JSON line")
    .action(async (flags: AssembleFlags) => {
      try {
        const format = flags.json ? "json" : flags.format;
        setExit(await runAssemble({ ...flags, format }, stdoutStyle(flags.wide)));
      } catch (err) {
        setExit(reportError(err, "assemble"));
      }
    });
}
