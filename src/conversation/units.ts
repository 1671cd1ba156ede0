/**
 * Units and turns. A unit is kept or dropped whole: an assistant message with tool calls
 * plus the `tool` messages answering them, or any other message alone. A unit with an
 * unanswered call, or a `tool` message answering no call of the unit before it, is an
 * orphan: providers reject those, so they are never sent.
 *
 * A stray part does not take its message's valid pairs with it: a result for a call never
 * made, in a tool message that also answers a call, and a call left unanswered in an
 * assistant message whose other calls are answered, are removed from the message as sent
 * (recorded per message in `strays`, which the price book turns into
 * `stray_part_removed` transforms); the rest of the message and its unit are kept.
 *
 * The layout is append-only, so a planner that sees the same conversation grow turn
 * after turn extends it instead of rebuilding it: new messages can only extend the last
 * unit (a tool result arriving for its call) or start new ones.
 */
import { InvalidInputError } from "../errors/index.js";
import type { Message, Part, ToolCallPart } from "./schema.js";
import { UNKNOWN_TOOL } from "./transforms.js";

/** One unit: the indices of its messages in the input, and why it is an orphan if it is. */
export interface Unit {
  readonly index: number;
  /** Input indices of its messages, in order. */
  readonly members: number[];
  /** The turn of its messages (the number of user messages up to and including them). */
  readonly turn: number;
  /** Set when the unit can never be sent: the detail names the call id. */
  readonly orphan: string | null;
}

/** A part removed from a message because it pairs with nothing (see the file's comment). */
export interface StrayPart {
  readonly part: "tool_result" | "tool_call";
  readonly callId: string;
  readonly reason: "result_without_call" | "call_without_result";
}

const NO_NAMES: readonly string[] = Object.freeze([]);

// `m` without the tool parts whose call id is in `drop`.
function without(m: Message, drop: ReadonlySet<string>): Message {
  const content = m.content.filter((p) => p.type === "text" || !drop.has(p.callId));
  return Object.freeze({ ...m, content: Object.freeze(content) }) as Message;
}

// A loop, not `some` with an arrow: it runs for every assistant message of every plan.
function hasCall(m: Message): boolean {
  const parts = m.content;
  for (let j = 0; j < parts.length; j++) if ((parts[j] as Part).type === "tool_call") return true;
  return false;
}

function resultIds(m: Message): string[] {
  const out: string[] = [];
  for (const p of m.content) if (p.type === "tool_result") out.push(p.callId);
  return out;
}

/**
 * The conversation seen so far, its cross-message rules checked (unique ids, unique call
 * ids among calls and among results), cut into units and turns.
 */
export class ConversationLayout {
  /** The request's message objects, by index (a planner compares the next request's). */
  readonly inputs: unknown[] = [];
  readonly messages: Message[] = [];
  /** Per message: the tool name of each of its results' calls (calls before it only). */
  readonly names: (readonly string[])[] = [];
  readonly ids = new Map<string, number>();
  readonly units: Unit[] = [];
  /** Per message: its unit's index. */
  readonly unitOf: number[] = [];
  /** Per message: its turn (0 before the first user message). */
  readonly turnOf: number[] = [];
  /** Units holding a user message, in order: the last one starts the current turn. */
  readonly userUnits: number[] = [];
  /** Per message index: the stray parts removed from it (absent when none). */
  readonly strays = new Map<number, readonly StrayPart[]>();
  /** Indices whose message changed since the price book last read them (see takeChanged). */
  private changed: number[] = [];
  /** Messages as given where stray parts were removed (a later cut may answer a call again). */
  private readonly given = new Map<number, Message>();
  private readonly calls = new Map<string, string>();
  private readonly results = new Set<string>();

  /** Index of the current turn's first unit (-1 while there is no user message). */
  get currentStart(): number {
    return this.userUnits.length === 0 ? -1 : (this.userUnits.at(-1) as number);
  }

  /** The current turn's number. */
  get lastTurn(): number {
    return this.turnOf.length === 0 ? 0 : (this.turnOf.at(-1) as number);
  }

