/**
 * `planConversation`: the history under a token budget. Pure and deterministic: one
 * decision per input message, orphans never sent, the current turn and pinned units
 * required (fail closed), the kept history one contiguous run ending at the current
 * turn, and a cache anchor with low-water batching so the kept prefix stays
 * byte-identical for several turns. The work is done by a fresh
 * planner (`createConversationPlanner`'s code, without its object memos); an agent loop
 * keeps one planner instead.
 */
import type { TokenCounter } from "../tokens/index.js";
import { oneCallPlanner } from "./planner.js";
import type { ConversationPolicyInput, Message, MessageInput } from "./schema.js";
import type { Transform } from "./transforms.js";

/** Why a message is in or out. */
export type ConversationReason =
  | "required"
  | "pinned"
  | "kept"
  | "history_window"
  | "orphan_removed";

/** The decision for one input message, in input order. */
export type ConversationDecision = {
  readonly messageId: string;
  readonly detail: string;
  readonly transforms: readonly Transform[];
  /** Tokens after transforms. */
  readonly tokens: number;
  readonly turn: number;
  readonly unit: number;
} & (
  | { readonly status: "kept"; readonly reason: "required" | "pinned" | "kept" }
  | { readonly status: "dropped"; readonly reason: "history_window" | "orphan_removed" }
);

/** The plan of one conversation. */
export interface ConversationPlan {
  /** Kept messages, transformed, in input order. */
  readonly messages: Message[];
  readonly decisions: ConversationDecision[];
  /** Exact sum of the kept messages' tokens; never above `budgetTokens`. */
  readonly usedTokens: number;
  readonly budgetTokens: number;
  readonly tokenizer: string;
  /** First message of the contiguous window: pass it back as the next turn's `anchor`. */
  readonly firstKeptId: string;
  /** The turn boundary results were cleared before (`null` when clearing is off). */
  readonly clearBeforeTurn: number | null;
  /** Every dropped message id, in input order. */
  readonly droppedMessageIds: string[];
}

/** A plan-conversation request of the library: `tokenizer` may be a counter. */
export interface PlanConversationRequest {
  messages: readonly MessageInput[];
  budgetTokens: number;
  tokenizer?: TokenCounter | string | null;
  policy?: ConversationPolicyInput;
}

/**
 * Plans a conversation under `budgetTokens`: which messages are sent, transformed how,
 * and why each of the others is not. Throws `InvalidInputError` (with the field path) on
 * bad input and `PromptBudgetError` when the current turn and pinned units cannot fit.
 *
 * @example
 * const plan = planConversation({ messages, budgetTokens: 8000, tokenizer: "o200k_base",
 *   policy: { lowWaterRatio: 0.7, anchor: previous?.firstKeptId ?? null } });
 * plan.messages; // what to send; plan.decisions: one per input message
 */
export function planConversation(request: PlanConversationRequest): ConversationPlan {
  return oneCallPlanner().plan(request);
}
