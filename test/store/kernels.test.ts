/**
 * The WebAssembly kernels of the candidate index (src/store/kernels.ts) against the same
 * loops written plainly here, on generated codes: each is exact integer work, so their
 * results must be equal.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { kernels } from "../../src/store/kernels.js";

const popcount = (x: bigint): number => x.toString(2).replaceAll("0", "").length;

/** Random bytes, a row count and chosen rows. */
const input = fc.record({
  words: fc.integer({ min: 1, max: 4 }),
  rows: fc.integer({ min: 1, max: 12 }),
  seed: fc.integer({ min: 1, max: 2 ** 31 - 1 }),
  picks: fc.array(fc.nat(), { minLength: 1, maxLength: 8 }),
});

/** A memory filled from `seed` (xorshift), its views. */
function filled(seed: number) {
  const k = kernels(2);
  const u8 = new Uint8Array(k.memory.buffer);
  let s = seed;
  for (let i = 0; i < u8.length; i++) {
    s ^= s << 13;
    s ^= s >>> 17;
    s ^= s << 5;
    u8[i] = s & 255;
  }
  return { k, u8, i8: new Int8Array(k.memory.buffer), u64: new BigUint64Array(k.memory.buffer) };
}

// Regions: codes from 0, the query at 40,000, slots at 50,000, output at 60,000, a
// histogram at 70,000, asym's table at 80,000 (up to 16 KB).
const [Q, SLOTS, OUT, HIST, TABLE] = [40_000, 50_000, 60_000, 70_000, 80_000];

describe("candidate index kernels", () => {
  it("hamming: the popcount of each code xor the query, counted in the histogram", () => {
    fc.assert(
      fc.property(input, ({ words, rows, seed }) => {
        const { k, u64 } = filled(seed);
        const hist = new Int32Array(k.memory.buffer, HIST, words * 64 + 1);
        hist.fill(0);
        k.hamming(0, rows, words, Q, OUT, HIST);
        const out = new Uint16Array(k.memory.buffer, OUT, rows);
        const want = new Array<number>(words * 64 + 1).fill(0);
        for (let r = 0; r < rows; r++) {
          let d = 0;
          for (let j = 0; j < words; j++) d += popcount(u64[r * words + j]! ^ u64[Q / 8 + j]!);
          expect(out[r]).toBe(d);
          want[d]!++;
        }
        expect(Array.from(hist)).toEqual(want);
      }),
    );
  });

  it("select: the rows within a distance, in order", () => {
    fc.assert(
      fc.property(input, fc.nat({ max: 255 }), ({ rows, seed }, cut) => {
        const { k } = filled(seed);
        const dist = new Uint16Array(k.memory.buffer, Q, rows);
        const want = Array.from(dist.keys()).filter((r) => dist[r]! >> 8 <= cut);
        for (let r = 0; r < rows; r++) dist[r] = dist[r]! >> 8;
        const m = k.select(Q, rows, cut, OUT);
        expect(Array.from(new Int32Array(k.memory.buffer, OUT, m))).toEqual(want);
      }),
    );
  });

  it("dot8: int8 codes of chosen rows against an int16 query", () => {
    fc.assert(
      fc.property(input, ({ words, rows, seed, picks }) => {
        const { k, i8 } = filled(seed);
        const span = words * 16;
        const q16 = new Int16Array(k.memory.buffer, Q, span);
        for (let i = 0; i < span; i++) q16[i] = i8[Q + 2 * span + i]!; // int8 range, as the index
        const slots = picks.map((p) => p % rows);
        new Int32Array(k.memory.buffer, SLOTS, slots.length).set(slots);
        k.dot8(0, span, SLOTS, slots.length, Q, OUT);
        const out = new Int32Array(k.memory.buffer, OUT, slots.length);
        slots.forEach((s, c) => {
          let want = 0;
          for (let i = 0; i < span; i++) want += i8[s * span + i]! * q16[i]!;
          expect(out[c]).toBe(want);
        });
      }),
    );
  });

  it("asym: Σ over the code's bytes of the table's entry for each, and the code's popcount", () => {
    fc.assert(
      fc.property(input, (x) => {
        const { words, rows, seed, picks } = x;
        const { k, u64 } = filled(seed);
        const slots = picks.map((p) => p % rows);
        new Int32Array(k.memory.buffer, SLOTS, slots.length).set(slots);
        // The table (random u16 entries from the fill): 256 entries per code byte.
        const table = new Uint16Array(k.memory.buffer, TABLE, words * 8 * 256).slice();
        k.asym(0, words, SLOTS, slots.length, TABLE, OUT);
        const out = new Int32Array(k.memory.buffer, OUT, slots.length * 2);
        slots.forEach((s, c) => {
          let t = 0;
          let p = 0;
          for (let j = 0; j < words; j++) {
            const code = u64[s * words + j]!;
            p += popcount(code);
            for (let b = 0; b < 8; b++)
              t += table[(8 * j + b) * 256 + Number((code >> BigInt(8 * b)) & 255n)]!;
          }
          expect([out[2 * c], out[2 * c + 1]]).toEqual([t, p]);
        });
      }),
    );
  });
});
