/**
 * The people's view of the JSON verbs: on a terminal (or with `--wide`) `select-memory`,
 * `plan-prompt`, `plan-conversation` and `assemble-context` print their decision tables
 * and text fitted to the width instead of one JSON line. `--json` (or stdout not being a
 * terminal) keeps the JSON bytes; `--jsonl` batches are always JSON. The report is built
 * from the verb's response only (and the request's message roles), so both views say the
 * same thing.
 */
import type { ConversationPlan } from "../../conversation/index.js";
import type { MemoryPlan } from "../../memory/index.js";
import type { PromptPlan } from "../../plan/index.js";
import { fitText, type TableStyle, type Terminal, tableStyle } from "../table.js";
import {
  type AssemblyParts,
  assemblyReport,
  conversationDecisionTable,
  memoryDecisionTable,
  segmentDecisionTable,
  titled,
} from "../tables.js";

/** Renders one answered request for people (the text ends with a newline). */
export type JsonVerbReport = (request: unknown, response: unknown) => string;

/** The output flags of a JSON verb. */
export interface ReportFlags {
  readonly json?: boolean | undefined;
  readonly jsonl?: boolean | undefined;
  readonly wide?: boolean | undefined;
}

// Message id → role, read from a request the handler has already validated.
function rolesOf(request: unknown): Map<string, string> {
  const roles = new Map<string, string>();
  const messages = (request as { messages?: unknown }).messages;
  if (!Array.isArray(messages)) return roles;
  for (const m of messages as { id?: unknown; role?: unknown }[])
    if (typeof m?.id === "string" && typeof m.role === "string") roles.set(m.id, m.role);
  return roles;
}

function conversationReport(request: unknown, plan: ConversationPlan, style: TableStyle): string {
  const n = plan.decisions.length;
  const kept = plan.decisions.filter((d) => d.status === "kept").length;
  const dropped = plan.droppedMessageIds.length;
  const cleared =
    plan.clearBeforeTurn === null
      ? ""
      : `; tool results cleared before turn ${plan.clearBeforeTurn}`;
  const totals = `Totals — ${kept} of ${n} messages kept, ${dropped} dropped; ${plan.usedTokens} of ${plan.budgetTokens} tokens (tokenizer ${plan.tokenizer}); next anchor ${plan.firstKeptId}${cleared}`;
  return `${conversationDecisionTable(plan, style, rolesOf(request))}\n\n${totals}\n`;
}

// One report per JSON verb (keyed by the verb's name, so json-verbs.ts need not be imported).
const REPORTS = {
  "select-memory": (_, r, style) => {
    const plan = r as MemoryPlan;
    const context = plan.context === "" ? "(empty: no memory selected)" : plan.context;
    return `${memoryDecisionTable(plan, style)}\n\n${titled("Memory context", context)}`;
  },
  "plan-prompt": (_, r, style) => {
    const plan = r as PromptPlan;
    return `${segmentDecisionTable(plan, style)}\n\n${titled("Prompt", plan.prompt)}`;
  },
  "plan-conversation": (request, r, style) =>
    conversationReport(request, r as ConversationPlan, style),
  "assemble-context": (_, r, style) => assemblyReport(r as AssemblyParts, [], style),
  // The whole request: where the window went, then the decisions of the conversation.
  // Parts the request's `include` left out are not shown.
  request: (request, r, style) => {
    const a = r as { budget?: Record<string, unknown>; plan?: { conversation: ConversationPlan } };
    const budget = Object.entries(a.budget ?? {})
      .map(([k, v]) => `${k}: ${String(v)}`)
      .join("\n");
    const parts = [
      ...(a.budget ? [titled("Budget", budget)] : []),
      ...(a.plan ? [conversationReport(request, a.plan.conversation, style)] : []),
    ];
    return parts.length > 0
      ? `${parts.join("\n\n")}`
      : "The answer holds the body only (include: []): print it with --json.\n";
  },
} satisfies Record<string, (request: unknown, response: unknown, style: TableStyle) => string>;

/** The verbs with a report: the JSON verbs. */
export type ReportedVerb = keyof typeof REPORTS;

/**
 * The people's report of `verb` when its output is for people — stdout a terminal or
 * `--wide`, and neither `--json` nor `--jsonl` — else `undefined` (print the JSON). Fitted
 * to the terminal's width; `--wide` fits nothing.
 *
 * @example
 * const report = jsonVerbReport("plan-prompt", { wide: false }, stdoutTerminal());
 * process.stdout.write(report ? report(request, plan) : `${JSON.stringify(plan)}\n`);
 */
export function jsonVerbReport(
  verb: ReportedVerb,
  flags: ReportFlags,
  terminal: Terminal,
): JsonVerbReport | undefined {
  const wide = flags.wide === true;
  if (flags.json === true || flags.jsonl === true || !(terminal.isTTY || wide)) return undefined;
  const style = tableStyle(terminal, wide);
  return (request, response) => fitText(REPORTS[verb](request, response, style), style);
}
