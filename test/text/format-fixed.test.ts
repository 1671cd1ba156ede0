import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { formatFixed, formatScore } from "../../src/text/index.js";
import fixture from "./fixtures/format-fixed-python.json" with { type: "json" };

describe("formatFixed", () => {
  it("two decimals, half to even on the exact binary value", () => {
    expect(formatFixed(0.125, 2)).toBe("0.12"); // exact tie → even
    expect(formatFixed(0.375, 2)).toBe("0.38"); // exact tie → even
    expect(formatFixed(0.7, 2)).toBe("0.70");
    expect(formatFixed(0.82, 2)).toBe("0.82");
    expect(formatFixed(0.005, 2)).toBe("0.01"); // 0.005 is just above the tie
    expect(formatFixed(0.015, 2)).toBe("0.01"); // 0.015 is just below the tie
    expect(formatFixed(1, 2)).toBe("1.00");
    expect(formatFixed(0, 2)).toBe("0.00");
  });

  it("zero digits has no decimal point and rounds ties to even", () => {
    expect(formatFixed(0.5, 0)).toBe("0");
    expect(formatFixed(1.5, 0)).toBe("2");
    expect(formatFixed(2.5, 0)).toBe("2");
    expect(formatFixed(3.5, 0)).toBe("4");
    expect(formatFixed(0.7, 0)).toBe("1");
    expect(formatFixed(7, 0)).toBe("7");
    expect(formatFixed(-0.4, 0)).toBe("-0");
    expect(formatFixed(-0, 0)).toBe("-0");
    expect(formatFixed(1e22, 0)).toBe("10000000000000000000000");
  });

  it("twenty digits expose the exact binary value", () => {
    expect(formatFixed(0.1, 20)).toBe("0.10000000000000000555");
    expect(formatFixed(5e-324, 20)).toBe("0.00000000000000000000");
  });

  it("formatScore is formatFixed with six digits", () => {
    fc.assert(
      fc.property(fc.double({ noNaN: true, noDefaultInfinity: true }), (x) => {
        expect(formatScore(x)).toBe(formatFixed(x, 6));
      }),
      { numRuns: 2000 },
    );
  });

  it("rejects bad digits and non-finite values", () => {
    for (const d of [-1, 21, 1.5, Number.NaN]) {
      expect(() => formatFixed(0.5, d)).toThrow(RangeError);
    }
    expect(() => formatFixed(Number.NaN, 2)).toThrow(RangeError);
    expect(() => formatFixed(Number.POSITIVE_INFINITY, 0)).toThrow(RangeError);
  });

  it(`equals Python's format(x, ".Nf") for all ${fixture.cases.length} fixture cases`, () => {
    const mismatches: Array<{ x: number; digits: number; python: string; ours: string }> = [];
    for (const [x, digits, py] of fixture.cases as Array<[number, number, string]>) {
      const ours = formatFixed(x, digits);
      if (ours !== py) mismatches.push({ x, digits, python: py, ours });
    }
    expect(fixture.cases.length).toBeGreaterThan(500);
    expect(mismatches).toEqual([]);
  });

  it("agrees with toFixed wherever the value is not near a tie", () => {
    fc.assert(
      fc.property(
        fc.double({ min: -1e6, max: 1e6, noNaN: true }),
        fc.integer({ min: 0, max: 8 }),
        (x, digits) => {
          const scaled = Math.abs(x) * 10 ** digits;
          fc.pre(Math.abs(scaled - Math.floor(scaled) - 0.5) > 1e-3);
          // toFixed drops the sign of -0; Python keeps it.
          const expected = x.toFixed(digits);
          expect(formatFixed(x, digits)).toBe(Object.is(x, -0) ? `-${expected}` : expected);
        },
      ),
      { numRuns: 5000 },
    );
  });
});

describe("formatFixed fast path", () => {
  // The exact reference: BigInt arithmetic on the double's binary value, half to even.
  function exact(x: number, digits: number): string {
    const view = new DataView(new ArrayBuffer(8));
    view.setFloat64(0, Math.abs(x));
    const hi = view.getUint32(0);
    const biased = (hi >>> 20) & 0x7ff;
    const frac = (BigInt(hi & 0xfffff) << 32n) | BigInt(view.getUint32(4));
    const mantissa = biased === 0 ? frac : frac | (1n << 52n);
    const exponent = biased === 0 ? -1074 : biased - 1075;
    const scale = 10n ** BigInt(digits);
    let units: bigint;
    if (exponent >= 0) units = (mantissa << BigInt(exponent)) * scale;
    else {
      const num = mantissa * scale;
      const den = 1n << BigInt(-exponent);
      const q = num / den;
      const twice = (num % den) * 2n;
      units = twice > den || (twice === den && q % 2n === 1n) ? q + 1n : q;
    }
    const text = units.toString().padStart(digits + 1, "0");
    const body = digits === 0 ? text : `${text.slice(0, -digits)}.${text.slice(-digits)}`;
    return x < 0 || Object.is(x, -0) ? `-${body}` : body;
  }
  const ties = fc
    .tuple(fc.integer({ min: -(2 ** 20), max: 2 ** 20 }), fc.integer({ min: 1, max: 30 }))
    .map(([k, n]) => k / 2 ** n);
  it("agrees with the exact reference on random doubles and binary ties", () => {
    fc.assert(
      fc.property(
        fc.oneof(fc.double({ noNaN: true, noDefaultInfinity: true, min: -1e15, max: 1e15 }), ties),
        fc.integer({ min: 0, max: 8 }),
        (x, d) => {
          expect(formatFixed(x, d)).toBe(exact(x, d));
        },
      ),
      { numRuns: 20000 },
    );
  });
});
