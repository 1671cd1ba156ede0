/**
 * The JSON form of the whole agent request (`POST /v1/request`, `promptctx request`): the
 * body a caller in any language sends, validated strictly, and {@link requestFromJson},
 * which builds the request through {@link planAgentRequest} — the same function and
 * defaults as the library — and answers `{ body, plan, budget, manifest }`.
 */
import { z } from "zod";
import {
  ConversationPolicySchema,
  type MessageInput,
  MessageSchema,
  parseMessages,
  rejectUnknownMessageFields,
} from "../../conversation/index.js";
import { InvalidInputError, invalidFromZod } from "../../errors/index.js";
import { PlanPromptJsonRequestSchema, type PromptPlan, planPrompt } from "../../plan/index.js";
import type { ProviderInput } from "../../render/index.js";
import {
  CONVERSATION_PROVIDERS,
  contextWindowFor,
  MODEL_CONTEXT_WINDOWS,
} from "../../render/index.js";
import { nonBlankString, rejectUnknownFields } from "../../text/index.js";
import { type CounterPool, resolveTokenCounter, tokenizerForModel } from "../../tokens/index.js";
import { explainRequest } from "./explain.js";
import { type PlannedRequest, planAgentRequest } from "./request.js";

/** The providers a request is rendered for: the renderer's own list (one place). */
export const REQUEST_PROVIDERS = CONVERSATION_PROVIDERS;

/** The render options a JSON caller may set (the library's, minus what the request sets). */
export const RequestRenderJsonSchema = z.object({
  ttl: z.enum(["5m", "1h"]).optional(),
  cacheTiers: z.array(z.enum(["static", "session"])).optional(),
  toolsBreakpoints: z.number().int().min(0).max(4).optional(),
  minCacheableTokens: z.number().int().min(0).optional(),
  cacheKeyPrefix: z.string().optional(),
  role: z.enum(["system", "developer"]).optional(),
  cacheHistory: z.boolean().optional(),
  memoryPlacement: z.enum(["system", "user"]).optional(),
  dynamicPlacement: z.enum(["system", "user"]).optional(),
});

/**
 * The parts of the answer a caller may ask for besides `body` (always there): `include`
 * lists them; omitted, all of them. A caller that only sends the body on (an agent loop)
 * asks for fewer, and the answer is that much smaller to build, write and read.
 */
export const ANSWER_PARTS = ["plan", "budget", "manifest"] as const;
export type AnswerPart = (typeof ANSWER_PARTS)[number];

/**
 * The body of `POST /v1/request`. `system` is either `{ segments }` (what `/v1/plan-prompt`
 * takes) or, on the server, the workspace assembly request of `/v1/assemble`; the route
 * checks it by its form. `tools` are the provider's tool definitions, counted (their JSON)
 * and placed in the body as `tools`.
 *
 * @example AgentRequestJsonSchema.parse({ provider: "anthropic", model: "claude-sonnet-4-6", messages: [], system: { segments: [] } }).provider // "anthropic"
 */
export const AgentRequestJsonSchema = z.object({
  provider: z.enum(REQUEST_PROVIDERS),
  model: nonBlankString,
  messages: z.array(MessageSchema),
  system: z.record(z.string(), z.unknown()),
  tools: z.array(z.record(z.string(), z.unknown())).optional(),
  contextWindow: z.number().int().min(1).optional(),
  responseReserve: z.number().int().min(0).optional(),
  policy: ConversationPolicySchema.partial().optional(),
  render: RequestRenderJsonSchema.optional(),
  include: z.array(z.enum(ANSWER_PARTS)).optional(),
});
export type AgentRequestJson = z.input<typeof AgentRequestJsonSchema>;

/**
 * The answer of `POST /v1/request`: `body`, and the parts the request's `include` names
 * (all when it is omitted); a part not asked for is left out.
 */
