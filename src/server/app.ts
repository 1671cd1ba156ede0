/**
 * The HTTP service of spec 08 as a Fastify app: the same JSON contracts as the CLI,
 * validated by the same zod schemas, answered by the same pure stages. The service is
 * stateless: the memory store is opened once and shared (several instances can share one
 * store file, WAL), token counters are pooled, and the clock is always a request field.
 */
import { existsSync, readFileSync, realpathSync } from "node:fs";
import { realpath } from "node:fs/promises";
import type { IncomingMessage } from "node:http";
import { isAbsolute, join, relative, resolve, sep } from "node:path";
import type { Duplex } from "node:stream";
import Fastify, {
  type FastifyInstance,
  type FastifyReply,
  type FastifyRequest,
  LogController,
} from "fastify";
import { InvalidInputError, invalidFromZod } from "../errors/index.js";
import { type SelectMemoryRequest, selectMemoryContext } from "../memory/index.js";
import { PlanPromptJsonRequestSchema, planPrompt } from "../plan/index.js";
import { type MemoryStore, openStore } from "../store/index.js";
import { type CounterPool, createCounterPool, tokenizerForModel } from "../tokens/index.js";
import { assembleWorkspace, loadWorkspaceConfig, WORKSPACE_PATHS } from "../workspace/index.js";
import { NotFoundError, toHttpError } from "./errors.js";
import { openApiDocument } from "./openapi.js";
import { AssembleRequestSchema } from "./schema.js";

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
   * The shared memory store: a path (opened now, closed when the app closes; it must
   * exist), an open store (the caller closes it), or `null` for none. Default: the root's
   * `.promptctx/memory.db` when it exists. Without a shared store, an assembly reads its
   * workspace's own store, if any, for the length of the request.
   */
  store?: string | MemoryStore | null;
  /** Maximum request body in bytes (default 1 MiB); larger bodies get 413. */
  bodyLimit?: number;
  /**
   * Structured logs: one JSON line per request to `stream` (default stderr). Off by
   * default (tests); `promptctx serve` turns them on.
   */
  logger?: boolean | { stream?: NodeJS.WritableStream; level?: string };
  /** See {@link COUNTER_POOL_RESET_BYTES}. */
  counterPoolResetBytes?: number;
}

/** The package version, for `/openapi.json` and `/healthz`. */
function packageVersion(): string {
  try {
    const pkg = JSON.parse(
      readFileSync(new URL("../../package.json", import.meta.url), "utf8"),
    ) as { version?: unknown };
    return typeof pkg.version === "string" ? pkg.version : "0.0.0";
  } catch {
    return "0.0.0";
  }
}

/** The error code each failed request answered with (for its log line). */
const answeredCodes = new WeakMap<object, string>();

/** One JSON line per request: method, route, status, ms and the error code, if any. */
class RequestLineLogController extends LogController {
  override incomingRequest(): void {}

  override requestCompleted(_error: unknown, request: FastifyRequest, reply: FastifyReply): void {
    const route = request.routeOptions.url ?? null;
    request.log.info(
      {
        method: request.method,
        route,
        ...(route === null ? { url: request.url.slice(0, 200) } : {}),
        status: reply.statusCode,
        ms: Math.round(reply.elapsedTime * 100) / 100,
        code: answeredCodes.get(request.raw) ?? null,
      },
      "request",
    );
  }

  override routeNotFound(): void {}
}

/** How much of a refused body is read and discarded before answering 413. */
const DRAIN_BYTES = 32 * 1024 * 1024;
const DRAIN_MS = 10_000;

/** Reads and discards what is left of `req` (bounded in bytes and time), then calls `then`. */
function drainThen(req: IncomingMessage, maxBytes: number, maxMs: number, then: () => void): void {
  if (req.complete || req.readableEnded || req.destroyed) {
    then();
    return;
  }
  let seen = 0;
  let finished = false;
  const finish = (): void => {
    if (finished) return;
    finished = true;
    clearTimeout(timer);
    req.off("data", onData);
    req.off("end", finish);
    req.off("error", finish);
    req.off("close", finish);
    then();
  };
  const onData = (chunk: Buffer): void => {
    seen += chunk.length;
    if (seen > maxBytes) finish();
  };
  const timer = setTimeout(finish, maxMs);
  req.on("data", onData);
  req.once("end", finish);
  req.once("error", finish);
  req.once("close", finish);
  req.resume();
}

function tokenizerOf(request: unknown): unknown {
  return typeof request === "object" && request !== null && "tokenizer" in request
    ? (request as { tokenizer: unknown }).tokenizer
    : undefined;
}

function positiveInt(value: number, name: string): number {
  if (!Number.isSafeInteger(value) || value < 1) {
    throw new InvalidInputError(`${name} must be a positive integer, got ${value}`, name);
  }
  return value;
}

