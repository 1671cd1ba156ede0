/**
 * A chat's history in the neutral message model (docs/conversation.md): every request is planned
 * against the model's window with the anchor carried from the previous one, and the
 * dropped run is compacted into a pinned summary once it passes a token threshold.
 */
import {
  compactConversation,
  type MessageInput,
  type Part,
  type Summarize,
} from "../../conversation/index.js";
import { InvalidInputError } from "../../errors/index.js";
import {
  type ConversationProvider,
  type ProviderInput,
  parseArguments,
  type ToolInput,
} from "../../render/index.js";
import { getTokenCounter, type TokenCounter, tokenizerForModel } from "../../tokens/index.js";
import { type PlannedRequest, planRequest } from "../request/index.js";
import type { ModelReply, ToolResult } from "./conversation.js";
import type { ChatCompactionEvent } from "./events.js";

/** Default `lowWaterRatio` of a chat: the window moves in batches so the cached prefix holds. */
export const CHAT_LOW_WATER_RATIO = 0.7;
/** Default compaction threshold: the dropped run is summarized once it holds this many tokens. */
export const CHAT_COMPACT_THRESHOLD_TOKENS = 20_000;

/** How a chat plans its history. */
export interface ChatContextOptions {
  /** The model's window (default: the table's, see `contextWindowFor`). */
  contextWindow?: number;
  /** Tokens kept for the reply (the request's max tokens). */
  responseReserve: number;
  /** Compact once the dropped run holds this many tokens; null: never. */
  compactThresholdTokens: number | null;
  /** In (0, 1] (default {@link CHAT_LOW_WATER_RATIO}). */
  lowWaterRatio?: number;
  /** Tool results over this many tokens are cut to head + notice + tail (default: never). */
  toolResultMaxTokens?: number | null;
}

/** The counter of a chat's model: Claude's estimate, the model's encoding, else o200k_base. */
export function chatCounter(provider: "anthropic" | "openai", model: string): TokenCounter {
  if (provider === "anthropic") return getTokenCounter("claude_estimate");
  try {
    return getTokenCounter(tokenizerForModel(model));
  } catch {
    return getTokenCounter("o200k_base");
  }
}

/** The neutral history of a chat and the planning of each of its requests. */
export class ChatHistory<P extends ConversationProvider> {
  readonly messages: MessageInput[] = [];
  /** The last request planned (what `/context` shows). */
  last: PlannedRequest<P> | null = null;
  private readonly pinned: string[] = [];
  private anchor: string | null = null;
  private clearBeforeTurn: number | null = null;
  private next = 0;
  private turns = 0;
  /** The pinned summary standing in for the compacted history (null before any). */
  private summaryId: string | null = null;

  constructor(
    private readonly provider: P,
    private readonly model: string,
    readonly counter: TokenCounter,
    private readonly options: ChatContextOptions,
    private readonly summarize: Summarize | null,
  ) {}

  private id(prefix: string): string {
    this.next += 1;
    return `${prefix}${this.next}`;
  }

  /** A user line opens a turn; the first one is pinned (the ask the chat started with). */
  addUser(text: string): void {
    const id = this.id("u");
    this.turns += 1;
    if (this.turns === 1) this.pinned.push(id);
    this.messages.push({ id, role: "user", content: [{ type: "text", text }] });
  }

  /** The assistant's reply as it stays in the history (text as shown, then its calls). */
  addAssistant(reply: ModelReply, shownText: string): void {
    const content: Part[] = [];
    if (shownText !== "") content.push({ type: "text", text: shownText });
    for (const c of reply.toolCalls) {
      // OpenAI's arguments as sent (a string that is not JSON stays a string).
      const input = c.raw !== undefined ? parseArguments(c.raw) : ((c.input ?? null) as ToolInput);
      content.push({ type: "tool_call", callId: c.id, name: c.name, input });
    }
    if (content.length === 0) content.push({ type: "text", text: "(no reply)" });
    this.messages.push({ id: this.id("a"), role: "assistant", content });
  }

  addToolResults(results: readonly ToolResult[]): void {
    if (results.length === 0) return;
    const content: Part[] = results.map((r) => ({
      type: "tool_result",
      callId: r.id,
      output: r.content,
      ...(r.isError ? { isError: true } : {}),
    }));
    this.messages.push({ id: this.id("t"), role: "tool", content });
  }

  /**
   * Plans the next request over `system` (pure: the anchor is not advanced). With
   * `rolling`, the current summary is not pinned, so it joins the dropped run.
   */
  plan(system: ProviderInput, toolsTokens: number, rolling = false): PlannedRequest<P> {
    if (this.messages.length === 0) {
      throw new InvalidInputError("the chat has no user message yet", "messages");
    }
    const pinned = rolling ? this.pinned.filter((id) => id !== this.summaryId) : this.pinned;
    return planRequest({
      provider: this.provider,
      model: this.model,
      system,
      messages: this.messages,
      responseReserve: this.options.responseReserve,
      ...(this.options.contextWindow !== undefined
        ? { contextWindow: this.options.contextWindow }
        : {}),
      toolsTokens,
      tokenizer: this.counter,
      policy: {
        pinned,
        anchor: this.anchor,
        clearBeforeTurn: this.clearBeforeTurn,
        lowWaterRatio: this.options.lowWaterRatio ?? CHAT_LOW_WATER_RATIO,
        toolResultMaxTokens: this.options.toolResultMaxTokens ?? null,
      },
    });
  }

  /**
   * Replaces the dropped run — the current summary included, so there is one summary at a
   * time and it rolls forward — by a new pinned summary. True when it did.
   */
  private async compact(
    system: ProviderInput,
    toolsTokens: number,
    threshold: number,
    onCompact?: (e: ChatCompactionEvent) => void,
  ): Promise<boolean> {
    const rolling = this.plan(system, toolsTokens, true);
    if (this.summarize === null || rolling.conversation.droppedMessageIds.length === 0)
      return false;
    const done = await compactConversation({
      messages: this.messages,
      plan: rolling.conversation,
      summarize: this.summarize,
      thresholdTokens: threshold,
    });
    if (!done.compacted || done.summary === null) return false;
    this.messages.splice(0, this.messages.length, ...done.messages);
    const old = this.summaryId;
    this.pinned.splice(
      0,
      this.pinned.length,
      ...this.pinned.filter((id) => id !== old),
      done.summary.id,
    );
    this.summaryId = done.summary.id;
    onCompact?.({
      event: "compaction",
      turn: this.turns,
      summaryId: done.summary.id,
      summarizedIds: done.summary.summarizedIds,
      summarizedTokens: done.summary.summarizedTokens,
    });
    return true;
  }

  /**
   * Plans the request to send: when the dropped run holds at least the compaction
   * threshold, it is summarized first (the summary pinned in its place, `onCompact` told)
   * and the request replanned. Advances the anchor.
   */
  async request(
    system: ProviderInput,
    toolsTokens: number,
    onCompact?: (e: ChatCompactionEvent) => void,
  ): Promise<PlannedRequest<P>> {
    let r = this.plan(system, toolsTokens);
    const threshold = this.options.compactThresholdTokens;
    if (threshold !== null && r.conversation.droppedMessageIds.length > 0) {
      if (await this.compact(system, toolsTokens, threshold, onCompact)) {
        r = this.plan(system, toolsTokens);
      }
    }
    this.anchor = r.conversation.firstKeptId;
    this.clearBeforeTurn = r.conversation.clearBeforeTurn;
    this.last = r;
    return r;
  }
}