export interface AgentRequestAnswer {
  /** Ready to send with the provider's official client (`tools` included when given). */
  body: Record<string, unknown>;
  /** The conversation plan, the system side's plan and the renderer's report. */
  plan?: {
    conversation: PlannedRequest["conversation"];
    system: PlannedRequest["systemPlan"];
    request: Omit<PlannedRequest["request"], "body">;
    stablePrefix: PlannedRequest["stablePrefix"];
    explanation: ReturnType<typeof explainRequest>;
  };
  budget?: PlannedRequest["budget"];
  /** The assembly's manifest when the system side was assembled from a workspace; else null. */
  manifest?: unknown;
}

/** What a body's validation gives (the schema's output). */
export type AgentRequestJsonParsed = z.output<typeof AgentRequestJsonSchema>;

/** Fields the schema reads before `messages`: their problems are reported first. */
const BEFORE_MESSAGES = new Set(["provider", "model"]);

/**
 * The body checked strictly (an unknown field at any depth is `unknown_field`, before any
 * other problem) and validated, with the model checked against the known ones. The same
 * answers as the strict schema over the whole body, but the messages — nearly all of
 * it — are checked by the conversation stage's fast path (`rejectUnknownMessageFields`,
 * `parseMessages`), not by zod twice: at 1,000 messages that was as long as the JSON parse.
 *
 * @example parseAgentRequestJson({ provider: "anthropic", model: "claude-sonnet-4-6", messages: [], system: { segments: [] } }).model // "claude-sonnet-4-6"
 */
export function parseAgentRequestJson(raw: unknown): AgentRequestJsonParsed {
  const r = validated(raw);
  // An unknown model has no tokenizer and no window: say which are known.
  try {
    tokenizerForModel(r.model, "model");
    if (r.contextWindow === undefined) contextWindowFor(r.model);
  } catch (err) {
    if (!(err instanceof InvalidInputError)) throw err;
    const known = Object.keys(MODEL_CONTEXT_WINDOWS.models).join(", ");
    throw new InvalidInputError(
      `unknown model "${r.model}"; known models: ${known} (and any claude-* model; pass contextWindow for another gpt-*/o* model)`,
      "model",
    );
  }
  return r;
}

function validated(raw: unknown): AgentRequestJsonParsed {
  const body = raw !== null && typeof raw === "object" && !Array.isArray(raw) ? raw : null;
  const messages = body === null ? undefined : (body as { messages?: unknown }).messages;
  if (body === null || !Array.isArray(messages)) {
    rejectUnknownFields(AgentRequestJsonSchema, raw);
    const parsed = AgentRequestJsonSchema.safeParse(raw);
    if (!parsed.success) throw invalidFromZod(parsed.error);
    return parsed.data;
  }
  // Unknown fields first, the messages' before the envelope's (the strict schema's order).
  rejectUnknownMessageFields(messages, ["messages"]);
  const envelope = { ...body, messages: [] };
  rejectUnknownFields(AgentRequestJsonSchema, envelope);
  const parsed = AgentRequestJsonSchema.safeParse(envelope);
  const first = parsed.error?.issues[0]?.path[0];
  if (parsed.error && typeof first === "string" && BEFORE_MESSAGES.has(first)) {
    throw invalidFromZod(parsed.error);
  }
  const list = parseMessages(messages as MessageInput[]);
  if (!parsed.success) throw invalidFromZod(parsed.error);
  return { ...parsed.data, messages: list };
}

/** Whether `system` is the `{ segments }` form (else the workspace assembly request). */
export function isSegmentsSystem(system: Record<string, unknown>): boolean {
  return Object.hasOwn(system, "segments");
}

/**
 * Builds the request of a validated body over its system side (already planned or
 * assembled) through {@link planAgentRequest}: the library's one path and defaults.
 *
 * @example requestFromJson(parseAgentRequestJson(body), planPrompt({ segments }), null).body
 */
