/**
 * The request schema of every POST route, and the one strict layer over them: before a
 * route runs, its body is checked for fields its schema does not declare, at any depth
 * (`unknown_field`, 400, with the full path and a "did you mean"). The OpenAPI document
 * publishes the same strict forms.
 */
import type { FastifyInstance } from "fastify";
import { z } from "zod";
import { AgentRequestJsonSchema } from "../agent/index.js";
import { AssembleContextRequestSchema } from "../assemble/index.js";
import { PlanConversationJsonRequestSchema } from "../conversation/index.js";
import { SelectMemoryRequestSchema } from "../memory/index.js";
import { PlanPromptJsonRequestSchema } from "../plan/index.js";
import { MemoryRecordSchema } from "../store/index.js";
import { rejectUnknownFields, strictSchema } from "../text/index.js";
import {
  AssembleRequestSchema,
  MAX_MEMORIES_PER_REQUEST,
  MemoriesRequestSchema,
  RecallRequestSchema,
} from "./schema.js";

/**
 * `POST /v1/memories` as published: the envelope, each record with the store's own schema
 * (the route checks the envelope, the store each record).
 */
export const MemoriesRequestFullSchema = MemoriesRequestSchema.extend({
  records: z
    .array(MemoryRecordSchema)
    .min(1)
    .max(MAX_MEMORIES_PER_REQUEST)
    .describe(MemoriesRequestSchema.shape.records.description ?? ""),
});

/** Each POST route's request schema, strict at every depth. */
export const REQUEST_SCHEMAS = {
  "/v1/select-memory": strictSchema(SelectMemoryRequestSchema),
  "/v1/plan-prompt": strictSchema(PlanPromptJsonRequestSchema),
  "/v1/plan-conversation": strictSchema(PlanConversationJsonRequestSchema),
  "/v1/assemble-context": strictSchema(AssembleContextRequestSchema),
  "/v1/assemble": strictSchema(AssembleRequestSchema),
  "/v1/memories": strictSchema(MemoriesRequestFullSchema),
  "/v1/recall": strictSchema(RecallRequestSchema),
  "/v1/request": strictSchema(AgentRequestJsonSchema),
} as const satisfies Readonly<Record<string, z.ZodType>>;

/** The strict schema of a POST route's URL, if it has one. */
function schemaOf(url: string | undefined): z.ZodType | null {
  return url !== undefined && Object.hasOwn(REQUEST_SCHEMAS, url)
    ? REQUEST_SCHEMAS[url as keyof typeof REQUEST_SCHEMAS]
    : null;
}

/**
 * Routes whose handler makes the same strict check itself, first, more cheaply:
 * `/v1/request` checks its messages by the conversation stage's fast path
 * (`parseAgentRequestJson`).
 */
const CHECKED_BY_ROUTE: ReadonlySet<string> = new Set(["/v1/request"]);

/** Rejects unknown fields in the body of every POST route of {@link REQUEST_SCHEMAS}. */
export function registerStrictRequests(app: FastifyInstance): void {
  app.addHook("preValidation", (request, _reply, done) => {
    const url = request.routeOptions.url;
    const own = url !== undefined && CHECKED_BY_ROUTE.has(url);
    const schema = request.method === "POST" && !own ? schemaOf(url) : null;
    try {
      if (schema) rejectUnknownFields(schema, request.body);
      done();
    } catch (err) {
      done(err as Error);
    }
  });
}
