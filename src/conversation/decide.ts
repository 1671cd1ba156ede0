/**
 * Decisions and the plan's outputs. One decision per input message, in input order.
 * A planner that planned the same (shorter) conversation before reuses the decisions of
 * the units nothing can have changed: those before the first rebuilt unit, the current
 * turn of the previous plan and both window starts, when the clearing boundary, the
 * reason for the window and the pinned ids are the same. Decisions are frozen, since
 * successive plans share them.
 */
import { countBelow } from "./clearing/spare.js";
import { droppedRound } from "./clearing/turn.js";
import type { MessagePrice, Priced } from "./price.js";
import type { Message } from "./schema.js";
import type { Transform } from "./transforms.js";
import type { Unit } from "./units.js";
import { unitTokens, type WindowView } from "./window.js";

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
  /** Tokens after transforms (a lower bound when `counted` is false). */
  readonly tokens: number;
  readonly turn: number;
  readonly unit: number;
  /**
   * Present (false) only on a message a stateless `planConversation` never counted: its
   * unit is older than a run of newer units that alone exceed the budget, so it cannot be
   * in any window. `tokens` is then a lower bound and no clearing or truncation was
   * worked out for it (`transforms` lists only stray parts removed).
   */
  readonly counted?: false;
} & (
  | { readonly status: "kept"; readonly reason: "required" | "pinned" | "kept" }
  | { readonly status: "dropped"; readonly reason: "history_window" | "orphan_removed" }
);

/**
 * What a message counts toward a window: its tokens, or nothing when it is never sent (an
 * orphan removed). The one rule the window grid and grid clearing measure history by.
 *
 * @example plan.decisions.reduce((n, d) => n + sent(d), 0) // history tokens as sent
 */
export const sent = (d: ConversationDecision): number =>
  d.reason === "orphan_removed" ? 0 : d.tokens;

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

/** What the window chose, with everything a decision depends on. */
export interface Choice {
  readonly view: WindowView;
  readonly startUnit: number;
  readonly clearBeforeTurn: number | null;
  readonly why: string;
  readonly pinnedIds: ReadonlySet<string>;
  /** The pinned ids, sorted and joined: equal keys, equal pinned decisions. */
  readonly pinnedKey: string;
}

/** A plan's internals, kept by its planner to build the next plan from. */
export interface PlanRecord {
  readonly choice: Choice;
  readonly currentStart: number;
  readonly decisions: readonly ConversationDecision[];
  readonly dropped: readonly string[];
  /** Input index of each dropped id. */
  readonly droppedAt: readonly number[];
}

function priceOf(c: Choice, i: number, u: number): Priced {
  const p = c.view.book.prices[i] as MessagePrice;
  const v = c.view;
  return u < v.clearedUnits || (u >= v.currentStart && v.turn.cleared.has(u)) ? p.cleared : p;
}

// One frozen decision (a plain function, not a closure per message: 10,000s per plan).
function decision(
  c: Choice,
  i: number,
  u: number,
  status: ConversationDecision["status"],
  reason: ConversationDecision["reason"],
  detail: string,
): ConversationDecision {
  const { layout } = c.view;
  const p = priceOf(c, i, u);
  const messageId = (layout.messages[i] as Message).id;
  const turn = layout.turnOf[i] as number;
  const { transforms, tokens } = p;
  // Two literals, not a spread of one: a spread copy per uncounted message (thousands on
  // a first stateless call, in code not optimized yet) cost more than building it.
  const d = p.counted
    ? { messageId, status, reason, detail, transforms, tokens, turn, unit: u }
    : { messageId, status, reason, detail, transforms, tokens, turn, unit: u, counted: false };
  return Object.freeze(d) as ConversationDecision;
}

