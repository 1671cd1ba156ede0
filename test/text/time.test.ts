import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  compareInstantParts,
  compareInstants,
  instantMillis,
  parseInstant,
  parseInstantParts,
} from "../../src/text/index.js";

const NS = 1_000_000_000n;
const at = (s: string): bigint => {
  const v = parseInstant(s);
  if (v === null) throw new Error(`expected ${s} to parse`);
  return v;
};

describe("parseInstant", () => {
  it("parses Z as UTC, nanoseconds since the epoch", () => {
    expect(parseInstant("1970-01-01T00:00:00Z")).toBe(0n);
    expect(parseInstant("1970-01-01T00:00:01Z")).toBe(NS);
    expect(parseInstant("2026-08-17T09:00:00Z")).toBe(
      BigInt(Date.UTC(2026, 7, 17, 9)) * 1_000_000n,
    );
    expect(parseInstant("2026-08-17t09:00:00z")).toBe(at("2026-08-17T09:00:00Z"));
    expect(parseInstant("1969-12-31T23:59:59Z")).toBe(-NS);
  });

  it("honours +hh:mm, -hh:mm and +hhmm offsets", () => {
    expect(at("2026-08-17T09:00:00+08:00")).toBe(at("2026-08-17T01:00:00Z"));
    expect(at("2026-08-17T09:00:00-05:30")).toBe(at("2026-08-17T14:30:00Z"));
    expect(at("2026-08-17T09:00:00+0800")).toBe(at("2026-08-17T01:00:00Z"));
    expect(at("2026-08-17T09:00:00-0530")).toBe(at("2026-08-17T14:30:00Z"));
    expect(at("2026-08-17T09:00:00+00:00")).toBe(at("2026-08-17T09:00:00Z"));
    expect(at("2026-08-17T09:00:00-00:00")).toBe(at("2026-08-17T09:00:00Z"));
    expect(at("2026-01-01T00:30:00+01:00")).toBe(at("2025-12-31T23:30:00Z")); // crosses a year
  });

  it("treats a timestamp without an offset as UTC, not local time", () => {
    expect(at("2026-08-17T09:00:00")).toBe(at("2026-08-17T09:00:00Z"));
    expect(at("2026-08-17 09:00:00")).toBe(at("2026-08-17T09:00:00Z"));
    expect(at("2026-08-17T09:00")).toBe(at("2026-08-17T09:00:00Z"));
    expect(at("2026-08-17T09:00:00.5")).toBe(at("2026-08-17T09:00:00.500Z"));
  });

  it("parses a date alone as midnight UTC", () => {
    expect(at("2026-08-17")).toBe(at("2026-08-17T00:00:00Z"));
    expect(at("2000-02-29")).toBe(at("2000-02-29T00:00:00Z"));
  });

  it("keeps fractional seconds of 1 to 9 digits exactly", () => {
    const base = at("2026-08-17T09:00:00Z");
    expect(at("2026-08-17T09:00:00.1Z")).toBe(base + 100_000_000n);
    expect(at("2026-08-17T09:00:00.12Z")).toBe(base + 120_000_000n);
    expect(at("2026-08-17T09:00:00.123Z")).toBe(base + 123_000_000n);
    expect(at("2026-08-17T09:00:00.123456Z")).toBe(base + 123_456_000n);
    expect(at("2026-08-17T09:00:00.123456789Z")).toBe(base + 123_456_789n);
    expect(at("2026-08-17T09:00:00,5Z")).toBe(base + 500_000_000n);
    // Differences below a millisecond still order correctly.
    expect(
      compareInstants(at("2026-08-17T09:00:00.000000001Z"), at("2026-08-17T09:00:00.000000002Z")),
    ).toBe(-1);
    expect(at("2026-08-17T09:00:00.1Z")).toBe(at("2026-08-17T09:00:00.100000000Z"));
    expect(parseInstant("2026-08-17T09:00:00.1234567890Z")).toBeNull(); // 10 digits
    expect(parseInstant("2026-08-17T09:00:00.Z")).toBeNull();
  });

  it("orders by instant, not by string", () => {
    const a = "2026-08-17T09:00:00+08:00";
    const b = "2026-08-17T02:00:00Z";
    expect(a > b).toBe(true); // string order says a is later
    expect(compareInstants(at(a), at(b))).toBe(-1); // but a is 01:00Z, earlier
    expect(compareInstants(at(b), at(a))).toBe(1);
    expect(compareInstants(at("2026-08-17T09:00:00+08:00"), at("2026-08-17T01:00:00Z"))).toBe(0);
  });

  it("accepts leap days only in leap years", () => {
    expect(parseInstant("2024-02-29T00:00:00Z")).not.toBeNull();
    expect(parseInstant("2000-02-29T00:00:00Z")).not.toBeNull();
    expect(parseInstant("2026-02-29T00:00:00Z")).toBeNull();
    expect(parseInstant("1900-02-29T00:00:00Z")).toBeNull();
    expect(parseInstant("2100-02-29")).toBeNull();
  });

  it.each([
    "",
    " ",
    "garbage",
    "2026",
    "2026-08",
    "2026-13-01T00:00:00Z",
    "2026-00-10T00:00:00Z",
    "2026-08-00T00:00:00Z",
    "2026-08-32T00:00:00Z",
    "2026-04-31T00:00:00Z",
    "2026-06-31",
    "2026-08-17T24:00:00Z",
    "2026-08-17T23:60:00Z",
    "2026-08-17T23:59:60Z",
    "2026-08-17T09:00:00+24:00",
    "2026-08-17T09:00:00+08:60",
    "2026-08-17T09:00:00+8:00",
    "2026-08-17T09:00:00 Z",
    "2026-08-17T09:00:00Z ",
    " 2026-08-17T09:00:00Z",
    "2026-8-17T09:00:00Z",
    "2026-08-17T9:00:00Z",
    "26-08-17T09:00:00Z",
    "2026/08/17",
    "2026-08-17T",
    "2026-08-17T09",
    "2026-08-17T09:00:00ZZ",
    "２０２６-08-17",
    "1755421200",
    "Mon, 17 Aug 2026 09:00:00 GMT",
  ])("rejects %j", (s) => {
    expect(parseInstant(s)).toBeNull();
    expect(instantMillis(s)).toBeNull();
  });

  it("agrees with Date.UTC on random valid timestamps", () => {
    const ts = fc.record({
      y: fc.integer({ min: 1, max: 9999 }),
      mo: fc.integer({ min: 1, max: 12 }),
      d: fc.integer({ min: 1, max: 28 }),
      h: fc.integer({ min: 0, max: 23 }),
      mi: fc.integer({ min: 0, max: 59 }),
      s: fc.integer({ min: 0, max: 59 }),
      ms: fc.integer({ min: 0, max: 999 }),
      off: fc.integer({ min: -23 * 60 - 59, max: 23 * 60 + 59 }),
    });
    const p2 = (n: number) => String(n).padStart(2, "0");
    fc.assert(
      fc.property(ts, ({ y, mo, d, h, mi, s, ms, off }) => {
        const sign = off < 0 ? "-" : "+";
        const a = Math.abs(off);
        const text = `${String(y).padStart(4, "0")}-${p2(mo)}-${p2(d)}T${p2(h)}:${p2(mi)}:${p2(s)}.${String(ms).padStart(3, "0")}${sign}${p2(Math.floor(a / 60))}:${p2(a % 60)}`;
        const date = new Date(0);
        date.setUTCFullYear(y, mo - 1, d);
        date.setUTCHours(h, mi, s, ms);
        const expected = date.getTime() - off * 60_000;
        expect(instantMillis(text)).toBe(expected);
        expect(parseInstant(text)).toBe(BigInt(expected) * 1_000_000n);
      }),
      { numRuns: 3000 },
    );
  });
});

