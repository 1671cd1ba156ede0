/**
 * `/v1/select-memory`, `/v1/plan-prompt`, `/v1/plan-conversation` and
 * `/v1/assemble-context`: the pure stages over JSON, as the CLI runs them.
 */
import type { FastifyInstance } from "fastify";
import { assembleContext } from "../assemble/index.js";
import { PlanConversationJsonRequestSchema, planConversation } from "../conversation/index.js";
import { invalidFromZod } from "../errors/index.js";
import { type SelectMemoryRequest, selectMemoryContext } from "../memory/index.js";
import { PlanPromptJsonRequestSchema, planPrompt } from "../plan/index.js";
import { type CounterPool, requestTokenizer } from "../tokens/index.js";

/** Registers the stage routes; each request's counter comes from `counters()`. */
export function registerStageRoutes(app: FastifyInstance, counters: () => CounterPool): void {
  app.post("/v1/select-memory", async (request) => {
    const body: unknown = request.body;
    const tokenCounter = counters().forRequest(requestTokenizer(body));
    return selectMemoryContext(body as SelectMemoryRequest, tokenCounter ? { tokenCounter } : {});
  });

  app.post("/v1/plan-prompt", async (request) => {
    // JSON callers get the JSON schema: library-only fields (condition, builder) are not data.
    const parsed = PlanPromptJsonRequestSchema.safeParse(request.body);
    if (!parsed.success) throw invalidFromZod(parsed.error);
    const tokenCounter = counters().forRequest(parsed.data.tokenizer);
    return planPrompt(parsed.data, tokenCounter ? { tokenCounter } : {});
  });

  app.post("/v1/plan-conversation", async (request) => {
    const parsed = PlanConversationJsonRequestSchema.safeParse(request.body);
    if (!parsed.success) throw invalidFromZod(parsed.error);
    const tokenCounter = counters().forRequest(parsed.data.tokenizer);
    return planConversation({ ...parsed.data, tokenizer: tokenCounter ?? parsed.data.tokenizer });
  });

  // Stateless assembly from inline slot data (docs/inline-assembly.md): the same object as the CLI's.
  app.post("/v1/assemble-context", async (request) => {
    const body: unknown = request.body;
    const tokenCounter = counters().forRequest(requestTokenizer(body));
    const out = await assembleContext(body, tokenCounter ? { tokenCounter } : {});
    return {
      prompt: out.prompt,
      manifest: out.manifest,
      memoryPlan: out.memoryPlan,
      segmentPlan: out.segmentPlan,
    };
  });
}
