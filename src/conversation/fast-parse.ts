/**
 * The fast path of message validation. A stateless caller sends the whole history on
 * every request, and running `MessageSchema` (zod) over 10,000 messages costs about as
 * much as parsing the request's JSON. {@link fastMessage} checks the common shape by hand
 * (plain data objects, every field valid) and builds exactly the value the schema would
 * return, frozen; anything it is not sure of — a field present but `undefined`, a class
 * instance, a symbol key, anything invalid — it leaves to the schema, so errors (codes,
 * paths, messages) are always zod's. `MessageSchema` stays the single definition: the
 * property tests (test/conversation/fast-parse.test.ts) check that for generated valid
 * and invalid messages this path returns `null` or exactly the schema's output.
 */
import { type FieldPath, invalidFromZod } from "../errors/index.js";
import {
  deepFreeze,
  isBlank,
  isWellFormedText,
  parseInstantParts,
  strictSchema,
} from "../text/index.js";
import {
  MAX_TOOL_INPUT_DEPTH,
  type Message,
  MessageSchema,
  type Part,
  type ToolCallPart,
} from "./schema.js";

/** Returned by the checks below when the schema must decide. */
const DEFER: unique symbol = Symbol("defer");
type Defer = typeof DEFER;

// A plain data object (as JSON.parse builds, or with no prototype): nothing inherited.
function plainObject(v: unknown): v is Record<string, unknown> {
  if (typeof v !== "object" || v === null) return false;
  const proto = Object.getPrototypeOf(v);
  return proto === Object.prototype || proto === null;
}

const text = (v: unknown): v is string => typeof v === "string" && isWellFormedText(v);

const nonBlank = (v: unknown): v is string => text(v) && !isBlank(v);

// A copy of a JSON value as `wellFormedJson` returns it (objects and arrays new, frozen),
// or DEFER for anything outside plain JSON data.
function copyJson(v: unknown, depth: number): unknown {
  if (v === null || typeof v === "boolean") return v;
  if (typeof v === "string") return isWellFormedText(v) ? v : DEFER;
  if (typeof v === "number") return Number.isFinite(v) ? v : DEFER;
  if (typeof v !== "object" || depth >= MAX_TOOL_INPUT_DEPTH) return DEFER;
  if (Array.isArray(v)) {
    if (Object.getPrototypeOf(v) !== Array.prototype) return DEFER;
    const out: unknown[] = new Array(v.length);
    for (let i = 0; i < v.length; i++) {
      const c = copyJson(v[i], depth + 1);
      if (c === DEFER) return DEFER;
      out[i] = c;
    }
    return Object.freeze(out);
  }
  if (!plainObject(v)) return DEFER;
  const keys = Object.keys(v);
  // Symbol or non-enumerable keys, and `__proto__`, are the schema's to judge.
  if (Reflect.ownKeys(v).length !== keys.length) return DEFER;
  const out: Record<string, unknown> = {};
  for (const k of keys) {
    if (k === "__proto__" || !isWellFormedText(k)) return DEFER;
    const c = copyJson(v[k], depth + 1);
    if (c === DEFER) return DEFER;
    out[k] = c;
  }
  return Object.freeze(out);
}

// An optional field: absent (fine), present and valid, or anything else (DEFER).
const absent = (o: Record<string, unknown>, key: string): boolean =>
  o[key] === undefined && !(key in o);

function fastPart(raw: unknown, role: Message["role"]): Part | Defer {
  if (!plainObject(raw)) return DEFER;
  const type = raw.type;
  if (type === "text") {
    if (role === "tool" || !text(raw.text)) return DEFER;
    return Object.freeze({ type, text: raw.text });
  }
  if (type === "tool_call") {
    const { callId, name } = raw;
    if (role !== "assistant" || !nonBlank(callId) || !nonBlank(name)) return DEFER;
    const input = copyJson(raw.input, 0);
    if (input === DEFER) return DEFER;
    return Object.freeze({ type, callId, name, input: input as ToolCallPart["input"] });
  }
  if (type !== "tool_result" || role !== "tool") return DEFER;
  const { callId, output, isError } = raw;
  if (!nonBlank(callId) || !text(output)) return DEFER;
  if (typeof isError === "boolean") return Object.freeze({ type, callId, output, isError });
  return absent(raw, "isError") ? Object.freeze({ type, callId, output }) : DEFER;
}

