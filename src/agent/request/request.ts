/**
 * The whole request of docs/conversation.md: the system prompt (an assembly, docs/planner.md, docs/assembler.md) and then the
 * conversation planned in the room it leaves — `context window − system tokens − tools −
 * response reserve − tail reserve` — rendered in one provider's shape with both
 * decision logs.
 */
import { z } from "zod";
import { type AssembleInput, type Assembly, assemble } from "../../assemble/index.js";
import {
  type ConversationDecision,
  type ConversationPlan,
  type ConversationPolicyInput,
  type MessageInput,
  planConversation,
} from "../../conversation/index.js";
import { invalidFromZod, PromptBudgetError } from "../../errors/index.js";
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

const count = z.number().int().min(0);

/** The numbers of a whole request, validated. */
export const RequestBudgetSchema = z.object({
  model: nonBlankString,
  /** Tokens kept free for the response (e.g. `max_tokens`). */
  responseReserve: count,
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
  responseReserve: number;
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
  /** The provider renderer's options (`ttl`, `toolsBreakpoints`, `memoryPlacement`, `role`, …). */
  render?: Omit<ConversationRenderOptions, "model" | "toolsTokens" | "tokenCounter" | "query">;
}

/** Where the window went. */
export interface RequestBudget {
  contextWindow: number;
  /** `"option"`, or the table's date (`MODEL_CONTEXT_WINDOWS.asOf`) when it came from there. */
  contextWindowSource: string;
  /** The system side as sent (every tier, plus layers moved into the current turn). */
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
  const messagesBudget =
    contextWindow -
    systemTokens -
    b.toolsTokens -
    b.otherTokens -
    b.responseReserve -
    b.tailReserve;
  if (messagesBudget < 0) {
    throw new PromptBudgetError(
      `the system side (${systemTokens}), tools (${b.toolsTokens}), other (${b.otherTokens}), response reserve (${b.responseReserve}) and tail reserve (${b.tailReserve}) exceed the context window (${contextWindow})`,
      [],
      "contextWindow",
    );
  }
  return {
    contextWindow,
    contextWindowSource: b.contextWindow === undefined ? MODEL_CONTEXT_WINDOWS.asOf : "option",
    systemTokens,
    toolsTokens: b.toolsTokens,
    otherTokens: b.otherTokens,
    responseReserve: b.responseReserve,
    tailReserve: b.tailReserve,
    messagesBudget,
    tokenizer,
  };
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
  const systemTokens = systemSideTokens(conversationLayout(input.system, options));
  const budget = budgetOf(input, systemTokens, counter.name);
  const conversation = planConversation({
    messages: input.messages,
    budgetTokens: budget.messagesBudget,
    tokenizer: counter,
    ...(input.policy !== undefined ? { policy: input.policy } : {}),
  });
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

/** What {@link assembleRequest} needs: {@link RequestInput} with the assembler's input. */
export type AssembleRequestInput<P extends ConversationProvider> = Omit<RequestInput<P>, "system"> &
  ({ assemble: AssembleInput; system?: never } | { system: ProviderInput; assemble?: never });

/** A whole request with the assembly its system side came from (null when one was given). */
export interface AssembledRequest<P extends ConversationProvider = ConversationProvider>
  extends PlannedRequest<P> {
  assembly: Assembly | null;
}

/**
 * The one call for a whole request: assembles the system prompt (`assemble`, docs/assembler.md) —
 * or takes an assembly already made (`system`, e.g. a session's turn) — then
 * {@link planRequest}: the conversation in the room the system side leaves, rendered for
 * `provider`, with both decision logs.
 *
 * @example
 * const r = await assembleRequest({ provider: "openai-chat", model: "gpt-4o",
 *   assemble: { mode: "react", query: { text, userScope }, now, sources },
 *   messages, responseReserve: 4096 });
 * await openai.chat.completions.create({ model: "gpt-4o", ...r.body });
 */
export async function assembleRequest<P extends ConversationProvider>(
  input: AssembleRequestInput<P>,
): Promise<AssembledRequest<P>> {
  const assembly = input.assemble !== undefined ? await assemble(input.assemble) : null;
  const system = (assembly ?? input.system) as ProviderInput;
  const { assemble: _drop, ...rest } = input;
  return { ...planRequest({ ...rest, system }), assembly };
}
