/**
 * The stateless clearing of a whole request (`statelessClearing`): which policy a request
 * without an anchor plans its window with, from the conversation alone, on the grid
 * clearing of grid.ts; and the sizes earlier turns found their window start on, so the
 * start moves forward only across turns.
 */
import { type ConversationDecision, type ConversationPlan, sent } from "../decide.js";
import {
  type ConversationPolicy,
  type ConversationPolicyInput,
  ConversationPolicySchema,
  type MessageInput,
} from "../schema.js";
import {
  CLEARING_BATCH_REACH_ROOMS,
  CLEARING_REACH_ROOMS,
  clearingOf,
  type GridBasis,
  type GridClearingOptions,
  gridBasis,
  gridChoice,
  settledIndex,
} from "./grid.js";
import { countBelow, firstSparedToolMessage } from "./spare.js";

/** The kept messages' tokens with every truncated result counted whole. */
function uncutTokens(plan: ConversationPlan): number {
  let total = 0;
  for (const d of plan.decisions) {
    if (d.status !== "kept") continue;
    const cut = d.transforms.find((t) => t.kind === "tool_result_truncated");
    total += cut === undefined ? d.tokens : cut.originalTokens;
  }
  return total;
}

/** How a whole request plans its conversation: one plan of `messages` in `budget`. */
export type PlanOnce = (
  messages: readonly MessageInput[],
  budget: number,
  policy: ConversationPolicyInput | undefined,
) => ConversationPlan;

/** What {@link statelessClearing} chose. */
export interface StatelessClearing {
  /** The plan of the whole conversation with `policy` (the one the grid start is found on). */
  readonly first: ConversationPlan;
  readonly policy: ConversationPolicyInput | undefined;
  /**
   * Per message of `first`: the tokens the window start is found with — before the
   * current turn, as the turn's first request sent them (clearing steps taken since then
   * left out); from its ask on, as `first` sends them. Fixed within a turn, so the start
   * found on them only moves forward while the turn grows. Absent: `first`'s own.
   */
  readonly windowTokens?: readonly number[];
  /**
   * The tokens the window start of an earlier turn's requests was found with: for the turn
   * whose ask is message `ask`, the messages before it as that turn's first request sent
   * them, and from the ask on as sent before any clearing. So the start of a request can be
   * kept at or after the start of every request before it (monotone across turns), without
   * state. Absent when nothing is cleared (every request then found its start on the sizes
   * `first` sends).
   */
  readonly turnTokens?: (ask: number) => TurnSizes;
}

/** Per-message sizes of one earlier turn ({@link StatelessClearing.turnTokens}). */
export interface TurnSizes {
  /** Tokens of message `i` (of the whole conversation's plan). */
  readonly size: (i: number) => number;
  /** The sum of {@link TurnSizes.size} over the messages before `end`. */
  readonly sumBefore: (end: number) => number;
  /**
   * A number never below `sumBefore(end)`, found without working out the turn's own
   * clearing (the sizes as first planned: clearing only takes tokens away); absent when
   * `sumBefore` costs no more.
   */
  readonly sumBeforeAtMost?: (end: number) => number;
}

/**
 * The policy a request without an anchor plans its window with, and its plan of the
 * whole conversation in `budget` (the one the grid start is found on): without
 * `clearTrigger`, `policy` and its plan; with it, nothing is cleared while the
 * conversation fits `floor(clearTrigger × budget)`, and above it the results
 * {@link gridClearing} chooses (grid of `stepTokens`, steps of `clearAtLeastTokens`,
 * sparing `keepRecentToolResults`, `keepToolResults` and `keepCallIds`) are cleared,
 * as age clearing at their boundary with every other result before it kept. Nothing is
 * truncated until a step clears or drops (or the conversation, uncut, exceeds `budget`).
 *
 * @example statelessClearing(messages, 50_000, { clearTrigger: 0.8, clearAtLeastTokens: 6_400 }, 14_000, plan)
 */
