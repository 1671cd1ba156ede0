/**
 * One `/mcp` request answered by the SDK's streamable HTTP transport, stateless and in
 * JSON: a server and a transport of its own, closed when the answer is sent.
 */
import type { IncomingMessage, ServerResponse } from "node:http";
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import type { McpContext } from "./context.js";
import { createMcpServer } from "./server.js";

/**
 * Answers one MCP request (`body`: the parsed JSON) for the session `ctx`.
 *
 * @example await answerMcp(ctx, request.raw, reply.raw, request.body);
 */
export async function answerMcp(
  ctx: McpContext,
  req: IncomingMessage,
  res: ServerResponse,
  body: unknown,
): Promise<void> {
  const server = createMcpServer(ctx);
  const transport = new StreamableHTTPServerTransport({
    sessionIdGenerator: undefined,
    enableJsonResponse: true,
  });
  res.on("close", () => {
    void transport.close();
    void server.close();
  });
  try {
    await server.connect(transport);
    await transport.handleRequest(req, res, body);
  } catch {
    if (!res.headersSent) {
      res.writeHead(500, { "content-type": "application/json" });
      res.end(
        JSON.stringify({
          jsonrpc: "2.0",
          error: { code: -32603, message: "internal error" },
          id: null,
        }),
      );
    }
  }
}