/**
 * `MessageSchema`'s output for `raw`, frozen, when `raw` is plain data of the common
 * shape; `null` when the schema must decide (it may still accept `raw`).
 *
 * @example fastMessage({ id: "u1", role: "user", content: [{ type: "text", text: "hi" }] })?.id // "u1"
 */
export function fastMessage(raw: unknown): Message | null {
  if (!plainObject(raw)) return null;
  const { id, role, content, at } = raw;
  if (!nonBlank(id) || (role !== "user" && role !== "assistant" && role !== "tool")) return null;
  if (!Array.isArray(content) || content.length === 0) return null;
  const parts: Part[] = new Array(content.length);
  for (let i = 0; i < content.length; i++) {
    const p = fastPart(content[i], role);
    if (p === DEFER) return null;
    parts[i] = p;
  }
  Object.freeze(parts);
  if (at === undefined)
    return absent(raw, "at") ? Object.freeze({ id, role, content: parts }) : null;
  if (!text(at) || parseInstantParts(at) === null) return null;
  return Object.freeze({ id, role, content: parts, at });
}

/**
 * One message validated (the fast path, else `MessageSchema`) and deep-frozen. Throws
 * `InvalidInputError` at `path` with the schema's issues.
 *
 * @example parseMessage({ id: "u1", role: "user", content: [{ type: "text", text: "hi" }] }, ["messages", 0])
 */
export function parseMessage(raw: unknown, path: FieldPath): Message {
  return fastMessage(raw) ?? strictMessage(raw, path);
}

/**
 * `raw` through the strict schema alone: for a message {@link fastMessage} deferred
 * (a caller that asked it first need not ask it again).
 *
 * @example fastMessage(raw) ?? strictMessage(raw, ["messages", 0])
 */
export function strictMessage(raw: unknown, path: FieldPath): Message {
  const result = MessageSchema.safeParse(raw);
  if (!result.success) throw invalidFromZod(result.error, path);
  return deepFreeze(result.data);
}

/** The fields `MessageSchema` declares: of a message, and of each part type. */
const MESSAGE_FIELDS: ReadonlySet<string> = new Set(["id", "role", "content", "at"]);
const PART_FIELDS: Readonly<Record<string, ReadonlySet<string>>> = {
  text: new Set(["type", "text"]),
  tool_call: new Set(["type", "callId", "name", "input"]),
  tool_result: new Set(["type", "callId", "output", "isError"]),
};

function onlyFields(v: Record<string, unknown>, known: ReadonlySet<string>): boolean {
  for (const k in v) if (!known.has(k)) return false;
  return true;
}

// True when `raw` is plain data with only declared fields (a tool call's input is free
// JSON); false when the strict schema must look (it may still find nothing unknown).
function knownFieldsOnly(raw: unknown): boolean {
  if (!plainObject(raw) || !onlyFields(raw, MESSAGE_FIELDS) || !Array.isArray(raw.content)) {
    return false;
  }
  for (const part of raw.content) {
    if (!plainObject(part)) return false;
    const known = typeof part.type === "string" ? PART_FIELDS[part.type] : undefined;
    if (known === undefined || !onlyFields(part, known)) return false;
  }
  return true;
}

/**
 * Throws `unknown_field` (full path, "did you mean") for the first message of `raw` with
 * a field `MessageSchema` does not declare, at any depth — what the strict layer of a JSON
 * surface reports before any other problem —, looking with the strict schema only at a
 * message the plain check cannot clear. A JSON caller sends its whole history every time:
 * the strict schema over 1,000 messages cost as much as parsing the request.
 *
 * @example rejectUnknownMessageFields([{ id: "u1", role: "user", content: [{ type: "text", text: "hi", extra: 1 }] }], ["messages"]) // throws at messages[0].content[0].extra
 */
export function rejectUnknownMessageFields(raw: readonly unknown[], at: FieldPath): void {
  for (let i = 0; i < raw.length; i++) {
    if (knownFieldsOnly(raw[i])) continue;
    const result = strictSchema(MessageSchema).safeParse(raw[i]);
    if (result.success) continue;
    const err = invalidFromZod(result.error, [...at, i]);
    if (err.code === "unknown_field") throw err;
  }
}