function decideOne(c: Choice, i: number): ConversationDecision {
  const { layout } = c.view;
  const u = layout.unitOf[i] as number;
  const unit = layout.units[u] as Unit;
  if (unit.orphan !== null) return decision(c, i, u, "dropped", "orphan_removed", unit.orphan);
  if (u >= c.view.currentStart) {
    const t = c.view.turn;
    if (droppedRound(layout, t, u)) {
      const detail = `an older round of the current turn, dropped: the ask and the rounds after it need the room even with older results cleared`;
      return decision(c, i, u, "dropped", "history_window", detail);
    }
    const detail = t.cleared.has(u)
      ? "current turn (an older round: its results cleared to fit)"
      : "current turn";
    return decision(c, i, u, "kept", "required", detail);
  }
  if (c.view.pinned.includes(u)) {
    const id = (layout.messages[i] as Message).id;
    const detail = c.pinnedIds.has(id) ? "pinned" : "in a pinned unit";
    return decision(c, i, u, "kept", "pinned", detail);
  }
  if (u >= c.startUnit) return decision(c, i, u, "kept", "kept", "inside the window");
  const tokens = unitTokens(c.view.book, c.view.clearedUnits, u);
  const detail = (c.view.book.prices[i] as MessagePrice).counted
    ? `unit of ${tokens} tokens outside the window: ${c.why}`
    : `unit outside the window, not counted (the newer units alone exceed the budget): ${c.why}`;
  return decision(c, i, u, "dropped", "history_window", detail);
}

// The first unit whose decisions may differ from `prev`'s (0: none can be reused).
function firstChanged(c: Choice, prev: PlanRecord | null, rebuiltFrom: number): number {
  const p = prev?.choice;
  if (
    prev === null ||
    p === undefined ||
    p.view.layout !== c.view.layout ||
    p.clearBeforeTurn !== c.clearBeforeTurn ||
    p.why !== c.why ||
    p.pinnedKey !== c.pinnedKey
  ) {
    return 0;
  }
  const moved = p.startUnit === c.startUnit ? rebuiltFrom : Math.min(p.startUnit, c.startUnit);
  return Math.min(rebuiltFrom, prev.currentStart, moved);
}

/** The decisions and dropped ids, reusing `prev`'s up to the first unit that changed. */
export function decideAll(c: Choice, prev: PlanRecord | null, rebuiltFrom: number): PlanRecord {
  const { layout } = c.view;
  const fromUnit = firstChanged(c, prev, rebuiltFrom);
  const from = (layout.units[fromUnit]?.members[0] as number | undefined) ?? layout.messages.length;
  const reused = prev === null || fromUnit === 0 ? 0 : countBelow(prev.droppedAt, from);
  const decisions = prev === null || fromUnit === 0 ? [] : prev.decisions.slice(0, from);
  const dropped = prev === null ? [] : prev.dropped.slice(0, reused);
  const droppedAt = prev === null ? [] : prev.droppedAt.slice(0, reused);
  for (let i = decisions.length; i < layout.messages.length; i++) {
    const d = decideOne(c, i);
    decisions.push(d);
    if (d.status === "dropped") {
      dropped.push(d.messageId);
      droppedAt.push(i);
    }
  }
  return { choice: c, currentStart: c.view.currentStart, decisions, dropped, droppedAt };
}

// Appends unit `u`'s messages as sent (none for an orphan) to `out`; returns their tokens.
function keepUnit(c: Choice, u: number, out: Message[]): number {
  const unit = c.view.layout.units[u] as Unit;
  if (unit.orphan !== null) return 0;
  let used = 0;
  const members = unit.members;
  for (let j = 0; j < members.length; j++) {
    const p = priceOf(c, members[j] as number, u);
    out.push(p.message);
    used += p.tokens;
  }
  return used;
}

/** The plan of a record: kept messages (pinned units before the window, then the window). */
export function planOf(
  record: PlanRecord,
  budgetTokens: number,
  tokenizer: string,
): ConversationPlan {
  const c = record.choice;
  const { layout } = c.view;
  const messages: Message[] = [];
  let used = 0;
  for (const u of c.view.pinned) if (u < c.startUnit) used += keepUnit(c, u, messages);
  for (let u = c.startUnit; u < layout.units.length; u++) {
    if (!droppedRound(layout, c.view.turn, u)) used += keepUnit(c, u, messages);
  }
  const first = (layout.units[c.startUnit] as Unit).members[0] as number;
  return {
    messages,
    decisions: record.decisions.slice(),
    usedTokens: used,
    budgetTokens,
    tokenizer,
    firstKeptId: (layout.messages[first] as Message).id,
    clearBeforeTurn: c.clearBeforeTurn,
    droppedMessageIds: record.dropped.slice(),
  };
}