export function requestFromJson(
  r: AgentRequestJsonParsed,
  system: ProviderInput,
  manifest: unknown,
): AgentRequestAnswer {
  const counter = resolveTokenCounter(tokenizerForModel(r.model), "model");
  const toolsTokens = r.tools === undefined ? 0 : counter.count(JSON.stringify(r.tools));
  const planned = planAgentRequest({
    provider: r.provider,
    model: r.model,
    system,
    messages: r.messages as MessageInput[],
    tokenizer: counter,
    toolsTokens,
    ...(r.contextWindow !== undefined ? { contextWindow: r.contextWindow } : {}),
    ...(r.responseReserve !== undefined ? { responseReserve: r.responseReserve } : {}),
    ...(r.policy !== undefined ? { policy: r.policy } : {}),
    ...(r.render !== undefined ? { render: r.render } : {}),
  });
  const { body: _body, ...report } = planned.request;
  const body: Record<string, unknown> = {
    ...(planned.body as unknown as Record<string, unknown>),
    ...(r.tools !== undefined ? { tools: r.tools } : {}),
  };
  const include = new Set<AnswerPart>(r.include ?? ANSWER_PARTS);
  const answer: AgentRequestAnswer = { body };
  // In the documented order; a part not asked for is not built (the explanation walks the plan).
  if (include.has("plan")) {
    answer.plan = {
      conversation: planned.conversation,
      system: planned.systemPlan,
      request: report,
      stablePrefix: planned.stablePrefix,
      explanation: explainRequest(planned),
    };
  }
  if (include.has("budget")) answer.budget = planned.budget;
  if (include.has("manifest")) answer.manifest = manifest;
  return answer;
}

/** The error for a system side that is neither form. */
export function badSystem(): InvalidInputError {
  return new InvalidInputError(
    "system must be { segments: [...] } (as /v1/plan-prompt takes) or a workspace assembly request (as /v1/assemble takes)",
    "system",
  );
}

/**
 * Runs `f`, giving an invalid-input error's path under `system` (the system side is
 * validated as its own request, so its paths start inside it).
 */
export async function underSystem<T>(f: () => Promise<T> | T): Promise<T> {
  try {
    return await f();
  } catch (err) {
    if (err instanceof InvalidInputError && err.path !== null) {
      const path = err.path.startsWith("[") ? `system${err.path}` : `system.${err.path}`;
      // The message names the field as the path does (it opens with the path, if at all).
      const message = err.message.startsWith(`${err.path}:`)
        ? `${path}${err.message.slice(err.path.length)}`
        : err.message;
      throw new InvalidInputError(message, path, err.code as "invalid_input" | "unknown_field");
    }
    throw err;
  }
}

/**
 * `budgetChars` of the `{ segments }` system side when the request omits it: none. The
 * request is budgeted in tokens by its context window; `/v1/plan-prompt`'s default of
 * 12,000 chars would drop large segments that fit the window.
 */
export const REQUEST_SYSTEM_BUDGET_CHARS = null;

/**
 * The `{ segments }` form of `system`, planned as `/v1/plan-prompt` plans it (strict, with
 * the pooled counter of its tokenizer), except that an omitted `budgetChars` is
 * {@link REQUEST_SYSTEM_BUDGET_CHARS}; errors name paths under `system`.
 *
 * @example await segmentsSystem({ segments: [{ name: "rules", content: "Be brief." }] }, createCounterPool())
 */
export function segmentsSystem(raw: unknown, pool: CounterPool): Promise<PromptPlan> {
  return underSystem(() => {
    rejectUnknownFields(PlanPromptJsonRequestSchema, raw);
    const given = raw !== null && typeof raw === "object" && !Array.isArray(raw) ? raw : null;
    const withDefault =
      given !== null && !Object.hasOwn(given, "budgetChars")
        ? { ...given, budgetChars: REQUEST_SYSTEM_BUDGET_CHARS }
        : raw;
    const parsed = PlanPromptJsonRequestSchema.safeParse(withDefault);
    if (!parsed.success) throw invalidFromZod(parsed.error);
    const tokenCounter = pool.forRequest(parsed.data.tokenizer);
    return planPrompt(parsed.data, tokenCounter ? { tokenCounter } : {});
  });
}
