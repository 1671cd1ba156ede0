import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { formatScore } from "../../src/text/index.js";
import fixture from "./fixtures/format-score-python.json" with { type: "json" };

describe("formatScore", () => {
  it("renders the spec examples", () => {
    expect(formatScore(0.5078125)).toBe("0.507812");
    expect(formatScore(0.123456789)).toBe("0.123457");
    expect(formatScore(1)).toBe("1.000000");
    expect(formatScore(0)).toBe("0.000000");
  });

  it("rounds exact binary ties half to even, unlike toFixed", () => {
    expect((0.0078125).toFixed(6)).toBe("0.007813");
    expect(formatScore(0.0078125)).toBe("0.007812");
    expect(formatScore(0.0234375)).toBe("0.023438"); // 23437.5 → even 23438
    expect(formatScore(0.5078125)).toBe("0.507812");
    expect(formatScore(0.9921875)).toBe("0.992188"); // 992187.5 → even 992188
  });

  it("decides non-representable decimal ties by the exact binary value", () => {
    expect(formatScore(0.0000005)).toBe("0.000000"); // 5e-7 is just below the tie
    expect(formatScore(2.5e-7)).toBe("0.000000");
    expect(formatScore(1.5e-6)).toBe("0.000002");
    expect(formatScore(0.0000015)).toBe("0.000002");
    expect(formatScore(1e-6)).toBe("0.000001");
    expect(formatScore(0.9999995)).toBe("1.000000");
    expect(formatScore(5e-324)).toBe("0.000000");
  });

  it("renders large and negative values", () => {
    expect(formatScore(123456789.12345679)).toBe("123456789.123457");
    expect(formatScore(2 ** 53)).toBe("9007199254740992.000000");
    expect(formatScore(1e20)).toBe("100000000000000000000.000000");
    expect(formatScore(1e22)).toBe("10000000000000000000000.000000");
    expect(formatScore(2 ** 70)).toBe("1180591620717411303424.000000");
    expect(formatScore(-1)).toBe("-1.000000");
    expect(formatScore(-0.0078125)).toBe("-0.007812");
    expect(formatScore(-1e-9)).toBe("-0.000000");
    expect(formatScore(-0)).toBe("-0.000000");
  });

  it("rejects non-finite values", () => {
    expect(() => formatScore(Number.NaN)).toThrow(RangeError);
    expect(() => formatScore(Number.POSITIVE_INFINITY)).toThrow(RangeError);
    expect(() => formatScore(Number.NEGATIVE_INFINITY)).toThrow(RangeError);
  });

  it(`equals Python's format(x, ".6f") for all ${fixture.cases.length} fixture doubles`, () => {
    expect(fixture.cases.length).toBeGreaterThan(2000);
    const mismatches: Array<{ x: number; python: string; ours: string }> = [];
    for (const [x, py] of fixture.cases as Array<[number, string]>) {
      const ours = formatScore(x);
      if (ours !== py) mismatches.push({ x, python: py, ours });
    }
    expect(mismatches).toEqual([]);
  });

  it("agrees with toFixed wherever the value is not near a tie", () => {
    // toFixed also rounds the exact value and differs only on exact ties (it rounds up).
    fc.assert(
      fc.property(fc.double({ min: -1e6, max: 1e6, noNaN: true }), (x) => {
        const scaled = Math.abs(x) * 1e6;
        const frac = scaled - Math.floor(scaled);
        fc.pre(Math.abs(frac - 0.5) > 1e-3);
        // toFixed drops the sign of -0; Python keeps it.
        expect(formatScore(x)).toBe(Object.is(x, -0) ? "-0.000000" : x.toFixed(6));
      }),
      { numRuns: 5000 },
    );
  });

  it("always has exactly six decimals", () => {
    fc.assert(
      fc.property(fc.double({ noNaN: true, noDefaultInfinity: true }), (x) => {
        expect(formatScore(x)).toMatch(/^-?\d+\.\d{6}$/);
      }),
      { numRuns: 3000 },
    );
  });
});
