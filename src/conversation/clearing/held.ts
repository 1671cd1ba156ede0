/**
 * Clearing under pressure (`policy.clearTrigger`): nothing changes while the kept total
 * is at most the trigger's share of the budget; above it, one step moves the clearing
 * boundary forward by whole turns until at least `clearAtLeastTokens` are freed (old tool
 * results first, never the current turn's, nor the last `keepRecentToolResults` tool
 * messages'), then, if the total is still above the low-water mark, drops whole old turns
 * down to it. The boundary and the window start are passed back by the caller
 * (`clearBeforeTurn`, `anchor`), so consecutive calls agree and the cache breaks once per
 * step, not once per turn.
 */

import type { PriceBook } from "../price.js";
import type { ConversationPolicy } from "../schema.js";
import type { ConversationLayout } from "../units.js";
import {
  firstSendable,
  firstUnitFrom,
  oldestWithin,
  totalFrom,
  viewWith,
  type WindowView,
} from "../window.js";
import { firstSparedToolMessage } from "./spare.js";

/** What a pressure step chose (the view's `required` may exceed the budget: fail closed). */
export interface PressureChoice {
  readonly view: WindowView;
  readonly startUnit: number;
  readonly clearBeforeTurn: number | null;
  readonly why: string;
}

/** The highest boundary that spares the current turn and the last `keep` tool messages. */
function maxBoundary(layout: ConversationLayout, keep: number): number {
  const spared = firstSparedToolMessage(layout.messages, keep);
  if (spared === null) return 0;
  return spared >= layout.messages.length ? layout.lastTurn : (layout.turnOf[spared] as number);
}

/** Tokens freed, in units from `start` on, by moving the boundary from `held` to `b`. */
function freed(
  layout: ConversationLayout,
  book: PriceBook,
  held: number,
  b: number,
  start: number,
) {
  const lo = Math.max(firstUnitFrom(layout, held), start);
  const hi = Math.max(firstUnitFrom(layout, b), lo);
  const plain = (book.sumPlain[hi] as number) - (book.sumPlain[lo] as number);
  return plain - ((book.sumCleared[hi] as number) - (book.sumCleared[lo] as number));
}

/** The smallest boundary in (held, max] freeing at least `want` tokens (else `max`). */
function nextBoundary(
  layout: ConversationLayout,
  book: PriceBook,
  held: number,
  start: number,
  want: number,
  max: number,
): number {
  if (max <= held) return held;
  let lo = held + 1;
  let hi = max;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (freed(layout, book, held, mid, start) >= want) hi = mid;
    else lo = mid + 1;
  }
  return lo;
}

/**
 * The window and clearing boundary under pressure clearing, from the held `anchor` unit
 * (null: the first unit) and the policy's held `clearBeforeTurn`.
 */
export function choosePressure(
  layout: ConversationLayout,
  book: PriceBook,
  policy: ConversationPolicy,
  budget: number,
  pinned: readonly number[],
  anchor: number | null,
): PressureChoice {
  const trigger = Math.floor((policy.clearTrigger ?? 1) * budget);
  const start = anchor ?? firstSendable(layout);
  const why = anchor === null ? "" : "before the cache anchor";
  // A boundary never reaches into the current turn, whatever the caller passes back.
  const held =
    policy.clearBeforeTurn === null ? null : Math.min(policy.clearBeforeTurn, layout.lastTurn);
  const heldView = viewWith(layout, book, held, pinned);
  if (heldView.required <= budget && totalFrom(heldView, start) <= trigger) {
    return { view: heldView, startUnit: start, clearBeforeTurn: held, why };
  }
  const max = maxBoundary(layout, policy.keepRecentToolResults);
  const from = held ?? 0;
  const b = nextBoundary(layout, book, from, start, policy.clearAtLeastTokens, max);
  const boundary = b === 0 && held === null ? null : Math.max(b, from);
  const view = viewWith(layout, book, boundary, pinned);
  // Down to the low-water mark, not just under the trigger: the next turns need room, or
  // every one of them would trigger another step (another cache break).
  const low = Math.floor(policy.lowWaterRatio * budget);
  if (view.required > budget || totalFrom(view, start) <= Math.min(low, trigger)) {
    return { view, startUnit: start, clearBeforeTurn: boundary, why };
  }
  const under = oldestWithin(view, low);
  // Never back before the held start: what was dropped stays dropped.
  const unit = Math.max(under >= 0 ? under : oldestWithin(view, budget), start);
  const moved =
    under >= 0
      ? `the window moved down to ${low} tokens (low-water mark) under pressure`
      : "keeping it would exceed the budget";
  return { view, startUnit: unit, clearBeforeTurn: boundary, why: moved };
}
