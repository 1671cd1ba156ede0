/**
 * Exact `o200k_base` / `cl100k_base` token counts without building token arrays.
 *
 * The ranks are the `.tiktoken` files gpt-tokenizer ships (`gpt-tokenizer/data/*`), and
 * the result is the count gpt-tokenizer's `countTokens` gives with special-token literals
 * treated as text (the test suite checks both encodings against it on random and
 * adversarial text). It is faster because it allocates nothing per piece:
 * - the pre-tokenizer is the encoding's split regex written out as a scanner over a
 *   per-code-unit class table (the classes are taken from V8's own `\p{…}` and `\s`, so
 *   they agree with the regex by construction);
 * - each piece is UTF-8 encoded into a scratch buffer and looked up in an open-addressing
 *   table over the rank bytes, without making a string;
 * - a piece that is not one token goes through the byte-pair merge (lowest rank first,
 *   leftmost on ties, as tiktoken), with a binary heap for long pieces (a CJK sentence is
 *   one piece of hundreds of bytes), memoized with the tables (see {@link BpeData}).
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
}

const FNV_OFFSET = 0x811c9dc5 | 0;
const FNV_PRIME = 0x01000193;

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
  for (let t = 0; t < tokens.length; t += 3) {
    const rank = tokens[t]!;
    const from = tokens[t + 1]!;
    const n = tokens[t + 2]!;
    if (n === 2) pairs[(pool[from]! << 8) | pool[from + 1]!] = rank;
    let h = FNV_OFFSET;
    for (let k = from; k < from + n; k++) h = Math.imul(h ^ pool[k]!, FNV_PRIME);
    let s = h & mask;
    while (slots[s * 4 + 1]! >= 0) s = (s + 1) & mask;
    slots[s * 4] = h;
    slots[s * 4 + 1] = rank;
    slots[s * 4 + 2] = from;
    slots[s * 4 + 3] = n;
  }
  return { pool: pool.slice(0, p), slots, mask, pairs };
}

/** What a counter of one encoding shares with every other: loaded once, never mutated. */
export interface BpeData {
  encoding: BpeEncoding;
  ranks: RankTable;
  classes: Uint8Array;
  /**
   * Token count of each piece that is not one token, by its text: the merge is the costly
   * step (a CJK sentence is one piece), and the same pieces recur across requests. A memo
   * of a pure function, bounded, shared like the tables: it never changes a result.
   */
  merged: Map<string, number>;
}

const requireCjs = createRequire(import.meta.url);

/**
 * Reads and parses the tables of an encoding (tens of milliseconds).
 *
 * @example bpeCounter(loadBpeData("cl100k_base")).count("hello world") // 2
 */
export function loadBpeData(encoding: BpeEncoding): BpeData {
  const path = requireCjs.resolve(`gpt-tokenizer/data/${encoding}.tiktoken`);
  return {
    encoding,
    ranks: parseRanks(readFileSync(path)),
    classes: bmpClasses(),
    merged: new Map(),
  };
}

/**
 * The tables of an encoding, loaded on first use and then shared by every counter of the
 * process. This is the one module-level cache of the library: like a module import, it
 * holds immutable data that never changes a result, only the time of the first count.
 */
const loaded = new Map<BpeEncoding, BpeData>();

/** {@link loadBpeData}, once per process. */
export function sharedBpeData(encoding: BpeEncoding): BpeData {
  let data = loaded.get(encoding);
  if (data === undefined) {
    data = loadBpeData(encoding);
    loaded.set(encoding, data);
  }
  return data;
}

/** Counting functions of one encoding; see {@link bpeCounter}. */
export interface BpeCount {
  /** Tokens of `text`. */
  count(text: string): number;
  /**
   * Tokens of `text` when they are at most `limit`; otherwise some number above `limit`,
   * found without tokenizing the rest of the text.
   */
  countUpTo(text: string, limit: number): number;
}

/** Pieces whose bytes exceed this are merged with a heap instead of rescanning. */
const HEAP_MERGE_FROM = 64;
/** Memoized non-token pieces before the memo starts over (bounded memory). */
const MERGE_MEMO_SIZE = 100_000;

