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
 *   per-code-unit class table (the classes are taken from V8's own `\p{…}` and `\s`, so
 *   they agree with the regex by construction);
 * - each piece is UTF-8 encoded into a scratch buffer and looked up in an open-addressing
 *   table over the rank bytes, without making a string;
 * - a piece that is not one token goes through the byte-pair merge (lowest rank first,
 *   leftmost on ties, as tiktoken), with a binary heap for long pieces (a CJK sentence is
 *   one piece of hundreds of bytes), its pair lookups memoized by token pair.
 */
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";

/** The BPE encodings counted exactly. */
export type BpeEncoding = "o200k_base" | "cl100k_base";

// Character classes, one bit each, of the split regexes.
const L = 1; // \p{L}
const N = 2; // \p{N}
const S = 4; // JavaScript's \s
const U = 8; // [\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}] (o200k: an upper-case run)
const W = 16; // [\p{Ll}\p{Lm}\p{Lo}\p{M}] (o200k: a lower-case run)
const CLASS_SOURCES: readonly (readonly [number, string])[] = [
  [L, "\\p{L}"],
  [N, "\\p{N}"],
  [S, "\\s"],
  [U, "[\\p{Lu}\\p{Lt}\\p{Lm}\\p{Lo}\\p{M}]"],
  [W, "[\\p{Ll}\\p{Lm}\\p{Lo}\\p{M}]"],
];
const CLASS_TESTS = CLASS_SOURCES.map(([bit, src]) => [bit, new RegExp(`^${src}$`, "u")] as const);

/** Classes of a code point, by asking V8's regex engine (the split regexes' own). */
function classify(cp: number): number {
  const ch = String.fromCodePoint(cp);
  let f = 0;
  for (const [bit, re] of CLASS_TESTS) if (re.test(ch)) f |= bit;
  return f;
}

/** Classes of every BMP code unit; surrogates get none (a lone one is "other"). */
function bmpClasses(): Uint8Array {
  const flags = new Uint8Array(0x10000);
  let all = "";
  for (let c = 0; c < 0x10000; c += 0x400) {
    if (c >= 0xd800 && c < 0xe000) continue;
    all += String.fromCharCode(...Array.from({ length: 0x400 }, (_, k) => c + k));
  }
  // Index in `all` → code unit: the surrogate block is left out.
  const unit = (i: number) => (i < 0xd800 ? i : i + 0x800);
  for (const [bit, src] of CLASS_SOURCES) {
    const run = new RegExp(`${src}+`, "gu");
    for (let m = run.exec(all); m !== null; m = run.exec(all)) {
      for (let i = m.index; i < m.index + m[0].length; i++) flags[unit(i)]! |= bit;
    }
  }
  return flags;
}

/**
 * The rank table of one encoding: token bytes in a pool, found by an FNV-1a hash in an
 * open-addressing table (linear probing) whose slots hold `[hash, rank, offset, length]`
 * side by side, so a probe touches one cache line before the pool.
 */
interface RankTable {
  pool: Uint8Array;
  /** 4 int32 per slot; rank -1 marks an empty slot. */
  slots: Int32Array;
  mask: number;
  /** Rank of every two-byte token by `(b0 << 8) | b1`, -1 when none (the merge's first pairs). */
  pairs: Int32Array;
  /** Rank of each single byte (every byte is a token in these encodings). */
  byteRank: Int32Array;
  /** Offset and length of each rank's bytes in `pool` (-1 for an unused rank). */
  offset: Int32Array;
  length: Int32Array;
  /**
   * Tokens made only of non-ASCII bytes, longest first, as `[length, leadsLo, leadsHi]`
   * triples: the set of UTF-8 lead bytes (0xC0..0xFF, one bit each) they contain. A
   * piece of non-ASCII text can only be covered by such tokens whose leads it contains,
   * which bounds its token count from below (see BpeCounter.leastTokens).
   */
  highTokens: Int32Array;
}

const FNV_OFFSET = 0x811c9dc5 | 0;
const FNV_PRIME = 0x01000193;

/** FNV-1a of buf[from, to): the one hash of token bytes (table build, lookups, joins). */
function fnv(buf: Uint8Array, from: number, to: number): number {
  let h = FNV_OFFSET;
  for (let k = from; k < to; k++) h = Math.imul(h ^ buf[k]!, FNV_PRIME);
  return h;
}