function charsetOf(contentType: string | undefined): string | null {
  const m = /;\s*charset\s*=\s*"?([^";\s]+)"?/i.exec(contentType ?? "");
  return m ? (m[1] as string).toLowerCase() : null;
}

// Connection-level faults (before any request exists): status, reason, message.
const CLIENT_ERRORS: Readonly<Record<string, readonly [number, string, string]>> = {
  HPE_HEADER_OVERFLOW: [431, "Request Header Fields Too Large", "request headers too large"],
  ERR_HTTP_REQUEST_TIMEOUT: [408, "Request Timeout", "request timed out"],
};

/** Answers malformed HTTP with the error object, then drops the connection. */
function answerClientError(err: Error, socket: Duplex): void {
  const code = (err as { code?: unknown }).code;
  if (code === "ECONNRESET" || socket.destroyed) return;
  const [status, reason, message] = CLIENT_ERRORS[String(code)] ?? [
    400,
    "Bad Request",
    "malformed HTTP request",
  ];
  const body = JSON.stringify({ error: { code: "invalid_input", message, path: null } });
  if (socket.writable) {
    socket.write(
      `HTTP/1.1 ${status} ${reason}\r\nContent-Length: ${Buffer.byteLength(body)}\r\n` +
        `Content-Type: application/json; charset=utf-8\r\nConnection: close\r\n\r\n${body}`,
    );
  }
  socket.destroy();
}

