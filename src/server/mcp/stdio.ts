/** The MCP server over stdio (`promptctx mcp`): one session, one scope, until stdin ends. */
import type { Readable, Writable } from "node:stream";
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";
import type { McpContext } from "./context.js";
import { createMcpServer } from "./server.js";

/**
 * Serves `ctx` on `stdin`/`stdout` until the client closes stdin (or the transport
 * closes); resolves then, with the server closed.
 *
 * @example await serveStdio(ctx, process.stdin, process.stdout);
 */
export async function serveStdio(
  ctx: McpContext,
  stdin: Readable,
  stdout: Writable,
): Promise<void> {
  const server = createMcpServer(ctx);
  const transport = new StdioServerTransport(stdin, stdout);
  const closed = new Promise<void>((resolve) => {
    server.server.onclose = () => resolve();
  });
  await server.connect(transport);
  const end = () => void server.close();
  stdin.on("end", end);
  stdin.on("close", end);
  await closed;
}