export function statelessClearing(
  messages: readonly MessageInput[],
  budget: number,
  input: ConversationPolicyInput | undefined,
  stepTokens: number,
  plan: PlanOnce,
): StatelessClearing {
  const parsed = ConversationPolicySchema.safeParse(input ?? {});
  // An invalid policy: the planner reports it, with its field path.
  if (!parsed.success || parsed.data.clearTrigger === null) {
    const first = plan(messages, budget, input);
    return { first, policy: input, turnTokens: asSent(first) };
  }
  const p: ConversationPolicy = parsed.data;
  const share = parsed.data.clearTrigger;
  // The request clears by the grid, not by the planner's pressure step; older rounds of
  // the current turn are still cleared when the turn outgrows the room (clearing/turn.ts).
  // Nothing is cut until a step clears or drops (below): the current turn's trigger counts
  // cut results whole too, so its first clearing step comes with the request that starts
  // cutting (measured on the long task at 200k, seed 4: cutting 4 requests before the step
  // rewrote 140k cached tokens once more).
  const off = {
    ...input,
    clearTrigger: null,
    clearBeforeTurn: null,
    clearCurrentTurn: p.clearCurrentTurn ?? true,
    turnTriggerUncut: input?.turnTriggerUncut ?? true,
  };
  const first = plan(messages, budget, off);
  const trigger = Math.floor(share * budget);
  // Older rounds of the current turn cleared to fit it: the conversation does not fit
  // uncut either (cutting on and off between requests would break the cache each time).
  const lastTurn = first.decisions[first.decisions.length - 1]?.turn ?? 0;
  const turnCleared = first.decisions.some(
    (d) => d.turn === lastTurn && d.transforms.some((t) => t.kind === "tool_result_cleared"),
  );
  const over = first.usedTokens > trigger || first.droppedMessageIds.length > 0 || turnCleared;
  // Cutting alone would rewrite the cached results it cuts, a break before the step's own.
  const whole = { ...off, toolResultMaxTokens: null };
  const batch = p.clearBatchTokens ?? undefined;
  const batching =
    !over && batch !== undefined && mayBatch(messages, first, p.keepRecentToolResults, batch);
  if (!over && !batching) {
    // An earlier turn may have outgrown the room on its own: its start still holds.
    if (uncutTokens(first) > budget) return { first, policy: off, turnTokens: asSent(first) };
    return { first: plan(messages, budget, whole), policy: whole, turnTokens: asSent(first) };
  }
  const all = plan(messages, budget, { ...off, clearToolResultsAfterTurns: 1 });
  const o: GridClearingOptions = {
    stepTokens,
    atLeastTokens: p.clearAtLeastTokens,
    keepRecent: p.keepRecentToolResults,
    triggerTokens: trigger,
    reachTokens: CLEARING_REACH_ROOMS * budget,
    batchReachTokens: CLEARING_BATCH_REACH_ROOMS * budget,
    ...(batch === undefined ? {} : { batchTokens: batch }),
  };
  const basis = gridBasis(messages, first, all);
  const chosen = clearingOf(basis, o);
  if (chosen === null) {
    if (!stepped(first) && uncutTokens(first) <= budget) {
      const uncut = plan(messages, budget, whole);
      if (!stepped(uncut)) return { first: uncut, policy: whole, turnTokens: asSent(first) };
    }
    return { first, policy: off, turnTokens: asSent(first) };
  }
  const policy: ConversationPolicyInput = {
    ...off,
    clearToolResultsAfterTurns: lastTurn - chosen.clearBeforeTurn + 1,
    keepCallIds: [...p.keepCallIds, ...chosen.spareCallIds],
  };
  const planned = plan(messages, budget, policy);
  const ask = askIndex(first, lastTurn);
  return {
    first: planned,
    policy,
    windowTokens: openingTokens(basis, planned, o, ask),
    turnTokens: (at) => openingSizes(basis, o, at),
  };
}

/** The index of turn `turn`'s first message (its ask) in `plan`, 0 when absent. */
const askIndex = (plan: ConversationPlan, turn: number): number =>
  Math.max(
    0,
    plan.decisions.findIndex((d) => d.turn === turn),
  );

/** Whether a plan cleared or dropped anything to fit (orphans aside). */
const stepped = (plan: ConversationPlan): boolean =>
  plan.decisions.some(
    (d) =>
      d.reason === "history_window" || d.transforms.some((t) => t.kind === "tool_result_cleared"),
  );