  /**
   * Appends a validated message, checking its id and call ids against the messages
   * before it. Throws {@link InvalidInputError} with the path (the layout is then
   * unusable: the planner that owns it starts over).
   */
  add(input: unknown, message: Message): void {
    const i = this.messages.length;
    if (this.ids.has(message.id)) {
      throw new InvalidInputError(`duplicate message id "${message.id}"`, ["messages", i, "id"]);
    }
    // Messages without results share one empty list: no allocation per message.
    let names: readonly string[] = NO_NAMES;
    const content = message.content;
    for (let j = 0; j < content.length; j++) {
      const p = content[j] as Message["content"][number];
      if (p.type === "text") continue;
      const seen = p.type === "tool_call" ? this.calls.has(p.callId) : this.results.has(p.callId);
      if (seen) {
        throw new InvalidInputError(`duplicate ${p.type} callId "${p.callId}"`, [
          ...["messages", i, "content", j, "callId"],
        ]);
      }
      if (p.type === "tool_call") this.calls.set(p.callId, p.name);
      else {
        this.results.add(p.callId);
        if (names === NO_NAMES) names = [];
        (names as string[]).push(this.calls.get(p.callId) ?? UNKNOWN_TOOL);
      }
    }
    this.ids.set(message.id, i);
    this.inputs.push(input);
    this.messages.push(this.strayResults(message, i, names));
    this.names.push(names);
  }

  // A tool message answering a call made before it and also carrying results for calls
  // never made: those results are removed (and their names with them), the rest is kept.
  // A message answering no call at all is left whole: its unit is an orphan.
  private strayResults(message: Message, i: number, names: readonly string[]): Message {
    if (message.role !== "tool" || names.length < 2) return message;
    const stray = new Set<string>();
    let made = 0;
    for (const p of message.content) {
      if (p.type !== "tool_result") continue;
      if (this.calls.has(p.callId)) made++;
      else stray.add(p.callId);
    }
    if (stray.size === 0 || made === 0) return message;
    const kept: string[] = [];
    let k = 0;
    for (const p of message.content) {
      if (p.type !== "tool_result") continue;
      if (!stray.has(p.callId)) kept.push(names[k] as string);
      k++;
    }
    (names as string[]).splice(0, names.length, ...kept);
    this.strays.set(
      i,
      Object.freeze(
        [...stray].map((callId) =>
          Object.freeze({ part: "tool_result", callId, reason: "result_without_call" } as const),
        ),
      ),
    );
    this.given.set(i, message);
    return without(message, stray);
  }

  /** Message `i` as given, before stray parts were removed from it. */
  givenMessage(i: number): Message {
    return this.given.get(i) ?? (this.messages[i] as Message);
  }

  /** The indices whose message a cut changed since the last call (for the price book). */
  takeChanged(): number[] {
    const out = this.changed;
    this.changed = [];
    return out;
  }

  /**
   * Puts `message` at index `i` in place of a message of the same skeleton
   * ({@link sameSkeleton}: same id, role, calls and results), which leaves the ids, call
   * ids, units and turns as they are. Returns false, changing nothing, for any other.
   */
  replace(i: number, input: unknown, message: Message): boolean {
    const old = this.messages[i];
    if (old === undefined || this.strays.has(i) || !sameSkeleton(old, message)) return false;
    this.inputs[i] = input;
    this.messages[i] = message;
    return true;
  }

  /**
   * Cuts the messages added since the last call into units: the last unit is cut again
   * (new tool messages may answer its calls), earlier ones are final. Returns the index
   * of the first unit that was (re)built.
   */
  relayout(): number {
    const last = this.units.at(-1);
    const from = last === undefined ? 0 : (last.members[0] as number);
    const first = last === undefined ? 0 : last.index;
    if (last !== undefined) {
      this.units.pop();
      if (this.userUnits.at(-1) === first) this.userUnits.pop();
    }
    let turn = from > 0 ? (this.turnOf[from - 1] as number) : 0;
    let i = from;
    while (i < this.messages.length) {
      const m = this.messages[i] as Message;
      if (m.role === "user") {
        turn += 1;
        this.userUnits.push(this.units.length);
      }
      const unit =
        m.role === "assistant" && hasCall(m)
          ? this.toolUnit(i, turn)
          : { index: this.units.length, members: [i], turn, orphan: loneOrphan(m) };
      const members = unit.members;
      for (let j = 0; j < members.length; j++) {
        this.unitOf[members[j] as number] = unit.index;
        this.turnOf[members[j] as number] = turn;
      }
      this.units.push(unit);
      i = (unit.members.at(-1) as number) + 1;
    }
    return first;
  }

