/**
 * `/mcp` on `promptctx serve`: the MCP server over streamable HTTP, stateless (each POST
 * is answered by a server of its own, in JSON). The scope is the bearer token's; an open
 * service or an unscoped token uses the scope `serve --mcp-user` fixes, and without one
 * `/mcp` is refused (403 `scope_required`): nothing a client sends names or widens it.
 * The Host/Origin guard and the token check of the app run before this route, as for
 * every other. The SDK is imported on the first request (http.ts), never at startup.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import { PromptctxError } from "../../errors/index.js";
import type { MemoryStore } from "../../store/index.js";
import type { CounterPool } from "../../tokens/index.js";
import type { WarmWorkspaces } from "../../workspace/index.js";
import type { Principal } from "../auth.js";
import { LastManifests, type McpContext } from "./context.js";

/** What `/mcp` reads from the server. */
export interface McpRouteContext {
  root: string;
  workspaces: () => WarmWorkspaces;
  store: () => MemoryStore | null;
  principal: (request: FastifyRequest) => Principal;
  counters: () => CounterPool;
  clock: () => Date;
  /** The scope of a request without a scoped token (`serve --mcp-user`), or null. */
  user: string | null;
}

/** `/mcp` without a scope to serve. */
export class ScopeRequiredError extends PromptctxError {
  constructor() {
    super(
      "scope_required",
      "/mcp serves one user scope: send a token bound to a scope (PROMPTCTX_TOKENS=TOKEN:SCOPE), or start the service with `--mcp-user SCOPE`",
      "authorization",
    );
    this.name = "ScopeRequiredError";
  }
}

type Http = typeof import("./http.js");

/** A JSON-RPC error answer for the methods stateless `/mcp` does not serve. */
function methodNotAllowed(reply: FastifyReply) {
  void reply.code(405).header("allow", "POST");
  return {
    jsonrpc: "2.0",
    error: {
      code: -32000,
      message: "Method not allowed: this MCP endpoint is stateless (POST only)",
    },
    id: null,
  };
}

/**
 * Registers `POST /mcp` (and a 405 for GET and DELETE: no sessions, no event stream).
 *
 * @example registerMcpRoute(app, { root, workspaces, store, principal, counters, clock, user: null });
 */
export function registerMcpRoute(app: FastifyInstance, ctx: McpRouteContext): void {
  const manifests = new LastManifests();
  let http: Promise<Http> | null = null;
  app.post("/mcp", async (request, reply) => {
    const scope = ctx.principal(request).scope ?? ctx.user;
    if (scope === null) throw new ScopeRequiredError();
    http ??= import("./http.js");
    const { answerMcp } = await http;
    const session: McpContext = {
      scope,
      root: ctx.root,
      workspaces: ctx.workspaces(),
      store: ctx.store,
      clock: ctx.clock,
      counters: ctx.counters,
      manifests,
    };
    // The transport writes the answer itself.
    reply.hijack();
    await answerMcp(session, request.raw, reply.raw, request.body);
  });
  app.get("/mcp", async (_request, reply) => methodNotAllowed(reply));
  app.delete("/mcp", async (_request, reply) => methodNotAllowed(reply));
}
