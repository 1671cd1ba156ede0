/**
 * `GET /openapi.json`: an OpenAPI 3.1 document generated from the same zod schemas that
 * validate the requests (`z.toJSONSchema`), so the contract has one source of truth.
 */
import { z } from "zod";
import {
  ApproveRequestSchema,
  ForgetRequestSchema,
  ForgetResponseSchema,
  ListMemoriesQuerySchema,
  MemoryEntrySchema,
  MemoryHistorySchema,
  MemoryPageSchema,
  MemoryQuerySchema as MemoryQuerySchemaForDoc,
} from "./memory/manage-schema.js";
import { REQUEST_SCHEMAS } from "./requests.js";
import {
  AssembleResponseSchema,
  ErrorObjectSchema,
  HealthSchema,
  MemoriesResponseSchema,
  RecallResponseSchema,
} from "./schema.js";

/** The routes of the service, as `METHOD path`. */
export const ROUTES = [
  "POST /v1/select-memory",
  "POST /v1/plan-prompt",
  "POST /v1/plan-conversation",
  "POST /v1/assemble-context",
  "POST /v1/assemble",
  "POST /v1/memories",
  "POST /v1/recall",
  "GET /v1/memories",
  "GET /v1/memories/{memoryId}",
  "GET /v1/memories/{memoryId}/history",
  "POST /v1/memories/{memoryId}/approve",
  "DELETE /v1/memories/{memoryId}",
  "POST /v1/memories/forget",
  "POST /v1/request",
  "GET /healthz",
  "GET /openapi.json",
] as const;

function jsonSchema(schema: z.ZodType, io: "input" | "output"): Record<string, unknown> {
  const { $schema: _drop, ...rest } = z.toJSONSchema(schema, {
    target: "draft-2020-12",
    io,
  }) as Record<string, unknown>;
  return rest;
}

const ref = (name: string) => ({ $ref: `#/components/schemas/${name}` });
const json = (schema: unknown) => ({ "application/json": { schema } });

function errorResponses(statuses: readonly number[]): Record<string, unknown> {
  const why: Record<number, string> = {
    400: "invalid input (malformed JSON, wrong content-type, a field that breaks the contract; unknown_field for a field the contract does not have; memory_rejected when the server's takeover gate is in reject mode, with the rule in the message)",
    401: "a bearer token is required (the deployment configured tokens) and none valid was sent",
    404: "not_found: the scope holds no memory of that id (the same answer for another scope's id)",
    409: "store_not_configured: the server has no memory store (start it with --store FILE); scope_full: the write would take the scope over its records or bytes limit (nothing written)",
    413: "request body over the server's limit; memory_too_large: a record over the store's per-record limit (nothing written)",
    422: "required content cannot fit the budget (prompt_budget_exceeded)",
    500: "internal error (generic message)",
    502: "a required source failed (source_failed)",
    504: "a required source timed out (source_timeout)",
  };
  return Object.fromEntries(
    statuses.map((s) => [String(s), { description: why[s], content: json(ref("Error")) }]),
  );
}

// Every operation may answer 401 when the deployment configured tokens.
function postOperation(
  operationId: string,
  summary: string,
  request: string,
  response: unknown,
  errors: readonly number[],
): Record<string, unknown> {
  return {
    post: {
      operationId,
      summary,
      requestBody: { required: true, content: json(ref(request)) },
      responses: {
        "200": { description: "success", content: json(response) },
        ...errorResponses(errors),
      },
    },
  };
}

/** The request and response schemas, generated from the zod schemas that validate them. */
function componentSchemas(): Record<string, unknown> {
  return {
    SelectMemoryRequest: jsonSchema(REQUEST_SCHEMAS["/v1/select-memory"], "input"),
    PlanPromptRequest: jsonSchema(REQUEST_SCHEMAS["/v1/plan-prompt"], "input"),
    PlanConversationRequest: jsonSchema(REQUEST_SCHEMAS["/v1/plan-conversation"], "input"),
    AssembleRequest: jsonSchema(REQUEST_SCHEMAS["/v1/assemble"], "input"),
    AssembleContextRequest: jsonSchema(REQUEST_SCHEMAS["/v1/assemble-context"], "input"),
    AssembleResponse: jsonSchema(AssembleResponseSchema, "output"),
    Error: jsonSchema(ErrorObjectSchema, "output"),
    Health: jsonSchema(HealthSchema, "output"),
    MemoriesRequest: jsonSchema(REQUEST_SCHEMAS["/v1/memories"], "input"),
    MemoriesResponse: jsonSchema(MemoriesResponseSchema, "output"),
    RecallRequest: jsonSchema(REQUEST_SCHEMAS["/v1/recall"], "input"),
    RecallResponse: jsonSchema(RecallResponseSchema, "output"),
    ApproveRequest: jsonSchema(ApproveRequestSchema, "input"),
    ForgetRequest: jsonSchema(ForgetRequestSchema, "input"),
    ForgetResponse: jsonSchema(ForgetResponseSchema, "output"),
    MemoryEntry: jsonSchema(MemoryEntrySchema, "output"),
    MemoryPage: jsonSchema(MemoryPageSchema, "output"),
    MemoryHistory: jsonSchema(MemoryHistorySchema, "output"),
    AgentRequest: agentRequestSchema(),
  };
}

