/**
 * `planConversation`: the history under a token budget. Pure and deterministic: one
 * decision per input message, orphans never sent, the current turn and pinned units
 * required (fail closed), the kept history one contiguous run ending at the current
 * turn, and a cache anchor with low-water batching so the kept prefix stays
 * byte-identical for several turns. The work is done by a fresh
 * planner (`createConversationPlanner`'s code, without its object memos); an agent loop
 * keeps one planner instead.
 */
import type { ConversationPlan } from "./decide.js";
import { type PlanConversationRequest, statelessPlanner } from "./planner.js";

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
  return statelessPlanner().plan(request);
}