const BASE64 = (() => {
  const t = new Int8Array(128).fill(-1);
  const abc = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  for (let i = 0; i < abc.length; i++) t[abc.charCodeAt(i)] = i;
  return t;
})();

/** Parses a `.tiktoken` file (`<base64 bytes> <rank>` per line) into a {@link RankTable}. */
function parseRanks(file: Uint8Array): RankTable {
  // Pass 1: sizes. Every line holds one token; its bytes are at most 3/4 of its base64.
  let lines = 0;
  for (let i = 0; i < file.length; i++) if (file[i] === 0x0a) lines++;
  const pool = new Uint8Array(file.length);
  const tokens: number[] = [];
  let p = 0;
  let i = 0;
  while (i < file.length) {
    // base64 → pool
    const start = p;
    let acc = 0;
    let bits = 0;
    while (i < file.length && file[i] !== 0x20) {
      const v = BASE64[file[i]!]!;
      i++;
      if (v < 0) continue; // "=" padding
      acc = (acc << 6) | v;
      bits += 6;
      if (bits >= 8) {
        bits -= 8;
        pool[p++] = (acc >> bits) & 0xff;
      }
    }
    i++; // the space
    let rank = 0;
    while (i < file.length && file[i] !== 0x0a) rank = rank * 10 + (file[i++]! - 0x30);
    i++; // the newline
    if (p === start) continue; // a blank line
    tokens.push(rank, start, p - start);
  }
  const count = tokens.length / 3;
  let size = 1;
  while (size < Math.max(lines, count) * 2) size <<= 1;
  const mask = size - 1;
  const slots = new Int32Array(size * 4);
  for (let s = 0; s < size; s++) slots[s * 4 + 1] = -1;
  const pairs = new Int32Array(0x10000).fill(-1);
  const byteRank = new Int32Array(256).fill(-1);
  let maxRank = 0;
  for (let t = 0; t < tokens.length; t += 3) maxRank = Math.max(maxRank, tokens[t]!);
  const offset = new Int32Array(maxRank + 1).fill(-1);
  const length = new Int32Array(maxRank + 1);
  for (let t = 0; t < tokens.length; t += 3) {
    const rank = tokens[t]!;
    const from = tokens[t + 1]!;
    const n = tokens[t + 2]!;
    offset[rank] = from;
    length[rank] = n;
    if (n === 1) byteRank[pool[from]!] = rank;
    if (n === 2) pairs[(pool[from]! << 8) | pool[from + 1]!] = rank;
    const h = fnv(pool, from, from + n);
    let s = h & mask;
    while (slots[s * 4 + 1]! >= 0) s = (s + 1) & mask;
    slots[s * 4] = h;
    slots[s * 4 + 1] = rank;
    slots[s * 4 + 2] = from;
    slots[s * 4 + 3] = n;
  }
  if (byteRank.includes(-1)) throw new Error("a BPE rank file without every single byte");
  const high: [number, number, number][] = [];
  for (let t = 0; t < tokens.length; t += 3) {
    const from = tokens[t + 1]!;
    const n = tokens[t + 2]!;
    let lo = 0;
    let hi = 0;
    let ascii = false;
    for (let k = from; k < from + n; k++) {
      const b = pool[k]!;
      if (b < 0x80) ascii = true;
      else if (b >= 0xe0) hi |= 1 << (b - 0xe0);
      else if (b >= 0xc0) lo |= 1 << (b - 0xc0);
    }
    if (!ascii) high.push([n, lo, hi]);
  }
  high.sort((a, b) => b[0] - a[0]);
  const highTokens = Int32Array.from(high.flat());
  return { pool: pool.slice(0, p), slots, mask, pairs, byteRank, offset, length, highTokens };
}

/** What a counter of one encoding shares with every other: loaded once, never mutated. */
export interface BpeData {
  encoding: BpeEncoding;
  ranks: RankTable;
  classes: Uint8Array;
}

const requireCjs = createRequire(import.meta.url);

/**
 * Reads and parses the tables of an encoding (0.1–0.4 s on a busy 2-core machine).
 *
 * @example new BpeCounter(loadBpeData("cl100k_base")).count("hello world") // 2
 */
export function loadBpeData(encoding: BpeEncoding, classes = bmpClasses()): BpeData {
  const path = requireCjs.resolve(`gpt-tokenizer/data/${encoding}.tiktoken`);
  return { encoding, ranks: parseRanks(readFileSync(path)), classes };
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
}

