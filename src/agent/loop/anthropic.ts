/**
 * A chat conversation with Anthropic's Messages API: system blocks per cache tier, the
 * history planned against the model's window with `tool_use` / `tool_result` blocks and a
 * breakpoint at the end of the stable history prefix.
 */
import type Anthropic from "@anthropic-ai/sdk";
import type { ToolSpec } from "../../sources/index.js";
import { anthropicSummarizer, type PlannedRequest } from "../request/index.js";
import {
  CHAT_MAX_TOKENS,
  type ModelReply,
  providerFailure,
  type ToolCallRequest,
  usageNumbers,
} from "./conversation.js";
import { type ChatContextOptions, chatCounter } from "./history.js";
import { defaultChatContext, PlannedConversation, toolsTokenCount } from "./planned.js";
import { type ToolArgDocs, toAnthropicTools } from "./tool-schemas.js";

/** The Messages API conversation; the tool definitions are counted into the cached prefix. */
export class AnthropicConversation extends PlannedConversation<"anthropic"> {
  readonly provider = "anthropic";
  private readonly tools: Anthropic.Tool[];

  constructor(
    private readonly client: Anthropic,
    model: string,
    registry: readonly ToolSpec[],
    argDocs?: ToolArgDocs,
    context: ChatContextOptions = defaultChatContext(),
  ) {
    const tools = toAnthropicTools(registry, argDocs);
    const counter = chatCounter("anthropic", model);
    super(
      model,
      "anthropic",
      { context, counter, summarize: anthropicSummarizer(client, { model }) },
      toolsTokenCount(counter, tools),
    );
    this.tools = tools;
  }

  protected cacheReport(r: PlannedRequest<"anthropic">): Record<string, unknown> {
    return { breakpoints: r.request.breakpoints, skipped: r.request.skipped };
  }

  protected async send(r: PlannedRequest<"anthropic">): Promise<ModelReply> {
    let res: Anthropic.Message;
    try {
      res = await this.client.messages.create({
        model: this.model,
        max_tokens: CHAT_MAX_TOKENS,
        system: r.body.system,
        messages: r.body.messages,
        ...(this.tools.length > 0 ? { tools: this.tools } : {}),
      });
    } catch (err) {
      throw providerFailure("anthropic", err);
    }
    const text: string[] = [];
    const toolCalls: ToolCallRequest[] = [];
    for (const block of res.content) {
      if (block.type === "text") text.push(block.text);
      else if (block.type === "tool_use") {
        toolCalls.push({ id: block.id, name: block.name, input: block.input });
      }
    }
    return {
      text: text.join(""),
      toolCalls,
      stopReason: res.stop_reason,
      usage: usageNumbers(res.usage),
    };
  }
}
