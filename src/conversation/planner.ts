/**
 * `createConversationPlanner`: conversation plans with a memory. An agent loop plans the
 * same conversation every turn, one turn longer each time, with the same message objects:
 * the planner validates and prices each message object once, extends its layout with
 * the new messages only (a message replaced by one of the same skeleton — ids, calls and
 * results — is put in place and priced again), finds the window start by binary search over running sums, and
 * rebuilds only the decisions that can have changed. Its plans are exactly
 * `planConversation`'s (which is a fresh planner per call).
 */
import { InvalidInputError, invalidFromZod, PromptBudgetError } from "../errors/index.js";
import { strictSchema } from "../text/index.js";
import { resolveTokenCounter, type TokenCounter } from "../tokens/index.js";
import { choosePressure } from "./clearing/held.js";
import { clearCurrentTurn, type TurnClearing } from "./clearing/turn.js";
import {
  type Choice,
  type ConversationPlan,
  decideAll,
  type PlanRecord,
  planOf,
} from "./decide.js";
import { fastMessage, parseMessage, strictMessage } from "./fast-parse.js";
import { type MessagePrice, PriceBook } from "./price.js";
import {
  type ConversationPolicy,
  type ConversationPolicyInput,
  ConversationPolicySchema,
  type Message,
  type MessageInput,
} from "./schema.js";
import type { TransformSettings } from "./transforms.js";
import { ConversationLayout, type Unit } from "./units.js";
import { chooseStart, totalFrom, unitTokens, viewWith } from "./window.js";

/** A plan-conversation request of the library: `tokenizer` may be a counter. */
export interface PlanConversationRequest {
  messages: readonly MessageInput[];
  budgetTokens: number;
  tokenizer?: TokenCounter | string | null;
  policy?: ConversationPolicyInput;
}

/** Plans conversations, remembering what it validated, counted and decided. */
export interface ConversationPlanner {
  /**
   * Same contract as `planConversation`. Message objects are taken as immutable: pass a
   * new object for a changed message (the planner remembers objects it has seen).
   */
  plan(request: PlanConversationRequest): ConversationPlan;
}

interface Session {
  readonly layout: ConversationLayout;
  readonly book: PriceBook;
  record: PlanRecord | null;
}

function parseBudget(raw: unknown): number {
  if (typeof raw !== "number" || !Number.isInteger(raw) || raw < 0) {
    throw new InvalidInputError("must be a non-negative integer", ["budgetTokens"]);
  }
  return raw;
}

/** Strict like every surface: a typo in a policy field is `unknown_field`, never ignored. */
function parsePolicy(raw: unknown): ConversationPolicy {
  const parsed = strictSchema(ConversationPolicySchema).safeParse(raw ?? {});
  if (!parsed.success) throw invalidFromZod(parsed.error, ["policy"]);
  return parsed.data;
}

/** Whether the policy clears results at all (then the current turn's older rounds too). */
const clearsAtAll = (p: ConversationPolicy): boolean =>
  p.clearCurrentTurn ?? (p.clearToolResultsAfterTurns !== null || p.clearTrigger !== null);

const sameSet = (a: ReadonlySet<string>, b: ReadonlySet<string>): boolean =>
  a.size === b.size && [...a].every((n) => b.has(n));

const sameSettings = (a: TransformSettings, b: TransformSettings): boolean =>
  a.counter === b.counter &&
  a.toolResultMaxTokens === b.toolResultMaxTokens &&
  a.clearing === b.clearing &&
  sameSet(a.keepToolResults, b.keepToolResults) &&
  sameSet(a.keepCallIds, b.keepCallIds);

/** Sendable units holding a pinned id, before the current turn, ascending. */
function pinnedUnits(layout: ConversationLayout, pinned: readonly string[]): number[] {
  const units = new Set<number>();
  pinned.forEach((id, k) => {
    const i = layout.ids.get(id);
    if (i === undefined) {
      throw new InvalidInputError(`pinned id "${id}" names no message`, ["policy", "pinned", k]);
    }
    const u = layout.unitOf[i] as number;
    if ((layout.units[u] as Unit).orphan === null && u < layout.currentStart) units.add(u);
  });
  return [...units].sort((a, b) => a - b);
}

