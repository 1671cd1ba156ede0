/**
 * Compaction: the async step after a plan. When the run of messages the window left
 * behind holds at least `thresholdTokens`, it is replaced by one pinned summary message
 * (the caller's `summarize` writes its text). Triggered by tokens, never by turn count;
 * only the dropped run is summarized, never a kept or pinned message.
 */
import { shortHash } from "../cache/index.js";
import { InvalidInputError } from "../errors/index.js";
import { escapeText } from "../text/index.js";
import { isTokenizerName, resolveTokenCounter, type TokenCounter } from "../tokens/index.js";
import { messageTokens } from "./count.js";
import type { ConversationPlan } from "./decide.js";
import { parseMessage } from "./fast-parse.js";
import type { Message, MessageInput } from "./schema.js";

/** Turns the dropped messages into a summary text. */
export type Summarize = (messages: readonly MessageInput[]) => Promise<string> | string;

/** What {@link compactConversation} needs. */
export interface CompactionRequest {
  /** The same messages the plan was made from. */
  readonly messages: readonly MessageInput[];
  readonly plan: ConversationPlan;
  readonly summarize: Summarize;
  /** Compact only when the dropped run holds at least this many tokens. */
  readonly thresholdTokens: number;
  /**
   * Counts the dropped messages a stateless plan did not count (decisions with `counted:
   * false`); default: the plan's tokenizer, by its name. Pass the counter object the
   * plan was made with when it is your own (its name may not be a built-in one).
   */
  readonly tokenizer?: TokenCounter | string;
}

/** The summary that replaced a dropped run. */
export interface CompactionSummary {
  readonly id: string;
  readonly text: string;
  /** The ids it replaced, in input order. */
  readonly summarizedIds: string[];
  /** Tokens of the replaced messages, as the plan counted them. */
  readonly summarizedTokens: number;
}

/** The compacted conversation: pin `summary.id` in the next plan's policy. */
export interface CompactionResult {
  readonly compacted: boolean;
  readonly messages: MessageInput[];
  readonly summary: CompactionSummary | null;
}

/** The summary message for a summary text: id `summary:` + 16 hex of its text's SHA-256. */
export function summaryMessage(summary: string): Message {
  const text = `<conversation_summary>${escapeText(summary)}</conversation_summary>`;
  return { id: `summary:${shortHash(text)}`, role: "user", content: [{ type: "text", text }] };
}

// The plan's decisions are by input index: the messages must be the planned ones.
function checkSameMessages(messages: readonly MessageInput[], plan: ConversationPlan): void {
  if (messages.length !== plan.decisions.length) {
    throw new InvalidInputError(
      `${messages.length} messages, but the plan decided ${plan.decisions.length}`,
      ["messages"],
    );
  }
  messages.forEach((m, i) => {
    if (m?.id !== plan.decisions[i]?.messageId) {
      throw new InvalidInputError("not the message the plan decided here", ["messages", i, "id"]);
    }
  });
}

// Tokens of the dropped run: as the plan counted them, and, for the messages a stateless
// plan left uncounted (a lower bound in their decision), counted here.
function runTokens(request: CompactionRequest, run: readonly number[]): number {
  const { plan, messages } = request;
  let counter: TokenCounter | null = null;
  let total = 0;
  for (const i of run) {
    const d = plan.decisions[i];
    if (d === undefined) continue;
    if (d.counted !== false) {
      total += d.tokens;
      continue;
    }
    counter ??= runCounter(request);
    total += messageTokens(parseMessage(messages[i], ["messages", i]), counter);
  }
  return total;
}

function runCounter(request: CompactionRequest): TokenCounter {
  if (request.tokenizer !== undefined) return resolveTokenCounter(request.tokenizer);
  const name = request.plan.tokenizer;
  if (isTokenizerName(name)) return resolveTokenCounter(name);
  throw new InvalidInputError(
    `the plan did not count some dropped messages and its tokenizer "${name}" is not a built-in name: pass the counter as tokenizer`,
    ["tokenizer"],
  );
}

/**
 * Replaces the run of messages the plan dropped with `history_window` by one summary
 * message at the run's place, when that run holds at least `thresholdTokens`.
 *
 * @example
 * const done = await compactConversation({ messages, plan, thresholdTokens: 20000,
 *   summarize: async (dropped) => mySummarizer(dropped) });
 * if (done.compacted) policy.pinned.push(done.summary!.id);
 */
export async function compactConversation(request: CompactionRequest): Promise<CompactionResult> {
  const { messages, plan, thresholdTokens } = request;
  if (!Number.isInteger(thresholdTokens) || thresholdTokens < 0) {
    throw new InvalidInputError("must be a non-negative integer", ["thresholdTokens"]);
  }
  checkSameMessages(messages, plan);
  const run = plan.decisions.flatMap((d, i) => (d.reason === "history_window" ? [i] : []));
  const tokens = runTokens(request, run);
  if (run.length === 0 || tokens < thresholdTokens) {
    return { compacted: false, messages: [...messages], summary: null };
  }
  const dropped = run.map((i) => messages[i] as MessageInput);
  const text = await request.summarize(dropped);
  if (typeof text !== "string")
    throw new InvalidInputError("summarize must return a string", ["summarize"]);
  const message = summaryMessage(text);
  const inRun = new Set(run);
  // A message the summary replaces may carry its id (a rolling summary summarized again to
  // the same text); any other message with that id would make the result ambiguous.
  if (messages.some((m, i) => m.id === message.id && !inRun.has(i))) {
    throw new InvalidInputError(`the summary id "${message.id}" is already a message id`, [
      "summarize",
    ]);
  }
  const out: MessageInput[] = [];
  messages.forEach((m, i) => {
    if (i === run[0]) out.push(message);
    if (!inRun.has(i)) out.push(m);
  });
  const summary = {
    id: message.id,
    text: (message.content[0] as { text: string }).text,
    summarizedIds: dropped.map((m) => m.id),
    summarizedTokens: tokens,
  };
  return { compacted: true, messages: out, summary };
}