function isInside(root: string, target: string): boolean {
  const rel = relative(root, target);
  return rel === "" || (rel !== ".." && !rel.startsWith(`..${sep}`) && !isAbsolute(rel));
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
  const rootGiven = resolve(options.workspace ?? process.cwd());
  if (!existsSync(rootGiven)) {
    throw new InvalidInputError(`workspace ${rootGiven} does not exist`, "workspace");
  }
  const root = realpathSync(rootGiven);

  let store: MemoryStore | null = null;
  let ownStore = false;

  const logger =
    options.logger === undefined || options.logger === false
      ? false
      : {
          level: (options.logger === true ? undefined : options.logger.level) ?? "info",
          stream: (options.logger === true ? undefined : options.logger.stream) ?? process.stderr,
        };

  const app = Fastify({
    logger,
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
      const out = toHttpError(error, bodyLimit);
      answeredCodes.set(request.raw, out.body.error.code);
      void (reply as FastifyReply)
        .code(out.status)
        .type("application/json; charset=utf-8")
        .send(out.body);
    },
    clientErrorHandler: answerClientError,
  });

  // Requests that were in flight when closing began end their connection with their
  // answer, so that a keep-alive socket never holds the shutdown open.
  let closing = false;
  app.addHook("preClose", async () => {
    closing = true;
  });
  app.addHook("onSend", async (_request, reply, payload) => {
    if (closing) void reply.header("connection", "close");
    return payload;
  });

  // Counters are pooled across requests; the pool starts over after `resetBytes`.
  let pool: CounterPool = createCounterPool();
  let bytesSinceReset = 0;
  const counters = (): CounterPool => pool;
  const countBytes = (n: number): void => {
    bytesSinceReset += n;
    if (bytesSinceReset > resetBytes) {
      pool = createCounterPool();
      bytesSinceReset = 0;
    }
  };

  // JSON only, strict UTF-8, Fastify's secure parser (prototype poisoning is an error).
  app.removeAllContentTypeParsers();
  const secureJson = app.getDefaultJsonParser("error", "error");
  const utf8 = new TextDecoder("utf-8", { fatal: true });
  app.addContentTypeParser("application/json", { parseAs: "buffer" }, (request, body, done) => {
    const buffer = body as Buffer;
    countBytes(buffer.length);
    const charset = charsetOf(request.headers["content-type"]);
    if (charset !== null && charset !== "utf-8" && charset !== "utf8") {
      done(new InvalidInputError(`unsupported charset "${charset}": send UTF-8`), undefined);
      return;
    }
    let text: string;
    try {
      text = utf8.decode(buffer);
    } catch {
      done(new InvalidInputError("request body is not valid UTF-8"), undefined);
      return;
    }
    secureJson(request, text, (err, value) => {
      if (err === null) {
        done(null, value);
        return;
      }
      if (text.length === 0) {
        done(new InvalidInputError("request body is empty: send a JSON object"), undefined);
        return;
      }
      // Tell a syntax error (with where) from a forbidden prototype key.
      let why = "it contains a forbidden prototype key (__proto__ or constructor.prototype)";
      try {
        JSON.parse(text);
      } catch (syntax) {
        why = syntax instanceof Error ? syntax.message : "syntax error";
      }
      done(new InvalidInputError(`request body is not valid JSON: ${why}`), undefined);
    });
  });

  app.setErrorHandler((err, request, reply) => {
    const out = toHttpError(err, bodyLimit);
    answeredCodes.set(request.raw, out.body.error.code);
    if (out.internal) request.log.error({ err }, "internal error");
    const send = (): void => {
      void reply.code(out.status).type("application/json; charset=utf-8").send(out.body);
    };
    // A body refused before it was read (413) is drained first: closing with unread
    // bytes makes the client's TCP stack reset the connection and drop the answer.
    if (out.status === 413)
      drainThen(request.raw, Math.max(DRAIN_BYTES, bodyLimit), DRAIN_MS, send);
    else send();
  });

  app.setNotFoundHandler((request, reply) => {
    const err = new NotFoundError(request.method, request.url);
    answeredCodes.set(request.raw, err.code);
    void reply
      .code(404)
      .type("application/json; charset=utf-8")
      .send({ error: { code: err.code, message: err.message, path: null } });
  });

  const version = packageVersion();
  const openapi = JSON.stringify(openApiDocument(version));

  app.get("/healthz", async () => ({ status: "ok", store: store !== null }));

  app.get("/openapi.json", async (_request, reply) => {
    void reply.type("application/json; charset=utf-8");
    return openapi;
  });

  app.post("/v1/select-memory", async (request) => {
    const body: unknown = request.body;
    const tokenCounter = counters().forRequest(tokenizerOf(body));
    return selectMemoryContext(body as SelectMemoryRequest, tokenCounter ? { tokenCounter } : {});
  });

  app.post("/v1/plan-prompt", async (request) => {
    // JSON callers get the JSON schema: library-only fields (condition, builder) are not data.
    const parsed = PlanPromptJsonRequestSchema.safeParse(request.body);
    if (!parsed.success) throw invalidFromZod(parsed.error);
    const tokenCounter = counters().forRequest(parsed.data.tokenizer);
    return planPrompt(parsed.data, tokenCounter ? { tokenCounter } : {});
  });

  const resolveWorkspace = async (requested: string | undefined): Promise<string> => {
    if (requested === undefined) return root;
    let real: string;
    try {
      real = await realpath(resolve(root, requested));
    } catch {
      throw new InvalidInputError(`workspace ${requested} does not exist`, "workspace");
    }
    if (!isInside(root, real)) {
      throw new InvalidInputError(
        "workspace must be inside the server's workspace root",
        "workspace",
      );
    }
    return real;
  };

  app.post("/v1/assemble", async (request) => {
    const parsed = AssembleRequestSchema.safeParse(request.body);
    if (!parsed.success) throw invalidFromZod(parsed.error);
    const r = parsed.data;
    if (r.tokenizer !== undefined && r.model !== undefined) {
      throw new InvalidInputError("give either a tokenizer or a model, not both", "tokenizer");
    }
    const workspace = await resolveWorkspace(r.workspace);
    // The pooled counter for the tokenizer this assembly will use (request, else config).
    const name =
      r.model !== undefined
        ? tokenizerForModel(r.model)
        : (r.tokenizer ?? (await loadWorkspaceConfig(workspace)).tokenizer);
    const tokenCounter = counters().forRequest(name);
    const out = await assembleWorkspace({
      workspace,
      query: r.query,
      now: r.now,
      ...(tokenCounter !== undefined ? { tokenCounter } : {}),
      ...(r.tokenizer !== undefined ? { tokenizer: r.tokenizer } : {}),
      ...(r.mode !== undefined ? { mode: r.mode } : {}),
      ...(r.user !== undefined ? { user: r.user } : {}),
      ...(r.budgetChars !== undefined ? { budgetChars: r.budgetChars } : {}),
      ...(r.budgetTokens !== undefined ? { budgetTokens: r.budgetTokens } : {}),
      ...(r.renderer !== undefined ? { renderer: r.renderer } : {}),
      ...(store !== null ? { openStore: store } : {}),
    });
    return {
      prompt: out.prompt,
      manifest: out.manifest,
      memoryPlan: out.memoryPlan,
      segmentPlan: out.segmentPlan,
    };
  });

  // The shared store, opened last so that nothing before can leak it.
  if (typeof options.store === "string") {
    store = openStore(options.store, { mustExist: true });
    ownStore = true;
  } else if (options.store === undefined) {
    const fallback = join(root, WORKSPACE_PATHS.store);
    if (existsSync(fallback)) {
      store = openStore(fallback, { mustExist: true });
      ownStore = true;
    }
  } else {
    store = options.store;
  }

  if (ownStore && store !== null) {
    const owned = store;
    // onClose runs after in-flight requests have completed.
    app.addHook("onClose", async () => {
      await owned.close();
    });
  }

  try {
    await app.ready();
  } catch (err) {
    if (ownStore) await store?.close();
    throw err;
  }
  return app;
}
