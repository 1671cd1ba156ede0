/** The HTTP service of spec 08 (Fastify): same JSON contracts as the CLI. */
export {
  buildServer,
  COUNTER_POOL_RESET_BYTES,
  DEFAULT_BODY_LIMIT,
  type ServerOptions,
} from "./app.js";
export { type ClusterOptions, runCluster } from "./cluster.js";
export {
  type HttpError,
  NotFoundError,
  PayloadTooLargeError,
  STATUS_OF,
  toHttpError,
} from "./errors.js";
export { openApiDocument, ROUTES } from "./openapi.js";
export {
  DEFAULT_GRACE_MS,
  DEFAULT_HOST,
  DEFAULT_PORT,
  type RunningServer,
  type RunOptions,
  runServer,
  type StartOptions,
  startServer,
} from "./run.js";
export {
  type AssembleRequest,
  AssembleRequestSchema,
  AssembleResponseSchema,
  ErrorObjectSchema,
  HealthSchema,
  RENDERERS,
} from "./schema.js";