/**
 * The anchor's unit when it names a sendable unit's first message at or before the
 * current turn, and that unit opens a turn (a user message) or the conversation: an
 * anchor elsewhere (a plan from an older version) is ignored, so the window never starts
 * on an assistant message.
 */
function anchorUnit(layout: ConversationLayout, anchor: string | null): number | null {
  const i = anchor === null ? undefined : layout.ids.get(anchor);
  if (i === undefined) return null;
  const unit = layout.units[layout.unitOf[i] as number] as Unit;
  const usable = unit.members[0] === i && unit.orphan === null;
  const opensTurn = unit.index === 0 || layout.messages[i]?.role === "user";
  return usable && opensTurn && unit.index <= layout.currentStart ? unit.index : null;
}

/**
 * The refusal when even the inviolable part does not fit: the pinned units, the user's
 * ask and the latest round (older rounds of the turn are in `turn` cleared or dropped as
 * far as they can be), with the numbers behind it.
 */
function budgetError(
  layout: ConversationLayout,
  book: PriceBook,
  pinned: readonly number[],
  turn: TurnClearing,
  need: number,
  budget: number,
) {
  const units = [...pinned];
  for (let u = layout.currentStart; u < layout.units.length; u++) {
    if (u === layout.currentStart || u >= turn.keptFrom) units.push(u);
  }
  const names = units
    .filter((u) => (layout.units[u] as Unit).orphan === null)
    .flatMap((u) =>
      (layout.units[u] as Unit).members.map((k) => (layout.messages[k] as Message).id),
    );
  let pinnedTokens = 0;
  for (const u of pinned) pinnedTokens += unitTokens(book, 0, u);
  const ask = book.unitPlain[layout.currentStart] as number;
  const last = layout.units.length - 1;
  const latest = last > layout.currentStart ? (book.unitPlain[last] as number) : 0;
  const older = Math.max(0, need - pinnedTokens - ask - latest);
  const parts = [
    { part: "pinned", tokens: pinnedTokens },
    { part: "ask", tokens: ask },
    { part: "older_rounds", tokens: older },
    { part: "latest_round", tokens: latest },
  ];
  const over = need - budget;
  const fix =
    older > 0 && over <= older
      ? `the older rounds of the current turn cannot be cleared: turn clearing off (clearCurrentTurn: false, or no clearing in the policy)`
      : `raise the budget by ${over} tokens (a larger context window, smaller system side or reserves), or lower toolResultMaxTokens so the latest round's results are cut`;
  const what = turn.steps > 0 ? "with older rounds cleared or dropped" : "";
  return new PromptBudgetError(
    `the current turn's ask, latest round${pinned.length > 0 ? " and pinned messages" : ""} need ${need} tokens${what === "" ? "" : ` (${what})`}; budget is ${budget} (${over} over): ${fix}`,
    names,
    ["budgetTokens"],
    { need, budget, parts, fix },
  );
}

