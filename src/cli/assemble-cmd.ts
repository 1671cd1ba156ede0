/**
 * `promptctx assemble`: the main job over a real workspace, and `promptctx demo`, the same
 * job on the bundled example workspace with a store created in a temporary directory.
 */
import { existsSync, readFileSync } from "node:fs";
import { homedir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { type Command, Option } from "commander";
import { InvalidInputError, toErrorObject } from "../errors/index.js";
import { parseInstant } from "../text/index.js";
import { TOKENIZER_NAMES, type TokenizerName } from "../tokens/index.js";
import { runAssembleRequest, storeTarget } from "../workspace/record/assemble-runner.js";
// The modules themselves, not the stage's index: the chat loop it also exports is not needed.
import type { Recorder } from "../workspace/record/recorder.js";
import type { AssembleRecordRequest } from "../workspace/record/schema.js";
import type { WorkspaceAssembly } from "../workspace/workspace.js";
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
import type { TableStyle } from "./table.js";
import { assemblyReport } from "./tables.js";
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
  renderer?: "en" | "zh-CN" | "tagged";
  userFiles: boolean;
  wide?: boolean;
  record?: string;
}

/** `--now`, checked; the current time without it. */
export function nowFlag(value: string | undefined, clock: () => Date): string {
  if (value === undefined) return clock().toISOString();
  if (parseInstant(value) === null)
    throw new InvalidInputError(
      `--now must be an ISO-8601 timestamp, got ${JSON.stringify(value)}`,
      "--now",
    );
  return value;
}

// User-level instruction files that exist (docs/sources.md): ~/.config/promptctx/AGENTS.md, ~/.claude/CLAUDE.md.
function userInstructionFiles(home: string): string[] {
  return [join(home, ".config/promptctx/AGENTS.md"), join(home, ".claude/CLAUDE.md")].filter((p) =>
    existsSync(p),
  );
}

/** The people's view: layers, both decision tables, notes, then the prompt, fitted to the style's width. */
export function formatAssembly(out: WorkspaceAssembly, style: TableStyle): string {
  const skills = out.workspace.skills.selection;
  const notes = [
    skills.abstained
      ? "skills: abstained (no trigger matched)"
      : `skills: ${skills.matched.map((m) => `${m.name} (${m.reasons.join(", ")})`).join("; ")}`,
    ...out.workspace.instructions.issues.map(
      (i) => `instructions: ${i.kind} ${i.path}: ${i.detail}`,
    ),
    ...out.workspace.skills.catalog.invalid.map((i) => `skills: invalid ${i.path}: ${i.reason}`),
    ...out.workspace.kbIssues.map((i) => `kb: ${i.file}:${i.line}: ${i.reason}`),
  ];
  return assemblyReport(out, notes, style);
}

/** The machines' view: exactly `{prompt, manifest, memoryPlan, segmentPlan}`. */
export function assemblyJson(out: WorkspaceAssembly): string {
  return JSON.stringify({
    prompt: out.prompt,
    manifest: out.manifest,
    memoryPlan: out.memoryPlan,
    segmentPlan: out.segmentPlan,
  });
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

/**
 * Runs a recorded-form request and appends it, with its assembly or its error object, to
 * the recording when there is one.
 */
export async function runRecorded(
  request: AssembleRecordRequest,
  recorder: Recorder | null,
): Promise<WorkspaceAssembly> {
  try {
    const out = await runAssembleRequest(request, process.cwd());
    recorder?.recordLine("assemble", request, out);
    return out;
  } catch (err) {
    recorder?.recordLine("assemble", request, toErrorObject(err));
    throw err;
  }
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

/** The bundled example workspace (shipped with the package). */
export function exampleWorkspace(): string {
  return resolve(dirname(fileURLToPath(import.meta.url)), "../../examples/workspace");
}

/** The demo's fixed inputs: same bytes on every machine. */
export const DEMO_QUERY = "add an index on invoices.created_at in a new migration";
export const DEMO_NOW = "2026-11-30T09:00:00Z";

/** Options of the workspace demo. */
export interface WorkspaceDemoOptions {
  budgetChars?: number;
  budgetTokens?: number;
  tokenizer?: TokenizerName;
  renderer?: "en" | "zh-CN" | "tagged";
}

/**
 * The demo's request: the example workspace, the fixed query and clock, and a store
 * seeded from the workspace's `memories.jsonl` (the line carries the memories, so a
 * replay rebuilds the same store).
 */
export function demoRequest(options: WorkspaceDemoOptions): AssembleRecordRequest {
  const root = exampleWorkspace();
  return {
    workspace: root,
    query: DEMO_QUERY,
    now: DEMO_NOW,
    store: { seed: { jsonl: readFileSync(join(root, "memories.jsonl"), "utf8"), now: DEMO_NOW } },
    ...(options.budgetChars !== undefined ? { budgetChars: options.budgetChars } : {}),
    ...(options.budgetTokens !== undefined ? { budgetTokens: options.budgetTokens } : {}),
    ...(options.tokenizer !== undefined ? { tokenizer: options.tokenizer } : {}),
    ...(options.renderer !== undefined ? { renderer: options.renderer } : {}),
  };
}

/**
 * Runs the main job on the example workspace with a fresh store imported from its
 * `memories.jsonl` into a temporary directory (removed afterwards); `recorder` gets the
 * line.
 *
 * @example const out = await runWorkspaceDemo({ budgetChars: 6000 });
 */
export function runWorkspaceDemo(
  options: WorkspaceDemoOptions,
  recorder: Recorder | null = null,
): Promise<WorkspaceAssembly> {
  return runRecorded(demoRequest(options), recorder);
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
    .addOption(
      new Option("--tokenizer <name>", "token counter")
        .choices([...TOKENIZER_NAMES])
        .conflicts("model"),
    )
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
    .addOption(new Option("--renderer <name>", "slot renderer").choices(["en", "zh-CN", "tagged"]))
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
