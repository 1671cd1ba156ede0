/**
 * Estimates of a cut's count without counting it: from the output's pieces with running
 * counts (`TokenCounter.pieceCounts`, read once per output), the head and the tail of a
 * cut cost a lookup each plus the count of the piece each splits, and the notice between
 * them is counted on its own. Pieces merge a little differently where the head, the notice
 * and the tail meet, so an estimate is off by a few tokens: the search (transforms.ts)
 * only aims its probes with it and decides on exact counts.
 */
import type { TokenCounter } from "../tokens/index.js";

/** Where a cut keeping some code points splits the output, and its notice's text. */
export interface CutShape {
  /** UTF-16 end of the head and start of the tail. */
  readonly from: number;
  readonly to: number;
  /** The text between the head and the tail (newlines and notice). */
  readonly between: string;
}

/**
 * `estimate(keep)`: about the tokens of the cut `shape(keep)` describes, from `pieces`
 * (`[end, tokens]` pairs over `output`).
 *
 * @example cutEstimator(out, counter.pieceCounts!(out), counter, shape)(100) // ≈ counter.count(cut of 100)
 */
export function cutEstimator(
  output: string,
  pieces: Int32Array,
  counter: TokenCounter,
  shape: (keep: number) => CutShape,
): (keep: number) => number {
  const count = (text: string): number =>
    text === "" ? 0 : counter.countUncached ? counter.countUncached(text) : counter.count(text);
  const n = pieces.length / 2;
  const total = n > 0 ? (pieces[2 * n - 1] as number) : 0;
  // The last piece ending at or before x: its index, -1 when none.
  const before = (x: number): number => {
    let lo = -1;
    let hi = n - 1;
    while (lo < hi) {
      const mid = (lo + hi + 1) >> 1;
      if ((pieces[2 * mid] as number) <= x) lo = mid;
      else hi = mid - 1;
    }
    return lo;
  };
  const endOf = (i: number): number => (i < 0 ? 0 : (pieces[2 * i] as number));
  const tokensTo = (i: number): number => (i < 0 ? 0 : (pieces[2 * i + 1] as number));
  return (keep) => {
    const { from, to, between } = shape(keep);
    const h = before(from);
    const head = tokensTo(h) + count(output.slice(endOf(h), from));
    const t = before(to);
    let tail: number;
    if (endOf(t) === to) tail = total - tokensTo(t);
    else {
      const next = Math.min(t + 1, n - 1);
      tail = total - tokensTo(next) + count(output.slice(to, endOf(next)));
    }
    return head + count(between) + tail;
  };
}
