/**
 * Prices: each message's tokens after transforms, in both states it can be in (as is,
 * or with its results cleared), and running sums per unit so a window's total is two
 * subtractions. Each message is priced once per planner and settings (memoized by the
 * message object), so a conversation that grows is not recounted every turn.
 */
import { deepFreeze } from "../text/index.js";
import { messageLowerBound, messageTokens } from "./count.js";
import type { Message } from "./schema.js";
import {
  countForCuts,
  spares,
  type Transform,
  type TransformSettings,
  transformMessage,
  UNKNOWN_TOOL,
} from "./transforms.js";
import type { ConversationLayout } from "./units.js";

/**
 * A message as it would be sent, with its tokens and what was done to it. `counted`
 * false: a message the stateless planner never counted, since the newer history already
 * exceeds the budget ({@link PriceBook.updateWithin}); `tokens` is then a lower bound
 * ({@link messageLowerBound}) and no clearing or truncation was worked out for it.
 */
export interface Priced {
  readonly message: Message;
  readonly tokens: number;
  readonly transforms: readonly Transform[];
  readonly counted: boolean;
}

/**
 * A message's two prices: as is (maybe truncated) — the price itself — and with its
 * results cleared (the price itself when clearing changes nothing, or when the settings
 * never clear: nothing reads it then). One object per message: a plan prices them all.
 */
export interface MessagePrice extends Priced {
  /** The tool names the cleared form was built with. */
  readonly names: readonly string[];
  readonly cleared: Priced;
}

const NONE: readonly Transform[] = Object.freeze([]);

const sameNames = (a: readonly string[], b: readonly string[]): boolean =>
  a.length === b.length && a.every((x, i) => x === b[i]);

// The transformed form of `message`, or null when the transforms change nothing.
function transformed(
  message: Message,
  original: number,
  names: readonly string[],
  clear: boolean,
  s: TransformSettings,
): Priced | null {
  const done = transformMessage(message, original, names, clear, s);
  if (done === null) return null;
  const tokens = messageTokens(done.message, s.counter);
  return Object.freeze({
    message: deepFreeze(done.message),
    tokens,
    transforms: Object.freeze(done.transforms.map((t) => Object.freeze(t))),
    counted: true,
  });
}

class Price implements MessagePrice {
  readonly cleared: Priced;
  constructor(
    readonly names: readonly string[],
    readonly message: Message,
    readonly tokens: number,
    readonly transforms: readonly Transform[],
    cleared: Priced | null,
    readonly counted = true,
  ) {
    this.cleared = cleared ?? this;
  }
}

// Clearing spares the kept tools: when it spares every result, nothing changes.
function sparesAll(message: Message, names: readonly string[], s: TransformSettings): boolean {
  let k = 0;
  const parts = message.content;
  for (let j = 0; j < parts.length; j++) {
    const part = parts[j] as Message["content"][number];
    if (part.type === "tool_result" && !spares(s, names[k++] ?? UNKNOWN_TOOL, part.callId)) {
      return false;
    }
  }
  return true;
}

/**
 * Both prices of `message` under `s`, from `memo` when it was priced before with the same
 * tool names.
 */
export function priceMessage(
  message: Message,
  names: readonly string[],
  s: TransformSettings,
  memo: WeakMap<Message, MessagePrice> | null,
): MessagePrice {
  const hit = memo?.get(message);
  if (hit !== undefined && sameNames(hit.names, names)) return hit;
  countForCuts(message, s);
  const original = messageTokens(message, s.counter);
  const plain = transformed(message, original, names, false, s);
  const clear = s.clearing && message.role === "tool" && !sparesAll(message, names, s);
  const cleared = clear ? transformed(message, original, names, true, s) : null;
  const price =
    plain === null
      ? new Price(names, message, original, NONE, cleared)
      : new Price(names, plain.message, plain.tokens, plain.transforms, cleared);
  memo?.set(message, price);
  return price;
}

/**
 * Prices of a layout's messages and their running sums per unit (orphans count 0, since
 * they are never sent). Grows with the layout.
 */
export class PriceBook {
  readonly prices: MessagePrice[] = [];
  /** Per unit: its tokens as is, and with its results cleared. */
  readonly unitPlain: number[] = [];
  readonly unitCleared: number[] = [];
  /** sumPlain[u]: tokens of the non-orphan units before u, as is; likewise cleared. */
  readonly sumPlain: number[] = [0];
  readonly sumCleared: number[] = [0];

  constructor(
    readonly settings: TransformSettings,
    /** `null` for a one-call planner: nothing could hit it, and weak maps cost the GC. */
    private readonly memo: WeakMap<Message, MessagePrice> | null,
  ) {}

  /** Prices message `i` again (it was replaced in the layout); sum from its unit on next. */
  reprice(layout: ConversationLayout, i: number): void {
    this.prices[i] = this.priceAt(layout, i);
  }

