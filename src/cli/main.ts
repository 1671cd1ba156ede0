/**
 * The `promptctx` command. Each verb is a thin edge over the library: parse flags, read
 * input, call a pure stage, print JSON or a table, exit 0 / 2 (invalid input) / 3
 * (prompt_budget_exceeded). Only the verb a command line names is loaded (registry.ts).
 */
import { readFileSync } from "node:fs";
import { Command, CommanderError, Option } from "commander";
import { InvalidInputError } from "../errors/index.js";
import { EXIT, reportError } from "./io.js";
import { VERB_LOADERS } from "./registry.js";
import { type SetExit, VERBS, type Verb } from "./verbs.js";

/** The package's version, from its package.json. */
function packageVersion(): string {
  const pkg = readFileSync(new URL("../../package.json", import.meta.url), "utf8");
  return (JSON.parse(pkg) as { version: string }).version;
}

function newProgram(): Command {
  return (
    new Command("promptctx")
      .description("Deterministic, budgeted, explainable context assembly for LLM agents")
      // Read only when asked for: most runs never need package.json.
      .option("-V, --version", "print the version")
      .on("option:version", () => {
        process.stdout.write(`${packageVersion()}\n`);
        throw new CommanderError(0, "commander.version", "version");
      })
      .exitOverride()
      // Usage errors are reported by `main`, in the error format of every other error.
      .configureOutput({ outputError: () => {} })
  );
}

/** Help shows a default as the user types it (`8787`, not `"8787"`), in every verb. */
function unquoteDefaults(command: Command): void {
  for (const option of command.options) {
    if (typeof option.defaultValue === "string" && option.defaultValueDescription === undefined) {
      option.defaultValueDescription = option.defaultValue;
    }
  }
  for (const sub of command.commands) unquoteDefaults(sub);
}

// Commander's usage errors that are not errors (help, version) or already shown (no verb).
const NOT_REPORTED = new Set(["commander.helpDisplayed", "commander.version", "commander.help"]);

/**
 * A commander usage error (unknown option, missing argument, bad value) as invalid input:
 * its message without commander's `error: ` prefix, on one line, and the flag it names as
 * the path.
 */
function usageError(err: CommanderError, verb: string): InvalidInputError {
  const text = err.message
    .replace(/^error: /, "")
    .replace(/\s*\n\s*/g, " ")
    .trim();
  const flag = /'(-{0,2}[A-Za-z][\w-]*)/.exec(text)?.[1] ?? null;
  const help = verb === "promptctx" ? "promptctx --help" : `promptctx ${verb} --help`;
  return new InvalidInputError(`${text} (see \`${help}\`)`, flag);
}

/**
 * A closed stdout (`promptctx demo | head -1`) ends the process quietly: what was wanted
 * has been read. Set once, for every verb.
 */
function exitQuietlyOnClosedPipe(): void {
  for (const stream of [process.stdout, process.stderr]) {
    stream.on("error", (err: NodeJS.ErrnoException) => {
      if (err.code !== "EPIPE") throw err;
      process.exit(typeof process.exitCode === "number" ? process.exitCode : EXIT.ok);
    });
  }
}

// A verb listed by `--help` without loading its module: the name, the summary, and a hidden
// option and its argument so that it is listed as `NAME [options] <arg>` like the real one.
function stubVerb(program: Command, verb: Verb): void {
  const stub = program.command(verb.name).description(verb.summary);
  if (verb.options) stub.addOption(new Option("--options").hideHelp());
  if (verb.argument !== undefined) stub.argument(verb.argument);
}

/**
 * Builds the command tree; `setExit` receives each verb's exit code. With `only`, the
 * verbs it names are loaded and the others are listed without being loaded (what `main`
 * does); without, every verb is loaded.
 */
export async function buildProgram(setExit: SetExit, only?: readonly string[]): Promise<Command> {
  const program = newProgram();
  // Registration order is the order `--help` lists the verbs in.
  for (const verb of VERBS) {
    if (only === undefined || only.includes(verb.name))
      (await VERB_LOADERS[verb.name]())(program, setExit);
    else stubVerb(program, verb);
  }
  unquoteDefaults(program);
  return program;
}

// The verbs a command line runs: its first word, or the one `help VERB` asks about.
function verbsOf(argv: readonly string[]): string[] {
  const [first, second] = argv.slice(2);
  if (first === "help" && second !== undefined) return [second];
  return first === undefined || first.startsWith("-") ? [] : [first];
}

/**
 * A verb runs once and exits, so zod's JIT (a function compiled with `new Function` for
 * each object schema, on its first parse) costs more than it saves: it is off, before the
 * verb's schemas are built, except for `serve`, a long-lived process parsing each request.
 * The parse results are the same either way.
 */
async function zodForVerbs(names: readonly string[]): Promise<void> {
  const loads = VERBS.filter((v) => names.includes(v.name));
  if (loads.length > 0 && !loads.some((v) => v.name === "serve")) {
    (await import("zod")).config({ jitless: true });
  }
}

/**
 * Runs the CLI with `argv` (as in `process.argv`) and sets `process.exitCode`.
 *
 * @example await main(["node", "promptctx", "demo"]);
 */
export async function main(argv: string[]): Promise<void> {
  exitQuietlyOnClosedPipe();
  let code: number = EXIT.ok;
  const names = verbsOf(argv);
  await zodForVerbs(names);
  const program = await buildProgram((c) => {
    code = c;
  }, names);
  try {
    await program.parseAsync(argv);
  } catch (err) {
    if (err instanceof CommanderError) {
      // --help and --version are successes; every other usage error is invalid input.
      code = err.exitCode === 0 ? EXIT.ok : EXIT.invalid;
      if (!NOT_REPORTED.has(err.code))
        reportError(usageError(err, names[0] ?? "promptctx"), names[0] ?? "promptctx");
    } else {
      code = reportError(err, "promptctx");
    }
  }
  process.exitCode = code;
}
