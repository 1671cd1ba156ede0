/**
 * Token counting past the size thresholds of src/tokens: the heap merge of pieces over 64
 * bytes, scratch buffers that grow past 256 bytes and are dropped after a count past
 * 65,536, the pair-join memo that doubles from 2,048 joins, and the counter memo that
 * starts over at 50,000 texts (join-reset.test.ts takes the join memo past its bound).
 * Each is compared with gpt-tokenizer's countTokens (special-token literals as text), as
 * in bpe.test.ts. Few runs: the inputs are large.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { BpeCounter, sharedBpeData } from "../../src/tokens/bpe.js";
import { createTokenCounter, getTokenCounter } from "../../src/tokens/index.js";
import { ENCODINGS, field, letterTokens, reference, small } from "./large-text.js";

// Letters of 1, 2 and 3 UTF-8 bytes, lower case or caseless (one o200k and cl100k piece).
const LETTERS = ["a", "e", "n", "s", "t", "x", "q", "é", "ß", "ж", "ω", "世", "界", "語"];

/** A run of letters: one pre-tokenizer piece, optionally after a space. */
const letterRun = (minLength: number, maxLength: number) =>
  fc
    .tuple(fc.boolean(), fc.array(fc.constantFrom(...LETTERS), { minLength, maxLength }))
    .map(([space, xs]) => (space ? " " : "") + xs.join(""));

/**
 * Pieces of 2–8 vocabulary words run together (" wordwordword"): merging them asks the
 * join of many distinct token pairs, about one per 3 characters.
 */
const soup = (words: readonly string[], minPieces: number, maxPieces: number) =>
  fc
    .array(fc.array(fc.nat(words.length - 1), { minLength: 2, maxLength: 8 }), {
      minLength: minPieces,
      maxLength: maxPieces,
    })
    .map((pieces) => pieces.map((p) => ` ${p.map((w) => words[w]).join("")}`).join(""));

describe.each(ENCODINGS)("%s past its size thresholds", (encoding) => {
  const ref = reference[encoding];
  const data = sharedBpeData(encoding);

  it("pieces around 64 bytes (heap merge) and 256 bytes (scratch growth), fresh counters", () => {
    // 20–130 letters of 1–3 bytes: pieces of 20 to ~390 bytes, in a random order, so the
    // scratch buffers of a fresh counter grow at any point of the sequence.
    fc.assert(
      fc.property(fc.array(fc.oneof(letterRun(20, 130), small), { maxLength: 6 }), (texts) => {
        const bpe = new BpeCounter(data);
        for (const t of texts) expect(bpe.count(t), JSON.stringify(t)).toBe(ref(t));
      }),
      { numRuns: 150 },
    );
  });

  it("a piece past 65,536 scratch bytes (10,923+ units): exact, then dropped; next counts exact", () => {
    // The scratch buffer grows to 6 bytes per unit of the piece: 10,922 units keep it
    // (65,532 bytes), 10,923 make it 65,538 bytes, and it is dropped after the count.
    const huge = fc
      .oneof(fc.constantFrom(10_922, 10_923), fc.integer({ min: 10_924, max: 11_500 }))
      .chain((n) =>
        fc.array(fc.constantFrom("a", "e", "n", "s", "t", "é"), { minLength: n, maxLength: n }),
      )
      .map((xs) => xs.join(""));
    fc.assert(
      fc.property(huge, fc.array(small, { minLength: 1, maxLength: 5 }), (piece, after) => {
        const bpe = new BpeCounter(data);
        const n = ref(piece);
        expect(bpe.count(piece)).toBe(n);
        const kept = field(bpe, "bytes");
        expect(kept).toBeLessThanOrEqual(65_536);
        expect(kept >= piece.length * 3, `${piece.length} units, ${kept} bytes kept`).toBe(
          piece.length <= 10_922,
        );
        for (const t of after) expect(bpe.count(t), JSON.stringify(t)).toBe(ref(t));
        const again = `${after[0]}${piece}`;
        expect(bpe.countUpTo(again, n + 100)).toBe(ref(again));
      }),
      { numRuns: 2, endOnFailure: true },
    );
  }, 60_000);

  it("the pair-join memo doubles past 2,048 joins and stays exact", () => {
    const words = letterTokens(encoding);
    fc.assert(
      fc.property(soup(words, 1500, 2500), (text) => {
        const bpe = new BpeCounter(data);
        const n = ref(text);
        expect(bpe.count(text)).toBe(n);
        expect(field(bpe, "joinCount")).toBeGreaterThan(2 * 2048); // two doublings at least
        expect(field(bpe, "joins") / 3).toBeGreaterThan(4096);
        expect(bpe.count(text)).toBe(n); // every join remembered now
      }),
      { numRuns: 3, endOnFailure: true },
    );
  }, 60_000);
});

describe("past the counter memo's 50,000 texts", () => {
  it("the memo starts over after 50,000 distinct texts", () => {
    let calls = 0;
    const counter = createTokenCounter("calls", (t) => {
      calls++;
      return t.length;
    });
    for (let i = 0; i < 50_000; i++) counter.count(`t${i}`);
    expect(calls).toBe(50_000);
    expect(counter.count("t0")).toBe(2); // still remembered
    expect(calls).toBe(50_000);
    expect(counter.count("t50000")).toBe(6); // the 50,001st: the memo starts over
    expect(counter.count("t0")).toBe(2);
    expect(calls).toBe(50_002);
  });

  it("a built-in counter stays exact past it (count and extendWithNewlines)", () => {
    fc.assert(
      fc.property(
        fc.constantFrom(...ENCODINGS),
        fc.array(small, { minLength: 1, maxLength: 20 }),
        fc.integer({ min: 50_001, max: 50_500 }),
        (encoding, bases, total) => {
          const ref = reference[encoding];
          const counter = getTokenCounter(encoding);
          const texts = Array.from({ length: total }, (_, i) => `${bases[i % bases.length]} ${i}`);
          // Every text is counted (filling the memo); every 50th is checked on the way.
          texts.forEach((t, i) => {
            const n = counter.count(t);
            if (i % 50 === 0) expect(n, JSON.stringify(t)).toBe(ref(t));
          });
          // The first texts were forgotten when the memo started over; the last are held.
          // Every text ends in a digit, so extendWithNewlines can always tell.
          for (const t of [...texts.slice(0, 100), ...texts.slice(-100)]) {
            const n = counter.count(t);
            expect(n, JSON.stringify(t)).toBe(ref(t));
            expect(counter.extendWithNewlines?.(t, n, "\n")).toBe(ref(`${t}\n`));
          }
        },
      ),
      { numRuns: 1, endOnFailure: true },
    );
  }, 60_000);
});