describe("compareInstants and instantMillis", () => {
  it("compare returns -1, 0, 1", () => {
    expect(compareInstants(1n, 2n)).toBe(-1);
    expect(compareInstants(2n, 2n)).toBe(0);
    expect(compareInstants(3n, 2n)).toBe(1);
  });

  it("instantMillis gives epoch milliseconds", () => {
    expect(instantMillis("1970-01-01T00:00:01Z")).toBe(1000);
    expect(instantMillis("2026-08-17T09:00:00+08:00")).toBe(Date.UTC(2026, 7, 17, 1));
    expect(instantMillis("2026-08-17T09:00:00")).toBe(Date.UTC(2026, 7, 17, 9));
  });
});

describe("parseInstantParts and compareInstantParts", () => {
  it("split the nanosecond instant into seconds and nanos", () => {
    expect(parseInstantParts("1970-01-01T00:00:01.5Z")).toEqual({ seconds: 1, nanos: 500000000 });
    expect(parseInstantParts("1969-12-31T23:59:59.000000001Z")).toEqual({ seconds: -1, nanos: 1 });
    expect(parseInstantParts("2026-02-30T00:00:00Z")).toBeNull();
    expect(parseInstantParts("nope")).toBeNull();
  });

  it("agree with parseInstant and compareInstants on every timestamp", () => {
    const stamp = fc
      .tuple(
        fc.integer({ min: 0, max: 9999 }),
        fc.integer({ min: 1, max: 12 }),
        fc.integer({ min: 1, max: 28 }),
        fc.integer({ min: 0, max: 23 }),
        fc.integer({ min: 0, max: 59 }),
        fc.integer({ min: 0, max: 59 }),
        fc.constantFrom("", ".5", ".000000001", ".123456789", ",25"),
        fc.constantFrom("", "Z", "+08:00", "-0130", "+23:59"),
      )
      .map(
        ([y, mo, d, h, mi, s, frac, off]) =>
          `${String(y).padStart(4, "0")}-${String(mo).padStart(2, "0")}-${String(d).padStart(2, "0")}` +
          `T${String(h).padStart(2, "0")}:${String(mi).padStart(2, "0")}:${String(s).padStart(2, "0")}${frac}${off}`,
      );
    fc.assert(
      fc.property(stamp, stamp, (a, b) => {
        const pa = parseInstantParts(a)!;
        const pb = parseInstantParts(b)!;
        expect(BigInt(pa.seconds) * 1_000_000_000n + BigInt(pa.nanos)).toBe(parseInstant(a));
        expect(pa.nanos).toBeGreaterThanOrEqual(0);
        expect(pa.nanos).toBeLessThan(1_000_000_000);
        expect(compareInstantParts(pa, pb)).toBe(
          compareInstants(parseInstant(a)!, parseInstant(b)!),
        );
      }),
      { numRuns: 1000 },
    );
  });

  it("accept exactly what the grammar's regex accepts, with the same instant", () => {
    // The grammar written as the regex the hand-written reader replaced (reference only).
    const ISO =
      /^(\d{4})-(\d{2})-(\d{2})(?:[Tt ](\d{2}):(\d{2})(?::(\d{2})(?:[.,](\d{1,9}))?)?(?:([Zz])|([+-])(\d{2}):?(\d{2}))?)?$/;
    const reference = (text: string): { seconds: number; nanos: number } | null => {
      const m = ISO.exec(text);
      if (!m) return null;
      const [, y, mo, d, h = "0", mi = "0", s = "0", frac = "", , sign, oh, om] = m;
      const [Y, MO, D, H, MI, S] = [y, mo, d, h, mi, s].map(Number) as number[];
      const dim = new Date(Date.UTC(2000, MO!, 0)).getUTCDate(); // leap year 2000: Feb 29
      const leap = (Y! % 4 === 0 && Y! % 100 !== 0) || Y! % 400 === 0;
      if (MO! < 1 || MO! > 12 || D! < 1 || D! > (MO === 2 && !leap ? 28 : dim)) return null;
      if (H! > 23 || MI! > 59 || S! > 59) return null;
      if (sign !== undefined && (Number(oh) > 23 || Number(om) > 59)) return null;
      const off = sign === undefined ? 0 : (sign === "-" ? -1 : 1) * (Number(oh) * 60 + Number(om));
      const day = new Date(0);
      day.setUTCFullYear(Y!, MO! - 1, D!);
      const seconds =
        Math.floor(day.getTime() / 86_400_000) * 86400 + H! * 3600 + MI! * 60 + S! - off * 60;
      return { seconds, nanos: frac === "" ? 0 : Number(frac.padEnd(9, "0")) };
    };
    const atom = fc.constantFrom(
      "2024",
      "0000",
      "9999",
      "-",
      "01",
      "02",
      "12",
      "13",
      "29",
      "30",
      "31",
      "00",
      "T",
      "t",
      " ",
      ":",
      "59",
      "60",
      "23",
      "24",
      ".",
      ",",
      "5",
      "123456789",
      "1234567890",
      "Z",
      "z",
      "+",
      "-",
      "08",
      "0800",
      "+08:00",
      "-01:30",
      "x",
      "\n",
      "１",
    );
    const nearly = fc.array(atom, { maxLength: 14 }).map((xs) => xs.join(""));
    const mutated = fc
      .tuple(
        fc.constantFrom("2024-02-29T23:59:59.123456789+08:00", "2023-12-31 00:00", "1999-01-01"),
        fc.nat(),
        atom,
      )
      .map(
        ([s, at, a]) => s.slice(0, at % (s.length + 1)) + a + s.slice((at % (s.length + 1)) + 1),
      );
    const two = fc.integer({ min: 0, max: 99 }).map((n) => String(n).padStart(2, "0"));
    const formed = fc
      .tuple(
        fc.integer({ min: 0, max: 9999 }).map((n) => String(n).padStart(4, "0")),
        two,
        two,
        fc.constantFrom("T", "t", " "),
        two,
        two,
        fc.option(
          two.map((x) => `:${x}`),
          { nil: "" },
        ),
        fc.constantFrom("", ".5", ",000000001", ".123456789"),
        fc.constantFrom("", "Z", "z", "+08:00", "-0130", "+24:00", "-23:60"),
      )
      .map(
        ([y, mo, d, t, h, mi, s, f, z]) =>
          `${y}-${mo}-${d}${t}${h}:${mi}${s}${s === "" ? "" : f}${z}`,
      );
    fc.assert(
      fc.property(fc.oneof(nearly, mutated, formed), (text) => {
        expect(parseInstantParts(text)).toEqual(reference(text));
      }),
      { numRuns: 20_000 },
    );
  });
});

