/**
 * The conversation side of `promptctx repl` (docs/conversation.md): events that add user turns,
 * replies, tool calls and tool results, each followed by the whole request planned over
 * the session's current assembly — where the window goes and one decision per message.
 * The anchor is carried from one plan to the next, so a transcript shows the window
 * moving in batches and the cached prefix holding.
 */
import { type PlannedRequest, planRequest } from "../../agent/index.js";
import type { Assembly } from "../../assemble/index.js";
import type { MessageInput } from "../../conversation/index.js";
import { InvalidInputError } from "../../errors/index.js";
import type { TokenCounter } from "../../tokens/index.js";
import { contextSummary, contextText } from "../chat/context.js";
import { usage } from "../io.js";
import type { TableStyle } from "../table.js";

/** Model the repl's requests are planned for (its breakpoints and minimum cacheable length). */
export const REPL_MODEL = "claude-sonnet-4-6";
/** Default context window of the repl's requests: small, so a short transcript fills it. */
export const REPL_CONTEXT_WINDOW = 3000;
/** Response reserve of the repl's requests. */
export const REPL_RESPONSE_RESERVE = 1024;

/** The help lines of the conversation commands. */
export const CONVERSATION_HELP = `  turn TEXT                    the user says TEXT: a new turn of the conversation
  reply TEXT                   the assistant answers TEXT
  call NAME [JSON]             the assistant calls tool NAME (input JSON, default {})
  result [--error] TEXT        the oldest unanswered call gets TEXT as its result
  window TOKENS                the model's context window for the request (default ${REPL_CONTEXT_WINDOW})
  context                      where the window goes (system, history, tool results, reserve) and every decision`;

const COMMANDS = new Set(["turn", "reply", "call", "result", "window", "context"]);

/** True for the commands {@link ReplConversation} handles. */
export function isConversationCommand(cmd: string): boolean {
  return COMMANDS.has(cmd);
}

function parseInput(text: string): unknown {
  if (text === "") return {};
  try {
    return JSON.parse(text) as unknown;
  } catch {
    throw new InvalidInputError(`tool input must be JSON, got ${JSON.stringify(text)}`, "call");
  }
}

/** The repl's conversation: neutral messages, the window, and the anchor between plans. */
export class ReplConversation {
  private readonly messages: MessageInput[] = [];
  private readonly open: string[] = [];
  private window = REPL_CONTEXT_WINDOW;
  private anchor: string | null = null;
  private clearBeforeTurn: number | null = null;
  private calls = 0;

  constructor(private readonly counter: TokenCounter) {}

  /**
   * Runs one conversation command (`rest`: the line after the command word), then plans
   * the request over the assembly `current()` returns and prints its summary.
   */
  async execute(cmd: string, rest: string, current: () => Promise<Assembly>, style: TableStyle) {
    const added = this.apply(cmd, rest);
    if (this.messages.length === 0)
      return `${added}\n(no turn yet: \`turn TEXT\` starts the conversation)`;
    const r = this.plan(await current());
    return [added, cmd === "context" ? contextText(r, style) : contextSummary(r, style)]
      .filter((x) => x !== "")
      .join("\n\n");
  }

  private id(prefix: string): string {
    return `${prefix}${this.messages.length + 1}`;
  }

  private needTurn(cmd: string): void {
    if (!this.messages.some((m) => m.role === "user")) usage(`turn TEXT (before ${cmd})`);
  }

  // Adds the command's message (or setting); returns what it did.
  private apply(cmd: string, rest: string): string {
    switch (cmd) {
      case "turn": {
        if (rest === "") usage("turn TEXT");
        const id = this.id("u");
        this.messages.push({ id, role: "user", content: [{ type: "text", text: rest }] });
        return `added ${id} (user)`;
      }
      case "reply": {
        if (rest === "") usage("reply TEXT");
        this.needTurn(cmd);
        const id = this.id("a");
        this.messages.push({ id, role: "assistant", content: [{ type: "text", text: rest }] });
        return `added ${id} (assistant)`;
      }
      case "call":
        return this.call(rest);
      case "result":
        return this.result(rest);
      case "window": {
        if (!/^\d+$/.test(rest) || Number(rest) < 1) usage("window TOKENS");
        this.window = Number(rest);
        return `context window ${this.window} tokens`;
      }
      default:
        return "";
    }
  }

  private call(rest: string): string {
    const [name, ...json] = rest.split(/\s+/);
    if (name === undefined || name === "") usage("call NAME [JSON]");
    this.needTurn("call");
    const input = parseInput(json.join(" ").trim()) as never;
    this.calls += 1;
    const callId = `call_${this.calls}`;
    this.open.push(callId);
    const part = { type: "tool_call" as const, callId, name, input };
    // Calls in a row (or after the assistant's text) are one assistant message: parallel calls.
    const last = this.messages.at(-1);
    if (last?.role === "assistant") {
      last.content.push(part);
      return `${last.id} also calls ${name} (${callId})`;
    }
    const id = this.id("a");
    this.messages.push({ id, role: "assistant", content: [part] });
    return `added ${id} (assistant calls ${name}, ${callId})`;
  }

  private result(rest: string): string {
    const error = rest.startsWith("--error");
    const output = error ? rest.slice("--error".length).trim() : rest;
    const callId = this.open.shift();
    if (callId === undefined) usage("result [--error] TEXT (after a call)");
    const id = this.id("t");
    this.messages.push({
      id,
      role: "tool",
      content: [{ type: "tool_result", callId, output, ...(error ? { isError: true } : {}) }],
    });
    return `added ${id} (result of ${callId}${error ? ", error" : ""})`;
  }

  private plan(assembly: Assembly): PlannedRequest {
    const r = planRequest({
      provider: "anthropic",
      model: REPL_MODEL,
      system: assembly,
      messages: this.messages,
      responseReserve: REPL_RESPONSE_RESERVE,
      contextWindow: this.window,
      tokenizer: this.counter,
      policy: { lowWaterRatio: 0.7, anchor: this.anchor, clearBeforeTurn: this.clearBeforeTurn },
    });
    this.anchor = r.conversation.firstKeptId;
    this.clearBeforeTurn = r.conversation.clearBeforeTurn;
    return r;
  }
}
