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
} from "../agent/index.js";
import { InvalidInputError, invalidFromZod, PromptctxError } from "../errors/index.js";
import { PlanPromptJsonRequestSchema, planPrompt } from "../plan/index.js";
import { rejectUnknownFields } from "../text/index.js";
import { type AssembleRouteContext, assembleBody } from "./assemble-route.js";
import { AssembleRequestSchema } from "./schema.js";

// Runs `f`, giving an invalid-input error's path under `system`.
async function underSystem<T>(f: () => Promise<T> | T): Promise<T> {
  try {
    return await f();
  } catch (err) {
    if (err instanceof InvalidInputError && err.path !== null) {
      const path = err.path.startsWith("[") ? `system${err.path}` : `system.${err.path}`;
      throw new InvalidInputError(err.message, path, err.code as "invalid_input" | "unknown_field");
    }
    if (err instanceof PromptctxError) throw err;
    throw err;
  }
}

/** Registers `/v1/request`. */
export function registerRequestRoute(app: FastifyInstance, ctx: AssembleRouteContext): void {
  app.post("/v1/request", async (request) => {
    const r = parseAgentRequestJson(request.body);
    const raw = r.system;
    if (isSegmentsSystem(raw)) {
      const system = await underSystem(() => {
        rejectUnknownFields(PlanPromptJsonRequestSchema, raw);
        const parsed = PlanPromptJsonRequestSchema.safeParse(raw);
        if (!parsed.success) throw invalidFromZod(parsed.error);
        const tokenCounter = ctx.counters().forRequest(parsed.data.tokenizer);
        return planPrompt(parsed.data, tokenCounter ? { tokenCounter } : {});
      });
      return requestFromJson(r, system, null);
    }
    if (!Object.hasOwn(raw, "query")) throw badSystem();
    const assembly = await underSystem(() => {
      rejectUnknownFields(AssembleRequestSchema, raw);
      return assembleBody(ctx, request, raw);
    });
    return requestFromJson(r, assembly, assembly.manifest);
  });
}
