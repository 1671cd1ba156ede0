/**
 * ISO-8601 timestamps (spec 01): offsets honoured, a timestamp without an offset is UTC,
 * comparison by instant (exact to the nanosecond), anything unparseable rejected.
 */

const ISO =
  /^(\d{4})-(\d{2})-(\d{2})(?:[Tt ](\d{2}):(\d{2})(?::(\d{2})(?:[.,](\d{1,9}))?)?(?:([Zz])|([+-])(\d{2}):?(\d{2}))?)?$/;

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
  const m = ISO.exec(text);
  if (!m) return null;
  const [, ys, mos, ds, hs = "0", mis = "0", ss = "0", frac = "", , sign, ohs, oms] = m;
  const y = Number(ys);
  const mo = Number(mos);
  const d = Number(ds);
  const h = Number(hs);
  const mi = Number(mis);
  const s = Number(ss);
  if (mo < 1 || mo > 12 || d < 1) return null;
  const dim = mo === 2 && isLeap(y) ? 29 : (DAYS_IN_MONTH[mo - 1] as number);
  if (d > dim || h > 23 || mi > 59 || s > 59) return null;
  let offsetMinutes = 0;
  if (sign !== undefined) {
    const oh = Number(ohs);
    const om = Number(oms);
    if (oh > 23 || om > 59) return null;
    offsetMinutes = (sign === "-" ? -1 : 1) * (oh * 60 + om);
  }
  const seconds = daysFromCivil(y, mo, d) * 86400 + h * 3600 + mi * 60 + s - offsetMinutes * 60;
  return { seconds, nanos: frac === "" ? 0 : Number(frac.padEnd(9, "0")) };
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
  const p = parseInstantParts(text);
  // Exact: seconds × 1000 stays a safe integer for every year ISO-8601 can write, and
  // nanos are non-negative, so flooring them keeps pre-1970 instants ordered.
  return p === null ? null : p.seconds * 1000 + Math.floor(p.nanos / 1_000_000);
}
