/**
 * CLI edges: reading requests, writing responses, and turning errors into the error
 * object (stdout), a one-line message (stderr) and an exit code — never a stack trace.
 */
import { readFile } from "node:fs/promises";
import { Option } from "commander";
import { InvalidInputError, nodeErrorCode, toErrorObject } from "../errors/index.js";

/** Exit codes of docs/surfaces.md. */
export const EXIT = { ok: 0, invalid: 2, budget: 3, internal: 1 } as const;

/** The exit code for a thrown value. */
export function exitCodeFor(err: unknown): number {
  const code = toErrorObject(err).error.code;
  if (code === "prompt_budget_exceeded") return EXIT.budget;
  if (code === "internal_error" || code === "connection_refused") return EXIT.internal;
  return EXIT.invalid;
}

/** Reads all of stdin as UTF-8. */
async function readStdin(): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString("utf8");
}

/** Reads the request text from `--input FILE` or stdin; an unreadable file is invalid input. */
export async function readInput(file: string | undefined): Promise<string> {
  if (file === undefined || file === "-") return readStdin();
  try {
    return await readFile(file, "utf8");
  } catch (err) {
    const reason = nodeErrorCode(err, "unreadable");
    throw new InvalidInputError(
      `cannot read input file ${JSON.stringify(file)} (${reason})`,
      "--input",
    );
  }
}

/** Parses JSON text; a syntax error is invalid input. */
export function parseJson(text: string, where = "input"): unknown {
  try {
    return JSON.parse(text);
  } catch (err) {
    const why = err instanceof Error ? err.message : "invalid JSON";
    throw new InvalidInputError(`${where} is not valid JSON: ${why}`);
  }
}

/** Writes the error object to stdout and one line to stderr; returns the exit code. */
export function reportError(err: unknown, verb: string): number {
  const obj = toErrorObject(err);
  process.stdout.write(`${JSON.stringify(obj)}\n`);
  const at = obj.error.path ? ` (at ${obj.error.path})` : "";
  process.stderr.write(`promptctx ${verb}: ${obj.error.code}: ${obj.error.message}${at}\n`);
  if (obj.error.code === "internal_error" && process.env.PROMPTCTX_DEBUG && err instanceof Error) {
    process.stderr.write(`${err.stack ?? err.message}\n`);
  }
  return exitCodeFor(err);
}

/** A non-negative integer flag, or a typed error naming the flag. */
export function intFlag(value: string | undefined, flag: string): number | undefined {
  if (value === undefined) return undefined;
  if (!/^\d+$/.test(value.trim())) {
    throw new InvalidInputError(
      `${flag} must be a non-negative integer, got ${JSON.stringify(value)}`,
      flag,
    );
  }
  return Number(value.trim());
}

/**
 * Commander's collector for a repeatable `--allow-host NAME` (`serve`, `inspect`).
 *
 * @example program.option("--allow-host <name>", "…", collectHosts, [])
 */
export function collectHosts(value: string, previous: string[]): string[] {
  return [...previous, value];
}

/** The char-budget flags of a verb: `--budget-chars`, or its former name `--budget`. */
export interface BudgetCharsFlags {
  budgetChars?: string;
  budget?: string;
}

/**
 * `--budget-chars <n>`, the name every verb uses for its char budget (add
 * {@link formerBudgetOption} next to it where `--budget` was the name).
 *
 * @example command.addOption(budgetCharsOption("total char budget"));
 */
export function budgetCharsOption(description: string): Option {
  return new Option("--budget-chars <n>", description);
}

/** `--budget`, the former name of `--budget-chars`: still read, no longer listed. */
export function formerBudgetOption(): Option {
  return new Option("--budget <chars>").hideHelp().conflicts("budgetChars");
}

/** The char budget of `--budget-chars` (or `--budget`), checked (a non-negative integer). */
export function budgetCharsFlag(flags: BudgetCharsFlags): number | undefined {
  return flags.budgetChars !== undefined
    ? intFlag(flags.budgetChars, "--budget-chars")
    : intFlag(flags.budget, "--budget");
}

/** Reads a recording file; an unreadable one is invalid input at `file`. */
export async function readRecordingFile(file: string): Promise<string> {
  try {
    return await readFile(file, "utf8");
  } catch (err) {
    const why = nodeErrorCode(err, "unreadable");
    throw new InvalidInputError(
      `cannot read the recording ${JSON.stringify(file)} (${why})`,
      "file",
    );
  }
}

/**
 * A command typed with the wrong arguments (the repl's commands): invalid input at
 * `command`, its message the usage line.
 *
 * @example if (args.length !== 1) usage("schema MODE");
 */
export function usage(text: string): never {
  throw new InvalidInputError(`usage: ${text}`, "command");
}
