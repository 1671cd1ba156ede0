/**
 * The JSON verbs (`select-memory`, `plan-prompt`, `plan-conversation`): one request → one response, or
 * `--jsonl` batches where each line is answered in order and a bad line never stops the
 * rest. Counters are pooled so a batch shares memoized counts.
 */
import type { Command } from "commander";
import { invalidFromZod, toErrorObject } from "../errors/index.js";
import type { SelectMemoryRequest } from "../memory/index.js";
import { type CounterPool, createCounterPool } from "../tokens/index.js";
import { EXIT, parseJson, readInput, reportError } from "./io.js";

/** A JSON verb: validates and answers one parsed request. */
export type JsonHandler = (request: unknown, pool: CounterPool) => unknown;

/** The JSON verbs. */
export type JsonVerb = "select-memory" | "plan-prompt" | "plan-conversation";

function tokenizerOf(request: unknown): unknown {
  return typeof request === "object" && request !== null && "tokenizer" in request
    ? (request as { tokenizer: unknown }).tokenizer
    : undefined;
}

/**
 * The handler of a JSON verb, with the one stage it answers from (each is imported only
 * when its verb runs).
 */
export async function jsonHandler(verb: JsonVerb): Promise<JsonHandler> {
  if (verb === "select-memory") {
    const { selectMemoryContext } = await import("../memory/index.js");
    // select-memory: spec 02 plan for one request.
    return (request, pool) => {
      const tokenCounter = pool.forRequest(tokenizerOf(request));
      return selectMemoryContext(
        request as SelectMemoryRequest,
        tokenCounter ? { tokenCounter } : {},
      );
    };
  }
  if (verb === "plan-prompt") {
    const { PlanPromptJsonRequestSchema, planPrompt } = await import("../plan/index.js");
    // plan-prompt: spec 03 plan; JSON callers get the JSON schema (no condition, builder).
    return (request, pool) => {
      const parsed = PlanPromptJsonRequestSchema.safeParse(request);
      if (!parsed.success) throw invalidFromZod(parsed.error);
      const tokenCounter = pool.forRequest(parsed.data.tokenizer);
      return planPrompt(parsed.data, tokenCounter ? { tokenCounter } : {});
    };
  }
  const { PlanConversationJsonRequestSchema, planConversation } = await import(
    "../conversation/index.js"
  );
  // plan-conversation: spec 09 plan for one request.
  return (request, pool) => {
    const parsed = PlanConversationJsonRequestSchema.safeParse(request);
    if (!parsed.success) throw invalidFromZod(parsed.error);
    const tokenCounter = pool.forRequest(parsed.data.tokenizer);
    return planConversation({ ...parsed.data, tokenizer: tokenCounter ?? parsed.data.tokenizer });
  };
}

const DESCRIPTIONS: Readonly<Record<JsonVerb, string>> = {
  "select-memory": "select recalled memories for a prompt (spec 02): JSON request in, plan out",
  "plan-prompt": "plan a system prompt under a budget (spec 03): JSON request in, plan out",
  "plan-conversation":
    "plan a conversation's messages under a token budget (spec 09): JSON request in, plan out",
};

/** Registers one JSON verb (`select-memory`, `plan-prompt`, `plan-conversation`). */
export function registerJsonVerb(
  program: Command,
  setExit: (code: number) => void,
  verb: JsonVerb,
): void {
  program
    .command(verb)
    .description(DESCRIPTIONS[verb])
    .option("--input <file>", "request file (default: stdin)")
    .option("--jsonl", "one request per line, one response or error object per line")
    .action(async (opts: { input?: string; jsonl?: boolean }) => {
      setExit(await runJsonVerb(verb, await jsonHandler(verb), opts));
    });
}

/**
 * Runs a JSON verb over `--input FILE` or stdin and returns the exit code.
 *
 * @example await runJsonVerb("select-memory", await jsonHandler("select-memory"), { input: "req.json" });
 */
export async function runJsonVerb(
  verb: string,
  handler: JsonHandler,
  options: { input?: string; jsonl?: boolean },
): Promise<number> {
  const pool = createCounterPool();
  let text: string;
  try {
    text = await readInput(options.input);
  } catch (err) {
    return reportError(err, verb);
  }
  if (!options.jsonl) {
    try {
      const response = handler(parseJson(text), pool);
      process.stdout.write(`${JSON.stringify(response)}\n`);
      return EXIT.ok;
    } catch (err) {
      return reportError(err, verb);
    }
  }
  const lines = text.split("\n");
  if (lines.at(-1) === "") lines.pop();
  let failures = 0;
  lines.forEach((line, i) => {
    let out: unknown;
    try {
      out = handler(parseJson(line, `line ${i + 1}`), pool);
    } catch (err) {
      failures++;
      out = toErrorObject(err);
    }
    process.stdout.write(`${JSON.stringify(out)}\n`);
  });
  if (failures > 0)
    process.stderr.write(`promptctx ${verb}: ${failures} of ${lines.length} lines failed\n`);
  return EXIT.ok;
}
