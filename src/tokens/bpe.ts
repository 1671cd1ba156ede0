/**
 * Exact `o200k_base` / `cl100k_base` token counts without building token arrays.
 *
 * The ranks are the `.tiktoken` files gpt-tokenizer ships (`gpt-tokenizer/data/*`), and
 * the result is the count gpt-tokenizer's `countTokens` gives with special-token literals
 * treated as text (the test suite checks both encodings against it on random and
 * adversarial text), except around U+FEFF: gpt-tokenizer's string table loses that
 * character's bytes (decoding strips it as a byte-order mark), and we count them as the
 * native tiktoken does. It is faster because it allocates nothing per piece:
 * - the pre-tokenizer is the encoding's split regex written out as a scanner over a
 *   per-code-unit class table (bpe-scan.ts);
 * - each piece is UTF-8 encoded into a scratch buffer and looked up in an open-addressing
 *   table over the rank bytes, without making a string (bpe-ranks.ts);
 * - a piece that is not one token goes through the byte-pair merge (bpe-merge.ts).
 * This module is the counter over them: counts, early stops and the shared tables.
 */
import { BpeMerger } from "./bpe-merge.js";
import { loadClasses, loadRankTable } from "./bpe-prebuilt.js";
import type { BpeEncoding, RankTable } from "./bpe-ranks.js";
import { BpeScanner } from "./bpe-scan.js";

export type { BpeEncoding } from "./bpe-ranks.js";

/** What a counter of one encoding shares with every other: loaded once, never mutated. */
export interface BpeData {
  encoding: BpeEncoding;
  ranks: RankTable;
  classes: Uint8Array;
}

/**
 * Loads the tables of an encoding: prebuilt by the build (bpe-prebuilt.ts), else parsed
 * from the rank file (0.1–0.4 s on a busy 2-core machine).
 *
 * @example new BpeCounter(loadBpeData("cl100k_base")).count("hello world") // 2
 */
export function loadBpeData(encoding: BpeEncoding, classes = loadClasses()): BpeData {
  return { encoding, ranks: loadRankTable(encoding), classes };
}

/**
 * The tables of an encoding, loaded on first use, and one {@link BpeCounter} over them,
 * shared by every token counter of the process. This is the one module-level cache of
 * the library: like a module import, it never changes a result, only the time of the
 * first count. Sharing the counter (its scratch buffers are used only within one
 * synchronous call) also keeps V8's optimized code for it alive: code specialized to a
 * counter that dies is thrown away ("weak objects"), and fresh counters per request
 * would run unoptimized after every full GC.
 */
const loaded = new Map<BpeEncoding, { data: BpeData; counter: BpeCounter }>();

function shared(encoding: BpeEncoding): { data: BpeData; counter: BpeCounter } {
  let entry = loaded.get(encoding);
  if (entry === undefined) {
    // The class table is the same for both encodings: built once.
    const other = loaded.values().next().value;
    const data = loadBpeData(encoding, other?.data.classes);
    entry = { data, counter: new BpeCounter(data) };
    loaded.set(encoding, entry);
  }
  return entry;
}

/** {@link loadBpeData}, once per process. */
export function sharedBpeData(encoding: BpeEncoding): BpeData {
  return shared(encoding).data;
}

/** The process-wide {@link BpeCounter} of an encoding. */
export function sharedBpeCounter(encoding: BpeEncoding): BpeCount {
  return shared(encoding).counter;
}

