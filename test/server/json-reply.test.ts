/** createJsonEncoder: the bytes Fastify would send for a JSON answer, whatever it met before. */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { createJsonEncoder, createPieceEncoder } from "../../src/server/json-reply.js";
import { deepFreeze } from "../../src/text/index.js";

const same = (encoder: { encode(value: unknown): Buffer }, v: unknown) =>
  expect(Buffer.compare(encoder.encode(v), Buffer.from(JSON.stringify(v), "utf8"))).toBe(0);

/** JSON-like values with what JSON.stringify leaves out or rewrites mixed in. */
const leaf = fc.oneof(
  fc.jsonValue({ maxDepth: 1 }),
  fc.constantFrom(undefined, Number.NaN, Number.POSITIVE_INFINITY, -0, "\ud800 lone", '"q"\n'),
  fc.string({ unit: "grapheme", minLength: 250, maxLength: 400 }),
  fc.constant((() => 1) as unknown),
);
const { value } = fc.letrec((tie) => ({
  value: fc.oneof(
    { depthSize: "small", withCrossShrink: true },
    leaf,
    fc.array(tie("value"), { maxLength: 4 }),
    fc.dictionary(fc.string({ maxLength: 4 }), tie("value"), { maxKeys: 4 }),
  ),
}));

// Freezes some objects of `v`: deeply, shallowly, or not at all (by a seed per object).
function freezeSome(v: unknown, seed: number[], i = { n: 0 }): void {
  if (typeof v !== "object" || v === null) return;
  const s = seed[i.n++ % seed.length] ?? 0;
  if (s === 1) deepFreeze(v);
  else {
    for (const x of Object.values(v)) freezeSome(x, seed, i);
    if (s === 2) Object.freeze(v);
  }
}

// Changes every object of `v` that is not frozen (and what it can reach below).
function mutate(v: unknown, n: number): void {
  if (typeof v !== "object" || v === null) return;
  for (const x of Object.values(v)) mutate(x, n);
  if (Object.isFrozen(v)) return;
  if (Array.isArray(v)) v.push(n);
  else (v as Record<string, unknown>)[`k${n}`] = { n };
}

describe("createJsonEncoder", () => {
  it("is Buffer.from(JSON.stringify(value)), byte for byte", () => {
    const encoder = createJsonEncoder();
    const values: unknown[] = [
      { a: "é", b: "\u{1F600}", c: "—", d: "\ud800 lone", e: [1, 2.5, null, true] },
      "plain",
      0,
      null,
      [],
      { big: "—\n".repeat(50_000) },
      { huge: "x".repeat(3_000_000) }, // past the scratch buffer
    ];
    for (const v of values) same(encoder, v);
    // Each answer owns its bytes (the scratch is reused).
    const first = encoder.encode({ n: "first" });
    encoder.encode({ n: "second" });
    expect(first.toString("utf8")).toBe('{"n":"first"}');
  });

  it("writes what JSON.stringify writes, frozen parts or not, before and after changes (property)", () => {
    fc.assert(
      fc.property(
        value,
        fc.array(fc.nat({ max: 2 }), { minLength: 1, maxLength: 8 }),
        (v, seed) => {
          const encoder = createJsonEncoder();
          const wrapped = { v, again: v };
          freezeSome(wrapped, seed);
          if (JSON.stringify(wrapped) === undefined) return;
          same(encoder, wrapped);
          same(encoder, wrapped); // the remembered JSON
          mutate(wrapped, 7); // only what is not frozen changes
          same(encoder, wrapped);
        },
      ),
      { numRuns: 300 },
    );
  });

  it("remembers nothing that could still change", () => {
    const encoder = createJsonEncoder();
    // A frozen object with a getter: frozen, but not data.
    const state = { n: 0 };
    const getter = Object.freeze({
      get n() {
        return state.n;
      },
    });
    // Frozen on top, a mutable object below.
    const inner = { x: 1 };
    const shallow = Object.freeze({ inner });
    // A frozen object with its own toJSON, and a date (toJSON on its prototype).
    const custom = Object.freeze({ toJSON: (key: string) => `key:${key}` });
    const date = Object.freeze(new Date(0));
    for (let i = 0; i < 3; i++) {
      same(encoder, { getter });
      same(encoder, { shallow });
      same(encoder, { custom, date, list: [custom, date] });
      inner.x += 1;
      state.n += 1;
    }
    // Boxed primitives, maps, null-prototype objects, sparse arrays.
    const odd = Object.assign(Object.create(null) as object, { a: 1 });
    const sparse = [1, 2, 3];
    delete sparse[1];
    same(encoder, { s: new String("boxed"), m: new Map([[1, 2]]), odd, sparse });
  });

  it("fails like JSON.stringify on a cycle, a BigInt and a top-level undefined", () => {
    const encoder = createJsonEncoder();
    const cyclic: Record<string, unknown> = { a: 1 };
    cyclic.self = cyclic;
    expect(() => encoder.encode({ cyclic })).toThrow(TypeError);
    expect(() => encoder.encode({ big: 1n })).toThrow(TypeError);
    expect(() => encoder.encode(undefined)).toThrow(TypeError);
    // A long text escaped before and a different one of the same length.
    const a = `${"a".repeat(300)}\n`;
    const b = `${"b".repeat(300)}\n`;
    same(encoder, { a, b, again: a });
  });
});

describe("createPieceEncoder", () => {
  it("writes what JSON.stringify writes, deep or shallow, odd values included (property)", () => {
    const encoder = createPieceEncoder();
    fc.assert(
      fc.property(value, (v) => {
        // Deeper than the levels walked, and the same value at the top.
        const wrapped = { a: [{ b: { c: [v, { d: v }] } }], v };
        same(encoder, wrapped);
        if (JSON.stringify(v) !== undefined) same(encoder, v);
      }),
      { numRuns: 300 },
    );
    const custom = { toJSON: (key: string) => `key:${key}` };
    const odd = Object.assign(Object.create(null) as object, { a: 1 });
    const sparse = [1, 2, 3];
    delete sparse[1];
    for (const v of [
      { custom, date: new Date(0), list: [custom, [custom]] },
      { s: new String("boxed"), m: new Map([[1, 2]]), odd, sparse, f: () => 1, u: undefined },
      [undefined, () => 1, Symbol("s")],
      { big: "—\n".repeat(50_000), list: [{ x: "é".repeat(300_000) }] },
      { huge: ["x".repeat(3_000_000)] }, // past the largest scratch kept
      "plain",
      null,
    ]) {
      same(encoder, v);
    }
    // Each answer owns its bytes (the scratch is reused).
    const first = encoder.encode({ n: ["first"] });
    encoder.encode({ n: ["second"] });
    expect(first.toString("utf8")).toBe('{"n":["first"]}');
  });

  it("fails like JSON.stringify on a cycle, a BigInt and a top-level undefined", () => {
    const encoder = createPieceEncoder();
    const cyclic: Record<string, unknown> = { a: 1 };
    cyclic.self = cyclic;
    expect(() => encoder.encode({ cyclic })).toThrow(TypeError);
    expect(() => encoder.encode({ list: [{ big: 1n }] })).toThrow(TypeError);
    expect(() => encoder.encode(undefined)).toThrow(TypeError);
  });
});
