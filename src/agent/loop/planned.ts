/**
 * What both provider conversations share: the neutral history, planned against the
 * model's window before every request (docs/conversation.md), and the system side of the turn.
 */
import type { Summarize } from "../../conversation/index.js";
import { InvalidInputError } from "../../errors/index.js";
import type { ConversationProvider, ProviderInput } from "../../render/index.js";
import type { TokenCounter } from "../../tokens/index.js";
import type { PlannedRequest } from "../request/index.js";
import {
  CHAT_MAX_TOKENS,
  type Conversation,
  type ModelReply,
  type ToolResult,
} from "./conversation.js";
import type { ChatCompactionEvent, ChatProvider } from "./events.js";
import { type ChatContextOptions, ChatHistory } from "./history.js";

/** How a provider conversation plans its requests. */
export interface PlannedConversationOptions {
  context: ChatContextOptions;
  counter: TokenCounter;
  /** Writes compaction summaries (null: never compact). */
  summarize: Summarize | null;
}

/**
 * The context of a provider conversation not given one: the response reserve of
 * {@link CHAT_MAX_TOKENS} and no compaction. A fresh object per call, as a default
 * parameter would make it.
 *
 * @example
 * ```ts
 * new AnthropicConversation(client, model, tools, undefined, defaultChatContext());
 * ```
 */
export function defaultChatContext(): ChatContextOptions {
  return { responseReserve: CHAT_MAX_TOKENS, compactThresholdTokens: null };
}

/**
 * The tokens of a provider's tool definitions, counted as the JSON sent with every request
 * (0 without tools): what {@link PlannedConversation} reserves for them in each plan.
 *
 * @example
 * ```ts
 * const tools = toAnthropicTools(registry);
 * super(model, "anthropic", options, toolsTokenCount(counter, tools));
 * ```
 */
export function toolsTokenCount(counter: TokenCounter, tools: readonly unknown[]): number {
  return tools.length === 0 ? 0 : counter.count(JSON.stringify(tools));
}

/** A conversation whose every request is a planned whole request (system side + history). */
export abstract class PlannedConversation<P extends ConversationProvider> implements Conversation {
  abstract readonly provider: ChatProvider;
  onCompact?: (event: ChatCompactionEvent) => void;
  protected readonly history: ChatHistory<P>;
  private system: ProviderInput | null = null;

  constructor(
    readonly model: string,
    shape: P,
    options: PlannedConversationOptions,
    /** Tokens of the tool definitions sent with every request. */
    protected readonly toolsTokens: number,
  ) {
    this.history = new ChatHistory(
      shape,
      model,
      options.counter,
      options.context,
      options.summarize,
    );
  }

  get lastRequest(): PlannedRequest<P> | null {
    return this.history.last;
  }

  preview(): PlannedRequest<P> | null {
    return this.system === null ? null : this.history.plan(this.system, this.toolsTokens);
  }

  beginTurn(out: ProviderInput, text: string): Record<string, unknown> {
    this.system = out;
    this.history.addUser(text);
    const r = this.history.plan(out, this.toolsTokens);
    const c = r.conversation;
    return {
      ...this.cacheReport(r),
      context: {
        contextWindow: r.budget.contextWindow,
        messagesBudget: r.budget.messagesBudget,
        usedTokens: c.usedTokens,
        kept: c.messages.length,
        dropped: c.droppedMessageIds.length,
      },
    };
  }

  async complete(): Promise<ModelReply> {
    if (this.system === null) throw new InvalidInputError("no turn has begun", "messages");
    const r = await this.history.request(this.system, this.toolsTokens, this.onCompact);
    return this.send(r);
  }

  pushAssistant(reply: ModelReply, shownText?: string): void {
    this.history.addAssistant(reply, shownText ?? reply.text);
  }

  pushToolResults(results: readonly ToolResult[]): void {
    this.history.addToolResults(results);
  }

  /** Sends a planned request through the provider's client. */
  protected abstract send(r: PlannedRequest<P>): Promise<ModelReply>;
  /** What the turn event reports of the provider's cache (breakpoints, cache key). */
  protected abstract cacheReport(r: PlannedRequest<P>): Record<string, unknown>;
}
