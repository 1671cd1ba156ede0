/** A tool registry as provider tool definitions: every argument a string, `requiredArgs` required. */
import type Anthropic from "@anthropic-ai/sdk";
import type OpenAI from "openai";
import type { ToolSpec } from "../../sources/index.js";

/** Descriptions of the arguments a tool understands beyond `requiredArgs` (by tool name). */
export type ToolArgDocs = (tool: string) => Readonly<Record<string, string>>;

const noArgDocs: ToolArgDocs = () => ({});

/** JSON schema of a tool's input: every argument a string, `requiredArgs` required. */
function inputSchema(
  tool: ToolSpec,
  argDocs: ToolArgDocs,
): {
  type: "object";
  properties: Record<string, { type: "string"; description?: string }>;
  required: string[];
} {
  const docs = argDocs(tool.name);
  const properties: Record<string, { type: "string"; description?: string }> = {};
  for (const arg of [...tool.requiredArgs, ...Object.keys(docs)]) {
    if (properties[arg] !== undefined) continue;
    const doc = docs[arg];
    properties[arg] = doc === undefined ? { type: "string" } : { type: "string", description: doc };
  }
  return { type: "object", properties, required: [...tool.requiredArgs] };
}

/**
 * The registry as Anthropic tool definitions (`{name, description, input_schema}`), each
 * argument described by `argDocs` when it knows it.
 *
 * @example toAnthropicTools([{ name: "read_file", description: "read a file", requiredArgs: ["path"] }])
 */
export function toAnthropicTools(
  tools: readonly ToolSpec[],
  argDocs: ToolArgDocs = noArgDocs,
): Anthropic.Tool[] {
  return tools.map((t) => ({
    name: t.name,
    ...(t.description.trim() !== "" ? { description: t.description } : {}),
    input_schema: inputSchema(t, argDocs),
  }));
}

/**
 * The registry as OpenAI Chat Completions tools (`{type: "function", function}`), each
 * argument described by `argDocs` when it knows it.
 *
 * @example toOpenAITools([{ name: "read_file", description: "read a file", requiredArgs: ["path"] }])
 */
export function toOpenAITools(
  tools: readonly ToolSpec[],
  argDocs: ToolArgDocs = noArgDocs,
): OpenAI.Chat.ChatCompletionFunctionTool[] {
  return tools.map((t) => ({
    type: "function",
    function: {
      name: t.name,
      ...(t.description.trim() !== "" ? { description: t.description } : {}),
      parameters: inputSchema(t, argDocs),
    },
  }));
}
