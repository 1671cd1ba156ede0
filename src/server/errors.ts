/**
 * Thrown values → HTTP status and the public error object. Only promptctx's own errors
 * and Fastify's request-level errors (whose messages are fixed strings) keep their
 * message; anything else is a 500 with a generic one. No stack ever leaves the process.
 */
import {
  type ErrorCode,
  type ErrorObject,
  InvalidInputError,
  nodeErrorCode,
  PromptctxError,
  toErrorObject,
} from "../errors/index.js";

/** HTTP status of each error code. */
export const STATUS_OF: Readonly<Record<ErrorCode, number>> = {
  invalid_input: 400,
  unknown_field: 400,
  unsupported_version: 400,
  unsupported_pattern: 400,
  unauthorized: 401,
  origin_not_allowed: 403,
  scope_required: 403,
  host_not_allowed: 421,
  not_found: 404,
  store_not_configured: 409,
  memory_rejected: 400,
  memory_too_large: 413,
  scope_full: 409,
  path_refused: 400,
  payload_too_large: 413,
  prompt_budget_exceeded: 422,
  source_failed: 502,
  connection_refused: 502,
  embedder_mismatch: 409,
  embedder_dimensions: 502,
  embedder_failed: 502,
  source_timeout: 504,
  invalid_counter_result: 500,
  internal_error: 500,
};

/** The body exceeded the server's limit. */
export class PayloadTooLargeError extends PromptctxError {
  constructor(limit: number) {
    super("payload_too_large", `request body exceeds the limit of ${limit} bytes`);
    this.name = "PayloadTooLargeError";
  }
}

/** No route for the method and URL. */
export class NotFoundError extends PromptctxError {
  constructor(method: string, url: string) {
    super("not_found", `no route ${method} ${url.length > 200 ? `${url.slice(0, 200)}…` : url}`);
    this.name = "NotFoundError";
  }
}

/** A response to send: status and body. */
export interface HttpError {
  status: number;
  body: ErrorObject;
  /** True when the error is the server's fault (log it with its stack). */
  internal: boolean;
}

// Fastify request-level errors → our codes (their messages are fixed and safe).
const FASTIFY_MESSAGES: Readonly<Record<string, string>> = {
  FST_ERR_CTP_INVALID_MEDIA_TYPE: "content-type must be application/json",
  FST_ERR_CTP_INVALID_TYPE: "content-type must be application/json",
  FST_ERR_CTP_EMPTY_JSON_BODY: "request body is empty: send a JSON object",
  FST_ERR_CTP_INVALID_JSON_BODY: "request body is not valid JSON",
  FST_ERR_CTP_INVALID_CONTENT_LENGTH: "request body length does not match content-length",
  FST_ERR_BAD_URL: "malformed URL",
};

function statusCodeOf(err: unknown): number | undefined {
  if (typeof err !== "object" || err === null) return undefined;
  const s = (err as { statusCode?: unknown }).statusCode;
  return typeof s === "number" && Number.isInteger(s) ? s : undefined;
}

/**
 * Maps any thrown value to a status and an error object.
 *
 * @example toHttpError(new InvalidInputError("bad", "now")).status // 400
 */
export function toHttpError(err: unknown, bodyLimit: number): HttpError {
  if (err instanceof PromptctxError) {
    const body = toErrorObject(err);
    const status = STATUS_OF[body.error.code] ?? 500;
    if (status === 500) {
      // A counter or another internal fault: the code stays, the detail does not.
      return {
        status,
        body: { error: { code: body.error.code, message: "internal error", path: null } },
        internal: true,
      };
    }
    return { status, body, internal: false };
  }
  const code = nodeErrorCode(err);
  const status = statusCodeOf(err);
  if (code === "FST_ERR_CTP_BODY_TOO_LARGE" || status === 413) {
    return {
      status: 413,
      body: toErrorObject(new PayloadTooLargeError(bodyLimit)),
      internal: false,
    };
  }
  if (code !== undefined && code in FASTIFY_MESSAGES) {
    const message = FASTIFY_MESSAGES[code] as string;
    return { status: 400, body: toErrorObject(new InvalidInputError(message)), internal: false };
  }
  if (status !== undefined && status >= 400 && status < 500) {
    // Another client-side fault Fastify detected (aborted body, bad header …).
    return {
      status: 400,
      body: toErrorObject(new InvalidInputError("bad request")),
      internal: false,
    };
  }
  return { status: 500, body: toErrorObject(err), internal: true };
}