/** The query parameters of a GET/DELETE route, from its zod object schema. */
function queryParameters(schema: z.ZodType): Array<Record<string, unknown>> {
  const doc = jsonSchema(schema, "input") as {
    properties?: Record<string, Record<string, unknown>>;
  };
  return Object.entries(doc.properties ?? {}).map(([name, s]) => ({
    name,
    in: "query",
    required: false,
    description: s.description,
    schema: { ...s, description: undefined },
  }));
}

const MEMORY_ID = {
  name: "memoryId",
  in: "path",
  required: true,
  schema: { type: "string", minLength: 1 },
};

/** `op` answering `response`, with `errors`. */
function operation(
  operationId: string,
  summary: string,
  response: unknown,
  errors: readonly number[],
  extra: Record<string, unknown> = {},
): Record<string, unknown> {
  return {
    operationId,
    summary,
    ...extra,
    responses: {
      "200": { description: "success", content: json(response) },
      ...errorResponses(errors),
    },
  };
}

/** `/v1/memories` (writes and pages) and the memory management paths. */
function memoryPaths(): Record<string, Record<string, unknown>> {
  const oneQuery = queryParameters(MemoryQuerySchemaForDoc);
  return {
    "/v1/memories": {
      ...postOperation(
        "writeMemories",
        "Add or import a batch of memory records, idempotent by memoryId; the takeover gate holds (quarantines) or rejects text that tries to steer the model",
        "MemoriesRequest",
        ref("MemoriesResponse"),
        [400, 401, 409, 413, 500],
      ),
      get: operation(
        "listMemories",
        "A page of one scope's memories by id, with status, rule and version",
        ref("MemoryPage"),
        [400, 401, 409, 500],
        { parameters: queryParameters(ListMemoriesQuerySchema) },
      ),
    },
    "/v1/memories/{memoryId}": {
      get: operation(
        "getMemory",
        "One memory of the scope",
        ref("MemoryEntry"),
        [400, 401, 404, 409, 500],
        {
          parameters: [MEMORY_ID, ...oneQuery],
        },
      ),
      delete: operation(
        "forgetMemory",
        "Forget (erase) one memory, every version; an id the scope does not hold removes nothing",
        ref("ForgetResponse"),
        [400, 401, 409, 500],
        { parameters: [MEMORY_ID, ...oneQuery] },
      ),
    },
    "/v1/memories/{memoryId}/history": {
      get: operation(
        "memoryHistory",
        "Every version of a memory, oldest first",
        ref("MemoryHistory"),
        [400, 401, 404, 409, 500],
        { parameters: [MEMORY_ID, ...oneQuery] },
      ),
    },
    "/v1/memories/{memoryId}/approve": {
      post: operation(
        "approveMemory",
        "Release a memory the takeover gate quarantined",
        ref("MemoryEntry"),
        [400, 401, 404, 409, 500],
        {
          parameters: [MEMORY_ID],
          requestBody: { required: false, content: json(ref("ApproveRequest")) },
        },
      ),
    },
    "/v1/memories/forget": {
      post: operation(
        "forgetMemories",
        "Forget one memory (memoryId) or every memory of the scope (all: true, optionally by kinds/categories)",
        ref("ForgetResponse"),
        [400, 401, 409, 413, 500],
        { requestBody: { required: true, content: json(ref("ForgetRequest")) } },
      ),
    },
  };
}

// `POST /v1/request`: the whole agent request.
function requestOperation(): Record<string, unknown> {
  return postOperation(
    "request",
    "The whole agent request (assembleRequest over JSON): a provider body ready to send, with its plan, budget and manifest",
    "AgentRequest",
    {
      type: "object",
      description:
        "{ body, plan, budget, manifest }: body for the provider's official client; plan (conversation, system, request report, stablePrefix, explanation); budget; manifest (workspace form) or null. With `include` in the request, body and only the parts it lists (include: [] answers { body }).",
    },
    [400, 401, 413, 422, 500, 502, 504],
  );
}

