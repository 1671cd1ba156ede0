/**
 * `sameJson` (the validation memo's equality) against the definition it implements: own
 * enumerable keys compared as sets, values recursively, arrays element by element.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { sameJson } from "../../src/assemble/validate-items.js";

function reference(a: unknown, b: unknown): boolean {
  if (Object.is(a, b)) return true;
  if (typeof a !== "object" || typeof b !== "object" || a === null || b === null) return false;
  if (Array.isArray(a) !== Array.isArray(b)) return false;
  if (Array.isArray(a) && Array.isArray(b)) {
    return a.length === b.length && a.every((x, i) => reference(x, b[i]));
  }
  const plain = (x: object) => [Object.prototype, null].includes(Object.getPrototypeOf(x));
  if (!plain(a) || !plain(b)) return false;
  const ka = Object.keys(a);
  const kb = Object.keys(b);
  return (
    ka.length === kb.length &&
    ka.every(
      (k) =>
        Object.hasOwn(b, k) &&
        reference((a as Record<string, unknown>)[k], (b as Record<string, unknown>)[k]),
    )
  );
}

// Small values so that equal pairs and near misses both come up often.
const leaf = fc.constantFrom(0, -0, 1, Number.NaN, "a", "b", true, null, undefined);
const { value } = fc.letrec((tie) => ({
  value: fc.oneof(
    { depthSize: "small" },
    leaf,
    fc.array(tie("value"), { maxLength: 3 }),
    fc.dictionary(fc.constantFrom("x", "y", "z"), tie("value"), { maxKeys: 3 }),
  ),
}));

describe("sameJson", () => {
  it("agrees with the definition on any pair, and on a value and its clone", () => {
    fc.assert(
      fc.property(value, value, (a, b) => {
        expect(sameJson(a, b)).toBe(reference(a, b));
        expect(sameJson(a, structuredClone(a))).toBe(true);
      }),
      { numRuns: 2000 },
    );
  });

  it("ignores key order, tells a missing key from an undefined one, and rejects class instances", () => {
    expect(sameJson({ x: 1, y: [2] }, { y: [2], x: 1 })).toBe(true);
    expect(sameJson({ x: undefined }, {})).toBe(false);
    expect(sameJson({}, { x: undefined })).toBe(false);
    expect(sameJson(new Date(0), new Date(0))).toBe(false);
    expect(sameJson(Object.create(null), {})).toBe(true);
  });
});
