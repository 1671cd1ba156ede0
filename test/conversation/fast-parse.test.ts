/**
 * The fast path of message validation against `MessageSchema`: for generated valid and
 * invalid messages it either defers (null) or returns exactly the schema's output — same
 * values, same keys in the same order, frozen all the way down — and `parseMessage`
 * throws exactly the schema's error.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { fastMessage, parseMessage } from "../../src/conversation/fast-parse.js";
import { MessageSchema } from "../../src/conversation/index.js";
import { InvalidInputError, invalidFromZod } from "../../src/errors/index.js";

// Keys in order, values by Object.is, recursively; frozen wherever the expected is.
function sameShape(actual: unknown, expected: unknown, path = "$"): void {
  if (expected === null || typeof expected !== "object") {
    expect(Object.is(actual, expected), `${path}: ${String(actual)} vs ${String(expected)}`).toBe(
      true,
    );
    return;
  }
  expect(typeof actual, path).toBe("object");
  const a = actual as Record<string, unknown>;
  const e = expected as Record<string, unknown>;
  expect(Array.isArray(a), path).toBe(Array.isArray(e));
  expect(Object.getPrototypeOf(a), path).toBe(Object.getPrototypeOf(e));
  expect(Reflect.ownKeys(a), path).toEqual(Reflect.ownKeys(e));
  expect(Object.isFrozen(a), `${path} frozen`).toBe(true);
  for (const k of Object.keys(e)) sameShape(a[k], e[k], `${path}.${k}`);
}

const deepFrozen = <T>(v: T): T => {
  if (typeof v === "object" && v !== null) {
    for (const x of Object.values(v)) deepFrozen(x);
    Object.freeze(v);
  }
  return v;
};

// Strings that hit every text rule: blank, lone surrogates, timestamps, ordinary text.
const str = fc.oneof(
  fc.string(),
  fc.constantFrom("", " ", "\n\t", "\ud800", "a\udc00b", "🚀", "__proto__", "constructor"),
  fc.constantFrom("2024-01-01T00:00:00Z", "2024-02-30T00:00:00Z", "2024-01-01", "yesterday"),
);
const odd = fc.oneof(
  str,
  fc.constantFrom(undefined, null, 0, -0, 1.5, Number.NaN, Number.POSITIVE_INFINITY, true, false),
  fc.constant([]),
  fc.constant({}),
  fc.constant(Symbol("s")),
  fc.bigInt(),
);

// JSON-ish tool inputs, including what JSON cannot hold (undefined, NaN, symbols, dates),
// objects with a null prototype or a `__proto__` own key, and deep nesting.
const { input } = fc.letrec((tie) => ({
  input: fc.oneof(
    { depthSize: "small" },
    odd,
    fc.array(tie("input"), { maxLength: 4 }),
    fc.dictionary(str, tie("input"), { maxKeys: 4 }),
    fc.dictionary(str, tie("input"), { maxKeys: 3, noNullPrototype: false }),
    fc.constant(JSON.parse('{"__proto__": {"a": 1}, "b": 2}')),
    fc.constant(new Date(0)),
    // biome-ignore lint/suspicious/noSparseArray: a hole is what this input is about
    fc.constant([1, , 3]),
    fc.constant({ [Symbol("k")]: 1, a: 2 }),
    fc.constant(Object.defineProperty({ a: 1 }, "hidden", { value: 2, enumerable: false })),
    fc
      .integer({ min: 60, max: 70 })
      .map((n) => Array.from({ length: n }).reduce((v: unknown) => ({ v }), 1)),
  ),
}));

// An optional field: absent, present but `undefined`, or a value.
type Opt = { v?: unknown; present?: undefined };
const optional = <T>(arb: fc.Arbitrary<T>): fc.Arbitrary<Opt> =>
  fc.oneof(
    fc.constant<Opt>({}),
    fc.constant<Opt>({ present: undefined }),
    arb.map((v): Opt => ({ v })),
  );
const withOptional = (o: Record<string, unknown>, key: string, opt: Opt) =>
  "present" in opt ? { ...o, [key]: undefined } : "v" in opt ? { ...o, [key]: opt.v } : o;

const type = fc.oneof(fc.constantFrom("text", "tool_call", "tool_result"), odd);
const part = fc
  .record({
    type,
    text: fc.oneof(str, odd),
    callId: fc.oneof(str, fc.constantFrom("c1", "call_7"), odd),
    name: fc.oneof(fc.constantFrom("grep", "read_file"), odd),
    input,
    output: fc.oneof(str, odd),
    isError: optional(fc.oneof(fc.boolean(), odd)),
    extra: optional(odd),
    drop: fc.subarray(["text", "callId", "name", "input", "output"]),
  })
  .map((p) => {
    const o: Record<string, unknown> = { type: p.type, text: p.text, callId: p.callId };
    Object.assign(o, { name: p.name, input: p.input, output: p.output });
    for (const k of p.drop) delete o[k];
    return withOptional(withOptional(o, "isError", p.isError), "extra", p.extra);
  });

const message = fc
  .record({
    id: fc.oneof(fc.constantFrom("u1", "a_2"), str, odd),
    role: fc.oneof(fc.constantFrom("user", "assistant", "tool"), odd),
    content: fc.oneof(fc.array(part, { maxLength: 3 }), odd),
    at: optional(fc.oneof(str, odd)),
    extra: optional(odd),
    frozen: fc.boolean(),
    keyOrder: fc.boolean(),
  })
  .map((m) => {
    const base: Record<string, unknown> = m.keyOrder
      ? { content: m.content, role: m.role, id: m.id }
      : { id: m.id, role: m.role, content: m.content };
    const o = withOptional(withOptional(base, "at", m.at), "extra", m.extra);
    return m.frozen ? deepFrozen(o) : o;
  });

// Mostly valid messages of each role, so the accepting path is well exercised.
const validPart = (role: string) =>
  role === "user"
    ? fc.record({ type: fc.constant("text"), text: fc.string() })
    : role === "tool"
      ? fc.record(
          {
            type: fc.constant("tool_result"),
            callId: fc.string({ minLength: 1 }).map((s) => `c${s}`),
            output: fc.string(),
            isError: fc.boolean(),
          },
          { requiredKeys: ["type", "callId", "output"] },
        )
      : fc.oneof(
          fc.record({ type: fc.constant("text"), text: fc.string() }),
          fc.record({
            type: fc.constant("tool_call"),
            callId: fc.constantFrom("c1", "call_2"),
            name: fc.constantFrom("grep", "read_file"),
            input: json,
          }),
        );
// Valid JSON inputs: no lone surrogate (the schema refuses it) and no `__proto__` key
// (the schema drops it; the fast path defers).
const json = fc
  .jsonValue()
  .map((v) => JSON.stringify(v))
  .filter((t) => !t.includes('"__proto__"') && !/\\ud[89a-f]/i.test(t))
  .map((t) => JSON.parse(t));
const validPartWith = (role: string, toolInput: fc.Arbitrary<unknown>) =>
  role === "assistant"
    ? fc.oneof(
        validPart(role),
        fc.record({
          type: fc.constant("tool_call"),
          callId: fc.constant("c9"),
          name: fc.constant("grep"),
          input: toolInput,
        }),
      )
    : validPart(role);
const validWith = (toolInput: fc.Arbitrary<unknown>) =>
  fc.constantFrom("user", "assistant", "tool").chain((role) =>
    fc.record(
      {
        id: fc.string({ minLength: 1 }).map((s) => `m${s}`),
        role: fc.constant(role),
        content: fc.array(validPartWith(role, toolInput), { minLength: 1, maxLength: 3 }),
        at: fc.constantFrom("2024-01-01T00:00:00Z", "2024-06-01T12:30:00.5+02:00"),
      },
      { requiredKeys: ["id", "role", "content"] },
    ),
  );

function agrees(raw: unknown): boolean {
  const fast = fastMessage(raw);
  const zod = MessageSchema.safeParse(raw);
  if (fast !== null) {
    expect(zod.success).toBe(true);
    sameShape(fast, zod.data);
  }
  let thrown: unknown = null;
  try {
    const parsed = parseMessage(raw, ["messages", 3]);
    sameShape(parsed, zod.data);
  } catch (err) {
    thrown = err;
  }
  if (zod.success) {
    expect(thrown).toBeNull();
  } else {
    expect(thrown).toBeInstanceOf(InvalidInputError);
    const expected = invalidFromZod(zod.error, ["messages", 3]);
    expect((thrown as InvalidInputError).message).toBe(expected.message);
    expect((thrown as InvalidInputError).code).toBe(expected.code);
    expect((thrown as InvalidInputError).path).toBe(expected.path);
  }
  return fast !== null;
}

describe("fastMessage", () => {
  it("returns null or exactly MessageSchema's output, on arbitrary input", () => {
    fc.assert(
      fc.property(message, (m) => {
        agrees(m);
      }),
      { numRuns: 3000 },
    );
  });

  it("takes valid plain messages itself, and agrees with the schema on them", () => {
    let taken = 0;
    fc.assert(
      fc.property(validWith(json), (m) => {
        if (agrees(m)) taken += 1;
        // A JSON round trip (what a server parses) is always plain data.
        expect(fastMessage(JSON.parse(JSON.stringify(m)))).not.toBeNull();
      }),
      { numRuns: 1000 },
    );
    expect(taken).toBe(1000);
  });

  it("agrees with the schema on valid messages with odd tool inputs", () => {
    fc.assert(
      fc.property(validWith(input), (m) => {
        agrees(m);
      }),
      { numRuns: 2000 },
    );
  });

  it("defers on what only the schema can judge", () => {
    const ok = { id: "u1", role: "user", content: [{ type: "text", text: "hi" }] };
    expect(fastMessage(ok)).not.toBeNull();
    for (const raw of [
      { ...ok, at: undefined },
      { ...ok, content: [{ type: "text", text: "\ud800" }] },
      { ...ok, role: "tool" },
      Object.assign(Object.create({ inherited: 1 }), ok),
      {
        id: "a1",
        role: "assistant",
        content: [{ type: "tool_call", callId: "c", name: "n", input: [new Date(0)] }],
      },
    ]) {
      expect(fastMessage(raw)).toBeNull();
    }
  });
});
