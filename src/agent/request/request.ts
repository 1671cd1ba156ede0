/**
 * The whole request of docs/conversation.md: the system prompt (an assembly, docs/planner.md, docs/assembler.md) and then the
 * conversation planned in the room it leaves — `context window − system tokens − tools −
 * response reserve − tail reserve` — rendered in one provider's shape with both
 * decision logs.
 */
import { z } from "zod";
import {
  type AssembleInput,
  type Assembly,
  assemble,
  checkAssembleInput,
} from "../../assemble/index.js";
import {
  type ConversationDecision,
  type ConversationPlan,
  type ConversationPolicyInput,
  type MessageInput,
  oneCallPlanner,
  planClearing,
} from "../../conversation/index.js";
import {
  InvalidInputError,
  invalidFromZod,
  PromptBudgetError,
  underPath,
} from "../../errors/index.js";
import type { MemoryDecision } from "../../memory/index.js";
import type { PromptPlan } from "../../plan/index.js";
import {
  type ConversationBodies,
  type ConversationProvider,
  type ConversationRenderOptions,
  type ConversationRequest,
  contextWindowFor,
  conversationLayout,
  MODEL_CONTEXT_WINDOWS,
  type PlannedMessages,
  type ProviderInput,
  systemSideTokens,
  toConversationRequest,
} from "../../render/index.js";
import { nonBlankString } from "../../text/index.js";
import { resolveTokenCounter, type TokenCounter, tokenizerForModel } from "../../tokens/index.js";
import { type AgentDefaults, agentDefaults, agentSchemas, clockSource } from "./defaults.js";
import { requestRefusal } from "./refusal.js";
import { gridWindowStart, heldPlan, withPlanDigest, withWindowDigest } from "./window.js";

const count = z.number().int().min(0);

/** The numbers of a whole request, validated. */
export const RequestBudgetSchema = z.object({
  model: nonBlankString,
  /** Tokens kept free for the response (e.g. `max_tokens`); default: {@link agentDefaults}. */
  responseReserve: count.optional(),
  /** Tokens kept free for runtime tails (docs/manifest-wire-guard.md); default 0. */
  tailReserve: count.default(0),
  /** The model's context window; default: {@link MODEL_CONTEXT_WINDOWS}. */
  contextWindow: z.number().int().min(1).optional(),
  /** Tokens of the tool definitions sent with the request; default 0. */
  toolsTokens: count.default(0),
  /** Tokens of anything else the request carries (e.g. a caller's own system text); default 0. */
  otherTokens: count.default(0),
});

/** What {@link planRequest} needs. */
export interface RequestInput<P extends ConversationProvider> {
  provider: P;
  model: string;
  /** The system side, already assembled: an assembly (or a prompt plan). */
  system: ProviderInput;
  /** The whole conversation, the current turn last (docs/conversation.md messages). */
  messages: readonly MessageInput[];
  /** Tokens kept free for the response (`max_tokens`); default {@link agentDefaults}' share of the window. */
  responseReserve?: number;
  tailReserve?: number;
  contextWindow?: number;
  toolsTokens?: number;
  /** Tokens of anything else the request carries outside both sides (default 0). */
  otherTokens?: number;
  /**
   * Counts both sides (default: the model's counter, `claude_estimate` for Claude). Pass
   * one counter for a whole conversation: it memoizes, so old turns are never recounted.
   */
  tokenizer?: TokenCounter | string;
  /** The packing policy (`anchor`, `clearBeforeTurn`: the previous request's values). */
  policy?: ConversationPolicyInput;
  /**
   * Without an anchor in `policy`, start the window on the grid of this many tokens
   * ({@link gridWindowStart}), so requests share their start without carrying an anchor;
   * null or absent: the planner's own start (`assembleRequest` defaults it from the window).
   */
  windowStepTokens?: number | null;
  /**
   * With the grid start or the caller's anchor: tokens of the room kept for a digest of
   * what left the window, put at the window's start ({@link withWindowDigest},
   * {@link withPlanDigest}); 0 or absent: no digest (`assembleRequest` defaults it from
   * the window).
   */
  digestTokens?: number;
  /** The provider renderer's options (`ttl`, `toolsBreakpoints`, `memoryPlacement`, `role`, …). */
  render?: Omit<ConversationRenderOptions, "model" | "toolsTokens" | "tokenCounter" | "query">;
}