// The anchor holds (with the clearing boundary it was planned with) while everything
// from it fits; otherwise the window and the boundary move together.
function choose(s: Session, policy: ConversationPolicy, budget: number): Choice {
  const { layout, book } = s;
  const pinned = pinnedUnits(layout, policy.pinned);
  const ids = [...new Set(policy.pinned)].sort();
  const base = { pinnedIds: new Set(ids), pinnedKey: ids.join("\u0000") };
  const after = policy.clearToolResultsAfterTurns;
  const natural = after === null ? null : Math.max(0, layout.lastTurn - after + 1);
  const anchor = anchorUnit(layout, policy.anchor);
  let pinnedTokens = 0;
  for (const u of pinned) pinnedTokens += unitTokens(book, 0, u);
  const turn = clearCurrentTurn(layout, book, budget, policy, pinnedTokens, clearsAtAll(policy));
  const fail = (required: number) => budgetError(layout, book, pinned, turn, required, budget);
  const anchorWhy =
    policy.anchorFrom === "window_grid"
      ? "before the window start on the grid (requests over this conversation share it until a grid step is due)"
      : "before the cache anchor";
  // Older rounds of the current turn dropped to fit it: the window is that turn (with the
  // pinned units), so it opens on the ask and nothing older outlives what the turn lost.
  const settle = (c: Choice): Choice =>
    turn.keptFrom > layout.currentStart + 1 && c.startUnit < layout.currentStart
      ? {
          ...c,
          startUnit: layout.currentStart,
          why: "the current turn needs the room: its older rounds were cleared or dropped",
        }
      : c;
  if (policy.clearTrigger !== null) {
    const p = choosePressure(layout, book, policy, budget, pinned, anchor, turn);
    if (p.view.required > budget) throw fail(p.view.required);
    const why = p.why === "before the cache anchor" ? anchorWhy : p.why;
    return settle({ ...base, ...p, why });
  }
  if (anchor !== null) {
    const held = natural === null ? null : Math.min(policy.clearBeforeTurn ?? natural, natural);
    const view = viewWith(layout, book, held, pinned, turn);
    if (totalFrom(view, anchor) <= budget) {
      return settle({ ...base, view, startUnit: anchor, clearBeforeTurn: held, why: anchorWhy });
    }
  }
  const view = viewWith(layout, book, natural, pinned, turn);
  if (view.required > budget) throw fail(view.required);
  const start = chooseStart(view, budget, policy.lowWaterRatio);
  return settle({ ...base, view, startUnit: start.unit, clearBeforeTurn: natural, why: start.why });
}

// The memory of one planner: parsed messages by input object, counters by name, prices
// by message (for one set of transform settings), and the conversation planned last.
class MemoryPlanner implements ConversationPlanner {
  /**
   * Two small plans kept for the life of the class (see {@link keepShapes}). A static
   * field, not a module-level constant: a top-level binding that no function reads is
   * not kept by its module, so such a constant was collected at the first full GC.
   */
  // biome-ignore lint/correctness/noUnusedPrivateClassMembers: held only to keep the shapes alive
  static readonly #shapes = keepShapes((withinWindow) => new MemoryPlanner(false, withinWindow));
  // A one-call planner (`remember` false) keeps no weak maps: nothing could hit them.
  private readonly parsed: WeakMap<object, Message> | null;
  private readonly counters = new Map<string, TokenCounter>();
  private priced: TransformSettings | null = null;
  private prices: WeakMap<Message, MessagePrice> | null;
  private session: Session | null = null;

  constructor(
    private readonly remember: boolean,
    /** Price only what a window can reach (PriceBook.updateWithin): one stateless plan. */
    private readonly withinWindow = false,
  ) {
    this.parsed = remember ? new WeakMap() : null;
    this.prices = remember ? new WeakMap() : null;
  }

  plan(request: PlanConversationRequest): ConversationPlan {
    try {
      return this.planOnce(request);
    } catch (err) {
      // A failed request may have left the layout half extended: start over next time.
      this.session = null;
      throw err;
    }
  }

  private planOnce(request: PlanConversationRequest): ConversationPlan {
    if (request === null || typeof request !== "object") {
      throw new InvalidInputError("must be an object", null);
    }
    const budget = parseBudget(request.budgetTokens);
    const policy = parsePolicy(request.policy);
    const counter = this.counterFor(request.tokenizer);
    if (!Array.isArray(request.messages)) {
      throw new InvalidInputError("must be an array", ["messages"]);
    }
    const settings: TransformSettings = {
      counter,
      toolResultMaxTokens: policy.toolResultMaxTokens,
      keepToolResults: new Set(policy.keepToolResults),
      keepCallIds: new Set(policy.keepCallIds),
      clearing: clearsAtAll(policy),
    };
    const [s, edited] = this.sessionFor(request.messages, settings);
    const rebuiltFrom = this.extend(s, request.messages, edited, () =>
      // Pressure clearing weighs every old result (what a step frees from the first unit
      // on): it needs the whole history priced. Any counter otherwise (named or an
      // object): one rule, so the plan's form never depends on which counter was passed.
      this.withinWindow && policy.clearTrigger === null && s.layout.currentStart >= 0
        ? { budget, pinned: pinnedUnits(s.layout, policy.pinned) }
        : null,
    );
    if (s.layout.currentStart < 0) {
      throw new InvalidInputError("a conversation needs at least one user message", ["messages"]);
    }
    const record = decideAll(choose(s, policy, budget), s.record, rebuiltFrom);
    s.record = record;
    return planOf(record, budget, counter.name);
  }

