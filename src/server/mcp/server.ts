/**
 * The promptctx MCP server on the official SDK: the tools of tools.ts, the resources of
 * resources.ts and the `system` prompt, over one session's context (context.ts). The
 * transport is the caller's (stdio.ts, http.ts). Loaded only by `promptctx mcp` and by the
 * `/mcp` route of `serve` on its first request: nothing else pays for the SDK.
 */
import { McpServer, ResourceTemplate } from "@modelcontextprotocol/sdk/server/mcp.js";
import {
  type CallToolResult,
  ErrorCode,
  McpError,
  type ReadResourceResult,
} from "@modelcontextprotocol/sdk/types.js";
import { z } from "zod";
import { PromptctxError, toErrorObject } from "../../errors/index.js";
import { collapseWs, shorten } from "../../text/index.js";
import { packageVersion } from "../meta-routes.js";
import type { McpContext } from "./context.js";
import {
  decoded,
  INSTRUCTIONS_TEMPLATE,
  instructionFiles,
  instructionUri,
  lastManifest,
  listedMemories,
  MANIFEST_URI,
  MEMORY_TEMPLATE,
  memoryUri,
  readInstructionFile,
  readMemory,
} from "./resources.js";
import {
  AssembleArgsSchema,
  ForgetArgsSchema,
  RecallArgsSchema,
  RememberArgsSchema,
  SystemPromptArgs,
} from "./schemas.js";
import { TOOL_TEXT } from "./texts.js";
import { assembleTool, forgetTool, recallTool, rememberTool } from "./tools.js";

const JSON_TYPE = "application/json";

/** A tool's answer: the JSON as text (for any host) and as structured content. */
function answer(value: object): CallToolResult {
  return {
    content: [{ type: "text", text: JSON.stringify(value) }],
    structuredContent: value as Record<string, unknown>,
  };
}

/**
 * A tool's failure as a tool error the model can read: the error object (code, message,
 * field path); an unexpected error says `internal_error` and nothing more.
 */
function failure(err: unknown): CallToolResult {
  const object = toErrorObject(err);
  return {
    isError: true,
    content: [{ type: "text", text: JSON.stringify(object) }],
    structuredContent: object as unknown as Record<string, unknown>,
  };
}

/** Runs a tool, answering its result or its error. */
async function run(tool: () => Promise<object>): Promise<CallToolResult> {
  try {
    return answer(await tool());
  } catch (err) {
    return failure(err);
  }
}

/** A promptctx error as an MCP protocol error (resources and prompts have no tool errors). */
function protocolError(err: unknown): McpError {
  if (err instanceof McpError) return err;
  const { error } = toErrorObject(err);
  const code = err instanceof PromptctxError ? ErrorCode.InvalidParams : ErrorCode.InternalError;
  return new McpError(code, `${error.code}: ${error.message}`, error);
}

/** The SDK's own answer for a URI it has no resource for: every refusal reads the same. */
function notFound(uri: URL): McpError {
  return new McpError(ErrorCode.InvalidParams, `Resource ${uri} not found`);
}

function jsonResource(uri: URL, value: unknown): ReadResourceResult {
  return { contents: [{ uri: uri.href, mimeType: JSON_TYPE, text: JSON.stringify(value) }] };
}

function registerTools(server: McpServer, ctx: McpContext): void {
  server.registerTool(
    "recall",
    { ...TOOL_TEXT.recall, inputSchema: RecallArgsSchema, annotations: { readOnlyHint: true } },
    (args) => run(() => recallTool(ctx, args)),
  );
  server.registerTool(
    "remember",
    {
      ...TOOL_TEXT.remember,
      inputSchema: RememberArgsSchema,
      // Without a memoryId, each call adds a memory.
      annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false },
    },
    (args) => run(() => rememberTool(ctx, args)),
  );
  server.registerTool(
    "forget",
    {
      ...TOOL_TEXT.forget,
      inputSchema: ForgetArgsSchema,
      annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: true },
    },
    (args) => run(() => forgetTool(ctx, args)),
  );
  server.registerTool(
    "assemble_context",
    {
      ...TOOL_TEXT.assemble_context,
      inputSchema: AssembleArgsSchema,
      annotations: { readOnlyHint: true },
    },
    (args) => run(() => assembleTool(ctx, args)),
  );
}

