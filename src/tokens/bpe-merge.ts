/**
 * Tokens of one pre-tokenized piece: its UTF-8 bytes are one token, or they go through the
 * byte-pair merge (lowest rank first, leftmost on ties, as tiktoken), with a binary heap
 * for long pieces (a CJK sentence is one piece of hundreds of bytes), its pair lookups
 * memoized by token pair. Nothing is allocated per piece: the buffers are reused.
 */
import { FNV_OFFSET, FNV_PRIME, findRank, type RankTable } from "./bpe-ranks.js";

/** Joins remembered before the cache starts over (about 50 MB of table at most). */
const MAX_JOINS = 1 << 21;

/**
 * Slots of a new join table. Small on purpose: it doubles during a process's first few
 * merges, while `remember` still runs unoptimized, so its growth has type feedback when
 * `join` is optimized; starting larger, the first doubling came after and deoptimized
 * `join` ("insufficient type feedback"), which was then compiled again.
 */
const JOIN_START_SLOTS = 64;

/** A new, empty join table (three ints a slot; -1: empty). */
function emptyJoins(): Int32Array {
  return new Int32Array(3 * JOIN_START_SLOTS).fill(-1);
}

/** Slot of the pair (a, b) in a join table with `mask + 1` slots. */
function joinSlot(a: number, b: number, mask: number): number {
  return (Math.imul(a, 0x9e3779b1) ^ b) & mask;
}

/** Scratch buffers grown past this (by a huge piece) are dropped after the count. */
const SCRATCH_KEEP = 1 << 16;

/** Pieces whose bytes exceed this are merged with a heap instead of rescanning. */
const HEAP_MERGE_FROM = 64;

const NO_RANK = 0x7fffffff;

/**
 * The byte-pair merge over one rank table, with its own scratch buffers. Methods of one
 * class, shared with its counter, for the reason given at BpeCounter.
 */
export class BpeMerger {
  private readonly ranks: RankTable;
  private readonly pool: Uint8Array;
  private readonly pairs: Int32Array;
  private readonly byteRank: Int32Array;
  private readonly offset: Int32Array;
  private readonly length: Int32Array;
  // The scratch buffers and the join table below are replaced when they grow. They are
  // declared here and assigned in the constructor (two stores: V8 then tracks them as
  // mutable from the start): a field V8 still takes for constant when the first count of
  // a process grows it invalidates the optimized code that read it ("field constness"
  // dependency), and compiling merge and join again cost that count tens of milliseconds.
  private bytes: Uint8Array;
  // Merge state, reused: parts as a linked list by start byte, each part's pair rank.
  private next: Int32Array;
  private prev: Int32Array;
  private partRank: Int32Array;
  private pairRank: Int32Array;
  /**
   * The rank of token a's bytes followed by token b's, by (a, b): a merge step asks the
   * same few pairs again and again (every CJK character is three bytes merged the same
   * way). Open addressing over `[a, b, rank or -1]` triples, filled on first use. Each
   * entry is a fact about the vocabulary, not the text (which pairs get asked does depend
   * on the text, hence the bound, see remember), so one per process is right.
   */
  private joins: Int32Array;
  private joinCount = 0;
  private joinBuf: Uint8Array;
  private heapRank: Int32Array;
  private heapPos: Int32Array;
  private heapSize = 0;

  constructor(ranks: RankTable) {
    this.ranks = ranks;
    this.pool = ranks.pool;
    this.pairs = ranks.pairs;
    this.byteRank = ranks.byteRank;
    this.offset = ranks.offset;
    this.length = ranks.length;
    this.bytes = new Uint8Array(256);
    this.next = new Int32Array(256);
    this.prev = new Int32Array(256);
    this.partRank = new Int32Array(256);
    this.pairRank = new Int32Array(256);
    this.joins = emptyJoins();
    this.joinBuf = new Uint8Array(256);
    this.heapRank = new Int32Array(256);
    this.heapPos = new Int32Array(256);
  }

  /** Tokens of text[start, end): one when the piece is a token, else merged. */
  pieceTokens(text: string, start: number, end: number): number {
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
    if (!lone && findRank(this.ranks, bytes, 0, b, h) >= 0) return 1;
    return this.merge(b);
  }

  /**
   * Drops scratch buffers a huge piece grew past {@link SCRATCH_KEEP}: the counter lives
   * as long as the process.
   */
  dropGrownScratch(): void {
    if (this.bytes.length <= SCRATCH_KEEP) return;
    this.bytes = new Uint8Array(256);
    this.next = new Int32Array(256);
    this.prev = new Int32Array(256);
    this.partRank = new Int32Array(256);
    this.pairRank = new Int32Array(256);
    this.heapRank = new Int32Array(256);
    this.heapPos = new Int32Array(256);
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
    // Not seen yet: look the concatenated bytes up, then remember the answer. Copied and
    // hashed byte by byte: views of the pool (a Buffer's, subarray makes a Buffer) cost
    // an allocation each, and a process's first count asks tens of thousands of joins.
    const { pool, offset, length } = this;
    const na = length[a]!;
    const nb = length[b]!;
    const n = na + nb;
    if (this.joinBuf.length < n) this.joinBuf = new Uint8Array(2 * n);
    const buf = this.joinBuf;
    let h = FNV_OFFSET;
    for (let k = 0, o = offset[a]!; k < na; k++) {
      const byte = pool[o + k]!;
      buf[k] = byte;
      h = Math.imul(h ^ byte, FNV_PRIME);
    }
    for (let k = 0, o = offset[b]!; k < nb; k++) {
      const byte = pool[o + k]!;
      buf[na + k] = byte;
      h = Math.imul(h ^ byte, FNV_PRIME);
    }
    const r = findRank(this.ranks, buf, 0, n, h);
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
        joins = emptyJoins();
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
}