/** Where the window went. */
export interface RequestBudget {
  contextWindow: number;
  /** `"option"`, or the table's date (`MODEL_CONTEXT_WINDOWS.asOf`) when it came from there. */
  contextWindowSource: string;
  /** The system side as sent (every tier, plus layers moved after the conversation). */
  systemTokens: number;
  toolsTokens: number;
  otherTokens: number;
  responseReserve: number;
  tailReserve: number;
  /** What the conversation was planned in. */
  messagesBudget: number;
  tokenizer: string;
}

/** The stable history prefix: the kept messages before the current turn. */
export interface StablePrefix {
  /** Its last message's id (null when the current turn is all there is). */
  lastMessageId: string | null;
  messages: number;
  tokens: number;
}

/** A whole request: the provider body, the budget, and every decision behind it. */
export interface PlannedRequest<P extends ConversationProvider = ConversationProvider> {
  provider: P;
  model: string;
  /** Spread it into the provider call (add `model`, `max_tokens`, `tools`, …). */
  body: ConversationBodies[P];
  /** The renderer's report: breakpoints placed and skipped, tier tokens, cache keys. */
  request: ConversationRequest<P>;
  conversation: ConversationPlan;
  /** The segment plan of the system side (its prompt, tiers and decisions). */
  systemPlan: PromptPlan;
  budget: RequestBudget;
  stablePrefix: StablePrefix;
  /** Both decision logs: the system side's (segments, memory) and the conversation's. */
  decisions: {
    segments: PromptPlan["decisions"];
    memory: MemoryDecision[] | null;
    conversation: ConversationDecision[];
  };
}

function segmentPlanOf(system: ProviderInput): PromptPlan {
  return "segmentPlan" in system ? system.segmentPlan : system;
}

function memoryDecisionsOf(system: ProviderInput): MemoryDecision[] | null {
  const plan = (system as Partial<Assembly>).memoryPlan;
  return plan === undefined || plan === null ? null : plan.decisions;
}

function counterFor(model: string, tokenizer: TokenCounter | string | undefined): TokenCounter {
  return resolveTokenCounter(tokenizer ?? tokenizerForModel(model), "tokenizer");
}

/** The kept messages before the current turn (the last user message). */
function stablePrefixOf(plan: ConversationPlan): {
  planned: PlannedMessages;
  prefix: StablePrefix;
} {
  const turn = plan.messages.findLastIndex((m) => m.role === "user");
  const kept = plan.decisions.filter((d) => d.status === "kept");
  let tokens = 0;
  for (let i = 0; i < turn; i++) tokens += (kept[i] as ConversationDecision).tokens;
  const last = turn > 0 ? (plan.messages[turn - 1]?.id ?? null) : null;
  return {
    planned: { messages: plan.messages, stableEnd: turn - 1, stableTokens: tokens },
    prefix: { lastMessageId: last, messages: Math.max(0, turn), tokens },
  };
}

function budgetOf(
  input: RequestInput<ConversationProvider>,
  systemTokens: number,
  tokenizer: string,
): RequestBudget {
  const parsed = RequestBudgetSchema.safeParse({
    model: input.model,
    responseReserve: input.responseReserve,
    tailReserve: input.tailReserve,
    contextWindow: input.contextWindow,
    toolsTokens: input.toolsTokens,
    otherTokens: input.otherTokens,
  });
  if (!parsed.success) throw invalidFromZod(parsed.error);
  const b = parsed.data;
  const contextWindow = b.contextWindow ?? contextWindowFor(b.model);
  const responseReserve = b.responseReserve ?? agentDefaults(contextWindow).responseReserve;
  const messagesBudget =
    contextWindow - systemTokens - b.toolsTokens - b.otherTokens - responseReserve - b.tailReserve;
  if (messagesBudget < 0) {
    const parts = [
      { part: "system", tokens: systemTokens },
      { part: "tools", tokens: b.toolsTokens },
      { part: "other", tokens: b.otherTokens },
      { part: "response_reserve", tokens: responseReserve },
      { part: "tail_reserve", tokens: b.tailReserve },
    ];
    const need = contextWindow - messagesBudget;
    throw new PromptBudgetError(
      `the system side (${systemTokens}), tools (${b.toolsTokens}), other (${b.otherTokens}), response reserve (${responseReserve}) and tail reserve (${b.tailReserve}) exceed the context window (${contextWindow})`,
      [],
      "contextWindow",
      {
        need,
        budget: contextWindow,
        parts,
        fix: `free ${need - contextWindow} tokens: a smaller system side (slot budgets), fewer tools, smaller reserves, or a larger context window`,
      },
    );
  }
  return {
    contextWindow,
    contextWindowSource: b.contextWindow === undefined ? MODEL_CONTEXT_WINDOWS.asOf : "option",
    systemTokens,
    toolsTokens: b.toolsTokens,
    otherTokens: b.otherTokens,
    responseReserve,
    tailReserve: b.tailReserve,
    messagesBudget,
    tokenizer,
  };
}