/** Joins remembered before the cache starts over (about 50 MB of table at most). */
const MAX_JOINS = 1 << 21;

/** Slot of the pair (a, b) in a join table with `mask + 1` slots. */
function joinSlot(a: number, b: number, mask: number): number {
  return (Math.imul(a, 0x9e3779b1) ^ b) & mask;
}

/** Scratch buffers grown past this (by a huge piece) are dropped after the count. */
const SCRATCH_KEEP = 1 << 16;

/** Pieces whose bytes exceed this are merged with a heap instead of rescanning. */
const HEAP_MERGE_FROM = 64;

const NO_RANK = 0x7fffffff;
const isNewline = (c: number) => c === 0x0a || c === 0x0d;
const ONLY_NEWLINES = /^\n+$/;

/** True when `s` is one or more "\n": the newlines a count may be extended by. */
export function isNewlines(s: string): boolean {
  return ONLY_NEWLINES.test(s);
}

/**
 * Counting over loaded data, with its own scratch buffers. The hot code is methods of one
 * class rather than closures made per counter: V8 keeps a method's optimized code across
 * counters, while closures made afresh would restart unoptimized (and a full GC drops the
 * optimized code of the old ones).
 *
 * @example new BpeCounter(sharedBpeData("cl100k_base")).countUpTo("a b c d", 2) // 3 (> 2)
 */
export class BpeCounter implements BpeCount {
  private readonly pool: Uint8Array;
  private readonly slots: Int32Array;
  private readonly mask: number;
  private readonly pairs: Int32Array;
  private readonly byteRank: Int32Array;
  private readonly offset: Int32Array;
  private readonly length: Int32Array;
  private readonly highTokens: Int32Array;
  /** Longest token within a lead-byte set, by the set (see leastTokens). */
  private readonly longestWithin = new Map<number, number>();
  private readonly classes: Uint8Array;
  private readonly o200k: boolean;
  // Classes of astral code points, asked of the regex engine once each (bounded: there are
  // about a million of them).
  private readonly astral = new Map<number, number>();
  private bytes = new Uint8Array(256);
  // Merge state, reused: parts as a linked list by start byte, each part's pair rank.
  private next = new Int32Array(256);
  private prev = new Int32Array(256);
  private partRank = new Int32Array(256);
  private pairRank = new Int32Array(256);
  /**
   * The rank of token a's bytes followed by token b's, by (a, b): a merge step asks the
   * same few pairs again and again (every CJK character is three bytes merged the same
   * way). Open addressing over `[a, b, rank or -1]` triples, filled on first use. Each
   * entry is a fact about the vocabulary, not the text (which pairs get asked does depend
   * on the text, hence the bound, see remember), so one per process is right.
   */
  private joins = new Int32Array(3 * 4096).fill(-1);
  private joinCount = 0;
  private joinBuf = new Uint8Array(256);
  private heapRank = new Int32Array(256);
  private heapPos = new Int32Array(256);
  private heapSize = 0;

