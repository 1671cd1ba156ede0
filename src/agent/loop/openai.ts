/**
 * A chat conversation with OpenAI's Chat Completions API: the system message and
 * `prompt_cache_key`, the history planned against the model's window with `tool_calls`
 * and `tool` messages.
 */
import type OpenAI from "openai";
import type { ToolSpec } from "../../sources/index.js";
import { openAISummarizer, type PlannedRequest } from "../request/index.js";
import {
  type ModelReply,
  providerFailure,
  type ToolCallRequest,
  usageNumbers,
} from "./conversation.js";
import { type ChatContextOptions, chatCounter } from "./history.js";
import { defaultChatContext, PlannedConversation, toolsTokenCount } from "./planned.js";
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
export class OpenAIConversation extends PlannedConversation<"openai-chat"> {
  readonly provider = "openai";
  private readonly tools: OpenAI.Chat.ChatCompletionFunctionTool[];

  constructor(
    private readonly client: OpenAI,
    model: string,
    registry: readonly ToolSpec[],
    argDocs?: ToolArgDocs,
    context: ChatContextOptions = defaultChatContext(),
  ) {
    const tools = toOpenAITools(registry, argDocs);
    const counter = chatCounter("openai", model);
    super(
      model,
      "openai-chat",
      { context, counter, summarize: openAISummarizer(client, { model }) },
      toolsTokenCount(counter, tools),
    );
    this.tools = tools;
  }

  protected cacheReport(r: PlannedRequest<"openai-chat">): Record<string, unknown> {
    return { promptCacheKey: r.request.promptCacheKey };
  }

  protected async send(r: PlannedRequest<"openai-chat">): Promise<ModelReply> {
    let res: OpenAI.Chat.ChatCompletion;
    try {
      res = await this.client.chat.completions.create({
        model: this.model,
        messages: r.body.messages,
        ...(this.tools.length > 0 ? { tools: this.tools } : {}),
        ...(r.body.prompt_cache_key !== undefined
          ? { prompt_cache_key: r.body.prompt_cache_key }
          : {}),
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
}