/**
 * History a digest may cover at most, in multiples of its own budget (tokens as given):
 * 256. The walk back usually ends earlier, where the lines quoting ids fill the digest
 * ({@link withWindowDigest}); this bounds the work on a history that quotes none. On a long
 * task with a user nudge every 5 rounds (agent-long, facts needed up to 40 rounds later),
 * seed 1 at 64k: 16 kept 30 % of the needed facts, 128 85 %, 256 96 % (at 200k 73 % → 99 %);
 * the window moves a whole turn at a time there, so what left it is what later requests ask
 * about.
 */
const DIGEST_REACH = 256;

/**
 * The conversation in `budgetTokens`: the planner's own window, or, with a window step
 * and no anchor, the window started on the step's grid ({@link gridWindowStart}) in the
 * budget less `digestTokens`, so the digest of what left the window
 * ({@link withWindowDigest}) fits at its start: planned once when nothing has to be
 * dropped (the plan's `budgetTokens` is then the room less the digest's), otherwise
 * planned again from the grid start by the same planner, which keeps the first plan's
 * validated messages, units and prices and reprices only the message the digest opens.
 * Under the caller's anchor the window is planned in the budget less `digestTokens` and
 * opened by the digest ({@link withPlanDigest}). A current turn that fits only without
 * the digest's room is planned without a digest.
 */
function planWindow(
  input: RequestInput<ConversationProvider>,
  budgetTokens: number,
  counter: TokenCounter,
): ConversationPlan {
  // The digest takes at most a quarter of the room.
  const digest = Math.min(input.digestTokens ?? 0, Math.floor(budgetTokens / 4));
  try {
    return planWindowWith(input, budgetTokens, counter, digest);
  } catch (err) {
    // A current turn that fits the room only without the digest's share is sent without
    // one: never a refusal the room itself would not give.
    if (digest === 0 || !(err instanceof PromptBudgetError)) throw err;
    return planWindowWith(input, budgetTokens, counter, 0);
  }
}

/** {@link planWindow} with `digest` tokens of the room kept for the digest. */
function planWindowWith(
  input: RequestInput<ConversationProvider>,
  budgetTokens: number,
  counter: TokenCounter,
  digest: number,
): ConversationPlan {
  const planner = oneCallPlanner();
  const plan = (
    messages: readonly MessageInput[],
    budget: number,
    policy: ConversationPolicyInput | undefined,
  ) =>
    planner.plan({
      messages,
      budgetTokens: budget,
      tokenizer: counter,
      ...(policy !== undefined ? { policy } : {}),
    });
  // The window is chosen in the room less the digest, so the digest fits at its start.
  const reach = DIGEST_REACH * digest;
  const step = input.windowStepTokens;
  if ((input.policy?.anchor ?? null) !== null) {
    // The caller holds the window: it is planned in the room less the digest on every
    // request, so the anchor and the clearing boundary it passes back hold as before.
    const held = heldPlan(input.messages, budgetTokens - digest, input.policy, plan);
    if (digest === 0) return held;
    return withPlanDigest(input.messages, held, reach, counter, digest, budgetTokens);
  }
  if (step === undefined || step === null) return plan(input.messages, budgetTokens, input.policy);
  // One plan when nothing is dropped (it is the answer: the same messages fit the whole
  // room), a second from the grid start otherwise.
  // Clearing under pressure, when on, derived from the conversation too (no state).
  const { first, policy, windowTokens, turnTokens } = planClearing(
    input.messages,
    budgetTokens - digest,
    input.policy,
    { kind: "grid", stepTokens: step },
    plan,
  );
  // A turn whose rounds, as given, count more than the room steps on its own (the
  // stateless turn trigger is the whole room, cut results counted whole: clearing/stateless.ts,
  // clearing/turn.ts): its requests then started at its ask.
  const turnTrigger = budgetTokens - digest;
  const anchor = gridWindowStart(first, step, windowTokens, turnTokens, turnTrigger);
  if (anchor === null) return first;
  // What left the window, back as far as a digest of its size can speak for.
  const messages =
    digest === 0
      ? input.messages
      : withWindowDigest(input.messages, first, anchor, reach, counter, digest);
  return plan(messages, budgetTokens, { ...policy, anchor, anchorFrom: "window_grid" });
}

