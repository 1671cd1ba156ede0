/**
 * Score formatting of spec 01: exactly six decimals, rounded half to even on the exact
 * binary value of the double (Python's `format(x, ".6f")`).
 */

const SCALE = 1_000_000n;

// Splits a finite double into an integer mantissa and a power-of-two exponent, exactly.
function decompose(x: number): { mantissa: bigint; exponent: number } {
  const view = new DataView(new ArrayBuffer(8));
  view.setFloat64(0, x);
  const hi = view.getUint32(0);
  const lo = view.getUint32(4);
  const biased = (hi >>> 20) & 0x7ff;
  const frac = (BigInt(hi & 0xfffff) << 32n) | BigInt(lo);
  if (biased === 0) return { mantissa: frac, exponent: -1074 };
  return { mantissa: frac | (1n << 52n), exponent: biased - 1075 };
}

/**
 * Formats a finite number with six decimals, half-to-even on its exact binary value.
 *
 * @example formatScore(0.5078125) // "0.507812"
 * @example formatScore(1) // "1.000000"
 */
export function formatScore(x: number): string {
  if (!Number.isFinite(x)) throw new RangeError(`cannot format ${x}`);
  const negative = x < 0 || Object.is(x, -0);
  const { mantissa, exponent } = decompose(Math.abs(x));
  let units: bigint; // round(|x| * 10^6), half to even
  if (exponent >= 0) {
    units = (mantissa << BigInt(exponent)) * SCALE;
  } else {
    const num = mantissa * SCALE;
    const den = 1n << BigInt(-exponent);
    const q = num / den;
    const twice = (num % den) * 2n;
    units = twice > den || (twice === den && q % 2n === 1n) ? q + 1n : q;
  }
  const digits = units.toString().padStart(7, "0");
  const body = `${digits.slice(0, -6)}.${digits.slice(-6)}`;
  return negative ? `-${body}` : body;
}
