/** The MCP server over stdio (`promptctx mcp`): one session, one scope, until stdin ends. */
import type { Readable, Writable } from "node:stream";
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";
import type { JSONRPCMessage } from "@modelcontextprotocol/sdk/types.js";
import type { McpContext } from "./context.js";
import { createMcpServer } from "./server.js";

const isRequest = (m: JSONRPCMessage) => "method" in m && "id" in m;
const isResponse = (m: JSONRPCMessage) => "id" in m && ("result" in m || "error" in m);

/**
 * A stdio transport that knows how many requests it has not answered yet, and calls
 * `whenIdle` once stdin has ended and every request read before has its answer written:
 * a client that writes its requests and closes stdin (`promptctx mcp < requests.jsonl`)
 * still gets every answer.
 */
class DrainingTransport extends StdioServerTransport {
  #pending = 0;
  #ended = false;
  #whenIdle: () => void = () => {};

  /** Counts the requests the protocol is handed (set after `connect`). */
  countRequests(): void {
    const handle = this.onmessage;
    this.onmessage = (message) => {
      if (isRequest(message)) this.#pending++;
      handle?.(message);
    };
  }

  /** Calls `whenIdle` once stdin has ended and nothing is left to answer. */
  drainThen(whenIdle: () => void): void {
    this.#ended = true;
    this.#whenIdle = whenIdle;
    this.#check();
  }

  override async send(message: JSONRPCMessage): Promise<void> {
    await super.send(message);
    if (isResponse(message)) {
      this.#pending = Math.max(0, this.#pending - 1);
      this.#check();
    }
  }

  #check(): void {
    if (this.#ended && this.#pending === 0) this.#whenIdle();
  }
}

/**
 * Serves `ctx` on `stdin`/`stdout` until the client closes stdin (every request read by
 * then is answered first) or the transport closes; resolves then, with the server closed.
 * `onError` hears what the protocol could not handle (a line that is not JSON-RPC, …):
 * the server goes on serving.
 *
 * @example await serveStdio(ctx, process.stdin, process.stdout, (m) => console.error(m));
 */
export async function serveStdio(
  ctx: McpContext,
  stdin: Readable,
  stdout: Writable,
  onError: (message: string) => void = () => {},
): Promise<void> {
  const server = createMcpServer(ctx);
  server.server.onerror = (err) => onError(err.message);
  const transport = new DrainingTransport(stdin, stdout);
  const closed = new Promise<void>((resolve) => {
    server.server.onclose = () => resolve();
  });
  await server.connect(transport);
  transport.countRequests();
  const end = () => transport.drainThen(() => void server.close());
  stdin.on("end", end);
  stdin.on("close", end);
  await closed;
}