  private counterFor(tokenizer: PlanConversationRequest["tokenizer"]): TokenCounter {
    if (tokenizer !== undefined && tokenizer !== null && typeof tokenizer !== "string") {
      return resolveTokenCounter(tokenizer);
    }
    const name = tokenizer ?? "estimate";
    const counter = this.counters.get(name) ?? resolveTokenCounter(name);
    this.counters.set(name, counter);
    return counter;
  }

  private parse(raw: unknown, i: number): Message {
    const key = raw !== null && typeof raw === "object" ? raw : null;
    const hit = key === null ? undefined : this.parsed?.get(key);
    if (hit !== undefined) return hit;
    const message = parseMessage(raw, ["messages", i]);
    if (key !== null) this.parsed?.set(key, message);
    return message;
  }

  // The session to plan in, and the first unit whose prices changed in it (its unit
  // count when none did): the last session when the transform settings are the same and
  // the messages start with its objects, or with objects of the same skeleton in place of
  // some (`edit`); a new one otherwise.
  private sessionFor(messages: readonly unknown[], settings: TransformSettings): [Session, number] {
    const last = this.session;
    if (last !== null && sameSettings(last.book.settings, settings)) {
      const edited = this.edit(last, messages);
      if (edited >= 0) return [last, edited];
    }
    if (this.priced === null || !sameSettings(this.priced, settings)) {
      this.priced = settings;
      this.prices = this.remember ? new WeakMap() : null;
    }
    const layout = new ConversationLayout();
    const session = { layout, book: new PriceBook(settings, this.prices), record: null };
    this.session = session;
    return [session, 0];
  }

  // Puts each message that is not the object the layout holds at its index in place of
  // that one, when both have the same skeleton (e.g. a digest prepended to a user
  // message: ids, calls, units and turns stay), and prices it again. Returns the first
  // unit changed (the unit count when none), or -1 — the layout then unusable — when
  // there are fewer messages or one has another skeleton. In input order, so the first
  // invalid message throws as it would for a new session.
  private edit(s: Session, messages: readonly unknown[]): number {
    const { layout } = s;
    const seen = layout.inputs;
    if (messages.length < seen.length) return -1;
    let from = layout.units.length;
    for (let i = 0; i < seen.length; i++) {
      if (messages[i] === seen[i]) continue;
      if (!layout.replace(i, messages[i], this.parse(messages[i], i))) return -1;
      s.book.reprice(layout, i);
      from = Math.min(from, layout.unitOf[i] as number);
    }
    return from;
  }

  // Adds the messages the session has not seen; returns the first unit rebuilt (at most
  // `edited`, the first whose prices changed). A fresh session is priced only as far back
  // as a window can reach when `within` gives the budget and pinned units.
  private extend(
    s: Session,
    messages: readonly unknown[],
    edited: number,
    within: () => { budget: number; pinned: readonly number[] } | null,
  ): number {
    const seen = s.layout.messages.length;
    const remembers = this.parsed !== null;
    for (let i = seen; i < messages.length; i++) {
      const raw = messages[i];
      // A one-call planner asks the fast path itself (the strict schema when it defers): the
      // loop calling it straight is one function fewer that a process's first call has
      // optimized with the whole validation inlined into it (see docs/performance.md).
      s.layout.add(
        raw,
        remembers ? this.parse(raw, i) : (fastMessage(raw) ?? strictMessage(raw, ["messages", i])),
      );
    }
    const relaid = messages.length > seen ? s.layout.relayout() : s.layout.units.length;
    const rebuiltFrom = Math.min(relaid, edited);
    const reach = seen === 0 ? within() : null;
    if (reach !== null) s.book.updateWithin(s.layout, reach.budget, reach.pinned);
    else s.book.update(s.layout, rebuiltFrom);
    return rebuiltFrom;
  }
}

