/**
 * The `promptctx` command. Each verb is a thin edge over the library: parse flags, read
 * input, call a pure stage, print JSON or a table, exit 0 / 2 (invalid input) / 3
 * (prompt_budget_exceeded). Only the verb a command line names is loaded (registry.ts).
 */
import { Command, CommanderError, Option } from "commander";
import { EXIT, reportError } from "./io.js";
import { VERB_LOADERS } from "./registry.js";
import { type SetExit, VERBS, type Verb } from "./verbs.js";

function newProgram(): Command {
  return new Command("promptctx")
    .description("Deterministic, budgeted, explainable context assembly for LLM agents")
    .exitOverride()
    .showHelpAfterError("(run with --help for usage)");
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
    } else {
      code = reportError(err, "promptctx");
    }
  }
  process.exitCode = code;
}