/**
 * Counting functions over loaded data, with their own scratch buffers.
 *
 * @example bpeCounter(sharedBpeData("cl100k_base")).countUpTo("a b c d", 2) // 3 (> 2)
 */
export function bpeCounter(data: BpeData): BpeCount {
  const { pool, slots, mask, pairs } = data.ranks;
  const classes = data.classes;
  const o200k = data.encoding === "o200k_base";
  const astral = new Map<number, number>();
  let bytes = new Uint8Array(256);
  const memo = data.merged;
  // Merge state, reused: part starts as a linked list, the rank of each part with the next.
  let next = new Int32Array(256);
  let prev = new Int32Array(256);
  let pairRank = new Int32Array(256);
  let heapRank = new Int32Array(256);
  let heapPos = new Int32Array(256);

  /** Rank of bytes[from, to), or -1. */
  const rankOf = (from: number, to: number): number => {
    let h = FNV_OFFSET;
    for (let k = from; k < to; k++) h = Math.imul(h ^ bytes[k]!, FNV_PRIME);
    return lookup(from, to - from, h);
  };
  const lookup = (from: number, n: number, h: number): number => {
    for (let s = (h & mask) * 4; ; s = (s + 4) & (mask * 4 + 3)) {
      const r = slots[s + 1]!;
      if (r < 0) return -1;
      if (slots[s] === h && slots[s + 3] === n) {
        const o = slots[s + 2]!;
        let k = 0;
        while (k < n && pool[o + k] === bytes[from + k]) k++;
        if (k === n) return r;
      }
    }
  };

  const NO_RANK = 0x7fffffff;
  const pairAt = (start: number, end: number) => {
    const r = rankOf(start, end);
    return r < 0 ? NO_RANK : r;
  };

  /** Tokens of bytes[0, n) by byte-pair merging: lowest rank first, leftmost on ties. */
  const merge = (n: number): number => {
    if (next.length < n + 2) {
      const size = 2 * n + 2;
      next = new Int32Array(size);
      prev = new Int32Array(size);
      pairRank = new Int32Array(size);
      heapRank = new Int32Array(size);
      heapPos = new Int32Array(size);
    }
    // Parts are identified by their start byte; next[n] === n ends the list.
    for (let k = 0; k < n; k++) {
      next[k] = k + 1;
      prev[k] = k - 1;
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
        joinAt(at, n);
        parts--;
      }
    }
    // Heap of (rank, start) with lazy deletion: an entry is live while pairRank agrees.
    let size = 0;
    const less = (a: number, b: number) =>
      heapRank[a]! < heapRank[b]! || (heapRank[a] === heapRank[b] && heapPos[a]! < heapPos[b]!);
    const swap = (a: number, b: number) => {
      const r = heapRank[a]!;
      const q = heapPos[a]!;
      heapRank[a] = heapRank[b]!;
      heapPos[a] = heapPos[b]!;
      heapRank[b] = r;
      heapPos[b] = q;
    };
    const push = (rank: number, at: number) => {
      if (size >= heapRank.length) {
        const r = new Int32Array(size * 2);
        r.set(heapRank);
        heapRank = r;
        const q = new Int32Array(size * 2);
        q.set(heapPos);
        heapPos = q;
      }
      let c = size++;
      heapRank[c] = rank;
      heapPos[c] = at;
      while (c > 0) {
        const parent = (c - 1) >> 1;
        if (!less(c, parent)) break;
        swap(c, parent);
        c = parent;
      }
    };
    const pop = () => {
      size--;
      swap(0, size);
      let c = 0;
      for (;;) {
        const l = 2 * c + 1;
        if (l >= size) break;
        const m = l + 1 < size && less(l + 1, l) ? l + 1 : l;
        if (!less(m, c)) break;
        swap(m, c);
        c = m;
      }
    };
    for (let k = 0; k < n - 1; k++) if (pairRank[k]! !== NO_RANK) push(pairRank[k]!, k);
    while (size > 0) {
      const rank = heapRank[0]!;
      const at = heapPos[0]!;
      pop();
      // Stale: the part was merged away or its pair changed since the entry was pushed
      // (a pair only grows, and ranks are unique per byte string).
      if (pairRank[at] !== rank) continue;
      const before = prev[at]!;
      joinAt(at, n);
      parts--;
      if (pairRank[at]! !== NO_RANK) push(pairRank[at]!, at);
      if (before >= 0 && pairRank[before]! !== NO_RANK) push(pairRank[before]!, before);
    }
    return parts;
  };

  /** Merges the part at `at` with the next one and reprices both affected pairs. */
  const joinAt = (at: number, n: number) => {
    const gone = next[at]!;
    const after = next[gone]!;
    next[at] = after;
    if (after < n) prev[after] = at;
    pairRank[gone] = NO_RANK;
    pairRank[at] = after < n ? pairAt(at, next[after]!) : NO_RANK;
    const before = prev[at]!;
    if (before >= 0) pairRank[before] = pairAt(before, after);
  };

  /** Classes of the code point at i (width from {@link width}). */
  const cls = (text: string, i: number): number => {
    const c = text.charCodeAt(i);
    if (c < 0xd800 || c >= 0xe000) return classes[c]!;
    const cp = text.codePointAt(i)!;
    if (cp <= 0xffff) return 0; // a lone surrogate
    let f = astral.get(cp);
    if (f === undefined) {
      f = classify(cp);
      astral.set(cp, f);
    }
    return f;
  };
  const width = (text: string, i: number): number => {
    const c = text.charCodeAt(i);
    if (c < 0xd800 || c > 0xdbff || i + 1 >= text.length) return 1;
    const d = text.charCodeAt(i + 1);
    return d >= 0xdc00 && d <= 0xdfff ? 2 : 1;
  };
  /** End of the run of code points from i that have one of `bits`. */
  const runEnd = (text: string, i: number, bits: number): number => {
    const n = text.length;
    while (i < n && (cls(text, i) & bits) !== 0) i += width(text, i);
    return i;
  };
  /** End of the run from i of code points that are neither whitespace, letters nor numbers. */
  const otherEnd = (text: string, i: number): number => {
    const n = text.length;
    while (i < n && (cls(text, i) & (L | N | S)) === 0) i += width(text, i);
    return i;
  };
  const isNewline = (c: number) => c === 0x0a || c === 0x0d;
  /** `'s|'t|'re|'ve|'m|'ll|'d` in either case at i: its end, or i. */
  const contraction = (text: string, i: number): number => {
    if (text.charCodeAt(i) !== 0x27 || i + 1 >= text.length) return i;
    const a = text.charCodeAt(i + 1) | 0x20;
    if (a === 0x73 || a === 0x64 || a === 0x6d || a === 0x74) return i + 2; // s d m t
    if (i + 2 >= text.length) return i;
    const b = text.charCodeAt(i + 2) | 0x20;
    if ((a === 0x6c && b === 0x6c) || (a === 0x76 && b === 0x65) || (a === 0x72 && b === 0x65))
      return i + 3; // ll ve re
    return i;
  };

  /**
   * The whitespace alternatives, shared by both encodings, from i (a whitespace char):
   * cl100k `\s+$|\s*[\r\n]|\s+(?!\S)|\s`, o200k `\s*[\r\n]+|\s+(?!\S)|\s+`.
   */
  const spaceEnd = (text: string, i: number): number => {
    const n = text.length;
    const j = runEnd(text, i, S); // whitespace is never astral: units are code points
    if (j === n) return n; // cl100k `\s+$`; o200k `\s+(?!\S)` at the end
    // `\s*[\r\n]`: the last newline of the run (o200k's `[\r\n]+` then stops at it too).
    for (let k = j - 1; k >= i; k--) if (isNewline(text.charCodeAt(k))) return k + 1;
    // `\s+(?!\S)`: all but the last, which stays with the non-space after it; a single
    // one is cl100k's `\s`, o200k's `\s+`.
    return j - i >= 2 ? j - 1 : j;
  };

  /** End of the cl100k_base piece starting at i. */
  const cl100kEnd = (text: string, i: number): number => {
    const n = text.length;
    const c = text.charCodeAt(i);
    const e = contraction(text, i);
    if (e > i) return e;
    const f = cls(text, i);
    const w = width(text, i);
    // [^\r\n\p{L}\p{N}]?\p{L}+
    if ((f & (L | N)) === 0 && !isNewline(c) && i + w < n && (cls(text, i + w) & L) !== 0)
      return runEnd(text, i + w, L);
    if ((f & L) !== 0) return runEnd(text, i, L);
    // \p{N}{1,3}
    if ((f & N) !== 0) {
      let j = i;
      for (let k = 0; k < 3 && j < n && (cls(text, j) & N) !== 0; k++) j += width(text, j);
      return j;
    }
    // ` ?[^\s\p{L}\p{N}]+[\r\n]*`
    const p = c === 0x20 && i + 1 < n && (cls(text, i + 1) & (L | N | S)) === 0 ? i + 1 : i;
    if ((cls(text, p) & (L | N | S)) === 0) {
      let j = otherEnd(text, p);
      while (j < n && isNewline(text.charCodeAt(j))) j++;
      return j;
    }
    return spaceEnd(text, i);
  };

  /** o200k `X?U*W+C?` from p (after the optional prefix): its end, or -1. */
  const lowerRun = (text: string, p: number): number => {
    const n = text.length;
    const q = runEnd(text, p, U);
    let e: number;
    if (q < n && (cls(text, q) & W) !== 0) e = runEnd(text, q, W);
    else {
      // U* gives back code points until one of them can start W+; W+ then ends after it
      // (what follows it in the run is not W, and text[q] is not W).
      let last = -1;
      for (let k = p; k < q; k += width(text, k)) if ((cls(text, k) & W) !== 0) last = k;
      if (last < 0) return -1;
      e = last + width(text, last);
    }
    return contraction(text, e);
  };
  /** o200k `X?U+W*C?` from p: its end, or -1. */
  const upperRun = (text: string, p: number): number => {
    const q = runEnd(text, p, U);
    if (q === p) return -1;
    return contraction(text, runEnd(text, q, W));
  };

  /** End of the o200k_base piece starting at i. */
  const o200kEnd = (text: string, i: number): number => {
    const n = text.length;
    const c = text.charCodeAt(i);
    const f = cls(text, i);
    const w = width(text, i);
    const prefix = (f & (L | N)) === 0 && !isNewline(c) && i + w < n;
    let e = prefix ? lowerRun(text, i + w) : -1;
    if (e < 0) e = lowerRun(text, i);
    if (e < 0 && prefix) e = upperRun(text, i + w);
    if (e < 0) e = upperRun(text, i);
    if (e >= 0) return e;
    if ((f & N) !== 0) {
      let j = i;
      for (let k = 0; k < 3 && j < n && (cls(text, j) & N) !== 0; k++) j += width(text, j);
      return j;
    }
    // ` ?[^\s\p{L}\p{N}]+[\r\n/]*`
    const p = c === 0x20 && i + 1 < n && (cls(text, i + 1) & (L | N | S)) === 0 ? i + 1 : i;
    if ((cls(text, p) & (L | N | S)) === 0) {
      let j = otherEnd(text, p);
      while (j < n && (isNewline(text.charCodeAt(j)) || text.charCodeAt(j) === 0x2f)) j++;
      return j;
    }
    return spaceEnd(text, i);
  };

  const pieceEnd = o200k ? o200kEnd : cl100kEnd;

  /** Tokens of text[start, end): one when the piece is a token, else merged. */
  const pieceTokens = (text: string, start: number, end: number): number => {
    if (bytes.length < (end - start) * 3) bytes = new Uint8Array((end - start) * 6);
    let b = 0;
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
    if (!lone && lookup(0, b, h) >= 0) return 1;
    const key = text.slice(start, end);
    let k = memo.get(key);
    if (k === undefined) {
      k = b === 1 ? 1 : merge(b);
      if (memo.size >= MERGE_MEMO_SIZE) memo.clear();
      memo.set(key, k);
    }
    return k;
  };

  // Pieces are counted left to right, so the count can stop once it passes the limit.
  const countUpTo = (text: string, limit: number): number => {
    let total = 0;
    for (let i = 0; i < text.length && total <= limit; ) {
      const end = pieceEnd(text, i);
      total += pieceTokens(text, i, end);
      i = end;
    }
    return total;
  };
  return { count: (text) => countUpTo(text, Number.POSITIVE_INFINITY), countUpTo };
}