/** {@link StatelessClearing.turnTokens} when nothing was ever cleared: the plan's own sizes. */
function asSent(plan: ConversationPlan): (ask: number) => TurnSizes {
  let before: number[] | null = null;
  const sums = (): number[] => {
    if (before === null) {
      before = [0];
      for (const d of plan.decisions) before.push((before[before.length - 1] as number) + sent(d));
    }
    return before;
  };
  const sizes: TurnSizes = {
    size: (i) => sent(plan.decisions[i] as ConversationDecision),
    sumBefore: (end) => sums()[Math.min(end, plan.decisions.length)] as number,
  };
  return () => sizes;
}

/**
 * Whether the tool results before the current turn and the last `keep` tool messages
 * send `batch` tokens or more: a batch cannot free more than they send, so below that
 * the plan with every result cleared is not needed.
 */
function mayBatch(
  messages: readonly MessageInput[],
  first: ConversationPlan,
  keep: number,
  batch: number,
): boolean {
  const ds = first.decisions;
  const lastTurn = ds[ds.length - 1]?.turn ?? 0;
  const current = ds.findIndex((d) => d.turn === lastTurn);
  const end = Math.min(current, firstSparedToolMessage(messages, keep) ?? 0);
  let tokens = 0;
  for (let i = 0; i < end; i++) {
    if (messages[i]?.role === "tool") tokens += sent(ds[i] as ConversationDecision);
  }
  return tokens >= batch;
}

/**
 * The sizes the requests of the turn whose ask is message `ask` found their window start
 * on ({@link StatelessClearing.turnTokens}): the grid clearing of the conversation up to
 * the ask (its turn's first request) sizes the history before it, `basis.plain` the rest.
 * Computed from the basis without a pass over every message, so the openings of many
 * earlier turns cost little.
 */
function openingSizes(basis: GridBasis, o: GridClearingOptions, ask: number): TurnSizes {
  // The turn's clearing is worked out on first use: a caller walking many earlier turns
  // settles most of them on `sumBeforeAtMost` alone. `saved[j]`: what its first j cleared
  // results (in order) free, so a sum is a bisection, not a walk over them.
  let chosen: { at: Set<number>; order: number[]; saved: number[] } | null = null;
  const cleared = (): { at: Set<number>; order: number[]; saved: number[] } => {
    if (chosen === null) {
      // The conversation up to the ask is its turn's first request: the ask is its current turn.
      const settled = settledIndex(basis, ask + 1, ask, o.keepRecent);
      const opening = gridChoice(basis, ask + 1, settled, o);
      const at = new Set<number>();
      for (const x of opening?.items ?? []) at.add(x.index);
      const order = [...at].sort((x, y) => x - y);
      const saved = [0];
      for (const i of order) saved.push((saved.at(-1) as number) + plainSize(i) - clearedSize(i));
      chosen = { at, order, saved };
    }
    return chosen;
  };
  const { before } = basis;
  const plainSize = (i: number): number => (before[i + 1] as number) - (before[i] as number);
  const clearedSize = (i: number): number => sent(basis.cleared[i] as ConversationDecision);
  const size = (i: number): number => (cleared().at.has(i) ? clearedSize(i) : plainSize(i));
  const atMost = (end: number): number => before[Math.min(end, before.length - 1)] as number;
  return {
    size,
    sumBefore: (end) => {
      const { order, saved } = cleared();
      return atMost(end) - (saved[countBelow(order, end)] as number);
    },
    // A cleared item sends less than its plain size (basis items have a positive saving).
    sumBeforeAtMost: atMost,
  };
}

/**
 * {@link StatelessClearing.windowTokens}: the history before the ask at message `ask`
 * sized as its turn's first request sent it ({@link openingSizes}), `planned` the rest.
 * More history only takes more steps, so these are never below what a request of the
 * turn sends: the window found on them fits.
 */
function openingTokens(
  basis: GridBasis,
  planned: ConversationPlan,
  o: GridClearingOptions,
  ask: number,
): number[] {
  const opening = openingSizes(basis, o, ask);
  return planned.decisions.map((d, i) => (i >= ask ? sent(d) : opening.size(i)));
}
