/**
 * The pair-join memo of BpeCounter past its bound: it starts over after 2^21 joins, and
 * counts stay exact (gpt-tokenizer's countTokens) across and after that. A test file of its
 * own: filling the memo takes ~7 M characters of text.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { BpeCounter, sharedBpeData } from "../../src/tokens/bpe.js";
import { ENCODINGS, field, letterTokens, reference, small, xorshift } from "./large-text.js";

describe("past the pair-join memo's bound (2^21 joins)", () => {
  it("it starts over, and counts stay exact across and after that", () => {
    // Filling the memo takes ~7 M characters of word soup (12–19 s on 2 busy cores), so
    // one run, of one encoding picked at random.
    fc.assert(
      fc.property(
        fc.constantFrom(...ENCODINGS),
        fc.integer(),
        fc.array(small, { minLength: 1, maxLength: 20 }),
        (encoding, seed, after) => {
          const ref = reference[encoding];
          const words = letterTokens(encoding);
          const random = xorshift(seed);
          const batch = () => {
            let text = "";
            for (let p = 0; p < 1000; p++) {
              text += " ";
              for (let k = 2 + Math.floor(random() * 7); k > 0; k--) {
                text += words[Math.floor(random() * words.length)];
              }
            }
            return text;
          };
          const bpe = new BpeCounter(sharedBpeData(encoding));
          let before = 0;
          for (let chars = 0; ; ) {
            const text = batch();
            const n = bpe.count(text);
            const joins = field(bpe, "joinCount");
            chars += text.length;
            if (joins >= before) {
              before = joins;
              if (chars > 40_000_000) throw new Error(`no start-over after ${chars} chars`);
              continue;
            }
            // Started over within this batch: it, the next ones and short text are exact.
            expect(before).toBeGreaterThan(2 ** 20);
            expect(n).toBe(ref(text));
            for (let k = 0; k < 3; k++) {
              const next = batch();
              expect(bpe.count(next)).toBe(ref(next));
            }
            for (const t of after) expect(bpe.count(t), JSON.stringify(t)).toBe(ref(t));
            return;
          }
        },
      ),
      { numRuns: 1, endOnFailure: true },
    );
  }, 180_000);
});
