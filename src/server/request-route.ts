/**
 * `POST /v1/request`: the whole agent request of `assembleRequest` over JSON — the system
 * side from `{ segments }` (as `/v1/plan-prompt`) or a workspace assembly request (as
 * `/v1/assemble`), the conversation planned in the room left, rendered for the provider —
 * through the library's one function and table of defaults (`planAgentRequest`).
 */
import type { FastifyInstance } from "fastify";
import {
  badSystem,
  isSegmentsSystem,
  parseAgentRequestJson,
  requestFromJson,
  segmentsSystem,
  underSystem,
} from "../agent/index.js";
import { rejectUnknownFields } from "../text/index.js";
import { type AssembleRouteContext, assembleBody, JSON_TYPE } from "./assemble-route.js";
import { createPieceEncoder } from "./json-reply.js";
import { AssembleRequestSchema } from "./schema.js";

/** Registers `/v1/request`. */
export function registerRequestRoute(app: FastifyInstance, ctx: AssembleRouteContext): void {
  const json = createPieceEncoder();
  app.post("/v1/request", async (request, reply) => {
    const r = parseAgentRequestJson(request.body);
    const raw = r.system;
    let answer: ReturnType<typeof requestFromJson>;
    if (isSegmentsSystem(raw)) {
      answer = requestFromJson(r, await segmentsSystem(raw, ctx.counters()), null);
    } else {
      if (!Object.hasOwn(raw, "query")) throw badSystem();
      const assembly = await underSystem(() => {
        rejectUnknownFields(AssembleRequestSchema, raw);
        return assembleBody(ctx, request, raw);
      });
      answer = requestFromJson(r, assembly, assembly.manifest);
    }
    // Sent as bytes, written in pieces (createPieceEncoder): nothing of the answer recurs
    // across answers, so the memoizing encoder of /v1/assemble would only walk it.
    void reply.header("content-type", JSON_TYPE);
    return json.encode(answer);
  });
}