  /** Prices the messages added to `layout` and sums units from `fromUnit` on. */
  update(layout: ConversationLayout, fromUnit: number): void {
    // Messages a cut changed (stray calls removed or restored) are priced again.
    for (const i of layout.takeChanged()) if (i < this.prices.length) this.reprice(layout, i);
    for (let i = this.prices.length; i < layout.messages.length; i++) {
      this.prices.push(this.priceAt(layout, i));
    }
    this.unitPlain.length = fromUnit;
    this.unitCleared.length = fromUnit;
    this.sumPlain.length = fromUnit + 1;
    this.sumCleared.length = fromUnit + 1;
    for (let u = fromUnit; u < layout.units.length; u++) {
      const unit = layout.units[u] as (typeof layout.units)[number];
      let plain = 0;
      let cleared = 0;
      const members = unit.members;
      for (let j = 0; j < members.length; j++) {
        const p = this.prices[members[j] as number] as MessagePrice;
        plain += p.tokens;
        cleared += p.cleared.tokens;
      }
      this.unitPlain.push(plain);
      this.unitCleared.push(cleared);
      const sendable = unit.orphan === null;
      this.sumPlain.push((this.sumPlain[u] as number) + (sendable ? plain : 0));
      this.sumCleared.push((this.sumCleared[u] as number) + (sendable ? cleared : 0));
    }
  }

  /**
   * Prices a fresh layout for one stateless plan in O(window): units are priced exactly
   * from the newest back until the sendable ones before the current turn, each at its
   * cheaper price (cleared or not), exceed `budget` — every start at or before that unit
   * then needs more than the budget, so no window reaches further back, and the units
   * before it are only bounded ({@link uncounted}), except the `pinned` ones (always
   * sent), which are priced exactly. Totals over units from the horizon on are exact;
   * totals reaching below it are at least the horizon's, above the budget, as they would
   * be exactly: every window, anchor and low-water choice comes out the same.
   */
  updateWithin(layout: ConversationLayout, budget: number, pinned: readonly number[]): void {
    const n = layout.messages.length;
    const prices = new Array<MessagePrice | undefined>(n);
    let horizon = 0;
    let total = 0;
    for (let u = layout.units.length - 1; u >= 0; u--) {
      const unit = layout.units[u] as (typeof layout.units)[number];
      let plain = 0;
      let cleared = 0;
      for (const i of unit.members) {
        const p = this.priceAt(layout, i);
        prices[i] = p;
        plain += p.tokens;
        cleared += p.cleared.tokens;
      }
      if (u >= layout.currentStart || unit.orphan !== null) continue;
      total += Math.min(plain, cleared);
      if (total > budget) {
        horizon = u;
        break;
      }
    }
    const exact = new Set(pinned);
    for (let u = 0; u < horizon; u++) {
      const unit = layout.units[u] as (typeof layout.units)[number];
      for (const i of unit.members) {
        prices[i] = exact.has(u) ? this.priceAt(layout, i) : this.uncounted(layout, i);
      }
    }
    layout.takeChanged();
    this.prices.length = 0;
    for (let i = 0; i < n; i++) this.prices.push(prices[i] as MessagePrice);
    this.update(layout, 0);
  }

  // A message never counted: its lower bound, its stray parts (bounded too) recorded.
  private uncounted(layout: ConversationLayout, i: number): MessagePrice {
    const names = layout.names[i] as readonly string[];
    const message = layout.messages[i] as Message;
    const strays = layout.strays.get(i);
    const removed: readonly Transform[] =
      strays === undefined
        ? NONE
        : Object.freeze(
            strays.map((x) =>
              Object.freeze({
                kind: "stray_part_removed" as const,
                originalTokens: messageLowerBound(layout.givenMessage(i)),
                ...x,
              }),
            ),
          );
    return new Price(names, message, messageLowerBound(message), removed, null, false);
  }

  // Message `i`'s price, its stray parts (removed by the layout) recorded first.
  private priceAt(layout: ConversationLayout, i: number): MessagePrice {
    const names = layout.names[i] as readonly string[];
    const price = priceMessage(layout.messages[i] as Message, names, this.settings, this.memo);
    const strays = layout.strays.get(i);
    if (strays === undefined) return price;
    const original = messageTokens(layout.givenMessage(i), this.settings.counter);
    const removed: Transform[] = strays.map((x) =>
      Object.freeze({ kind: "stray_part_removed", originalTokens: original, ...x }),
    );
    const cleared = price.cleared === price ? null : price.cleared;
    return new Price(
      names,
      price.message,
      price.tokens,
      Object.freeze([...removed, ...price.transforms]),
      cleared &&
        Object.freeze({
          message: cleared.message,
          tokens: cleared.tokens,
          transforms: Object.freeze([...removed, ...cleared.transforms]),
          counted: true,
        }),
    );
  }
}
