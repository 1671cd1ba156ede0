/** Structured request logs: one JSON line per request, with the error code it answered. */
import { type FastifyReply, type FastifyRequest, LogController } from "fastify";

/** What `ServerOptions.logger` takes. */
export type LoggerOption = boolean | { stream?: NodeJS.WritableStream; level?: string };

/** The error code each failed request answered with (for its log line). */
const answeredCodes = new WeakMap<object, string>();

/** Records the error code `raw` (the request's Node object) was answered with. */
export function recordAnswerCode(raw: object, code: string): void {
  answeredCodes.set(raw, code);
}

/** One JSON line per request: method, route, status, ms and the error code, if any. */
export class RequestLineLogController extends LogController {
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

/** Fastify's logger settings for `option`: off, or info level to stderr unless told. */
export function loggerSettings(
  option: LoggerOption | undefined,
): false | { level: string; stream: NodeJS.WritableStream } {
  if (option === undefined || option === false) return false;
  return {
    level: (option === true ? undefined : option.level) ?? "info",
    stream: (option === true ? undefined : option.stream) ?? process.stderr,
  };
}