  // A tool-call unit: the assistant message, then the tool messages that answer its calls.
  private toolUnit(start: number, turn: number): Unit {
    const given = this.given.get(start) ?? (this.messages[start] as Message);
    const open = new Set<string>();
    for (const p of given.content) {
      if (p.type === "tool_call") open.add(p.callId);
    }
    const calls = open.size;
    const members = [start];
    for (let next = start + 1; next < this.messages.length; next++) {
      const m = this.messages[next] as Message;
      if (m.role !== "tool") break;
      // A tool message that answers anything but this unit's open calls stands alone.
      if (!answersOpen(m, open)) break;
      for (const p of m.content) if (p.type === "tool_result") open.delete(p.callId);
      members.push(next);
    }
    // Calls left unanswered while others were answered: removed from the message as sent.
    const partial = open.size > 0 && open.size < calls;
    this.setCalls(start, given, partial ? open : null);
    const missing = open.values().next();
    const orphan = missing.done || partial ? null : `call ${missing.value} has no result`;
    return { index: this.units.length, members, turn, orphan };
  }

  // Message `start` as given, or without the unanswered calls `drop`; marks it changed
  // when that differs from what the layout held.
  private setCalls(start: number, given: Message, drop: ReadonlySet<string> | null): void {
    const had = this.strays.get(start);
    if (drop === null) {
      if (had === undefined) return;
      this.strays.delete(start);
      this.given.delete(start);
      this.messages[start] = given;
      this.changed.push(start);
      return;
    }
    const key = [...drop].join("\u0000");
    if (had !== undefined && had.map((x) => x.callId).join("\u0000") === key) return;
    this.given.set(start, given);
    this.messages[start] = without(given, drop);
    this.strays.set(
      start,
      Object.freeze(
        [...drop].map((callId) =>
          Object.freeze({ part: "tool_call", callId, reason: "call_without_result" } as const),
        ),
      ),
    );
    this.changed.push(start);
  }
}

/**
 * Whether two messages cut into the same units: the same id and role, and the same tool
 * calls (call id and name) and results (call id) in the same order; text may differ.
 *
 * @example
 * const ask = (text: string): Message => ({ id: "u1", role: "user", content: [{ type: "text", text }] });
 * sameSkeleton(ask("fix the build"), ask("(a digest)\nfix the build")) // true
 */
export function sameSkeleton(a: Message, b: Message): boolean {
  if (a.id !== b.id || a.role !== b.role) return false;
  let i = nextTool(a, 0);
  let j = nextTool(b, 0);
  while (i < a.content.length && j < b.content.length) {
    const p = a.content[i] as Exclude<Part, { type: "text" }>;
    const q = b.content[j] as Exclude<Part, { type: "text" }>;
    if (p.type !== q.type || p.callId !== q.callId) return false;
    if (p.type === "tool_call" && p.name !== (q as ToolCallPart).name) return false;
    i = nextTool(a, i + 1);
    j = nextTool(b, j + 1);
  }
  return i === a.content.length && j === b.content.length;
}

// The index of the first part of `m` from `from` on that is not text (the length if none).
function nextTool(m: Message, from: number): number {
  let i = from;
  while (i < m.content.length && (m.content[i] as Part).type === "text") i++;
  return i;
}

// Whether every result of `m` answers one of the `open` calls.
function answersOpen(m: Message, open: ReadonlySet<string>): boolean {
  const parts = m.content;
  for (let j = 0; j < parts.length; j++) {
    const p = parts[j] as Message["content"][number];
    if (p.type === "tool_result" && !open.has(p.callId)) return false;
  }
  return true;
}

// A tool message that does not follow its call's assistant message: never sendable.
function loneOrphan(m: Message): string | null {
  if (m.role !== "tool") return null;
  const ids = resultIds(m).join(", ");
  return `results for call ${ids} do not directly follow the message that made the call`;
}
