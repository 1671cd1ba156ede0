/**
 * Grid clearing (`{ kind: "grid" }`), clearing under pressure without state
 * (docs/conversation.md "the agent loop with defaults"): which old tool results a whole
 * request clears is derived from the conversation itself, on a grid of history tokens,
 * the way the window start is — so requests over a growing conversation agree on it
 * without the caller passing `clearBeforeTurn` back, and the prefix the provider cached
 * breaks at most once per step.
 */
import { type ConversationDecision, type ConversationPlan, sent } from "../decide.js";
import {
  type ConversationPolicy,
  type ConversationPolicyInput,
  ConversationPolicySchema,
  type MessageInput,
} from "../schema.js";
import { firstSparedToolMessage } from "./spare.js";

/** How the stateless clearing steps are sized. */
export interface GridClearingOptions {
  /**
   * Grid of history tokens (from the conversation's first message, as sent before
   * clearing): one clearing step is decided per grid line, from the results wholly
   * before it, so a step depends only on the conversation up to its line.
   */
  stepTokens: number;
  /** What one step frees at least (largest results first), when there is that much. */
  atLeastTokens: number;
  /** The last N tool messages are never cleared. */
  keepRecent: number;
  /** Clearing stops at the first step that brings the whole conversation under this. */
  triggerTokens: number;
  /**
   * Lines past this many tokens of history take no step: what is cleared then stays
   * as it is, and the window moves on its own grid (default: no limit).
   */
  reachTokens?: number;
  /**
   * Old results are also cleared in batches, before any pressure: walking the settled
   * results in order, each run of them not cleared yet that frees at least this many
   * tokens is cleared at once (absent: no batches; see `clearBatchTokens`).
   */
  batchTokens?: number;
}

/** The results a request clears: every one before the boundary but the spared ones. */
export interface GridClearing {
  /** Results of turns before it are cleared, except `spareCallIds`. */
  readonly clearBeforeTurn: number;
  /** Call ids of results before the boundary that stay whole (the smaller, the recent). */
  readonly spareCallIds: readonly string[];
  /** Ids of the tool messages cleared, in input order. */
  readonly clearedIds: readonly string[];
  /** Grid lines whose step was taken (0: nothing cleared). */
  readonly steps: number;
}

/** A clearable tool message: what clearing it frees, and where it ends. */
interface Item {
  readonly index: number;
  readonly turn: number;
  readonly saving: number;
  /** Tokens of history from the first message through this one. */
  readonly end: number;
  readonly callIds: readonly string[];
}

const clearedCalls = (d: ConversationDecision): string[] =>
  d.transforms.filter((t) => t.kind === "tool_result_cleared").map((t) => t.callId);

/**
 * Tokens of history before which every tool message may be cleared: before the current
 * turn and before the last `keep` tool messages. It only grows with the conversation.
 */
function settledTokens(
  messages: readonly MessageInput[],
  ds: readonly ConversationDecision[],
  before: readonly number[],
  keep: number,
): number {
  const lastTurn = ds[ds.length - 1]?.turn ?? 0;
  const current = ds.findIndex((d) => d.turn === lastTurn);
  const recent = firstSparedToolMessage(messages, keep) ?? 0;
  return before[Math.max(0, Math.min(current, recent))] as number;
}

/** Largest first (the oldest on a tie), until `want` is freed; appends to `out`. */
function takeLargest(pool: Item[], want: number, out: Set<Item>): number {
  pool.sort((a, b) => b.saving - a.saving || a.index - b.index);
  let freed = 0;
  while (pool.length > 0 && (freed < want || freed === 0)) {
    const item = pool.shift() as Item;
    out.add(item);
    freed += item.saving;
  }
  return freed;
}

/**
 * The stateless clearing of a conversation: `plain` is its plan without clearing and
 * `cleared` its plan with every result before the current turn cleared (same budget;
 * only their decisions are read). Grid line k (k × `stepTokens` tokens of history) takes
 * one step: of the tool messages wholly before it, before the current turn and the last
 * `keepRecent` tool messages, and not cleared yet, the largest (by tokens freed) are
 * cleared until the step frees `atLeastTokens`. Steps are taken line after line until
 * the whole conversation, cleared so far, fits `triggerTokens`, or no line is left. A
 * line's step depends only on the conversation before it, and more history only takes
 * more steps: consecutive requests agree, and what was cleared stays cleared. Returns
 * null when nothing is cleared.
 *
 * @example gridClearing(messages, plain, cleared, { stepTokens: 14_000, atLeastTokens: 6_400, keepRecent: 8, triggerTokens: 40_000 })
 */
