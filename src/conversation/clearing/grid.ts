/**
 * Grid clearing (`{ kind: "grid" }`), clearing under pressure without state
 * (docs/conversation.md "the agent loop with defaults"): which old tool results a whole
 * request clears is derived from the conversation itself, on a grid of history tokens,
 * the way the window start is — so requests over a growing conversation agree on it
 * without the caller passing `clearBeforeTurn` back, and the prefix the provider cached
 * breaks at most once per step.
 */
import { type ConversationDecision, type ConversationPlan, sent } from "../decide.js";
import type { MessageInput } from "../schema.js";
import { firstSparedAmong } from "./spare.js";

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
   * Batches take only results ending within this many tokens of history (default:
   * `reachTokens`): past it, steps alone clear, up to `reachTokens`.
   */
  batchReachTokens?: number;
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
}

/**
 * What every grid clearing of a conversation, or of a prefix of it, reads: computed once
 * per request, so the openings of many earlier turns ({@link StatelessClearing.turnTokens})
 * cost a walk over the results each, not a fresh pass over every decision.
 */
export interface GridBasis {
  readonly plain: readonly ConversationDecision[];
  readonly cleared: readonly ConversationDecision[];
  /** before[i]: tokens of history before message i, as `plain` sends it. */
  readonly before: readonly number[];
  readonly items: readonly Item[];
  /** Indices of the tool messages, in order. */
  readonly tools: readonly number[];
}

const clearedCalls = (d: ConversationDecision): string[] =>
  d.transforms.filter((t) => t.kind === "tool_result_cleared").map((t) => t.callId);

export function gridBasis(
  messages: readonly MessageInput[],
  plain: ConversationPlan,
  cleared: ConversationPlan,
): GridBasis {
  const ds = plain.decisions;
  const before = [0];
  const items: Item[] = [];
  const tools: number[] = [];
  ds.forEach((d, i) => {
    const end = (before[i] as number) + sent(d);
    before.push(end);
    if (messages[i]?.role === "tool") tools.push(i);
    const c = cleared.decisions[i] as ConversationDecision;
    const saving = sent(d) - c.tokens;
    if (saving <= 0 || !c.transforms.some((t) => t.kind === "tool_result_cleared")) return;
    items.push({ index: i, turn: d.turn, saving, end });
  });
  return { plain: ds, cleared: cleared.decisions, before, items, tools };
}

/**
 * Index before which every tool message of the first `n` messages may be cleared: before
 * the current turn (from `current`) and before the last `keep` tool messages
 * ({@link firstSparedAmong}). It only grows with the conversation.
 */
export function settledIndex(basis: GridBasis, n: number, current: number, keep: number): number {
  const recent = firstSparedAmong(basis.tools, n, keep) ?? 0;
  return Math.max(0, Math.min(current, recent));
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
  return clearingOf(gridBasis(messages, plain, cleared), o);
}

/** {@link gridClearing} of the whole conversation `basis` was computed from. */
export function clearingOf(basis: GridBasis, o: GridClearingOptions): GridClearing | null {
  const ds = basis.plain;
  const lastTurn = ds[ds.length - 1]?.turn ?? 0;
  const current = ds.findIndex((d) => d.turn === lastTurn);
  const settled = settledIndex(basis, ds.length, current, o.keepRecent);
  const chosen = gridChoice(basis, ds.length, settled, o);
  return chosen === null ? null : boundaryOf(basis, chosen.items, chosen.steps);
}

/**
 * {@link gridClearing} of the first `n` messages (`settled`: their {@link settledIndex}):
 * the results it clears and the last line whose step was taken, or null when none.
 */
export function gridChoice(
  basis: GridBasis,
  n: number,
  settled: number,
  o: GridClearingOptions,
): { items: Set<Item>; steps: number } | null {
  const { before, items } = basis;
  const total = before[n] as number;
  if (total <= o.triggerTokens && o.batchTokens === undefined) return null;
  const step = Math.max(1, Math.floor(o.stepTokens));
  // Results past the first n messages end after `settled`, so no line or batch takes them.
  const upTo = Math.min(before[settled] as number, o.reachTokens ?? total);
  const lines = Math.floor(upTo / step);
  const chosen = new Set<Item>();
  const batchUpTo = Math.min(upTo, o.batchReachTokens ?? upTo);
  const batched =
    o.batchTokens === undefined ? 0 : takeBatches(items, batchUpTo, o.batchTokens, chosen);
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
  return chosen.size === 0 ? null : { items: chosen, steps };
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
function boundaryOf(basis: GridBasis, chosen: ReadonlySet<Item>, steps: number): GridClearing {
  let boundary = 0;
  const ids = new Set<number>();
  for (const x of chosen) {
    boundary = Math.max(boundary, x.turn + 1);
    ids.add(x.index);
  }
  const spare: string[] = [];
  const clearedIds: string[] = [];
  basis.cleared.forEach((c, i) => {
    if ((basis.plain[i] as ConversationDecision).turn >= boundary) return;
    if (ids.has(i)) clearedIds.push(c.messageId);
    else spare.push(...clearedCalls(c));
  });
  return { clearBeforeTurn: boundary, spareCallIds: spare, clearedIds, steps };
}

/**
 * History, in rooms (the budget the window is planned in), over which clearing steps are
 * taken; past it what was cleared stays as it is and the window moves on its grid.
 * Clearing pays while it keeps the whole conversation in the window (one step per grid
 * line and no move); once the window must move anyway, a clearing step between two moves
 * is one more cache break. Measured on the agent study at 64k: with no limit, 0.64–0.90×
 * the hand-built cost instead of 0.52–0.66×. One room broke the wider sessions (agent-wide
 * seed 13 at 200k: 0.55× the hand-built cost and 90.9 % read, against 0.41× and 95.0 %
 * with 2 rooms; targets ≤ 0.5× and ≥ 93 %), so 2 it stays; batches have their own, shorter
 * reach ({@link CLEARING_BATCH_REACH_ROOMS}).
 */
export const CLEARING_REACH_ROOMS = 2;

/**
 * History, in rooms, over which batches are taken (at most {@link CLEARING_REACH_ROOMS});
 * past it, steps under pressure alone clear. Batches are for the window while it is still
 * filling: a session that never fills it does not reread its old results on every request
 * (agent-wide seed 10 at 200k, 191k tokens of history: 0.48× the hand-built cost with
 * batches over one room, 0.58× over half a room). Past it they lower the share read from
 * the cache: a batch clears the oldest results not cleared yet, near the window's start, so it
 * rewrites almost the whole window, and batches keep the window small (30–95k at 200k), so
 * each request's new results are a large share of what it sends — on the long task with a
 * nudge every 5 rounds at 200k (agent-long) the requests under batches read about 86 % from
 * the cache, those of a window filling up to a step or a move 92 %. Measured there,
 * stateless: batches over 2 rooms read 89.2 % on seed 14 (109 rounds), over 1 room 90.5 %
 * (seeds 1–8: 90.2–91.6 %); agent-wide seed 13 at 200k stays at 0.42× and 95.0 %. The
 * price: the agent study's session (about 1.4k tokens a request) costs 0.34× the
 * hand-built loop at 200k instead of 0.29×, 0.66× at 64k instead of 0.58×.
 */
export const CLEARING_BATCH_REACH_ROOMS = 1;