/**
 * A planner that remembers, across calls, each message object it validated and priced
 * and the layout of the conversation it planned last: when the next request's messages
 * start with the same objects, only the new ones are processed. No state is shared
 * between planners; give each conversation (or each worker) its own.
 *
 * @example
 * const planner = createConversationPlanner();
 * let prev: ConversationPlan | null = null;
 * for (;;) { // each turn: append the new messages to `messages`, then
 *   prev = planner.plan({ messages, budgetTokens: 100_000, tokenizer: "o200k_base",
 *     policy: { lowWaterRatio: 0.7, anchor: prev?.firstKeptId ?? null,
 *               clearBeforeTurn: prev?.clearBeforeTurn ?? null } });
 * }
 */
export function createConversationPlanner(): ConversationPlanner {
  return new MemoryPlanner(true);
}

/**
 * A planner without object memos, for one call (`planConversation`) or for a few plans of
 * one request (`planRequest`: the window, then the window opened by its digest, which
 * reuses the first plan's layout and prices).
 */
export function oneCallPlanner(): ConversationPlanner {
  return new MemoryPlanner(false);
}

/**
 * The planner of one stateless `planConversation` call: a one-call planner that, with any
 * counter (a tokenizer named, none, or a counter object), prices only what a window can
 * reach (see
 * `PriceBook.updateWithin`; decisions of the units older than that carry `counted:
 * false`), so the call is O(window) beyond reading its input, on the first call of a
 * process too. Pressure clearing (`clearTrigger`) prices the whole history: what a step
 * frees is weighed from the first unit on.
 */
export function statelessPlanner(): ConversationPlanner {
  return new MemoryPlanner(false, true);
}

/**
 * Plans (with their planners) whose objects keep the hidden classes of frozen messages,
 * parts, units, prices and decisions alive. A stateless call frees everything it built,
 * so after a full GC those classes would die and every function of the per-message path
 * be deoptimized ("weak objects") and run slowly for most of the next call (see "Object
 * shapes" in docs/performance.md). Never read.
 */
function keepShapes(planner: (withinWindow: boolean) => ConversationPlanner): readonly unknown[] {
  const call = { type: "tool_call", callId: "c1", name: "t", input: { a: [1] } };
  const result = (isError: boolean) =>
    isError
      ? { type: "tool_result", callId: "c2", output: "x ".repeat(40), isError }
      : { type: "tool_result", callId: "c1", output: "x ".repeat(40) };
  const messages = [
    { id: "u1", role: "user", content: [{ type: "text", text: "a" }], at: "2024-01-01T00:00:00Z" },
    { id: "a1", role: "assistant", content: [{ type: "text", text: "b" }, call] },
    { id: "t1", role: "tool", content: [result(false)] },
    { id: "a2", role: "assistant", content: [{ ...call, callId: "c2" }] },
    { id: "t2", role: "tool", content: [result(true)] },
    { id: "u2", role: "user", content: [{ type: "text", text: "c" }] },
  ] as MessageInput[];
  const policy = { toolResultMaxTokens: 32, clearToolResultsAfterTurns: 1, pinned: ["a2"] };
  // Built in code and parsed from JSON (a server's request): the two build their objects
  // from different hidden classes. The planners hold their input objects too.
  const plans = [messages, JSON.parse(JSON.stringify(messages))].map((m: MessageInput[]) => {
    const p = planner(false);
    return [p, p.plan({ messages: m, budgetTokens: 1000, tokenizer: "estimate", policy })];
  });
  // A stateless plan whose window cannot reach the first turn: the decisions of messages
  // it never counted (`counted: false`) are built from a literal, a class of their own.
  const stateless = planner(true);
  const uncounted = stateless.plan({ messages, budgetTokens: 20, tokenizer: "estimate" });
  return [...plans, [stateless, uncounted]];
}
