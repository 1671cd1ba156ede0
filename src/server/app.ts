/**
 * The HTTP service of docs/surfaces.md as a Fastify app: the same JSON contracts as the CLI,
 * validated by the same zod schemas, answered by the same pure stages. Answers never
 * depend on what the service holds: the memory store is opened once and shared (several
 * instances can share one store file, WAL), token counters are pooled, workspaces are kept
 * loaded and revalidated against the disk at every request, and the clock is always a
 * request field.
 */
import { existsSync, realpathSync } from "node:fs";
import { resolve } from "node:path";
import Fastify, { type FastifyInstance, type FastifyReply } from "fastify";
import { InvalidInputError, invalidFromZod } from "../errors/index.js";
import type { GateMode } from "../memory/index.js";
import { type MemoryStore, type StoreLimits, storedNonBlank } from "../store/index.js";
import { type Recorder, WarmWorkspaces } from "../workspace/index.js";
import { registerAssembleRoute } from "./assemble-route.js";
import { type AuthOptions, registerAuth } from "./auth.js";
import {
  answerClientError,
  answerFrameworkError,
  registerErrorHandlers,
} from "./error-handlers.js";
import { registerHostGuard } from "./host-guard.js";
import { type InspectSource, recordingSource } from "./inspect/data.js";
import { INSPECTOR_ASSETS, registerInspectRoutes } from "./inspect/routes.js";
import { registerJsonParser } from "./json-body.js";
import { registerMcpRoute } from "./mcp/route.js";
import { registerMemoryManageRoutes } from "./memory/manage-routes.js";
import { registerMemoryRoutes } from "./memory/routes.js";
import { registerMetaRoutes } from "./meta-routes.js";
import { createRequestCounters } from "./request-counters.js";
import { type LoggerOption, loggerSettings, RequestLineLogController } from "./request-log.js";
import { registerRequestRoute } from "./request-route.js";
import { registerStrictRequests } from "./requests.js";
import { openSharedStore, type SharedStore } from "./shared-store.js";
import { registerStageRoutes } from "./stage-routes.js";

/** Default request body limit: 1 MiB. */
export const DEFAULT_BODY_LIMIT = 1024 * 1024;

/**
 * Request bytes after which the counter pool starts over. Counters memoize by content;
 * starting over bounds what a long-running server remembers by what it was sent lately.
 */
export const COUNTER_POOL_RESET_BYTES = 64 * 1024 * 1024;

/** Options of {@link buildServer}. */
export interface ServerOptions {
  /**
   * The workspace root (default: the process's working directory). `assemble` requests
   * without a `workspace` use it; a request's `workspace` is resolved against it and must
   * stay inside it (symlinks included).
   */
  workspace?: string;
  /**
   * The shared memory store: a path or a `postgres://` URL (opened now, closed when the
   * app closes; it must exist), an open store (the caller closes it), or `null` for none. Default: the root's
   * `.promptctx/memory.db` when it exists. Without a shared store, an assembly reads its
   * workspace's own store, if any, for the length of the request.
   */
  store?: string | MemoryStore | null;
  /**
   * Recall by meaning over a store the server opens from an SQLite file: an `--embedder`
   * value (`embedded`, `openai:MODEL[:DIMENSIONS]`, `none`; docs/sources.md). Default:
   * none (full-text); `promptctx serve` takes `--embedder`, else `PROMPTCTX_EMBEDDER`.
   */
  embedder?: string;
  /**
   * The write policy of a store the server opens (a path or URL in `store`, or the root's
   * own): the takeover gate's mode (`quarantine` by default, `reject`: 400 memory_rejected,
   * `off`) and the limits. Default: the root's `.promptctx/config.json` `memory` section.
   * A store passed open keeps its own.
   */
  memory?: { gate?: GateMode; limits?: StoreLimits };
  /** Maximum request body in bytes (default 1 MiB); larger bodies get 413. */
  bodyLimit?: number;
  /**
   * Structured logs: one JSON line per request to `stream` (default stderr). Off by
   * default (tests); `promptctx serve` turns them on.
   */
  logger?: boolean | { stream?: NodeJS.WritableStream; level?: string };
  /** See {@link COUNTER_POOL_RESET_BYTES}. */
  counterPoolResetBytes?: number;
  /**
   * Bearer tokens (see auth.ts). Absent or empty: the service is open and every request
   * names its scope. `promptctx serve` builds it from the environment (`authFromEnv`).
   */
  auth?: AuthOptions;
  /** The clock of a `/v1/recall` without `asOf` (default: the system clock). */
  clock?: () => Date;
  /** Appends every `/v1/assemble` (its request, and its result or error) to a recording. */
  recorder?: Recorder;
  /**
   * What `GET /inspect` shows (docs/inspector.md). Default: the recorder's file when
   * there is a recorder, else nothing.
   */
  inspect?: InspectSource;
  /**
   * Host names the service answers to besides the loopback names (`127.0.0.1`,
   * `localhost`, `[::1]`, with the bound port): `NAME` or `NAME:PORT`. A request with
   * another `Host` is refused (421 `host_not_allowed`), and so is a cross-origin request
   * with a body (403 `origin_not_allowed`); see host-guard.ts.
   */
  allowHosts?: readonly string[];
  /**
   * Whether `/mcp` (the MCP server over streamable HTTP, docs/mcp.md) is on (default true).
   * The SDK is loaded on its first request.
   */
  mcp?: boolean;
  /**
   * The user scope `/mcp` serves to a request without a scoped token (an open service, or
   * an unscoped token). Without it such a request gets 403 `scope_required`.
   */
  mcpUser?: string;
}

