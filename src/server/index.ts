/**
 * The HTTP service (docs/surfaces.md, Fastify): the same JSON contracts as the CLI, with
 * error objects and statuses, and the inspector page (docs/inspector.md). An edge: may
 * import every stage below it, never cli.
 */
export {
  buildServer,
  COUNTER_POOL_RESET_BYTES,
  DEFAULT_BODY_LIMIT,
  type ServerOptions,
} from "./app.js";
export {
  type AuthOptions,
  AuthOptionsSchema,
  authFromEnv,
  type Principal,
  type TokenGrant,
  UnauthorizedError,
} from "./auth.js";
export { type ClusterOptions, runCluster } from "./cluster.js";
export {
  type HttpError,
  NotFoundError,
  PayloadTooLargeError,
  STATUS_OF,
  toHttpError,
} from "./errors.js";
export {
  HostNotAllowedError,
  isLoopbackHost,
  LOOPBACK_NAMES,
  OriginNotAllowedError,
  parseAllowHosts,
  registerHostGuard,
} from "./host-guard.js";
export {
  DEFAULT_PRICING,
  type InspectSource,
  inspectData,
  inspectDiff,
  recordingSource,
} from "./inspect/data.js";
export { INSPECTOR_ASSETS, registerInspectRoutes } from "./inspect/routes.js";
export type { DiffView, InspectData, TurnView } from "./inspector/types.js";
export { NoStoreError } from "./memory/routes.js";
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
  MAX_MEMORIES_PER_REQUEST,
  MemoriesRequestSchema,
  MemoriesResponseSchema,
  RENDERERS,
  type RecallRequest,
  RecallRequestSchema,
  RecallResponseSchema,
} from "./schema.js";
