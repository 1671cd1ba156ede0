/**
 * ISO-8601 timestamps (docs/text-and-tokens.md): offsets honoured, a timestamp without an offset is UTC,
 * comparison by instant (exact to the nanosecond), anything unparseable rejected.
 */

const DAYS_IN_MONTH = [31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];

function isLeap(y: number): boolean {
  return (y % 4 === 0 && y % 100 !== 0) || y % 400 === 0;
}

// Days from 1970-01-01 to the given civil date (proleptic Gregorian), no Date object.
function daysFromCivil(y: number, m: number, d: number): number {
  const yy = m <= 2 ? y - 1 : y;
  const era = Math.floor(yy / 400);
  const yoe = yy - era * 400;
  const doy = Math.floor((153 * (m + (m > 2 ? -3 : 9)) + 2) / 5) + d - 1;
  const doe = yoe * 365 + Math.floor(yoe / 4) - Math.floor(yoe / 100) + doy;
  return era * 146097 + doe - 719468;
}

/** An instant as whole seconds since the Unix epoch and the nanoseconds after them. */
export interface InstantParts {
  seconds: number;
  nanos: number;
}

/**
 * Parses an ISO-8601 timestamp to `{seconds, nanos}` since the Unix epoch (plain numbers,
 * exact: seconds are safe integers for every year ISO-8601 can write), or `null` when the
 * text is not a valid timestamp. A missing offset means UTC. Hot paths (ranking thousands
 * of candidates, validating them) use this form: it allocates no BigInt.
 *
 * @example parseInstantParts("1970-01-01T00:00:01.5Z") // { seconds: 1, nanos: 500000000 }
 */
export function parseInstantParts(text: string): InstantParts | null {
  // Read by hand, not by a regex: validating 5,000 candidates would otherwise allocate a
  // match array and its substrings per timestamp. The grammar:
  //   YYYY-MM-DD[(T|t|space)hh:mm[:ss[(.|,)f{1,9}]][Z|z|(+|-)hh[:]mm]]
  const n = text.length;
  const y = digits(text, 0, 4);
  const mo = digits(text, 5, 2);
  const d = digits(text, 8, 2);
  if (y < 0 || mo < 0 || d < 0 || text.charCodeAt(4) !== DASH || text.charCodeAt(7) !== DASH) {
    return null;
  }
  let h = 0;
  let mi = 0;
  let s = 0;
  let nanos = 0;
  let offsetMinutes = 0;
  let i = 10;
  if (i < n) {
    const t = text.charCodeAt(i);
    if (t !== 0x54 && t !== 0x74 && t !== 0x20) return null; // T, t or a space
    h = digits(text, i + 1, 2);
    mi = digits(text, i + 4, 2);
    if (h < 0 || mi < 0 || text.charCodeAt(i + 3) !== COLON) return null;
    i += 6;
    if (text.charCodeAt(i) === COLON) {
      s = digits(text, i + 1, 2);
      if (s < 0) return null;
      i += 3;
      const sep = text.charCodeAt(i);
      if ((sep === 0x2e || sep === 0x2c) && isDigit(text.charCodeAt(i + 1))) {
        let j = i + 1;
        while (j < n && j - i <= 9 && isDigit(text.charCodeAt(j))) {
          nanos = nanos * 10 + (text.charCodeAt(j) - 0x30);
          j++;
        }
        nanos *= 10 ** (10 - (j - i)); // 9 - digits read
        i = j;
      }
    }
    const z = text.charCodeAt(i);
    if (z === 0x5a || z === 0x7a) {
      i++; // Z or z
    } else if (z === 0x2b || z === DASH) {
      const oh = digits(text, i + 1, 2);
      i += text.charCodeAt(i + 3) === COLON ? 4 : 3;
      const om = digits(text, i, 2);
      if (oh < 0 || om < 0 || oh > 23 || om > 59) return null;
      offsetMinutes = (z === DASH ? -1 : 1) * (oh * 60 + om);
      i += 2;
    }
    if (i !== n) return null;
  }
  if (mo < 1 || mo > 12 || d < 1) return null;
  const dim = mo === 2 && isLeap(y) ? 29 : (DAYS_IN_MONTH[mo - 1] as number);
  if (d > dim || h > 23 || mi > 59 || s > 59) return null;
  const seconds = daysFromCivil(y, mo, d) * 86400 + h * 3600 + mi * 60 + s - offsetMinutes * 60;
  return { seconds, nanos };
}

