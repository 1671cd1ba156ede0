/** A chat conversation with Anthropic's Messages API: system blocks per cache tier, tool_use and tool_result blocks. */
import type Anthropic from "@anthropic-ai/sdk";
import { type ProviderInput, toAnthropicRequest } from "../../render/index.js";
import type { ToolSpec } from "../../sources/index.js";
import { getTokenCounter } from "../../tokens/index.js";
import {
  CHAT_MAX_TOKENS,
  type Conversation,
  type ModelReply,
  providerFailure,
  type ToolCallRequest,
  type ToolResult,
  usageNumbers,
} from "./conversation.js";
import { type ToolArgDocs, toAnthropicTools } from "./tool-schemas.js";

/** The Messages API conversation; the tool definitions are counted into the cached prefix. */
export class AnthropicConversation implements Conversation {
  readonly provider = "anthropic";
  private system: Anthropic.TextBlockParam[] = [];
  private readonly messages: Anthropic.MessageParam[] = [];
  private readonly tools: Anthropic.Tool[];
  private readonly toolsTokens: number;

  constructor(
    private readonly client: Anthropic,
    readonly model: string,
    registry: readonly ToolSpec[],
    argDocs?: ToolArgDocs,
  ) {
    this.tools = toAnthropicTools(registry, argDocs);
    this.toolsTokens =
      this.tools.length === 0
        ? 0
        : getTokenCounter("claude_estimate").count(JSON.stringify(this.tools));
  }

  beginTurn(out: ProviderInput, text: string): Record<string, unknown> {
    const req = toAnthropicRequest(out, {
      model: this.model,
      tokenCounter: getTokenCounter("claude_estimate"),
      toolsTokens: this.toolsTokens,
    });
    this.system = req.body.system;
    const last = this.messages.at(-1);
    if (last?.role === "user" && Array.isArray(last.content)) {
      last.content.push({ type: "text", text });
    } else {
      this.messages.push({ role: "user", content: text });
    }
    return { breakpoints: req.breakpoints, skipped: req.skipped };
  }

  async complete(): Promise<ModelReply> {
    let res: Anthropic.Message;
    try {
      res = await this.client.messages.create({
        model: this.model,
        max_tokens: CHAT_MAX_TOKENS,
        system: this.system,
        messages: this.messages,
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

  pushAssistant(reply: ModelReply, shownText?: string): void {
    const content: Anthropic.ContentBlockParam[] = [];
    const text = shownText ?? reply.text;
    if (text !== "") content.push({ type: "text", text });
    for (const c of reply.toolCalls) {
      content.push({ type: "tool_use", id: c.id, name: c.name, input: c.input });
    }
    if (content.length === 0) content.push({ type: "text", text: "(no reply)" });
    this.messages.push({ role: "assistant", content });
  }

  pushToolResults(results: readonly ToolResult[]): void {
    this.messages.push({
      role: "user",
      content: results.map((r) => ({
        type: "tool_result",
        tool_use_id: r.id,
        content: r.content,
        ...(r.isError ? { is_error: true } : {}),
      })),
    });
  }
}