// `/v1/request`'s body: `system` is one of two published requests (the route checks which).
function agentRequestSchema(): Record<string, unknown> {
  const schema = jsonSchema(REQUEST_SCHEMAS["/v1/request"], "input");
  const properties = schema.properties as Record<string, unknown>;
  properties.system = {
    description:
      "The system side: { segments } as /v1/plan-prompt takes (except that an omitted budgetChars means no char budget here: the context window budgets the request in tokens), or a workspace assembly request as /v1/assemble takes.",
    anyOf: [ref("PlanPromptRequest"), ref("AssembleRequest")],
  };
  return schema;
}

/** The two GET routes of the service itself. */
const META_PATHS = {
  "/healthz": {
    get: {
      operationId: "health",
      summary: "Liveness",
      responses: { "200": { description: "alive", content: json(ref("Health")) } },
    },
  },
  "/openapi.json": {
    get: {
      operationId: "openapi",
      summary: "This document",
      responses: { "200": { description: "OpenAPI 3.1", content: json({ type: "object" }) } },
    },
  },
};

/** The document's top level. */
export interface OpenApiDocument {
  openapi: string;
  info: Record<string, unknown>;
  security: Array<Record<string, string[]>>;
  paths: Record<string, Record<string, unknown>>;
  components: { securitySchemes: Record<string, unknown>; schemas: Record<string, unknown> };
}

/**
 * Builds the OpenAPI document.
 *
 * @example openApiDocument("0.1.0").paths["/v1/assemble"].post.operationId // "assemble"
 */
export function openApiDocument(version: string): OpenApiDocument {
  return {
    openapi: "3.1.0",
    info: {
      title: "promptctx",
      version,
      description:
        "Deterministic, budgeted, explainable context assembly for LLM agents. Every non-2xx response is an error object. Without configured tokens the service is open (bound to loopback by default); with them every request needs `Authorization: Bearer <token>` (401 otherwise), and a token bound to a scope reads and writes that scope only, whatever the body says. A request whose Host is not one of the service's names (127.0.0.1, localhost, [::1] with the bound port, or an allowed host) gets 421 host_not_allowed; a cross-origin request with a body gets 403 origin_not_allowed.",
    },
    security: [{}, { bearer: [] }],
    paths: {
      "/v1/select-memory": postOperation(
        "selectMemory",
        "Select recalled memories for a prompt",
        "SelectMemoryRequest",
        {
          type: "object",
          description: "The memory plan: selected memories and a decision per candidate.",
        },
        [400, 401, 413, 500],
      ),
      "/v1/plan-prompt": postOperation(
        "planPrompt",
        "Plan a system prompt under a budget",
        "PlanPromptRequest",
        { type: "object", description: "The segment plan: the prompt and a decision per segment." },
        [400, 401, 413, 422, 500],
      ),
      "/v1/plan-conversation": postOperation(
        "planConversation",
        "Plan a conversation's messages under a token budget",
        "PlanConversationRequest",
        {
          type: "object",
          description: "The conversation plan: the messages kept and a decision per unit.",
        },
        [400, 401, 413, 422, 500],
      ),
      "/v1/assemble": postOperation(
        "assemble",
        "Assemble the prompt for a query over a workspace",
        "AssembleRequest",
        ref("AssembleResponse"),
        [400, 401, 413, 422, 500, 502, 504],
      ),
      "/v1/assemble-context": postOperation(
        "assembleContext",
        "Assemble from inline slot data: the stateless service contract (docs/inline-assembly.md)",
        "AssembleContextRequest",
        ref("AssembleResponse"),
        [400, 413, 422, 500],
      ),
      ...memoryPaths(),
      "/v1/request": requestOperation(),
      "/v1/recall": postOperation(
        "recall",
        "Recall in one scope by words, and by meaning when the server has an embedder (serve --embedder); hits carry score breakdowns and, by meaning, their match (path, lexical and semantic ranks, similarity, fused score)",
        "RecallRequest",
        ref("RecallResponse"),
        [400, 401, 409, 413, 500],
      ),
      ...META_PATHS,
    },
    components: {
      securitySchemes: { bearer: { type: "http", scheme: "bearer" } },
      schemas: componentSchemas(),
    },
  };
}
