/**
 * The JSON verbs (`select-memory`, `plan-prompt`, `plan-conversation`): one request → one response, or
 * `--jsonl` batches where each line is answered in order and a bad line never stops the
 * rest. Counters are pooled so a batch shares memoized counts.
 */
import { PlanConversationJsonRequestSchema, planConversation } from "../conversation/index.js";
import { invalidFromZod, toErrorObject } from "../errors/index.js";
import { type SelectMemoryRequest, selectMemoryContext } from "../memory/index.js";
import { PlanPromptJsonRequestSchema, planPrompt } from "../plan/index.js";
import { type CounterPool, createCounterPool } from "../tokens/index.js";
import { EXIT, parseJson, readInput, reportError } from "./io.js";

/** A JSON verb: validates and answers one parsed request. */
export type JsonHandler = (request: unknown, pool: CounterPool) => unknown;

function tokenizerOf(request: unknown): unknown {
  return typeof request === "object" && request !== null && "tokenizer" in request
    ? (request as { tokenizer: unknown }).tokenizer
    : undefined;
}

/** select-memory: spec 02 plan for one request. */
export const selectMemoryHandler: JsonHandler = (request, pool) => {
  const tokenCounter = pool.forRequest(tokenizerOf(request));
  return selectMemoryContext(request as SelectMemoryRequest, tokenCounter ? { tokenCounter } : {});
};

/** plan-prompt: spec 03 plan for one request. */
export const planPromptHandler: JsonHandler = (request, pool) => {
  // JSON callers get the JSON schema: library-only fields (condition, builder) are not data.
  const parsed = PlanPromptJsonRequestSchema.safeParse(request);
  if (!parsed.success) throw invalidFromZod(parsed.error);
  const tokenCounter = pool.forRequest(parsed.data.tokenizer);
  return planPrompt(parsed.data, tokenCounter ? { tokenCounter } : {});
};

/** plan-conversation: spec 09 plan for one request. */
export const planConversationHandler: JsonHandler = (request, pool) => {
  const parsed = PlanConversationJsonRequestSchema.safeParse(request);
  if (!parsed.success) throw invalidFromZod(parsed.error);
  const tokenCounter = pool.forRequest(parsed.data.tokenizer);
  return planConversation({ ...parsed.data, tokenizer: tokenCounter ?? parsed.data.tokenizer });
};

/**
 * Runs a JSON verb over `--input FILE` or stdin and returns the exit code.
 *
 * @example await runJsonVerb("select-memory", selectMemoryHandler, { input: "req.json" });
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