function registerMemoryResources(server: McpServer, ctx: McpContext): void {
  const template = new ResourceTemplate(MEMORY_TEMPLATE, {
    list: async () => ({
      resources: (await listedMemories(ctx)).map((r) => ({
        uri: memoryUri(r.memoryId),
        name: r.memoryId,
        description: shorten(collapseWs(r.content), 120),
        mimeType: JSON_TYPE,
      })),
    }),
  });
  server.registerResource("memory", template, TOOL_TEXT.memoryResource, async (uri, vars) => {
    const id = decoded(vars.memoryId);
    let record: Awaited<ReturnType<typeof readMemory>> = null;
    try {
      record = id === null ? null : await readMemory(ctx, id);
    } catch (err) {
      throw protocolError(err);
    }
    if (record === null) throw notFound(uri);
    return jsonResource(uri, record);
  });
}

function registerWorkspaceResources(server: McpServer, ctx: McpContext): void {
  const template = new ResourceTemplate(INSTRUCTIONS_TEMPLATE, {
    list: async () => ({
      resources: (await instructionFiles(ctx)).map((f) => ({
        uri: instructionUri(f.path),
        name: f.path,
        description: `instruction file (${f.bytes} bytes, sha256 ${f.sha256})`,
        mimeType: "text/markdown",
      })),
    }),
  });
  server.registerResource("instructions", template, TOOL_TEXT.instructionsResource, async (uri) => {
    // The path as the URI has it (the template variable keeps its encoding).
    const path = decoded(uri.pathname.replace(/^\//, ""));
    let text: string | null = null;
    try {
      text = path === null ? null : await readInstructionFile(ctx, path);
    } catch (err) {
      throw protocolError(err);
    }
    if (text === null) throw notFound(uri);
    return { contents: [{ uri: uri.href, mimeType: "text/markdown", text }] };
  });
  server.registerResource("last-manifest", MANIFEST_URI, TOOL_TEXT.manifestResource, (uri) =>
    jsonResource(uri, lastManifest(ctx)),
  );
}

function registerPrompts(server: McpServer, ctx: McpContext): void {
  const prompt = server.registerPrompt(
    "system",
    { ...TOOL_TEXT.systemPrompt, argsSchema: SystemPromptArgs },
    async (args) => {
      try {
        const out = await assembleTool(ctx, {
          query: args.query,
          ...(args.workspace !== undefined ? { workspace: args.workspace } : {}),
        });
        return {
          description: `promptctx system prompt for: ${args.query}`,
          messages: [{ role: "user", content: { type: "text", text: out.prompt } }],
        };
      } catch (err) {
        throw protocolError(err);
      }
    },
  );
  // The SDK makes a loose object of the arguments (an unknown one would vanish): strict.
  prompt.argsSchema = z.strictObject(SystemPromptArgs);
}

/**
 * The MCP server of one session: every tool, resource and prompt reads and writes
 * `ctx.scope` only. Connect it to a transport.
 *
 * @example
 * const server = createMcpServer(ctx);
 * await server.connect(new StdioServerTransport());
 */
export function createMcpServer(ctx: McpContext): McpServer {
  const server = new McpServer(
    { name: "promptctx", version: packageVersion() },
    { instructions: TOOL_TEXT.instructions },
  );
  registerTools(server, ctx);
  registerMemoryResources(server, ctx);
  registerWorkspaceResources(server, ctx);
  registerPrompts(server, ctx);
  return server;
}
