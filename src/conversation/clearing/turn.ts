/**
 * Clearing inside the current turn: an agent working on one long task sends one user
 * message and then hundreds of tool rounds, so the current turn alone can outgrow the
 * budget. Only the user's ask and the latest round are inviolable; older rounds of the
 * turn are cleared (largest first, the id-quoting lines kept) and, when even their
 * notices do not fit, dropped oldest first — whole rounds, so every call keeps its result.
 *
 * Without state: the choice is replayed round by round over the turn as it grew, each
 * step depending only on the rounds up to it, so consecutive requests make the same
 * choice until a step is due, and what was cleared or dropped stays so (the provider's
 * cached prefix breaks once per step, not once per request).
 */
import type { PriceBook } from "../price.js";
import type { ConversationPolicy } from "../schema.js";
import type { ConversationLayout, Unit } from "../units.js";

/** What the current turn sends: which of its rounds are cleared, from which it is kept. */
export interface TurnClearing {
  /** Units of the current turn sent with their results cleared. */
  readonly cleared: ReadonlySet<number>;
  /** The first round kept after the ask: units between the ask and it are dropped. */
  readonly keptFrom: number;
  /** Steps taken (0: the turn is sent whole). */
  readonly steps: number;
}

/** The current turn sent whole. */
export function wholeTurn(layout: ConversationLayout): TurnClearing {
  return { cleared: new Set(), keptFrom: layout.currentStart + 1, steps: 0 };
}

/** Tokens of a current-turn unit as sent under `t`. */
export function turnUnitTokens(book: PriceBook, t: TurnClearing, u: number): number {
  return (t.cleared.has(u) ? book.unitCleared[u] : book.unitPlain[u]) as number;
}

/** Whether unit `u` is a round of the current turn dropped under `t`. */
export const droppedRound = (layout: ConversationLayout, t: TurnClearing, u: number): boolean =>
  u > layout.currentStart && u < t.keptFrom;

/**
 * Tokens unit `u` would count more with its truncated results whole (0 when none is cut):
 * what `turnTriggerUncut` adds to the trigger's count.
 */
function cutTokens(layout: ConversationLayout, book: PriceBook, u: number): number {
  let n = 0;
  for (const i of (layout.units[u] as Unit).members) {
    const p = book.prices[i];
    if (p === undefined) continue;
    let uncut = p.tokens;
    for (const t of p.transforms) {
      if (t.kind === "tool_result_truncated") uncut = Math.max(uncut, t.originalTokens);
    }
    n += uncut - p.tokens;
  }
  return n;
}

/** Tool messages per unit of the current turn (the spare rule counts tool messages). */
function toolMessages(layout: ConversationLayout, u: number): number {
  let n = 0;
  for (const i of (layout.units[u] as Unit).members) if (layout.messages[i]?.role === "tool") n++;
  return n;
}

/**
 * The clearing of the current turn in `budget`, with `base` tokens required besides the
 * turn (the pinned units). Replayed round by round: when the ask and the rounds up to
 * round j (the latest then) count more than `floor((clearTrigger ?? 1) × budget)`, one
 * step frees down to `lowWaterRatio` of the budget (at least `clearAtLeastTokens`):
 * first by clearing older rounds of the turn, largest first, sparing the last
 * `keepRecentToolResults` tool messages; then, when that does not free down to the low
 * water, the spared ones too (only the latest round is inviolable); then, if still over the
 * trigger, by dropping the oldest rounds. Stopping at the trigger instead would leave the
 * spared results whole after every step: the next step comes a few rounds later, and each
 * one rewrites the cached turn (measured on the long task at 200k: 1.18× the cost of
 * server-side clearing and 85 % read from the cache; freeing down to the low water,
 * 0.82× and 90 %). `canClear`
 * false (no clearing in the policy): rounds are only dropped.
 *
 * @example clearCurrentTurn(layout, book, 50_000, policy, 0, true).cleared // units sent cleared
 */
export function clearCurrentTurn(
  layout: ConversationLayout,
  book: PriceBook,
  budget: number,
  policy: ConversationPolicy,
  base: number,
  canClear: boolean,
): TurnClearing {
  const ask = layout.currentStart;
  const end = layout.units.length;
  if (ask < 0 || end - ask <= 2) return wholeTurn(layout);
  const trigger = Math.floor((policy.clearTrigger ?? 1) * budget);
  const low = Math.min(Math.floor(policy.lowWaterRatio * budget), trigger);
  const cleared = new Set<number>();
  const saving = (u: number): number =>
    canClear ? (book.unitPlain[u] as number) - (book.unitCleared[u] as number) : 0;
  const sendable = (u: number): boolean => (layout.units[u] as Unit).orphan === null;
  const price = (u: number): number =>
    sendable(u) ? turnUnitTokens(book, { cleared, keptFrom: 0, steps: 0 }, u) : 0;
  // With `turnTriggerUncut`, the trigger counts the kept rounds' truncated results whole
  // (`cut`: what that adds); a cleared result is never truncated, so clearing takes it off.
  const cutOf = (u: number): number =>
    policy.turnTriggerUncut && sendable(u) ? cutTokens(layout, book, u) : 0;
  let keptFrom = ask + 1;
  let used = base + price(ask);
  let cut = cutOf(ask);
  let steps = 0;
  for (let j = ask + 1; j < end; j++) {
    // An orphan is never sent: the latest round is the last sendable one.
    if (!sendable(j)) continue;
    used += price(j);
    cut += cutOf(j);
    if (used + cut <= trigger) continue;
    steps += 1;
    const want = Math.max(used - low, policy.clearAtLeastTokens);
    let freed = 0;
    // The units of the last `keep` tool messages before j are spared first.
    const spared = new Set<number>();
    for (let u = j - 1, seen = 0; u >= keptFrom && seen < policy.keepRecentToolResults; u--) {
      const n = toolMessages(layout, u);
      if (n > 0) spared.add(u);
      seen += n;
    }
    for (const soft of [true, false]) {
      if (freed >= want) break;
      const pool: number[] = [];
      for (let u = keptFrom; u < j; u++) {
        if (!cleared.has(u) && sendable(u) && saving(u) > 0 && !(soft && spared.has(u))) {
          pool.push(u);
        }
      }
      pool.sort((a, b) => saving(b) - saving(a) || a - b);
      for (const u of pool) {
        if (freed >= want) break;
        freed += saving(u);
        cut -= cutOf(u);
        cleared.add(u);
      }
    }
    used -= freed;
    if (used + cut <= trigger) continue;
    // Even cleared, the older rounds do not fit: drop them, oldest first, down to `low`.
    while (keptFrom < j && used > low) {
      used -= price(keptFrom);
      if (!cleared.has(keptFrom)) cut -= cutOf(keptFrom);
      cleared.delete(keptFrom);
      keptFrom += 1;
    }
  }
  return { cleared, keptFrom, steps };
}
