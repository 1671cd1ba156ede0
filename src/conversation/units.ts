/**
 * Units and turns. A unit is kept or dropped whole: an assistant message with tool calls
 * plus the `tool` messages answering them, or any other message alone. A unit with an
 * unanswered call, or a `tool` message answering no call of the unit before it, is an
 * orphan: providers reject those, so they are never sent.
 */
import { InvalidInputError } from "../errors/index.js";
import type { Message } from "./schema.js";

/** One unit: the indices of its messages in the input, and why it is an orphan if it is. */
export interface Unit {
  readonly index: number;
  /** Input indices of its messages, in order. */
  readonly members: number[];
  /** The turn of its first message (the number of user messages up to and including it). */
  readonly turn: number;
  /** Set when the unit can never be sent: the detail names the call id. */
  readonly orphan: string | null;
}

/** The conversation cut into units, with the turn of each message. */
export interface UnitLayout {
  readonly units: Unit[];
  /** Per input message: its unit's index. */
  readonly unitOf: Int32Array;
  /** Per input message: its turn (0 before the first user message). */
  readonly turnOf: Int32Array;
  /** Index of the first unit of the current turn (the one holding the last user message). */
  readonly currentStart: number;
  /** The current turn's number. */
  readonly lastTurn: number;
  /** Tool name by call id, for the clearing notice. */
  readonly toolNames: ReadonlyMap<string, string>;
}

const callsOf = (m: Message): string[] =>
  m.content.flatMap((p) => (p.type === "tool_call" ? [p.callId] : []));
const resultsOf = (m: Message): string[] =>
  m.content.flatMap((p) => (p.type === "tool_result" ? [p.callId] : []));

/**
 * Checks the rules that span messages: unique ids, unique call ids (among calls and among
 * results), at least one user message. Throws {@link InvalidInputError} with the path.
 */
export function checkConversation(messages: readonly Message[]): Map<string, string> {
  const ids = new Set<string>();
  const calls = new Map<string, string>();
  const results = new Set<string>();
  messages.forEach((m, i) => {
    if (ids.has(m.id)) {
      throw new InvalidInputError(`duplicate message id "${m.id}"`, ["messages", i, "id"]);
    }
    ids.add(m.id);
    m.content.forEach((p, j) => {
      if (p.type === "text") return;
      const seen = p.type === "tool_call" ? calls.has(p.callId) : results.has(p.callId);
      if (seen) {
        throw new InvalidInputError(`duplicate ${p.type} callId "${p.callId}"`, [
          ...["messages", i, "content", j, "callId"],
        ]);
      }
      if (p.type === "tool_call") calls.set(p.callId, p.name);
      else results.add(p.callId);
    });
  });
  if (!messages.some((m) => m.role === "user")) {
    throw new InvalidInputError("a conversation needs at least one user message", ["messages"]);
  }
  return calls;
}

// A tool-call unit: the assistant message, then the tool messages that answer its calls.
function toolUnit(messages: readonly Message[], start: number, turn: number, index: number) {
  const open = new Set(callsOf(messages[start] as Message));
  const members = [start];
  let next = start + 1;
  for (; next < messages.length; next++) {
    const m = messages[next] as Message;
    if (m.role !== "tool") break;
    const answers = resultsOf(m);
    // A tool message that answers anything but this unit's open calls stands alone.
    if (!answers.every((id) => open.has(id))) break;
    for (const id of answers) open.delete(id);
    members.push(next);
  }
  const missing = [...open][0];
  const orphan = missing === undefined ? null : `call ${missing} has no result`;
  return { unit: { index, members, turn, orphan } satisfies Unit, next };
}

/**
 * Cuts a validated conversation into units and turns.
 *
 * @example layoutUnits(messages).units.length // 3 for user, assistant+call, tool answer, user → 3 units
 */
export function layoutUnits(
  messages: readonly Message[],
  toolNames: Map<string, string>,
): UnitLayout {
  const units: Unit[] = [];
  const unitOf = new Int32Array(messages.length);
  const turnOf = new Int32Array(messages.length);
  let turn = 0;
  let currentStart = 0;
  let i = 0;
  while (i < messages.length) {
    const m = messages[i] as Message;
    if (m.role === "user") {
      turn += 1;
      currentStart = units.length;
    }
    let unit: Unit;
    if (m.role === "assistant" && callsOf(m).length > 0) {
      const built = toolUnit(messages, i, turn, units.length);
      unit = built.unit;
      i = built.next;
    } else {
      const orphan = m.role === "tool" ? `call ${resultsOf(m)[0]} has no call before it` : null;
      unit = { index: units.length, members: [i], turn, orphan };
      i += 1;
    }
    for (const k of unit.members) {
      unitOf[k] = unit.index;
      turnOf[k] = turn;
    }
    units.push(unit);
  }
  return { units, unitOf, turnOf, currentStart, lastTurn: turn, toolNames };
}
