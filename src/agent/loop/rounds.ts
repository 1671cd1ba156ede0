/**
 * The agent loop of one user message: ask the model, check each draft against the red
 * lines, run the tools it calls and send the results back, until it answers without a
 * tool call or the round limit is reached.
 */
import type { ToolState } from "../../sources/index.js";
import { type CompiledRedLines, checkDraft } from "../../trace/index.js";
import type { Conversation, ModelReply, ToolCallRequest, ToolResult } from "./conversation.js";
import type { ChatEvent, ChatReplyEvent } from "./events.js";

/** What a withheld draft is replaced with in the history. */
export const WITHHELD_PLACEHOLDER = "[draft withheld by the red-line check]";

/** What a tool call produced: `content` goes back to the model, `summary` to the tool state. */
export interface ChatToolOutcome {
  ok: boolean;
  content: string;
  summary: string;
}

/** Runs one tool call; a tool-level problem comes back as `ok: false`, never as a throw. */
export type ChatToolRunner = (call: ToolCallRequest) => Promise<ChatToolOutcome>;

/** What {@link runToolRounds} needs for one user message. */
export interface ToolRoundsOptions {
  conversation: Conversation;
  /** The user turn (from 1) and its clock; tool calls are recorded at `now`. */
  turn: number;
  now: string;
  redLines: CompiledRedLines;
  /** Tool rounds at most; calls asked for after the last one are not run. */
  maxToolRounds: number;
  /** Every tool call is recorded here, so the next turn's tool-state layer shows it. */
  toolState: ToolState;
  runTool: ChatToolRunner;
  emit: (event: ChatEvent) => void;
}

/**
 * Checks a draft against the red lines: the reply event, and the text the history keeps
 * (a placeholder when a `block` red line withholds the draft, so the model never sees it
 * again).
 *
 * @example reviewDraft(1, "Done.", compileRedLines([]), true, {}).shown; // "Done."
 */
export function reviewDraft(
  turn: number,
  draft: string,
  redLines: CompiledRedLines,
  final: boolean,
  usage: Record<string, number>,
): { event: ChatReplyEvent; shown: string } {
  const check = checkDraft(draft, redLines);
  const withheld = check.blocked; // a block violation, or a draft not checkable in full
  return {
    event: {
      event: "reply",
      turn,
      final,
      text: withheld ? null : draft,
      withheld,
      flagged: check.flagged,
      check,
      usage,
    },
    shown: withheld ? WITHHELD_PLACEHOLDER : draft,
  };
}

/** Answers the calls of a reply past the round limit with an error result, and reports it. */
function refuseToolCalls(o: ToolRoundsOptions, reply: ModelReply): void {
  const message = `not run: tool round limit (${o.maxToolRounds}) reached for this user message`;
  o.conversation.pushToolResults(
    reply.toolCalls.map((c) => ({ id: c.id, content: message, isError: true })),
  );
  o.emit({
    event: "limit",
    turn: o.turn,
    maxToolRounds: o.maxToolRounds,
    unanswered: reply.toolCalls.length,
  });
}

/** Runs a reply's tool calls in order, recording each in the tool state. */
async function runToolCalls(
  o: ToolRoundsOptions,
  reply: ModelReply,
  round: number,
): Promise<ToolResult[]> {
  const results: ToolResult[] = [];
  for (const call of reply.toolCalls) {
    const outcome: ChatToolOutcome =
      call.inputError !== undefined
        ? { ok: false, content: call.inputError, summary: call.inputError }
        : await o.runTool(call);
    o.toolState.recordCall({
      tool: call.name,
      ok: outcome.ok,
      summary: outcome.summary,
      at: o.now,
    });
    results.push({ id: call.id, content: outcome.content, isError: !outcome.ok });
    o.emit({
      event: "tool",
      turn: o.turn,
      round,
      id: call.id,
      name: call.name,
      input: call.input,
      ok: outcome.ok,
      summary: outcome.summary,
    });
  }
  return results;
}

/**
 * Runs the tool rounds of one user message (the conversation's turn already begun): each
 * draft is checked and reported, each tool call run and reported, until the model
 * answers without a tool call or asks for tools after round `maxToolRounds`.
 *
 * @example await runToolRounds({ conversation, turn: 1, now, redLines, maxToolRounds: 5, toolState, runTool, emit });
 */
export async function runToolRounds(o: ToolRoundsOptions): Promise<void> {
  for (let round = 1; ; round++) {
    const reply = await o.conversation.complete();
    const final = reply.toolCalls.length === 0;
    let shown = "";
    // Text sent alongside tool calls is checked too; an empty one is not a draft.
    if (reply.text !== "" || final) {
      const review = reviewDraft(o.turn, reply.text, o.redLines, final, reply.usage);
      o.emit(review.event);
      shown = review.shown;
    }
    o.conversation.pushAssistant(reply, shown);
    if (final) return;
    if (round > o.maxToolRounds) {
      refuseToolCalls(o, reply);
      return;
    }
    o.conversation.pushToolResults(await runToolCalls(o, reply, round));
  }
}
