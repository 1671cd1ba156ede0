/**
 * The promptctx MCP server (issue 35, docs/mcp.md): tools, resources and the `system`
 * prompt over one session's scope, on stdio (`promptctx mcp`) or at `/mcp` of `serve`.
 * Imports the official `@modelcontextprotocol/sdk`: import this only where MCP runs (the
 * app registers `/mcp` from route.ts, which loads the SDK on its first request).
 */
export { type LastManifest, LastManifests, type McpContext } from "./context.js";
export {
  AssembleArgsSchema,
  ForgetArgsSchema,
  MAX_MEMORY_CHARS,
  MAX_NAME_CHARS,
  MAX_QUERY_CHARS,
  MAX_RECALL_LIMIT,
  MAX_SUMMARY_CHARS,
  MAX_TAG_CHARS,
  MAX_TAGS,
  RecallArgsSchema,
  RememberArgsSchema,
} from "./schemas.js";
export { createMcpServer } from "./server.js";
export { serveStdio } from "./stdio.js";
