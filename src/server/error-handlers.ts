/**
 * Answers every failure with the error object: malformed HTTP before any request exists,
 * errors before routing, errors thrown by a route, and unknown routes.
 */
import type { IncomingMessage } from "node:http";
import type { Duplex } from "node:stream";
import type { FastifyInstance, FastifyReply } from "fastify";
import { nodeErrorCode } from "../errors/index.js";
import { NotFoundError, toHttpError } from "./errors.js";
import { recordAnswerCode } from "./request-log.js";

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

// Connection-level faults (before any request exists): status, reason, message.
const CLIENT_ERRORS: Readonly<Record<string, readonly [number, string, string]>> = {
  HPE_HEADER_OVERFLOW: [431, "Request Header Fields Too Large", "request headers too large"],
  ERR_HTTP_REQUEST_TIMEOUT: [408, "Request Timeout", "request timed out"],
};

/** Answers malformed HTTP with the error object, then drops the connection. */
export function answerClientError(err: Error, socket: Duplex): void {
  const code = nodeErrorCode(err);
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

/** Answers an error raised before routing (a malformed URL) with the error object. */
export function answerFrameworkError(
  error: unknown,
  raw: IncomingMessage,
  reply: FastifyReply,
  bodyLimit: number,
): void {
  const out = toHttpError(error, bodyLimit);
  recordAnswerCode(raw, out.body.error.code);
  void reply.code(out.status).type("application/json; charset=utf-8").send(out.body);
}

/** Installs the handlers of thrown errors and of unknown routes. */
export function registerErrorHandlers(app: FastifyInstance, bodyLimit: number): void {
  app.setErrorHandler((err, request, reply) => {
    const out = toHttpError(err, bodyLimit);
    recordAnswerCode(request.raw, out.body.error.code);
    if (out.internal) request.log.error({ err }, "internal error");
    const send = (): void => {
      void reply.code(out.status).type("application/json; charset=utf-8").send(out.body);
    };
    // A body refused before it was read (413, 401) is drained first: closing with unread
    // bytes makes the client's TCP stack reset the connection and drop the answer.
    if (out.status === 413 || out.status === 401)
      drainThen(request.raw, Math.max(DRAIN_BYTES, bodyLimit), DRAIN_MS, send);
    else send();
  });

  app.setNotFoundHandler((request, reply) => {
    const err = new NotFoundError(request.method, request.url);
    recordAnswerCode(request.raw, err.code);
    void reply
      .code(404)
      .type("application/json; charset=utf-8")
      .send({ error: { code: err.code, message: err.message, path: null } });
  });
}
