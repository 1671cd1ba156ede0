/**
 * The window: which contiguous run of units ending at the current turn is kept. Totals
 * come from the price book's running sums (units before the clearing boundary are
 * priced cleared; they form a prefix, since turns only grow), so a candidate start costs
 * a few subtractions and the start is found by binary search: the total from a start
 * only shrinks as the start moves later.
 */
import { type TurnClearing, turnUnitTokens, wholeTurn } from "./clearing/turn.js";
import type { PriceBook } from "./price.js";
import type { ConversationLayout } from "./units.js";

/** The layout and prices seen with one clearing boundary and one set of pinned units. */
export interface WindowView {
  readonly layout: ConversationLayout;
  readonly book: PriceBook;
  /** Units before this index are in turns before the clearing boundary. */
  readonly clearedUnits: number;
  /** Sendable pinned units before the current turn, ascending. */
  readonly pinned: readonly number[];
  readonly currentStart: number;
  /** Tokens of the required units: the current turn's (as `turn` sends it) and the pinned ones. */
  readonly required: number;
  /** What the current turn sends: its rounds cleared or dropped to fit (clearing/turn.ts). */
  readonly turn: TurnClearing;
}

/** The index of the first unit in a turn at or after `boundary` (0 when `null`). */
export function firstUnitFrom(layout: ConversationLayout, boundary: number | null): number {
  if (boundary === null) return 0;
  let lo = 0;
  let hi = layout.units.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if ((layout.units[mid]?.turn as number) < boundary) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/** A unit's tokens as it would be sent under the view's clearing boundary. */
export function unitTokens(book: PriceBook, clearedUnits: number, u: number): number {
  return (u < clearedUnits ? book.unitCleared[u] : book.unitPlain[u]) as number;
}

// Tokens of the sendable units in [s, e).
function rangeTokens(book: PriceBook, clearedUnits: number, s: number, e: number): number {
  const mid = Math.min(Math.max(clearedUnits, s), e);
  return (
    (book.sumCleared[mid] as number) -
    (book.sumCleared[s] as number) +
    (book.sumPlain[e] as number) -
    (book.sumPlain[mid] as number)
  );
}

/** Tokens of the current turn as `turn` sends it (orphans count 0, as in the sums). */
export function currentTurnTokens(
  layout: ConversationLayout,
  book: PriceBook,
  turn: TurnClearing,
): number {
  const start = layout.currentStart;
  const end = layout.units.length;
  if (turn.cleared.size === 0 && turn.keptFrom <= start + 1) {
    return (book.sumPlain[end] as number) - (book.sumPlain[start] as number);
  }
  let total = (book.sumPlain[start + 1] as number) - (book.sumPlain[start] as number);
  for (let u = turn.keptFrom; u < end; u++) {
    if (layout.units[u]?.orphan === null) total += turnUnitTokens(book, turn, u);
  }
  return total;
}

/**
 * The view of `layout` with the results of turns before `boundary` cleared, and the
 * current turn sent as `turn` says (whole by default).
 */
export function viewWith(
  layout: ConversationLayout,
  book: PriceBook,
  boundary: number | null,
  pinned: readonly number[],
  turn: TurnClearing = wholeTurn(layout),
): WindowView {
  const clearedUnits = firstUnitFrom(layout, boundary);
  const currentStart = layout.currentStart;
  let required = currentTurnTokens(layout, book, turn);
  for (const u of pinned) required += unitTokens(book, clearedUnits, u);
  return { layout, book, clearedUnits, pinned, currentStart, required, turn };
}

/** `total(s)`: the required units plus every sendable unit from `s` to the end. */
export function totalFrom(v: WindowView, s: number): number {
  let total = v.required + rangeTokens(v.book, v.clearedUnits, s, v.currentStart);
  // Pinned units are in `required` already.
  for (const u of v.pinned) if (u >= s) total -= unitTokens(v.book, v.clearedUnits, u);
  return total;
}

/**
 * The oldest turn start (a user unit, or the current turn's) whose total is at most
 * `limit`, or -1 if none is. The window moves by whole turns so that every request opens
 * on a user message: Bedrock and others reject a conversation that starts with the
 * assistant, and a turn cut in half loses the ask its tool calls answer.
 */
export function oldestWithin(v: WindowView, limit: number): number {
  if (totalFrom(v, v.currentStart) > limit) return -1;
  const starts = v.layout.userUnits;
  let lo = 0;
  let hi = starts.length - 1; // the current turn's start fits
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (totalFrom(v, starts[mid] as number) <= limit) hi = mid;
    else lo = mid + 1;
  }
  return starts[lo] as number;
}

/** The first sendable unit: the whole conversation, when it all fits. */
export function firstSendable(layout: ConversationLayout): number {
  let u = 0;
  while (layout.units[u]?.orphan != null) u++;
  return u;
}

/** Where the window starts, and why the units before it are out. */
export interface Start {
  readonly unit: number;
  readonly why: string;
}

/**
 * The start without a holding anchor: the first unit when everything fits; otherwise
 * the oldest start whose total is at most `floor(lowWaterRatio × budget)`, or, if none
 * is, the oldest that fits. The required units must fit (the caller checked).
 */
export function chooseStart(v: WindowView, budget: number, lowWaterRatio: number): Start {
  const first = firstSendable(v.layout);
  if (totalFrom(v, first) <= budget) return { unit: first, why: "" };
  const low = Math.floor(lowWaterRatio * budget);
  if (low < budget) {
    const under = oldestWithin(v, low);
    if (under >= 0) {
      return { unit: under, why: `the window moved down to ${low} tokens (low-water mark)` };
    }
  }
  return { unit: oldestWithin(v, budget), why: "keeping it would exceed the budget" };
}
