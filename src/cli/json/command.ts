/**
 * The JSON verbs (`select-memory`, `plan-prompt`, `plan-conversation`, `assemble-context`):
 * one request → one response, or `--jsonl` batches where each line is answered in order and
 * a bad line never stops the rest. Counters are pooled so a batch shares memoized counts.
 * Each verb imports only the stage it answers from, when it runs.
 */
import type { Command } from "commander";
import { invalidFromZod, toErrorObject } from "../../errors/index.js";
import type { SelectMemoryRequest } from "../../memory/index.js";
import { rejectUnknownFields } from "../../text/index.js";
import { type CounterPool, createCounterPool, requestTokenizer } from "../../tokens/index.js";
import { EXIT, parseJson, readInput, reportError } from "../io.js";
import { stdoutTerminal } from "../terminal.js";
import { type SetExit, summaryOf } from "../verbs.js";
import { type JsonVerbReport, jsonVerbReport } from "./report.js";

/** A JSON verb: validates and answers one parsed request (a value or a promise of one). */
export type JsonHandler = (request: unknown, pool: CounterPool) => unknown;

/** The JSON verbs. */
export type JsonVerb =
  | "select-memory"
  | "plan-prompt"
  | "plan-conversation"
  | "assemble-context"
  | "request";

// Each verb's handler, built from the one stage it imports.
const HANDLERS: Readonly<Record<JsonVerb, () => Promise<JsonHandler>>> = {
  // docs/memory-selection.md: the plan for one request.
  "select-memory": async () => {
    const { SelectMemoryRequestSchema, selectMemoryContext } = await import(
      "../../memory/index.js"
    );
    return (request, pool) => {
      rejectUnknownFields(SelectMemoryRequestSchema, request);
      const tokenCounter = pool.forRequest(requestTokenizer(request));
      const options = tokenCounter ? { tokenCounter } : {};
      return selectMemoryContext(request as SelectMemoryRequest, options);
    };
  },
  // docs/planner.md: JSON callers get the JSON schema (no condition, no builder).
  "plan-prompt": async () => {
    const { PlanPromptJsonRequestSchema, planPrompt } = await import("../../plan/index.js");
    return (request, pool) => {
      rejectUnknownFields(PlanPromptJsonRequestSchema, request);
      const parsed = PlanPromptJsonRequestSchema.safeParse(request);
      if (!parsed.success) throw invalidFromZod(parsed.error);
      const tokenCounter = pool.forRequest(parsed.data.tokenizer);
      return planPrompt(parsed.data, tokenCounter ? { tokenCounter } : {});
    };
  },
  // docs/conversation.md "POST /v1/request": the whole agent request, as the server answers
  // it; the system side is { segments } here (a workspace assembly needs `serve`).
  request: async () => {
    const { badSystem, isSegmentsSystem, parseAgentRequestJson, requestFromJson, segmentsSystem } =
      await import("../../agent/index.js");
    return async (request, pool) => {
      // Strict at every depth, as the server: parseAgentRequestJson checks unknown fields first.
      const r = parseAgentRequestJson(request);
      if (!isSegmentsSystem(r.system)) throw badSystem();
      return requestFromJson(r, await segmentsSystem(r.system, pool), null);
    };
  },
  // docs/conversation.md: the plan of one conversation.
  "plan-conversation": async () => {
    const { PlanConversationJsonRequestSchema, planConversation } = await import(
      "../../conversation/index.js"
    );
    return (request, pool) => {
      rejectUnknownFields(PlanConversationJsonRequestSchema, request);
      const parsed = PlanConversationJsonRequestSchema.safeParse(request);
      if (!parsed.success) throw invalidFromZod(parsed.error);
      const tokenCounter = pool.forRequest(parsed.data.tokenizer);
      return planConversation({ ...parsed.data, tokenizer: tokenCounter ?? parsed.data.tokenizer });
    };
  },
  // docs/inline-assembly.md: assembly from inline slot data.
  "assemble-context": async () => {
    const { AssembleContextRequestSchema, assembleContext } = await import(
      "../../assemble/index.js"
    );
    return async (request, pool) => {
      rejectUnknownFields(AssembleContextRequestSchema, request);
      const tokenCounter = pool.forRequest(requestTokenizer(request));
      const out = await assembleContext(request, tokenCounter ? { tokenCounter } : {});
      const { prompt, manifest, memoryPlan, segmentPlan } = out;
      return { prompt, manifest, memoryPlan, segmentPlan };
    };
  },
};

/** The handler of a JSON verb (its stage is imported only now). */
export function jsonHandler(verb: JsonVerb): Promise<JsonHandler> {
  return HANDLERS[verb]();
}

/**
 * Registers one JSON verb; `assemble-context` answers one request only (no `--jsonl`). On a
 * terminal (or with `--wide`) the answer is a report for people, unless `--json`.
 */
export function registerJsonVerb(program: Command, setExit: SetExit, verb: JsonVerb): void {
  const cmd = program
    .command(verb)
    .description(summaryOf(verb))
    .option("--input <file>", "request file (default: stdin)");
  if (verb !== "assemble-context") {
    cmd.option("--jsonl", "one request per line, one response or error object per line");
  }
  cmd
    .option("--json", "print the JSON response (the default when stdout is not a terminal)")
    .option("--wide", "the report for people at full width, even when piped (default: fitted)");
  cmd.action(async (opts: { input?: string; jsonl?: boolean; json?: boolean; wide?: boolean }) => {
    const report = jsonVerbReport(verb, opts, stdoutTerminal());
    setExit(await runJsonVerb(verb, await jsonHandler(verb), { ...opts, report }));
  });
}

/**
 * Runs a JSON verb over `--input FILE` or stdin and returns the exit code; `report` (one
 * request only) prints the answer for people instead of its JSON.
 *
 * @example await runJsonVerb("select-memory", await jsonHandler("select-memory"), { input: "req.json" });
 */
export async function runJsonVerb(
  verb: string,
  handler: JsonHandler,
  options: { input?: string; jsonl?: boolean; report?: JsonVerbReport | undefined },
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
      const request = parseJson(text);
      const response = await handler(request, pool);
      const { report } = options;
      process.stdout.write(report ? report(request, response) : `${JSON.stringify(response)}\n`);
      return EXIT.ok;
    } catch (err) {
      return reportError(err, verb);
    }
  }
  const lines = text.split("\n");
  if (lines.at(-1) === "") lines.pop();
  let failures = 0;
  for (const [i, line] of lines.entries()) {
    let out: unknown;
    try {
      out = await handler(parseJson(line, `line ${i + 1}`), pool);
    } catch (err) {
      failures++;
      out = toErrorObject(err);
    }
    process.stdout.write(`${JSON.stringify(out)}\n`);
  }
  if (failures > 0)
    process.stderr.write(`promptctx ${verb}: ${failures} of ${lines.length} lines failed\n`);
  return EXIT.ok;
}
