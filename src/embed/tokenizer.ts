/**
 * The sentencepiece unigram tokenizer of Universal Sentence Encoder lite, over the
 * package's `vocab.json` (`[piece, logProbability][]`, ids = positions). Written from
 * the logic of `@tensorflow-models/universal-sentence-encoder`'s tokenizer (that package
 * peers tfjs 3.x, which conflicts with the tfjs 4 runtime used here):
 *
 * - the text is NFKC-normalized, every space becomes `▁` (U+2581) and one `▁` is put in
 *   front;
 * - the best segmentation (highest summed log probability) is found by Viterbi over
 *   the pieces that match at each code point (a trie of the pieces);
 * - the first {@link RESERVED_PIECES} ids (unknown, control and user symbols) are never
 *   matched; a code point no piece covers is the unknown id 0, with a score below every
 *   piece's (sentencepiece's rule; the original reused score 0 there), and a run of unknowns
 *   is one id.
 */

/** Ids 0..5: unknown, `<s>`, `</s>` and three extra ids (never produced by matching). */
export const RESERVED_PIECES = 6;
const UNKNOWN_ID = 0;
const SEPARATOR = "\u2581";

interface TrieNode {
  children: Map<string, TrieNode>;
  /** The id of the piece ending here, or -1. */
  id: number;
}

/** One `vocab.json` entry: the piece and its log probability. */
export type VocabEntry = readonly [string, number];

/** A compiled tokenizer: {@link encode} maps a text to piece ids. */
export interface UnigramTokenizer {
  encode(text: string): number[];
  /** Pieces in the vocabulary. */
  readonly size: number;
}

/** The text the pieces are matched against (see the module comment). */
export function normalizeForPieces(text: string): string[] {
  const normalized = text.normalize("NFKC");
  if (normalized.length === 0) return [];
  return [...(SEPARATOR + normalized.replaceAll(" ", SEPARATOR))];
}

/**
 * Compiles `vocab` (as read from `vocab.json`) into a tokenizer.
 *
 * @example
 * const t = unigramTokenizer([["<unk>", 0], ["<s>", 0], ["</s>", 0], ["a", 0], ["b", 0], ["c", 0], ["▁hi", -1]]);
 * t.encode("hi"); // [6]
 */
export function unigramTokenizer(vocab: readonly VocabEntry[]): UnigramTokenizer {
  const root: TrieNode = { children: new Map(), id: -1 };
  let lowest = 0;
  for (let id = RESERVED_PIECES; id < vocab.length; id++) {
    const [piece, score] = vocab[id]!;
    lowest = Math.min(lowest, score);
    let node = root;
    for (const ch of piece) {
      let next = node.children.get(ch);
      if (next === undefined) {
        next = { children: new Map(), id: -1 };
        node.children.set(ch, next);
      }
      node = next;
    }
    node.id = id;
  }
  const unknownScore = lowest - 10;
  const lengths = vocab.map(([piece]) => [...piece].length);
  return {
    size: vocab.length,
    encode(text: string): number[] {
      const symbols = normalizeForPieces(text);
      const n = symbols.length;
      const best = new Float64Array(n + 1).fill(Number.NEGATIVE_INFINITY);
      const idAt = new Int32Array(n + 1).fill(-1);
      const lenAt = new Int32Array(n + 1);
      best[0] = 0;
      for (let i = 0; i < n; i++) {
        if (best[i] === Number.NEGATIVE_INFINITY) continue;
        let covered = false;
        let node: TrieNode | undefined = root;
        for (let j = i; j < n && node !== undefined; j++) {
          node = node.children.get(symbols[j]!);
          if (node === undefined || node.id < 0) continue;
          covered = covered || j === i;
          const score = best[i]! + vocab[node.id]![1];
          // `>=`: among equal scores the later piece wins, as in the original.
          if (score >= best[j + 1]!) {
            best[j + 1] = score;
            idAt[j + 1] = node.id;
            lenAt[j + 1] = lengths[node.id]!;
          }
        }
        if (!covered) {
          const score = best[i]! + unknownScore;
          if (score > best[i + 1]!) {
            best[i + 1] = score;
            idAt[i + 1] = UNKNOWN_ID;
            lenAt[i + 1] = 1;
          }
        }
      }
      const ids: number[] = [];
      for (let end = n; end > 0; end -= lenAt[end]!) {
        const id = idAt[end]!;
        if (!(id === UNKNOWN_ID && ids[ids.length - 1] === UNKNOWN_ID)) ids.push(id);
      }
      return ids.reverse();
    },
  };
}