describe("instantMillis, the toISOString form", () => {
  // The general parse, as instantMillis computed it before its fast path.
  const general = (text: string) => {
    const p = parseInstantParts(text);
    return p === null ? null : p.seconds * 1000 + Math.floor(p.nanos / 1_000_000);
  };

  it("reads every date toISOString writes as the general parse does", () => {
    fc.assert(
      fc.property(
        fc.date({
          min: new Date("0000-01-01T00:00:00Z"),
          max: new Date("9999-12-31T23:59:59Z"),
          noInvalidDate: true,
        }),
        fc.boolean(),
        (date, millis) => {
          const iso = date.toISOString();
          const text = millis ? iso : iso.replace(/\.\d{3}Z$/, "Z");
          expect(instantMillis(text)).toBe(general(text));
          expect(instantMillis(text)).toBe(
            millis ? date.getTime() : Math.floor(date.getTime() / 1000) * 1000,
          );
        },
      ),
      { numRuns: 2000 },
    );
  });

  it("agrees with the general parse on near misses of that form", () => {
    const chars = fc.constantFrom(..."0123456789-T:.Zz +9".split(""));
    fc.assert(
      fc.property(
        fc.date({
          min: new Date("1900-01-01T00:00:00Z"),
          max: new Date("2100-01-01T00:00:00Z"),
          noInvalidDate: true,
        }),
        fc.nat({ max: 23 }),
        chars,
        (date, at, c) => {
          const iso = date.toISOString();
          const text = iso.slice(0, at) + c + iso.slice(at + 1);
          expect(instantMillis(text)).toBe(general(text));
          const short = iso.replace(/\.\d{3}Z$/, "Z");
          const text2 = short.slice(0, at % 20) + c + short.slice((at % 20) + 1);
          expect(instantMillis(text2)).toBe(general(text2));
        },
      ),
      { numRuns: 3000 },
    );
    for (const bad of ["2026-02-30T00:00:00Z", "2026-13-01T00:00:00Z", "2026-01-01T24:00:00Z"]) {
      expect(instantMillis(bad)).toBeNull();
    }
    expect(instantMillis("2024-02-29T23:59:59.999Z")).toBe(Date.parse("2024-02-29T23:59:59.999Z"));
  });
});