const DASH = 0x2d;
const COLON = 0x3a;

function isDigit(c: number): boolean {
  return c >= 0x30 && c <= 0x39;
}

// The value of the `count` ASCII digits at `at`, or -1 when any is missing or not a digit.
function digits(text: string, at: number, count: number): number {
  if (at + count > text.length) return -1;
  let v = 0;
  for (let k = at; k < at + count; k++) {
    const c = text.charCodeAt(k);
    if (!isDigit(c)) return -1;
    v = v * 10 + (c - 0x30);
  }
  return v;
}

/**
 * Parses an ISO-8601 timestamp to nanoseconds since the Unix epoch, or `null` when the
 * text is not a valid timestamp. A missing offset means UTC.
 *
 * @example parseInstant("2026-08-17T09:00:00+08:00") === parseInstant("2026-08-17T01:00:00Z") // true
 */
export function parseInstant(text: string): bigint | null {
  const p = parseInstantParts(text);
  return p === null ? null : BigInt(p.seconds) * 1_000_000_000n + BigInt(p.nanos);
}

/**
 * Compares two instants given as {@link InstantParts}. Returns -1, 0 or 1.
 *
 * @example compareInstantParts({ seconds: 1, nanos: 0 }, { seconds: 0, nanos: 9 }) // 1
 */
export function compareInstantParts(a: InstantParts, b: InstantParts): number {
  if (a.seconds !== b.seconds) return a.seconds < b.seconds ? -1 : 1;
  return a.nanos < b.nanos ? -1 : a.nanos > b.nanos ? 1 : 0;
}

/**
 * Compares two instants in nanoseconds. Returns -1, 0 or 1.
 *
 * @example compareInstants(1n, 2n) // -1
 */
export function compareInstants(a: bigint, b: bigint): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/**
 * Parses an ISO-8601 timestamp to epoch milliseconds (a number), for arithmetic such as
 * ages and recency. `null` when invalid.
 *
 * @example instantMillis("1970-01-01T00:00:01Z") // 1000
 */
export function instantMillis(text: string): number | null {
  const fast = utcMillis(text);
  if (fast !== null) return fast;
  const p = parseInstantParts(text);
  // Exact: seconds × 1000 stays a safe integer for every year ISO-8601 can write, and
  // nanos are non-negative, so flooring them keeps pre-1970 instants ordered.
  return p === null ? null : p.seconds * 1000 + Math.floor(p.nanos / 1_000_000);
}

/**
 * The common form `YYYY-MM-DDTHH:MM:SSZ` or `…:SS.sssZ` (what `toISOString` writes) read
 * straight to milliseconds, without the parts object: ranking reads thousands of
 * timestamps per assembly. null for any other form or an invalid date, which then takes
 * the general path (same result: a property test holds the two together).
 */
function utcMillis(text: string): number | null {
  const n = text.length;
  if ((n !== 20 && n !== 24) || text.charCodeAt(n - 1) !== 0x5a) return null; // Z
  if (
    text.charCodeAt(4) !== DASH ||
    text.charCodeAt(7) !== DASH ||
    text.charCodeAt(10) !== 0x54 || // T
    text.charCodeAt(13) !== COLON ||
    text.charCodeAt(16) !== COLON ||
    (n === 24 && text.charCodeAt(19) !== 0x2e) // .
  ) {
    return null;
  }
  const y = digits(text, 0, 4);
  const mo = digits(text, 5, 2);
  const d = digits(text, 8, 2);
  const h = digits(text, 11, 2);
  const mi = digits(text, 14, 2);
  const s = digits(text, 17, 2);
  const ms = n === 24 ? digits(text, 20, 3) : 0;
  if (y < 0 || mo < 1 || mo > 12 || d < 1 || h < 0 || h > 23 || mi < 0 || mi > 59) return null;
  if (s < 0 || s > 59 || ms < 0) return null;
  const dim = mo === 2 && isLeap(y) ? 29 : (DAYS_IN_MONTH[mo - 1] as number);
  if (d > dim) return null;
  return (daysFromCivil(y, mo, d) * 86400 + h * 3600 + mi * 60 + s) * 1000 + ms;
}