/**
 * Plans a whole request over an assembled system side: counts the system side as the
 * provider's renderer sends it, plans the conversation in the room left (`contextWindow −
 * systemTokens − toolsTokens − otherTokens − responseReserve − tailReserve`; the current turn fails
 * closed), and renders both in the provider's shape, with an Anthropic breakpoint at the
 * end of the stable history prefix. Pass `conversation.firstKeptId` and
 * `conversation.clearBeforeTurn` back as the next request's `policy.anchor` /
 * `policy.clearBeforeTurn` so the kept prefix stays byte-identical.
 *
 * @example
 * const r = planRequest({ provider: "anthropic", model: "claude-sonnet-4-6", system: assembly,
 *   messages, responseReserve: 4096, policy: { lowWaterRatio: 0.7, anchor } });
 * await client.messages.create({ model: r.model, max_tokens: 4096, ...r.body });
 */
export function planRequest<P extends ConversationProvider>(
  input: RequestInput<P>,
): PlannedRequest<P> {
  const counter = counterFor(input.model, input.tokenizer);
  const options: ConversationRenderOptions = {
    ...(input.render ?? {}),
    model: input.model,
    tokenCounter: counter,
    ...(input.toolsTokens !== undefined ? { toolsTokens: input.toolsTokens } : {}),
  };
  let layout: ReturnType<typeof conversationLayout>;
  try {
    layout = conversationLayout(input.system, options);
  } catch (err) {
    throw underPath(err, ["system"]);
  }
  const systemTokens = systemSideTokens(layout);
  const budget = budgetOf(input, systemTokens, counter.name);
  let conversation: ConversationPlan;
  try {
    conversation = planWindow(input, budget.messagesBudget, counter);
  } catch (err) {
    throw requestRefusal(err, budget);
  }
  const { planned, prefix } = stablePrefixOf(conversation);
  const request = toConversationRequest(input.provider, input.system, planned, options);
  const segments = segmentPlanOf(input.system);
  return {
    provider: input.provider,
    model: input.model,
    body: request.body,
    request,
    conversation,
    systemPlan: segments,
    budget,
    stablePrefix: prefix,
    decisions: {
      segments: segments.decisions,
      memory: memoryDecisionsOf(input.system),
      conversation: conversation.decisions,
    },
  };
}

/** A whole request is an object: anything else is bad input, not a TypeError. */
function checkRequestObject(input: unknown): void {
  if (typeof input !== "object" || input === null || Array.isArray(input)) {
    throw new InvalidInputError("a request must be an object", null);
  }
}

/** What {@link assembleRequest} needs: {@link RequestInput} with the assembler's input. */
export type AssembleRequestInput<P extends ConversationProvider> = Omit<RequestInput<P>, "system"> &
  ({ assemble: AssembleInput; system?: never } | { system: ProviderInput; assemble?: never });

/** A whole request with the assembly its system side came from (null when one was given). */
export interface AssembledRequest<P extends ConversationProvider = ConversationProvider>
  extends PlannedRequest<P> {
  assembly: Assembly | null;
  /** The defaults the request was sized with ({@link agentDefaults} of its window). */
  defaults: AgentDefaults;
}