export function gridClearing(
  messages: readonly MessageInput[],
  plain: ConversationPlan,
  cleared: ConversationPlan,
  o: GridClearingOptions,
): GridClearing | null {
  const ds = plain.decisions;
  const before = [0];
  for (const d of ds) before.push((before[before.length - 1] as number) + sent(d));
  const total = before[ds.length] as number;
  if (total <= o.triggerTokens && o.batchTokens === undefined) return null;
  const items: Item[] = [];
  ds.forEach((d, i) => {
    const c = cleared.decisions[i] as ConversationDecision;
    const saving = sent(d) - c.tokens;
    const callIds = clearedCalls(c);
    if (callIds.length === 0 || saving <= 0) return;
    items.push({ index: i, turn: d.turn, saving, end: before[i + 1] as number, callIds });
  });
  const step = Math.max(1, Math.floor(o.stepTokens));
  const settled = Math.min(
    settledTokens(messages, ds, before, o.keepRecent),
    o.reachTokens ?? total,
  );
  const lines = Math.floor(settled / step);
  const chosen = new Set<Item>();
  const batched =
    o.batchTokens === undefined ? 0 : takeBatches(items, settled, o.batchTokens, chosen);
  // The results wholly before the current line and not cleared yet: each enters once, at
  // the first line it ends before, and leaves when a step clears it.
  const pool: Item[] = [];
  let next = 0;
  let freed = batched;
  let steps = 0;
  let k = 1;
  while (k <= lines && total - freed > o.triggerTokens) {
    for (; next < items.length && (items[next] as Item).end <= k * step; next++) {
      if (!chosen.has(items[next] as Item)) pool.push(items[next] as Item);
    }
    if (pool.length === 0) {
      // Nothing left before line k: go on at the first line the next result ends before.
      if (next >= items.length) break;
      k = Math.max(k + 1, Math.ceil((items[next] as Item).end / step));
      continue;
    }
    freed += takeLargest(pool, o.atLeastTokens, chosen);
    steps = k;
    k += 1;
  }
  if (chosen.size === 0) return null;
  return boundaryOf(ds, cleared, chosen, steps);
}

/**
 * Batches of old results ({@link GridClearingOptions.batchTokens}): the results ending by
 * `settled`, in order, cut into runs each freeing at least `batch`; every complete run is
 * added to `out` (the last, incomplete one waits for more history). A run depends only on
 * the results before its end, so more history only adds runs. Returns the tokens freed.
 */
function takeBatches(
  items: readonly Item[],
  settled: number,
  batch: number,
  out: Set<Item>,
): number {
  let freed = 0;
  let run: Item[] = [];
  let runFreed = 0;
  for (const item of items) {
    if (item.end > settled) break;
    run.push(item);
    runFreed += item.saving;
    if (runFreed < batch) continue;
    for (const x of run) out.add(x);
    freed += runFreed;
    run = [];
    runFreed = 0;
  }
  return freed;
}

/** The boundary after the last cleared message, sparing every other result before it. */
function boundaryOf(
  ds: readonly ConversationDecision[],
  cleared: ConversationPlan,
  chosen: ReadonlySet<Item>,
  steps: number,
): GridClearing {
  let boundary = 0;
  const ids = new Set<number>();
  for (const x of chosen) {
    boundary = Math.max(boundary, x.turn + 1);
    ids.add(x.index);
  }
  const spare: string[] = [];
  const clearedIds: string[] = [];
  cleared.decisions.forEach((c, i) => {
    if ((ds[i] as ConversationDecision).turn >= boundary) return;
    if (ids.has(i)) clearedIds.push(c.messageId);
    else spare.push(...clearedCalls(c));
  });
  return { clearBeforeTurn: boundary, spareCallIds: spare, clearedIds, steps };
}

/**
 * History, in rooms (the budget the window is planned in), over which clearing steps are
 * taken; past it what was cleared stays as it is and the window moves on its grid. Clearing
 * pays while it keeps the whole conversation in the window (one step per grid line and no
 * move); once the window must move anyway, a clearing step between two moves is one more
 * cache break. Measured on the agent study at 64k: with no limit, 0.64–0.90× the
 * hand-built cost instead of 0.52–0.66×; with 2 rooms, within ±0.06× of no clearing.
 */
export const CLEARING_REACH_ROOMS = 2;

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
  readonly turnTokens?: (ask: number) => readonly number[];
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
    ...(batch === undefined ? {} : { batchTokens: batch }),
  };
  const chosen = gridClearing(messages, first, all, o);
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
    windowTokens: openingTokens(messages, first, all, planned, o, ask),
    turnTokens: (at) => openingTokens(messages, first, all, first, o, at),
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
function asSent(plan: ConversationPlan): (ask: number) => readonly number[] {
  let sizes: number[] | null = null;
  return () => {
    sizes ??= plan.decisions.map(sent);
    return sizes;
  };
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
 * {@link StatelessClearing.windowTokens}: the grid clearing of the conversation up to the
 * ask at message `ask` (its turn's first request) sizes the history before the ask;
 * `planned` sizes the rest. More history only takes more steps, so these are never below
 * what a request of the turn sends: the window found on them fits.
 */
function openingTokens(
  messages: readonly MessageInput[],
  plain: ConversationPlan,
  cleared: ConversationPlan,
  planned: ConversationPlan,
  o: GridClearingOptions,
  ask: number,
): number[] {
  const ds = plain.decisions;
  const upTo = (q: ConversationPlan): ConversationPlan => ({
    ...q,
    decisions: q.decisions.slice(0, ask + 1),
  });
  const opening = gridClearing(messages.slice(0, ask + 1), upTo(plain), upTo(cleared), o);
  const ids = new Set(opening?.clearedIds ?? []);
  return planned.decisions.map((d, i) => {
    if (i >= ask) return sent(d);
    const q = ids.has(d.messageId) ? cleared.decisions[i] : ds[i];
    return sent(q as ConversationDecision);
  });
}
