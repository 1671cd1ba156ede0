/**
 * Number formatting of docs/text-and-tokens.md: fixed decimals, rounded half to even on the exact binary
 * value of the double (Python's `format(x, ".Nf")`). Scores use six decimals.
 */

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
 * Formats a finite number with `digits` decimals (0–20), half-to-even on its exact binary
 * value: Python's `format(x, f".{digits}f")`. With 0 digits there is no decimal point.
 *
 * @example formatFixed(0.125, 2) // "0.12"
 * @example formatFixed(0.375, 2) // "0.38"
 * @example formatFixed(2.5, 0) // "2"
 */
export function formatFixed(x: number, digits: number): string {
  if (!Number.isFinite(x)) throw new RangeError(`cannot format ${x}`);
  if (!Number.isInteger(digits) || digits < 0 || digits > 20) {
    throw new RangeError(`digits must be an integer in [0, 20], got ${digits}`);
  }
  // Fast path: toFixed rounds the exact binary value too and differs only on exact ties
  // (it rounds them away from zero). Anything near a tie, and -0, takes the exact path.
  const y = Math.abs(x) * 10 ** digits;
  if (y < 2 ** 52 && !Object.is(x, -0)) {
    const frac = y - Math.floor(y);
    if (Math.abs(frac - 0.5) > y * 2 ** -40 + 1e-9) return x.toFixed(digits);
  }
  const scale = 10n ** BigInt(digits);
  const negative = x < 0 || Object.is(x, -0);
  const { mantissa, exponent } = decompose(Math.abs(x));
  let units: bigint; // round(|x| * 10^digits), half to even
  if (exponent >= 0) {
    units = (mantissa << BigInt(exponent)) * scale;
  } else {
    const num = mantissa * scale;
    const den = 1n << BigInt(-exponent);
    const q = num / den;
    const twice = (num % den) * 2n;
    units = twice > den || (twice === den && q % 2n === 1n) ? q + 1n : q;
  }
  const text = units.toString().padStart(digits + 1, "0");
  const body = digits === 0 ? text : `${text.slice(0, -digits)}.${text.slice(-digits)}`;
  return negative ? `-${body}` : body;
}

/**
 * Formats a score with exactly six decimals (docs/text-and-tokens.md): `formatFixed(x, 6)`.
 *
 * @example formatScore(0.5078125) // "0.507812"
 * @example formatScore(1) // "1.000000"
 */
export function formatScore(x: number): string {
  return formatFixed(x, 6);
}
