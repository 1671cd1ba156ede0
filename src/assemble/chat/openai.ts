/** A chat conversation with OpenAI's Chat Completions API: system messages, `prompt_cache_key`, function tool calls. */
import type OpenAI from "openai";
import { type ProviderInput, toOpenAIChatRequest } from "../../render/index.js";
import type { ToolSpec } from "../../sources/index.js";
import {
  type Conversation,
  type ModelReply,
  providerFailure,
  type ToolCallRequest,
  type ToolResult,
  usageNumbers,
} from "./conversation.js";
import { type ToolArgDocs, toOpenAITools } from "./tool-schemas.js";

/** The function tool calls of a reply; arguments that are not JSON become an `inputError`. */
function parseToolCalls(calls: readonly OpenAI.Chat.ChatCompletionMessageToolCall[]) {
  const toolCalls: ToolCallRequest[] = [];
  for (const call of calls) {
    if (call.type !== "function") continue;
    const raw = call.function.arguments;
    let input: unknown = null;
    let inputError: string | undefined;
    try {
      input = raw.trim() === "" ? {} : JSON.parse(raw);
    } catch {
      inputError = `${call.function.name}: arguments are not valid JSON`;
    }
    toolCalls.push({
      id: call.id,
      name: call.function.name,
      input,
      raw,
      ...(inputError !== undefined ? { inputError } : {}),
    });
  }
  return toolCalls;
}

/** The Chat Completions conversation; the system side is resent before the history each request. */
export class OpenAIConversation implements Conversation {
  readonly provider = "openai";
  private system: OpenAI.Chat.ChatCompletionMessageParam[] = [];
  private cacheKey: string | undefined;
  private readonly messages: OpenAI.Chat.ChatCompletionMessageParam[] = [];
  private readonly tools: OpenAI.Chat.ChatCompletionFunctionTool[];

  constructor(
    private readonly client: OpenAI,
    readonly model: string,
    registry: readonly ToolSpec[],
    argDocs?: ToolArgDocs,
  ) {
    this.tools = toOpenAITools(registry, argDocs);
  }

  beginTurn(out: ProviderInput, text: string): Record<string, unknown> {
    const req = toOpenAIChatRequest(out, { model: this.model });
    this.system = req.body.messages.map((m) => ({
      role: m.role === "developer" ? "developer" : "system",
      content: typeof m.content === "string" ? m.content : m.content.map((p) => p.text).join(""),
    }));
    this.cacheKey = req.body.prompt_cache_key;
    this.messages.push({ role: "user", content: text });
    return { promptCacheKey: req.promptCacheKey };
  }

  async complete(): Promise<ModelReply> {
    let res: OpenAI.Chat.ChatCompletion;
    try {
      res = await this.client.chat.completions.create({
        model: this.model,
        messages: [...this.system, ...this.messages],
        ...(this.tools.length > 0 ? { tools: this.tools } : {}),
        ...(this.cacheKey !== undefined ? { prompt_cache_key: this.cacheKey } : {}),
      });
    } catch (err) {
      throw providerFailure("openai", err);
    }
    const choice = res.choices[0];
    if (choice === undefined)
      throw providerFailure("openai", new Error("no choices in the response"));
    const usage = usageNumbers(res.usage);
    const cached = res.usage?.prompt_tokens_details?.cached_tokens;
    if (typeof cached === "number") usage.cached_tokens = cached;
    return {
      text: choice.message.content ?? "",
      toolCalls: parseToolCalls(choice.message.tool_calls ?? []),
      stopReason: choice.finish_reason,
      usage,
    };
  }

  pushAssistant(reply: ModelReply, shownText?: string): void {
    const text = shownText ?? reply.text;
    this.messages.push({
      role: "assistant",
      content: text === "" && reply.toolCalls.length > 0 ? null : text,
      ...(reply.toolCalls.length > 0
        ? {
            tool_calls: reply.toolCalls.map((c) => ({
              id: c.id,
              type: "function" as const,
              function: { name: c.name, arguments: c.raw ?? JSON.stringify(c.input) },
            })),
          }
        : {}),
    });
  }

  pushToolResults(results: readonly ToolResult[]): void {
    for (const r of results) {
      this.messages.push({
        role: "tool",
        tool_call_id: r.id,
        content: r.isError ? `error: ${r.content}` : r.content,
      });
    }
  }
}