  constructor(data: BpeData) {
    this.pool = data.ranks.pool;
    this.slots = data.ranks.slots;
    this.mask = data.ranks.mask;
    this.pairs = data.ranks.pairs;
    this.byteRank = data.ranks.byteRank;
    this.offset = data.ranks.offset;
    this.length = data.ranks.length;
    this.highTokens = data.ranks.highTokens;
    this.classes = data.classes;
    this.o200k = data.encoding === "o200k_base";
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
    for (let i = 0; i < text.length; ) {
      const end = this.o200k ? this.o200kEnd(text, i) : this.cl100kEnd(text, i);
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

  countUpTo(text: string, limit: number): number {
    const stop = Number.isNaN(limit) ? Number.POSITIVE_INFINITY : limit;
    if (stop < text.length) {
      const least = this.boundPast(text, stop, false);
      if (least >= 0) return least;
    }
    let total = 0;
    for (let i = 0; i < text.length && total <= stop; ) {
      const end = this.o200k ? this.o200kEnd(text, i) : this.cl100kEnd(text, i);
      total += this.pieceTokens(text, i, end);
      i = end;
    }
    if (this.bytes.length > SCRATCH_KEEP) this.shrink();
    return total;
  }

  /** Drops scratch buffers a huge piece grew: the counter lives as long as the process. */
  private shrink(): void {
    this.bytes = new Uint8Array(256);
    this.next = new Int32Array(256);
    this.prev = new Int32Array(256);
    this.partRank = new Int32Array(256);
    this.pairRank = new Int32Array(256);
    this.heapRank = new Int32Array(256);
    this.heapPos = new Int32Array(256);
  }

  /** Rank of buf[from, from + n) with hash h, or -1. */
  private lookup(buf: Uint8Array, from: number, n: number, h: number): number {
    const { slots, pool } = this;
    const wrap = this.mask * 4 + 3;
    for (let s = (h & this.mask) * 4; ; s = (s + 4) & wrap) {
      const r = slots[s + 1]!;
      if (r < 0) return -1;
      if (slots[s] === h && slots[s + 3] === n) {
        const o = slots[s + 2]!;
        let k = 0;
        while (k < n && pool[o + k] === buf[from + k]) k++;
        if (k === n) return r;
      }
    }
  }

  /** The token whose bytes are token a's then token b's, NO_RANK when there is none. */
  private join(a: number, b: number): number {
    const joins = this.joins;
    const mask = joins.length / 3 - 1;
    let s = joinSlot(a, b, mask);
    for (;;) {
      const ka = joins[s * 3]!;
      if (ka < 0) break;
      if (ka === a && joins[s * 3 + 1] === b) {
        const r = joins[s * 3 + 2]!;
        return r < 0 ? NO_RANK : r;
      }
      s = (s + 1) & mask;
    }
    // Not seen yet: look the concatenated bytes up, then remember the answer.
    const { pool, offset, length } = this;
    const na = length[a]!;
    const n = na + length[b]!;
    if (this.joinBuf.length < n) this.joinBuf = new Uint8Array(2 * n);
    const buf = this.joinBuf;
    buf.set(pool.subarray(offset[a]!, offset[a]! + na), 0);
    buf.set(pool.subarray(offset[b]!, offset[b]! + length[b]!), na);
    const r = this.lookup(buf, 0, n, fnv(buf, 0, n));
    this.remember(a, b, r);
    return r < 0 ? NO_RANK : r;
  }

  /**
   * Stores a join, keeping the table at most half full: it doubles up to
   * {@link MAX_JOINS} entries, then starts over (which pairs get asked depends on the
   * text, so hostile text could otherwise grow it without bound).
   */
  private remember(a: number, b: number, r: number): void {
    let joins = this.joins;
    let mask = joins.length / 3 - 1;
    if (++this.joinCount * 2 > mask + 1) {
      const old = joins;
      if (this.joinCount > MAX_JOINS) {
        joins = new Int32Array(3 * 4096).fill(-1);
        this.joinCount = 1;
      } else {
        joins = new Int32Array(old.length * 2).fill(-1);
        for (let t = 0; t < old.length; t += 3) {
          if (old[t]! < 0) continue;
          const m = joins.length / 3 - 1;
          let u = joinSlot(old[t]!, old[t + 1]!, m);
          while (joins[u * 3]! >= 0) u = (u + 1) & m;
          joins[u * 3] = old[t]!;
          joins[u * 3 + 1] = old[t + 1]!;
          joins[u * 3 + 2] = old[t + 2]!;
        }
      }
      this.joins = joins;
      mask = joins.length / 3 - 1;
    }
    let s = joinSlot(a, b, mask);
    while (joins[s * 3]! >= 0) s = (s + 1) & mask;
    joins[s * 3] = a;
    joins[s * 3 + 1] = b;
    joins[s * 3 + 2] = r;
  }

  /** Tokens of bytes[0, n) by byte-pair merging: lowest rank first, leftmost on ties. */
  private merge(n: number): number {
    if (this.next.length < n + 2) {
      const size = 2 * n + 2;
      this.next = new Int32Array(size);
      this.prev = new Int32Array(size);
      this.partRank = new Int32Array(size);
      this.pairRank = new Int32Array(size);
      this.heapRank = new Int32Array(size);
      this.heapPos = new Int32Array(size);
    }
    const { next, prev, partRank, pairRank, bytes, pairs, byteRank } = this;
    // Parts are identified by their start byte; next[n] === n ends the list. Each part is
    // a token (partRank); a pair's rank is the join of its two parts' ranks.
    for (let k = 0; k < n; k++) {
      next[k] = k + 1;
      prev[k] = k - 1;
      partRank[k] = byteRank[bytes[k]!]!;
    }
    next[n] = n;
    let parts = n;
    for (let k = 0; k < n - 1; k++) {
      const r = pairs[(bytes[k]! << 8) | bytes[k + 1]!]!;
      pairRank[k] = r < 0 ? NO_RANK : r;
    }
    pairRank[n - 1] = NO_RANK;
    if (n <= HEAP_MERGE_FROM) {
      for (;;) {
        let best = NO_RANK;
        let at = -1;
        for (let k = 0; k < n; k = next[k]!) {
          if (pairRank[k]! < best) {
            best = pairRank[k]!;
            at = k;
          }
        }
        if (at < 0) return parts;
        this.joinAt(at, n);
        parts--;
      }
    }
    // A heap of (rank, start) with lazy deletion: an entry is live while pairRank agrees
    // (a pair only grows once merged, and ranks are unique per byte string).
    this.heapSize = 0;
    for (let k = 0; k < n - 1; k++) if (pairRank[k]! !== NO_RANK) this.push(pairRank[k]!, k);
    while (this.heapSize > 0) {
      const rank = this.heapRank[0]!;
      const at = this.heapPos[0]!;
      this.pop();
      if (pairRank[at] !== rank) continue; // stale
      const before = prev[at]!;
      this.joinAt(at, n);
      parts--;
      if (pairRank[at]! !== NO_RANK) this.push(pairRank[at]!, at);
      if (before >= 0 && pairRank[before]! !== NO_RANK) this.push(pairRank[before]!, before);
    }
    return parts;
  }

  /** Merges the part at `at` with the next one and reprices both affected pairs. */
  private joinAt(at: number, n: number): void {
    const { next, prev, partRank, pairRank } = this;
    const gone = next[at]!;
    const after = next[gone]!;
    next[at] = after;
    if (after < n) prev[after] = at;
    partRank[at] = pairRank[at]!; // the merged part is the pair's token
    pairRank[gone] = NO_RANK;
    pairRank[at] = after < n ? this.join(partRank[at]!, partRank[after]!) : NO_RANK;
    const before = prev[at]!;
    if (before >= 0) pairRank[before] = this.join(partRank[before]!, partRank[at]!);
  }

  private heapLess(a: number, b: number): boolean {
    const { heapRank, heapPos } = this;
    return (
      heapRank[a]! < heapRank[b]! || (heapRank[a] === heapRank[b] && heapPos[a]! < heapPos[b]!)
    );
  }

  private heapSwap(a: number, b: number): void {
    const { heapRank, heapPos } = this;
    const r = heapRank[a]!;
    const q = heapPos[a]!;
    heapRank[a] = heapRank[b]!;
    heapPos[a] = heapPos[b]!;
    heapRank[b] = r;
    heapPos[b] = q;
  }

  private push(rank: number, at: number): void {
    if (this.heapSize >= this.heapRank.length) {
      const r = new Int32Array(this.heapSize * 2);
      r.set(this.heapRank);
      this.heapRank = r;
      const q = new Int32Array(this.heapSize * 2);
      q.set(this.heapPos);
      this.heapPos = q;
    }
    let c = this.heapSize++;
    this.heapRank[c] = rank;
    this.heapPos[c] = at;
    while (c > 0) {
      const parent = (c - 1) >> 1;
      if (!this.heapLess(c, parent)) break;
      this.heapSwap(c, parent);
      c = parent;
    }
  }

  private pop(): void {
    const size = --this.heapSize;
    this.heapSwap(0, size);
    let c = 0;
    for (;;) {
      const l = 2 * c + 1;
      if (l >= size) break;
      const m = l + 1 < size && this.heapLess(l + 1, l) ? l + 1 : l;
      if (!this.heapLess(m, c)) break;
      this.heapSwap(m, c);
      c = m;
    }
  }

  /** Classes of the code point at i (its width from {@link width}). */
  private cls(text: string, i: number): number {
    const c = text.charCodeAt(i);
    if (c < 0xd800 || c >= 0xe000) return this.classes[c]!;
    const cp = text.codePointAt(i)!;
    if (cp <= 0xffff) return 0; // a lone surrogate
    let f = this.astral.get(cp);
    if (f === undefined) {
      f = classify(cp);
      this.astral.set(cp, f);
    }
    return f;
  }

  /** End of the run of code points from i that have one of `bits`. */
  private runEnd(text: string, i: number, bits: number): number {
    const n = text.length;
    const classes = this.classes;
    while (i < n) {
      const c = text.charCodeAt(i);
      // Most text is BMP outside the surrogates: one table read per unit.
      if (c < 0xd800 || c >= 0xe000) {
        if ((classes[c]! & bits) === 0) return i;
        i++;
      } else {
        if ((this.cls(text, i) & bits) === 0) return i;
        i += width(text, i);
      }
    }
    return i;
  }

  /** End of the run from i of code points that are neither whitespace, letters nor numbers. */
  private otherEnd(text: string, i: number): number {
    const n = text.length;
    const classes = this.classes;
    while (i < n) {
      const c = text.charCodeAt(i);
      if (c < 0xd800 || c >= 0xe000) {
        if ((classes[c]! & (L | N | S)) !== 0) return i;
        i++;
      } else {
        if ((this.cls(text, i) & (L | N | S)) !== 0) return i;
        i += width(text, i);
      }
    }
    return i;
  }

  /** `\p{N}{1,3}` from i. */
  private numberEnd(text: string, i: number): number {
    const n = text.length;
    let j = i;
    for (let k = 0; k < 3 && j < n && (this.cls(text, j) & N) !== 0; k++) j += width(text, j);
    return j;
  }

  /**
   * The whitespace alternatives, shared by both encodings, from i (a whitespace char):
   * cl100k `\s+$|\s*[\r\n]|\s+(?!\S)|\s`, o200k `\s*[\r\n]+|\s+(?!\S)|\s+`.
   */
  private spaceEnd(text: string, i: number): number {
    const n = text.length;
    const j = this.runEnd(text, i, S); // whitespace is never astral: units are code points
    if (j === n && !this.o200k) return n; // cl100k tries `\s+$` first
    // `\s*[\r\n]`: the last newline of the run (o200k's `[\r\n]+` then stops at it too).
    for (let k = j - 1; k >= i; k--) if (isNewline(text.charCodeAt(k))) return k + 1;
    if (j === n) return n; // o200k `\s+(?!\S)` at the end of the text
    // `\s+(?!\S)`: all but the last, which stays with the non-space after it; a single
    // one is cl100k's `\s`, o200k's `\s+`.
    return j - i >= 2 ? j - 1 : j;
  }

  /** ` ?[^\s\p{L}\p{N}]+` from i, or -1; `slash` adds o200k's "/" to the tail `[\r\n]*`. */
  private otherPiece(text: string, i: number, slash: boolean): number {
    const n = text.length;
    const p =
      text.charCodeAt(i) === 0x20 && i + 1 < n && (this.cls(text, i + 1) & (L | N | S)) === 0
        ? i + 1
        : i;
    if ((this.cls(text, p) & (L | N | S)) !== 0) return -1;
    let j = this.otherEnd(text, p);
    for (; j < n; j++) {
      const c = text.charCodeAt(j);
      if (!isNewline(c) && !(slash && c === 0x2f)) break;
    }
    return j;
  }

  /** End of the cl100k_base piece starting at i. */
  private cl100kEnd(text: string, i: number): number {
    const n = text.length;
    if (text.charCodeAt(i) === 0x27) {
      const e = contraction(text, i);
      if (e > i) return e;
    }
    const f = this.cls(text, i);
    const w = width(text, i);
    // [^\r\n\p{L}\p{N}]?\p{L}+
    if (
      (f & (L | N)) === 0 &&
      !isNewline(text.charCodeAt(i)) &&
      i + w < n &&
      (this.cls(text, i + w) & L) !== 0
    )
      return this.runEnd(text, i + w, L);
    if ((f & L) !== 0) return this.runEnd(text, i, L);
    if ((f & N) !== 0) return this.numberEnd(text, i);
    const o = this.otherPiece(text, i, false);
    return o >= 0 ? o : this.spaceEnd(text, i);
  }

  /** o200k `X?U*W+C?` from p (after the optional prefix): its end, or -1. */
  private lowerRun(text: string, p: number): number {
    const n = text.length;
    const q = this.runEnd(text, p, U);
    let e: number;
    if (q < n && (this.cls(text, q) & W) !== 0) e = this.runEnd(text, q, W);
    else {
      // U* gives back code points until one of them can start W+; W+ then ends after it
      // (what follows it in the run is not W, and text[q] is not W).
      let last = -1;
      for (let k = p; k < q; k += width(text, k)) if ((this.cls(text, k) & W) !== 0) last = k;
      if (last < 0) return -1;
      e = last + width(text, last);
    }
    return contraction(text, e);
  }

  /** o200k `X?U+W*C?` from p: its end, or -1. */
  private upperRun(text: string, p: number): number {
    const q = this.runEnd(text, p, U);
    if (q === p) return -1;
    return contraction(text, this.runEnd(text, q, W));
  }

  /** End of the o200k_base piece starting at i. */
  private o200kEnd(text: string, i: number): number {
    const f = this.cls(text, i);
    const w = width(text, i);
    const prefix = (f & (L | N)) === 0 && !isNewline(text.charCodeAt(i)) && i + w < text.length;
    let e = prefix ? this.lowerRun(text, i + w) : -1;
    if (e < 0) e = this.lowerRun(text, i);
    if (e < 0 && prefix) e = this.upperRun(text, i + w);
    if (e < 0) e = this.upperRun(text, i);
    if (e >= 0) return e;
    if ((f & N) !== 0) return this.numberEnd(text, i);
    const o = this.otherPiece(text, i, true);
    return o >= 0 ? o : this.spaceEnd(text, i);
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

  /** Tokens of text[start, end): one when the piece is a token, else merged. */
  private pieceTokens(text: string, start: number, end: number): number {
    if (this.bytes.length < (end - start) * 3) this.bytes = new Uint8Array((end - start) * 6);
    const bytes = this.bytes;
    let b = 0;
    // The FNV-1a of `fnv`, fused with the UTF-8 encoding: one pass over the piece.
    let h = FNV_OFFSET;
    let lone = false;
    for (let i = start; i < end; i++) {
      let c = text.charCodeAt(i);
      if (c < 0x80) {
        bytes[b++] = c;
        h = Math.imul(h ^ c, FNV_PRIME);
        continue;
      }
      if (c >= 0xd800 && c <= 0xdfff) {
        const d = i + 1 < end ? text.charCodeAt(i + 1) : 0;
        if (c <= 0xdbff && d >= 0xdc00 && d <= 0xdfff) {
          c = 0x10000 + ((c - 0xd800) << 10) + (d - 0xdc00);
          i++;
        } else {
          c = 0xfffd; // what UTF-8 encoding makes of a lone surrogate
          lone = true;
        }
      }
      // Multi-byte UTF-8: lead byte, then continuation bytes of 6 bits each.
      const extra = c < 0x800 ? 1 : c < 0x10000 ? 2 : 3;
      let byte = extra === 1 ? 0xc0 | (c >> 6) : extra === 2 ? 0xe0 | (c >> 12) : 0xf0 | (c >> 18);
      for (let k = extra; ; k--) {
        bytes[b++] = byte;
        h = Math.imul(h ^ byte, FNV_PRIME);
        if (k === 0) break;
        byte = 0x80 | ((c >> (6 * (k - 1))) & 63);
      }
    }
    // A piece holding a lone surrogate is never looked up whole: its text is not the
    // text of any token (gpt-tokenizer looks pieces up by string), so it is merged.
    if (!lone && this.lookup(bytes, 0, b, h) >= 0) return 1;
    return this.merge(b);
  }
}

/** Width in UTF-16 units of the code point at i (a lone surrogate is one). */
function width(text: string, i: number): number {
  const c = text.charCodeAt(i);
  if (c < 0xd800 || c > 0xdbff || i + 1 >= text.length) return 1;
  const d = text.charCodeAt(i + 1);
  return d >= 0xdc00 && d <= 0xdfff ? 2 : 1;
}

/** `'s|'t|'re|'ve|'m|'ll|'d` in either case at i: its end, or i. */
function contraction(text: string, i: number): number {
  if (text.charCodeAt(i) !== 0x27 || i + 1 >= text.length) return i;
  const a = text.charCodeAt(i + 1) | 0x20;
  if (a === 0x73 || a === 0x64 || a === 0x6d || a === 0x74) return i + 2; // s d m t
  if (i + 2 >= text.length) return i;
  const b = text.charCodeAt(i + 2) | 0x20;
  if ((a === 0x6c && b === 0x6c) || (a === 0x76 && b === 0x65) || (a === 0x72 && b === 0x65))
    return i + 3; // ll ve re
  return i;
}
