/** The workspace registry as the model sees it: provider tool definitions with the built-in tools' argument descriptions. */
import type Anthropic from "@anthropic-ai/sdk";
import type OpenAI from "openai";
import { toAnthropicTools, toOpenAITools } from "../../agent/index.js";
import type { ToolSpec } from "../../sources/index.js";
import { BUILTIN_ARGS, isBuiltin } from "../tools.js";

/** The arguments a built-in tool understands, with their descriptions (none for other tools). */
export function builtinArgDocs(tool: string): Readonly<Record<string, string>> {
  return isBuiltin(tool) ? BUILTIN_ARGS[tool] : {};
}

/** The registry as Anthropic tool definitions (`{name, description, input_schema}`). */
export function anthropicTools(tools: readonly ToolSpec[]): Anthropic.Tool[] {
  return toAnthropicTools(tools, builtinArgDocs);
}

/** The registry as OpenAI Chat Completions tools (`{type: "function", function}`). */
export function openAITools(tools: readonly ToolSpec[]): OpenAI.Chat.ChatCompletionFunctionTool[] {
  return toOpenAITools(tools, builtinArgDocs);
}
