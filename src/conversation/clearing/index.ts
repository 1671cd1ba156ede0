/**
 * Clearing under pressure (`policy.clearTrigger`), one engine in two kinds that share the
 * rule sparing the last N tool messages (spare.ts):
 * - `held` (held.ts): the planner's own — one step moves a boundary the caller passes
 *   back (`clearBeforeTurn`, with `anchor`);
 * - `grid` (grid.ts): nothing passed back — the boundary is derived from the
 *   conversation on a grid of history tokens, for a whole request (agent/ configures it
 *   with the window's step).
 */
import type { ConversationPolicyInput, MessageInput } from "../schema.js";
import { type PlanOnce, type StatelessClearing, statelessClearing } from "./stateless.js";

export {
  CLEARING_BATCH_REACH_ROOMS,
  CLEARING_REACH_ROOMS,
  type GridClearing,
  type GridClearingOptions,
  gridClearing,
} from "./grid.js";
export { choosePressure, type PressureChoice } from "./held.js";
export { firstSparedToolMessage } from "./spare.js";
export {
  type PlanOnce,
  type StatelessClearing,
  statelessClearing,
  type TurnSizes,
} from "./stateless.js";

/** Which clearing a plan runs: the held boundary, or the grid (its step in history tokens). */
export type ClearingEngine = { readonly kind: "held" } | GridEngine;

/** Grid clearing: one step per `stepTokens` of history (the window's own grid). */
export interface GridEngine {
  readonly kind: "grid";
  readonly stepTokens: number;
}

/**
 * Plans `messages` in `budget` with the clearing `engine` chooses, through `plan` (one
 * plan of the conversation): the plan, and the policy it was made with — the caller's for
 * `held` (the planner clears by its `clearTrigger` itself), for `grid` the one
 * {@link statelessClearing} derives (age clearing at the grid's boundary, the rest spared).
 *
 * @example planClearing(messages, 50_000, { clearTrigger: 0.8 }, { kind: "grid", stepTokens: 14_000 }, plan)
 */
export function planClearing(
  messages: readonly MessageInput[],
  budget: number,
  policy: ConversationPolicyInput | undefined,
  engine: ClearingEngine,
  plan: PlanOnce,
): StatelessClearing {
  if (engine.kind === "held") return { first: plan(messages, budget, policy), policy };
  return statelessClearing(messages, budget, policy, engine.stepTokens, plan);
}
