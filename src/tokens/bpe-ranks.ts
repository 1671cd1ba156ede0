/** The rank tables of the BPE encodings: `.tiktoken` loading, FNV-1a hashing, lookup. */
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";

/** The BPE encodings counted exactly. */
export type BpeEncoding = "o200k_base" | "cl100k_base";

/**
 * The rank table of one encoding: token bytes in a pool, found by an FNV-1a hash in an
 * open-addressing table (linear probing) whose slots hold `[hash, rank, offset, length]`
 * side by side, so a probe touches one cache line before the pool.
 */
export interface RankTable {
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

export const FNV_OFFSET = 0x811c9dc5 | 0;
export const FNV_PRIME = 0x01000193;

/** FNV-1a of buf[from, to): the one hash of token bytes (table build, lookups, joins). */
export function fnv(buf: Uint8Array, from: number, to: number): number {
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
  for (let k = file.indexOf(0x0a); k >= 0; k = file.indexOf(0x0a, k + 1)) lines++;
  const pool = new Uint8Array(file.length);
  // [rank, offset, length] per token, preallocated: a growing array of 600k numbers was
  // a fifth of the load (the first count of a process waits for it).
  const tokens = new Int32Array((lines + 1) * 3);
  let n3 = 0;
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
    tokens[n3++] = rank;
    tokens[n3++] = start;
    tokens[n3++] = p - start;
  }
  const count = n3 / 3;
  let size = 1;
  while (size < Math.max(lines, count) * 2) size <<= 1;
  const mask = size - 1;
  // Every field -1 (a native fill): rank -1 marks an empty slot, the rest is overwritten.
  const slots = new Int32Array(size * 4).fill(-1);
  const pairs = new Int32Array(0x10000).fill(-1);
  const byteRank = new Int32Array(256).fill(-1);
  let maxRank = 0;
  for (let t = 0; t < n3; t += 3) maxRank = Math.max(maxRank, tokens[t]!);
  const offset = new Int32Array(maxRank + 1).fill(-1);
  const length = new Int32Array(maxRank + 1);
  for (let t = 0; t < n3; t += 3) {
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
  const highTokens = nonAsciiTokens(pool, tokens.subarray(0, n3));
  return { pool: pool.slice(0, p), slots, mask, pairs, byteRank, offset, length, highTokens };
}

/**
 * The `highTokens` of a {@link RankTable}: `[length, leadsLo, leadsHi]` of every token
 * without an ASCII byte, longest first. `tokens` holds `[rank, offset, length]` triples.
 */
function nonAsciiTokens(pool: Uint8Array, tokens: Int32Array): Int32Array {
  // Bucketed by length (a token is at most a few hundred bytes), longest first, each
  // bucket in rank-file order: the order a stable sort by length gave, without a tuple per
  // token (the load is on the first count of a process).
  const buckets = new Map<number, number[]>();
  let found = 0;
  for (let t = 0; t < tokens.length; t += 3) {
    const from = tokens[t + 1]!;
    const n = tokens[t + 2]!;
    let lo = 0;
    let hi = 0;
    let ascii = false;
    for (let k = from; k < from + n; k++) {
      const b = pool[k]!;
      if (b < 0x80) {
        ascii = true;
        break;
      }
      if (b >= 0xe0) hi |= 1 << (b - 0xe0);
      else if (b >= 0xc0) lo |= 1 << (b - 0xc0);
    }
    if (ascii) continue;
    let bucket = buckets.get(n);
    if (bucket === undefined) {
      bucket = [];
      buckets.set(n, bucket);
    }
    bucket.push(lo, hi);
    found++;
  }
  const out = new Int32Array(found * 3);
  let o = 0;
  for (const n of [...buckets.keys()].sort((a, b) => b - a)) {
    const bucket = buckets.get(n) as number[];
    for (let k = 0; k < bucket.length; k += 2) {
      out[o++] = n;
      out[o++] = bucket[k]!;
      out[o++] = bucket[k + 1]!;
    }
  }
  return out;
}

const requireCjs = createRequire(import.meta.url);

/** The path of the rank file gpt-tokenizer ships for `encoding`. */
export function rankFilePath(encoding: BpeEncoding): string {
  return requireCjs.resolve(`gpt-tokenizer/data/${encoding}.tiktoken`);
}

/** Reads and parses the rank file gpt-tokenizer ships for `encoding`. */
export function loadRanks(encoding: BpeEncoding): RankTable {
  return parseRanks(readFileSync(rankFilePath(encoding)));
}

/** Rank of buf[from, from + n), whose {@link fnv} is h, in `table`; -1 when it is no token. */
export function findRank(
  table: RankTable,
  buf: Uint8Array,
  from: number,
  n: number,
  h: number,
): number {
  const { slots, pool, mask } = table;
  const wrap = mask * 4 + 3;
  for (let s = (h & mask) * 4; ; s = (s + 4) & wrap) {
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
