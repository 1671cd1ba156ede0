/**
 * `planConversation`: the history under a token budget. Pure and deterministic: one
 * decision per input message, orphans never sent, the current turn and pinned units
 * required (fail closed), the kept history one contiguous run ending at the current
 * turn, and a cache anchor with low-water batching so the kept prefix stays
 * byte-identical for several turns.
 */
import { InvalidInputError, invalidFromZod, PromptBudgetError } from "../errors/index.js";
import { resolveTokenCounter, type TokenCounter } from "../tokens/index.js";
import { messageTokens } from "./count.js";
import {
  type ConversationPolicy,
  type ConversationPolicyInput,
  ConversationPolicySchema,
  type Message,
  type MessageInput,
  MessageSchema,
} from "./schema.js";
import { type Transform, transformMessage } from "./transforms.js";
import { checkConversation, layoutUnits, type Unit, type UnitLayout } from "./units.js";

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
  readonly transforms: Transform[];
  /** Tokens after transforms. */
  readonly tokens: number;
  readonly turn: number;
  readonly unit: number;
} & (
  | { readonly status: "kept"; readonly reason: "required" | "pinned" | "kept" }
  | { readonly status: "dropped"; readonly reason: "history_window" | "orphan_removed" }
);

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

/** A plan-conversation request of the library: `tokenizer` may be a counter. */
export interface PlanConversationRequest {
  messages: readonly MessageInput[];
  budgetTokens: number;
  tokenizer?: TokenCounter | string | null;
  policy?: ConversationPolicyInput;
}

function parseMessages(raw: unknown): Message[] {
  if (!Array.isArray(raw)) throw new InvalidInputError("must be an array", ["messages"]);
  return raw.map((m, i) => {
    const parsed = MessageSchema.safeParse(m);
    if (!parsed.success) throw invalidFromZod(parsed.error, ["messages", i]);
    return parsed.data;
  });
}

function parsePolicy(raw: unknown, messages: readonly Message[]): ConversationPolicy {
  const parsed = ConversationPolicySchema.safeParse(raw ?? {});
  if (!parsed.success) throw invalidFromZod(parsed.error, ["policy"]);
  const ids = new Set(messages.map((m) => m.id));
  parsed.data.pinned.forEach((id, i) => {
    if (!ids.has(id)) {
      throw new InvalidInputError(`pinned id "${id}" names no message`, ["policy", "pinned", i]);
    }
  });
  return parsed.data;
}

function parseBudget(raw: unknown): number {
  if (typeof raw !== "number" || !Number.isInteger(raw) || raw < 0) {
    throw new InvalidInputError("must be a non-negative integer", ["budgetTokens"]);
  }
  return raw;
}

/** Messages after transforms, their tokens, and what was done to them. */
interface Priced {
  readonly messages: Message[];
  readonly tokens: Float64Array;
  readonly transforms: Transform[][];
  readonly unitTokens: Float64Array;
}

function price(
  messages: readonly Message[],
  layout: UnitLayout,
  policy: ConversationPolicy,
  clearBefore: number | null,
  counter: TokenCounter,
): Priced {
  const keep = new Set(policy.keepToolResults);
  const out: Message[] = [];
  const tokens = new Float64Array(messages.length);
  const transforms: Transform[][] = [];
  const unitTokens = new Float64Array(layout.units.length);
  messages.forEach((m, i) => {
    const original = messageTokens(m, counter);
    const turn = layout.turnOf[i] as number;
    const done = transformMessage(m, original, {
      counter,
      toolResultMaxTokens: policy.toolResultMaxTokens,
      clear: clearBefore !== null && turn < clearBefore,
      keepToolResults: keep,
      toolNames: layout.toolNames,
    });
    const t = done.transforms.length === 0 ? original : messageTokens(done.message, counter);
    out.push(done.message);
    tokens[i] = t;
    transforms.push(done.transforms);
    const unit = layout.unitOf[i] as number;
    unitTokens[unit] = (unitTokens[unit] as number) + t;
  });
  return { messages: out, tokens, transforms, unitTokens };
}

/** Which units are required, and `total[s]`: required + every unit from s on. */
interface Window {
  readonly required: Uint8Array;
  readonly requiredTokens: number;
  /** total[s] for each unit index s (orphans contribute nothing). */
  readonly total: Float64Array;
}

function windowTotals(
  layout: UnitLayout,
  priced: Priced,
  pinnedUnits: ReadonlySet<number>,
): Window {
  const n = layout.units.length;
  const required = new Uint8Array(n);
  let requiredTokens = 0;
  for (const u of layout.units) {
    if (u.orphan !== null) continue;
    if (u.index >= layout.currentStart || pinnedUnits.has(u.index)) {
      required[u.index] = 1;
      requiredTokens += priced.unitTokens[u.index] as number;
    }
  }
  const total = new Float64Array(n + 1);
  total[n] = requiredTokens;
  for (let s = n - 1; s >= 0; s--) {
    const u = layout.units[s] as Unit;
    const extra = u.orphan === null && required[s] === 0 ? (priced.unitTokens[s] as number) : 0;
    total[s] = (total[s + 1] as number) + extra;
  }
  return { required, requiredTokens, total };
}

/** Where the window starts and why older units are out. */
interface Start {
  readonly unit: number;
  readonly why: string;
}

function anchorUnit(layout: UnitLayout, messages: readonly Message[], anchor: string | null) {
  if (anchor === null) return null;
  const u = layout.units.find((x) => messages[x.members[0] as number]?.id === anchor);
  if (u === undefined || u.orphan !== null || u.index > layout.currentStart) return null;
  return u.index;
}