/**
 * The assembler's input with the agent defaults where the caller left a field out: the
 * agent schemas (token budgets from the window, instructions, KB, clock) unless schemas
 * or a global budget were given, the request's counter, and a clock source when none
 * serves the `clock` slot.
 */
function withAgentDefaults(
  a: AssembleInput,
  d: AgentDefaults,
  counter: TokenCounter,
): AssembleInput {
  const sized =
    a.schemas === undefined && a.budgetChars === undefined && a.budgetTokens === undefined;
  const sources =
    Array.isArray(a.sources) && !a.sources.some((s) => s.supports("clock"))
      ? [...a.sources, clockSource()]
      : a.sources;
  return {
    ...a,
    sources,
    ...(sized ? { schemas: agentSchemas(d) } : {}),
    ...(a.tokenizer === undefined && a.tokenCounter === undefined ? { tokenCounter: counter } : {}),
  };
}

/**
 * The one call for a whole request: assembles the system prompt (`assemble`, docs/assembler.md) —
 * or takes an assembly already made (`system`, e.g. a session's turn) — then
 * {@link planRequest}: the conversation in the room the system side leaves, rendered for
 * `provider`, with both decision logs. Every field left out takes the agent default of
 * the window ({@link agentDefaults}: response reserve, low-water policy, the window start
 * on a grid so requests share it without an anchor, a digest of what left the window at
 * its start, clearing under pressure at 0.8 of the room (stateless, like the window start), the dynamic tier after the last
 * cached block, system budgets in tokens); the caller's fields override them one by one.
 *
 * @example
 * const r = await assembleRequest({ provider: "anthropic", model: "claude-sonnet-4-5",
 *   contextWindow: 200_000, assemble: { mode: "react", query: { text, userScope }, now, sources },
 *   messages });
 * await anthropic.messages.create({ model: r.model, max_tokens: r.budget.responseReserve, ...r.body });
 */
export async function assembleRequest<P extends ConversationProvider>(
  input: AssembleRequestInput<P>,
): Promise<AssembledRequest<P>> {
  checkRequestObject(input);
  if (input.assemble !== undefined && input.system !== undefined) {
    throw new InvalidInputError(
      "give either assemble (the system side to assemble) or system (one already assembled), not both",
      "system",
    );
  }
  if (input.assemble !== undefined) checkAssembleInput(input.assemble, ["assemble"]);
  const d = agentDefaults(input.contextWindow ?? contextWindowFor(input.model));
  const counter = counterFor(input.model, input.tokenizer);
  let assembly: Assembly | null = null;
  try {
    if (input.assemble !== undefined) {
      assembly = await assemble(withAgentDefaults(input.assemble, d, counter));
    }
  } catch (err) {
    throw underPath(err, ["assemble"]);
  }
  const system = (assembly ?? input.system) as ProviderInput;
  const { assemble: _drop, ...rest } = input;
  return { ...planAgentRequest({ ...rest, system, tokenizer: counter }), assembly };
}

/**
 * {@link planRequest} with the agent defaults of the window ({@link agentDefaults}) where
 * the caller left a field out — the one table of defaults behind every surface that builds
 * an agent request: {@link assembleRequest}, `POST /v1/request`, `promptctx request` and
 * the AI SDK middleware. Synchronous: the system side is already assembled.
 *
 * @example
 * const r = planAgentRequest({ provider: "anthropic", model: "claude-sonnet-4-6", system: plan, messages });
 * r.defaults.responseReserve === r.budget.responseReserve // true
 */
export function planAgentRequest<P extends ConversationProvider>(
  input: RequestInput<P>,
): PlannedRequest<P> & { defaults: AgentDefaults } {
  checkRequestObject(input);
  const d = agentDefaults(input.contextWindow ?? contextWindowFor(input.model));
  const planned = planRequest({
    ...input,
    tokenizer: counterFor(input.model, input.tokenizer),
    responseReserve: input.responseReserve ?? d.responseReserve,
    policy: { ...d.policy, ...(input.policy ?? {}) },
    render: { ...d.render, ...(input.render ?? {}) },
    windowStepTokens:
      input.windowStepTokens === undefined ? d.windowStepTokens : input.windowStepTokens,
    digestTokens: input.digestTokens ?? d.digestTokens,
  });
  return { ...planned, defaults: d };
}