function positiveInt(value: number, name: string): number {
  if (!Number.isSafeInteger(value) || value < 1) {
    throw new InvalidInputError(`${name} must be a positive integer, got ${value}`, name);
  }
  return value;
}

/** `mcpUser`, checked: a non-blank scope, or null. */
function mcpUser(user: string | undefined): string | null {
  if (user === undefined) return null;
  const r = storedNonBlank.safeParse(user);
  if (!r.success) throw invalidFromZod(r.error, ["mcpUser"]);
  return user;
}

/** The real path of the workspace root, which must exist. */
function workspaceRoot(workspace: string | undefined): string {
  const rootGiven = resolve(workspace ?? process.cwd());
  if (!existsSync(rootGiven)) {
    throw new InvalidInputError(`workspace ${rootGiven} does not exist`, "workspace");
  }
  return realpathSync(rootGiven);
}

/** The Fastify instance with its limits, logs and connection-level error answers. */
function createApp(logger: LoggerOption | undefined, bodyLimit: number): FastifyInstance {
  const app = Fastify({
    logger: loggerSettings(logger),
    logController: new RequestLineLogController(),
    bodyLimit,
    onProtoPoisoning: "error",
    onConstructorPoisoning: "error",
    return503OnClosing: true,
    forceCloseConnections: "idle",
    // A slow client cannot hold a connection forever.
    requestTimeout: 60_000,
    routerOptions: { maxParamLength: 200 },
    // Errors before routing (a malformed URL) get the error object too.
    frameworkErrors: (error, request, reply) => {
      answerFrameworkError(error, request.raw, reply as FastifyReply, bodyLimit);
    },
    clientErrorHandler: answerClientError,
  });

  // Requests that were in flight when closing began end their connection with their
  // answer, so that a keep-alive socket never holds the shutdown open.
  let closing = false;
  app.addHook("preClose", async () => {
    closing = true;
  });
  // A callback hook: an async one costs every answer a promise.
  app.addHook("onSend", (_request, reply, payload, done) => {
    if (closing) void reply.header("connection", "close");
    done(null, payload);
  });
  return app;
}

/**
 * Builds the app (not listening yet): routes, JSON parsing, errors, logs.
 *
 * @example
 * const app = await buildServer({ workspace: "examples/workspace", store: "/tmp/memory.db" });
 * await app.listen({ port: 0, host: "127.0.0.1" });
 */
export async function buildServer(options: ServerOptions = {}): Promise<FastifyInstance> {
  const bodyLimit = positiveInt(options.bodyLimit ?? DEFAULT_BODY_LIMIT, "bodyLimit");
  const resetBytes = positiveInt(
    options.counterPoolResetBytes ?? COUNTER_POOL_RESET_BYTES,
    "counterPoolResetBytes",
  );
  const root = workspaceRoot(options.workspace);

  let shared: SharedStore = { store: null, own: false, path: null };
  const app = createApp(options.logger, bodyLimit);
  registerHostGuard(app, options.allowHosts); // first: before the token check and the body
  const counters = createRequestCounters(resetBytes);
  registerJsonParser(app, counters.countBytes);
  registerErrorHandlers(app, bodyLimit);
  const principal = registerAuth(app, options.auth);
  registerStrictRequests(app);
  const store = () => shared.store;
  registerMetaRoutes(app, () => shared.store !== null);
  registerStageRoutes(app, counters.pool);
  const recorder = options.recorder ?? null;
  let workspaces = new WarmWorkspaces();
  const assembleContext = {
    root,
    counters: counters.pool,
    workspaces: () => workspaces,
    storePath: () => shared.path,
    principal,
    recorder,
  };
  registerAssembleRoute(app, assembleContext);
  registerRequestRoute(app, assembleContext);
  const clock = options.clock ?? (() => new Date());
  const memoryCtx = { store, principal, clock };
  registerMemoryRoutes(app, memoryCtx);
  registerMemoryManageRoutes(app, memoryCtx);
  if (options.mcp !== false) {
    const user = mcpUser(options.mcpUser);
    const mcp = { root, workspaces: () => workspaces, store, principal, clock, user };
    registerMcpRoute(app, { ...mcp, counters: counters.pool });
  }
  registerInspectRoutes(
    app,
    options.inspect ?? (recorder !== null ? recordingSource(recorder.file) : null),
    INSPECTOR_ASSETS,
    (request) => principal(request).scope === null,
  );

  // The shared store, opened last so that nothing before can leak it.
  shared = await openSharedStore(options.store, root, options.memory, options.embedder);
  const { store: opened, own } = shared;
  workspaces = new WarmWorkspaces({ store: opened });
  // onClose runs after in-flight requests have completed.
  app.addHook("onClose", async () => {
    await workspaces.close();
    if (own) await opened?.close();
  });

  try {
    await app.ready();
  } catch (err) {
    if (own) await opened?.close();
    throw err;
  }
  return app;
}