// Candidate starts: non-orphan units up to the current turn, oldest first.
function chooseStart(layout: UnitLayout, w: Window, budget: number, lowWater: number): Start {
  const starts = layout.units.filter((u) => u.orphan === null && u.index <= layout.currentStart);
  const first = starts[0]?.index ?? layout.currentStart;
  if ((w.total[first] as number) <= budget) return { unit: first, why: "" };
  const low = Math.floor(lowWater * budget);
  const underLow = starts.find((u) => (w.total[u.index] as number) <= low);
  if (underLow !== undefined) {
    return { unit: underLow.index, why: `the window moved to ${low} tokens (low-water mark)` };
  }
  const fits = starts.find((u) => (w.total[u.index] as number) <= budget);
  return { unit: fits?.index ?? layout.currentStart, why: "keeping it would exceed the budget" };
}

interface Pass {
  readonly priced: Priced;
  readonly window: Window;
  readonly start: Start;
  readonly clearBefore: number | null;
}

function naturalClearBefore(layout: UnitLayout, policy: ConversationPolicy): number | null {
  const n = policy.clearToolResultsAfterTurns;
  return n === null ? null : Math.max(0, layout.lastTurn - n + 1);
}

// The anchor holds (with the clearing boundary it was planned with) while everything
// from it fits; otherwise the window and the boundary move together.
function plan(
  messages: readonly Message[],
  layout: UnitLayout,
  policy: ConversationPolicy,
  budget: number,
  counter: TokenCounter,
): Pass {
  const pinnedUnits = new Set(
    policy.pinned.map((id) => layout.unitOf[messages.findIndex((m) => m.id === id)] as number),
  );
  const natural = naturalClearBefore(layout, policy);
  const anchor = anchorUnit(layout, messages, policy.anchor);
  if (anchor !== null) {
    const held = natural === null ? null : (policy.clearBeforeTurn ?? natural);
    const priced = price(messages, layout, policy, held, counter);
    const window = windowTotals(layout, priced, pinnedUnits);
    if ((window.total[anchor] as number) <= budget) {
      return {
        priced,
        window,
        start: { unit: anchor, why: "before the cache anchor" },
        clearBefore: held,
      };
    }
  }
  const priced = price(messages, layout, policy, natural, counter);
  const window = windowTotals(layout, priced, pinnedUnits);
  if (window.requiredTokens > budget) {
    const names = layout.units
      .filter((u) => window.required[u.index] === 1)
      .flatMap((u) => u.members.map((k) => (messages[k] as Message).id));
    throw new PromptBudgetError(
      `the current turn and pinned messages need ${window.requiredTokens} tokens; budget is ${budget}`,
      names,
      ["budgetTokens"],
    );
  }
  return {
    priced,
    window,
    start: chooseStart(layout, window, budget, policy.lowWaterRatio),
    clearBefore: natural,
  };
}

function decide(
  messages: readonly Message[],
  layout: UnitLayout,
  pass: Pass,
  pinnedIds: ReadonlySet<string>,
): ConversationDecision[] {
  return messages.map((m, i) => {
    const u = layout.units[layout.unitOf[i] as number] as Unit;
    const base = {
      messageId: m.id,
      transforms: pass.priced.transforms[i] as Transform[],
      tokens: pass.priced.tokens[i] as number,
      turn: layout.turnOf[i] as number,
      unit: u.index,
    };
    const unitTokens = pass.priced.unitTokens[u.index] as number;
    if (u.orphan !== null) {
      return { ...base, status: "dropped", reason: "orphan_removed", detail: u.orphan };
    }
    if (u.index >= layout.currentStart) {
      return { ...base, status: "kept", reason: "required", detail: "current turn" };
    }
    if (pass.window.required[u.index] === 1) {
      const detail = pinnedIds.has(m.id) ? "pinned" : "in a pinned unit";
      return { ...base, status: "kept", reason: "pinned", detail };
    }
    if (u.index >= pass.start.unit) {
      return { ...base, status: "kept", reason: "kept", detail: "inside the window" };
    }
    const detail = `unit of ${unitTokens} tokens outside the window: ${pass.start.why}`;
    return { ...base, status: "dropped", reason: "history_window", detail };
  });
}

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
  if (request === null || typeof request !== "object") {
    throw new InvalidInputError("must be an object", null);
  }
  const budget = parseBudget(request.budgetTokens);
  const messages = parseMessages(request.messages);
  const toolNames = checkConversation(messages);
  const policy = parsePolicy(request.policy, messages);
  const counter = resolveTokenCounter(request.tokenizer);
  const layout = layoutUnits(messages, toolNames);
  const pass = plan(messages, layout, policy, budget, counter);
  const decisions = decide(messages, layout, pass, new Set(policy.pinned));
  const kept: Message[] = [];
  const dropped: string[] = [];
  let used = 0;
  decisions.forEach((d, i) => {
    if (d.status === "kept") {
      kept.push(pass.priced.messages[i] as Message);
      used += d.tokens;
    } else dropped.push(d.messageId);
  });
  const firstUnit = layout.units[pass.start.unit] as Unit;
  return {
    messages: kept,
    decisions,
    usedTokens: used,
    budgetTokens: budget,
    tokenizer: counter.name,
    firstKeptId: (messages[firstUnit.members[0] as number] as Message).id,
    clearBeforeTurn: pass.clearBefore,
    droppedMessageIds: dropped,
  };
}