/** The index of the first piece of `pieces` (`[end, tokens]` pairs) ending at or after `at`. */
function pieceFrom(pieces: Int32Array, at: number): number {
  let lo = 0;
  let hi = pieces.length >> 1;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if ((pieces[2 * mid] as number) < at) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/** The index of the piece of `pieces` that ends at `at`, or -1. */
function pieceAt(pieces: Int32Array, at: number): number {
  const k = pieceFrom(pieces, at);
  return k < pieces.length >> 1 && pieces[2 * k] === at ? k : -1;
}

/** Counting functions of one encoding; see {@link BpeCounter}. */
export interface BpeCount {
  /** Tokens of `text`. */
  count(text: string): number;
  /**
   * Tokens of `text` when they are at most `limit`; otherwise some number above `limit`,
   * found without tokenizing the rest of the text.
   */
  countUpTo(text: string, limit: number): number;
  /**
   * `countUpTo(text + newlines, limit)` (`newlines`: one or more "\n"), without building
   * `text + newlines` when the lower bound already passes the limit.
   */
  countUpToWithNewlines(text: string, newlines: string, limit: number): number;
  /** See {@link BpeCounter.pieceCounts}. */
  pieceCounts(text: string): Int32Array;
  /** See {@link BpeCounter.countSplice}. */
  countSplice(text: string, pieces: Int32Array, from: number, to: number, between: string): number;
}

const ONLY_NEWLINES = /^\n+$/;

const NO_PIECES = new Int32Array(0);

/** True when `s` is one or more "\n": the newlines a count may be extended by. */
export function isNewlines(s: string): boolean {
  return ONLY_NEWLINES.test(s);
}

/**
 * Counting over loaded data, with its own scanner and merger (and their scratch buffers).
 * The hot code is methods of these classes rather than closures made per counter: V8 keeps
 * a method's optimized code across counters, while closures made afresh would restart
 * unoptimized (and a full GC drops the optimized code of the old ones).
 *
 * @example new BpeCounter(sharedBpeData("cl100k_base")).countUpTo("a b c d", 2) // 3 (> 2)
 */
export class BpeCounter implements BpeCount {
  private readonly scanner: BpeScanner;
  private readonly merger: BpeMerger;
  private readonly highTokens: Int32Array;
  /** Longest token within a lead-byte set, by the set (see leastTokens). */
  private readonly longestWithin = new Map<number, number>();
  private readonly o200k: boolean;
  // The pieces `pieceCounts` is filling (see record): assigned in the constructor, so V8
  // takes the fields as mutable from the start (see BpeMerger's scratch buffers).
  private out: Int32Array;
  private outN: number;

  constructor(data: BpeData) {
    this.o200k = data.encoding === "o200k_base";
    this.out = NO_PIECES;
    this.outN = 0;
    this.scanner = new BpeScanner(data.classes, this.o200k);
    this.merger = new BpeMerger(data.ranks);
    this.highTokens = data.ranks.highTokens;
  }

  count(text: string): number {
    return this.countUpTo(text, Number.POSITIVE_INFINITY);
  }

  /**
   * A lower bound of the tokens of `text`, found by the scanner without encoding or looking
   * anything up: every piece is at least one token, a non-ASCII one at least leastTokens.
   * With `holdLastTwo`, the last two pieces are not credited (text appended may still
   * change them) and one token stands for them. Returns the bound as soon as it passes
   * `stop` (then so do the tokens), or -1 when it never does.
   */
  private boundPast(text: string, stop: number, holdLastTwo: boolean): number {
    let least = holdLastTwo ? 1 : 0;
    let previous = 0; // credits of the last two pieces seen, while held back
    let last = 0;
    const scanner = this.scanner;
    for (let i = 0; i < text.length; ) {
      const end = this.o200k ? scanner.o200kEnd(text, i) : scanner.cl100kEnd(text, i);
      const credit = text.charCodeAt(i) < 0x80 ? 1 : this.leastTokens(text, i, end);
      if (holdLastTwo) {
        least += previous;
        previous = last;
        last = credit;
      } else least += credit;
      if (least > stop) return least;
      i = end;
    }
    return -1;
  }

  countUpToWithNewlines(text: string, newlines: string, limit: number): number {
    const stop = Number.isNaN(limit) ? Number.POSITIVE_INFINITY : limit;
    // Appending newlines can change only the last two pieces of `text` (a trailing
    // whitespace run, or the piece it follows, may merge with them): the bound holds those
    // back. Building the joined string would cost more than the scan when the bound
    // decides, which is most candidates of a nearly full budget.
    if (stop < text.length + newlines.length && isNewlines(newlines)) {
      const least = this.boundPast(text, stop, true);
      if (least >= 0) return least;
    }
    return this.countUpTo(text + newlines, limit);
  }

  /**
   * The pre-tokenizer's pieces of `text` with running counts: `[end, tokens]` pairs, one
   * per piece, `tokens` those of `text[0, end)`. Pieces are counted independently, so the
   * tokens of a prefix or suffix that starts or ends at a piece's end are two lookups —
   * what a cut's search estimates its probes with (conversation/transforms.ts).
   *
   * @example new BpeCounter(sharedBpeData("o200k_base")).pieceCounts("hi there") // [2, 1, 8, 2]
   */
  pieceCounts(text: string): Int32Array {
    // About four code units a piece in most text: one allocation for most texts, not a
    // doubling series (a stateless first call takes the pieces of every long result).
    this.out = new Int32Array(2 * ((text.length >> 2) + 16));
    this.outN = 0;
    this.walk(text, Number.POSITIVE_INFINITY, true);
    const out = this.out.subarray(0, this.outN);
    this.out = NO_PIECES;
    return out;
  }

  /**
   * Tokens of `text` piece by piece until they pass `stop`, each piece's `[end, tokens]`
   * appended to `out` when `record`. The one loop of counting and of `pieceCounts`: a
   * process's first call runs both (a stateless plan counts its messages and takes the
   * pieces of each long result), and one loop is optimized once, not once per caller.
   */
  private walk(text: string, stop: number, record: boolean): number {
    const { scanner, merger } = this;
    const o200k = this.o200k;
    let total = 0;
    for (let i = 0; i < text.length && total <= stop; ) {
      const end = o200k ? scanner.o200kEnd(text, i) : scanner.cl100kEnd(text, i);
      total += merger.pieceTokens(text, i, end);
      if (record) this.record(end, total);
      i = end;
    }
    merger.dropGrownScratch();
    return total;
  }

  // Appends a piece's [end, tokens] to `out`, doubling it when full.
  private record(end: number, total: number): void {
    let out = this.out;
    if (this.outN + 2 > out.length) {
      const grown = new Int32Array(out.length * 2);
      grown.set(out);
      this.out = out = grown;
    }
    out[this.outN++] = end;
    out[this.outN++] = total;
  }

  /**
   * Tokens of `text[0, from) + between + text[to, text.length)`, exactly, from `pieces` =
   * `pieceCounts(text)` and a count of the splice's seam only. The seam starts at the last
   * piece start before `from` where the split regex always splits (a "\n", then neither
   * whitespace nor "/": the counts of both texts split there, see TokenCounter.newlineCut),
   * or at 0; it ends at the first piece of the tail that starts where a piece of `text`
   * does: a piece depends only on the text from its start on, so from there the pieces
   * are `text`'s, and their tokens are read off `pieces`.
   *
   * @example c.countSplice(t, c.pieceCounts(t), 10, 90, "\n[…]\n") === c.count(t.slice(0, 10) + "\n[…]\n" + t.slice(90))
   */
  countSplice(text: string, pieces: Int32Array, from: number, to: number, between: string): number {
    const { scanner, merger } = this;
    const n = pieces.length >> 1;
    let p = from;
    for (;;) {
      p = p <= 1 ? 0 : text.lastIndexOf("\n", p - 2) + 1;
      if (p === 0 || (scanner.splitsBefore(text, p) && pieceAt(pieces, p) >= 0)) break;
    }
    let total = p === 0 ? 0 : (pieces[2 * pieceAt(pieces, p) + 1] as number);
    const seam = text.slice(p, from) + between + text.slice(to);
    const tail = from - p + between.length;
    // The first piece of `text` ending at or after the tail position being looked at.
    let k = pieceFrom(pieces, to);
    for (let i = 0; i < seam.length; ) {
      if (i >= tail) {
        const q = i - tail + to;
        while (k < n && (pieces[2 * k] as number) < q) k++;
        if (k < n && pieces[2 * k] === q) {
          merger.dropGrownScratch();
          return total + (pieces[2 * n - 1] as number) - (pieces[2 * k + 1] as number);
        }
      }
      const end = this.o200k ? scanner.o200kEnd(seam, i) : scanner.cl100kEnd(seam, i);
      total += merger.pieceTokens(seam, i, end);
      i = end;
    }
    merger.dropGrownScratch();
    return total;
  }

  countUpTo(text: string, limit: number): number {
    const stop = Number.isNaN(limit) ? Number.POSITIVE_INFINITY : limit;
    if (stop < text.length) {
      const least = this.boundPast(text, stop, false);
      if (least >= 0) return least;
    }
    return this.walk(text, stop, false);
  }

  /**
   * A lower bound of the tokens of text[start, end): 1, or for a piece with no ASCII
   * character ceil(bytes / L), where L is the longest token made only of non-ASCII bytes
   * whose UTF-8 lead bytes all occur in the piece (any token covering part of the piece
   * is such a token: a lead byte is always the start of a character of the piece).
   */
  private leastTokens(text: string, start: number, end: number): number {
    let lo = 0;
    let hi = 0;
    let bytes = 0;
    for (let i = start; i < end; i++) {
      let c = text.charCodeAt(i);
      if (c < 0x80) return 1;
      if (c >= 0xd800 && c <= 0xdbff && i + 1 < end) {
        const d = text.charCodeAt(i + 1);
        if (d >= 0xdc00 && d <= 0xdfff) {
          c = 0x10000 + ((c - 0xd800) << 10) + (d - 0xdc00);
          i++;
        }
      }
      if (c >= 0xd800 && c <= 0xdfff) c = 0xfffd; // a lone surrogate is encoded as U+FFFD
      const lead = c < 0x800 ? 0xc0 | (c >> 6) : c < 0x10000 ? 0xe0 | (c >> 12) : 0xf0 | (c >> 18);
      if (lead >= 0xe0) hi |= 1 << (lead - 0xe0);
      else lo |= 1 << (lead - 0xc0);
      bytes += c < 0x800 ? 2 : c < 0x10000 ? 3 : 4;
    }
    const key = lo * 2 ** 32 + (hi >>> 0);
    let longest = this.longestWithin.get(key);
    if (longest === undefined) {
      longest = 1;
      const t = this.highTokens;
      for (let k = 0; k < t.length; k += 3) {
        if ((t[k + 1]! & ~lo) === 0 && (t[k + 2]! & ~hi) === 0) {
          longest = t[k]!;
          break;
        }
      }
      this.longestWithin.set(key, longest);
    }
    return Math.max(1, Math.ceil(bytes / longest));
  }
}
