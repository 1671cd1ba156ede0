/**
 * Rank tables prebuilt at build time (`scripts/build-bpe-tables.mjs` writes one file per
 * encoding next to the compiled bpe-ranks.js): the tokens' bytes, ranks, lengths and
 * hashes in the rank file's order, so loading is one read and the hash table's inserts —
 * not decoding 200,000 lines of base64 and hashing each token. The table built from them
 * is the one parsing the rank file builds, field for field (the tests compare them). The
 * first count of a process waits for this load, so it is part of every first call's
 * latency (docs/performance.md).
 */
import { readFileSync, statSync } from "node:fs";
import { type BpeEncoding, fnv, loadRanks, type RankTable, rankFilePath } from "./bpe-ranks.js";

/** "PCRK": a prebuilt rank table. */
const MAGIC = 0x4b524350;
/** Bumped when the layout changes: an older file is then ignored (the rank file is parsed). */
const VERSION = 1;
/** Header: magic, version, source bytes, ranks, tokens, pool bytes, highTokens, mask. */
const HEADER = 8;

/**
 * The prebuilt form of `table`, parsed from a rank file of `sourceBytes` bytes: header,
 * then per token in file order its rank and hash (int32), `highTokens`, each token's length
 * (one byte: tokens are at most 255 bytes in these encodings) and the pool.
 *
 * @example prebuiltRanks(loadRanks("cl100k_base"), 1681126).length // about 1.2 MB
 */
export function prebuiltRanks(table: RankTable, sourceBytes: number): Uint8Array {
  const ranks: number[] = [];
  for (let r = 0; r < table.offset.length; r++) if ((table.offset[r] as number) >= 0) ranks.push(r);
  // The pool holds the tokens in file order: by offset is file order.
  ranks.sort((a, b) => (table.offset[a] as number) - (table.offset[b] as number));
  const count = ranks.length;
  const ints = HEADER + 2 * count + table.highTokens.length;
  const out = new Uint8Array(ints * 4 + count + table.pool.length);
  const head = new Int32Array(out.buffer, 0, ints);
  head.set([
    MAGIC,
    VERSION,
    sourceBytes,
    table.offset.length,
    count,
    table.pool.length,
    table.highTokens.length,
    table.mask,
  ]);
  ranks.forEach((r, k) => {
    const from = table.offset[r] as number;
    const n = table.length[r] as number;
    if (n > 255) throw new Error(`token ${r} has ${n} bytes: the prebuilt form keeps 255`);
    head[HEADER + 2 * k] = r;
    head[HEADER + 2 * k + 1] = fnv(table.pool, from, from + n);
    out[ints * 4 + k] = n;
  });
  head.set(table.highTokens, HEADER + 2 * count);
  out.set(table.pool, ints * 4 + count);
  return out;
}

/**
 * The table of a prebuilt file's bytes, or `null` when they are not one made from a rank
 * file of `sourceBytes` bytes by this version (then the rank file is parsed instead).
 *
 * @example ranksFromPrebuilt(readFileSync(file), 1681126)?.pool.length
 */
export function ranksFromPrebuilt(file: Uint8Array, sourceBytes: number): RankTable | null {
  if (file.length < HEADER * 4) return null;
  // Int32 views need an aligned start: a file read on its own usually is; else copy.
  const bytes = file.byteOffset % 4 === 0 ? file : file.slice();
  const head = new Int32Array(bytes.buffer, bytes.byteOffset, HEADER);
  const [magic, version, source, maxRank, count, poolBytes, highLength, mask] = head as unknown as [
    number,
    number,
    number,
    number,
    number,
    number,
    number,
    number,
  ];
  if (magic !== MAGIC || version !== VERSION || source !== sourceBytes) return null;
  const ints = HEADER + 2 * count + highLength;
  if (bytes.length !== ints * 4 + count + poolBytes) return null;
  const list = new Int32Array(bytes.buffer, bytes.byteOffset + HEADER * 4, 2 * count);
  // Views of the file's bytes, not copies: the table lives as long as the process, and
  // copying fresh megabytes costs more than reading them.
  const highTokens = new Int32Array(
    bytes.buffer,
    bytes.byteOffset + (HEADER + 2 * count) * 4,
    highLength,
  );
  const lengths = bytes.subarray(ints * 4, ints * 4 + count);
  const pool = bytes.subarray(ints * 4 + count);
  // As the rank file's parse builds it, in the same order (so the same probe chains).
  const slots = new Int32Array((mask + 1) * 4).fill(-1);
  const pairs = new Int32Array(0x10000).fill(-1);
  const byteRank = new Int32Array(256).fill(-1);
  const offset = new Int32Array(maxRank).fill(-1);
  const length = new Int32Array(maxRank);
  let from = 0;
  for (let k = 0; k < count; k++) {
    const rank = list[2 * k] as number;
    const h = list[2 * k + 1] as number;
    const n = lengths[k] as number;
    if (rank < 0 || rank >= maxRank || from + n > pool.length) return null;
    offset[rank] = from;
    length[rank] = n;
    if (n === 1) byteRank[pool[from] as number] = rank;
    if (n === 2) pairs[((pool[from] as number) << 8) | (pool[from + 1] as number)] = rank;
    let s = h & mask;
    while ((slots[s * 4 + 1] as number) >= 0) s = (s + 1) & mask;
    slots[s * 4] = h;
    slots[s * 4 + 1] = rank;
    slots[s * 4 + 2] = from;
    slots[s * 4 + 3] = n;
    from += n;
  }
  if (from !== pool.length || byteRank.includes(-1)) return null;
  return { pool, slots, mask, pairs, byteRank, offset, length, highTokens };
}

/** Where the build writes the prebuilt table of `encoding`: next to this module. */
export function prebuiltPath(encoding: BpeEncoding, dir: URL = new URL(".", import.meta.url)): URL {
  return new URL(`${encoding}.ranks`, dir);
}

/**
 * The rank table of `encoding`: from its prebuilt file in `dir` (the build's output, next
 * to this module) when there is one made from the rank file installed now, else parsed
 * from that rank file (running from the sources, or a stale or damaged file).
 *
 * @example loadRankTable("o200k_base").offset.length // 200019
 */
export function loadRankTable(encoding: BpeEncoding, dir?: URL): RankTable {
  const source = rankFilePath(encoding);
  let file: Uint8Array;
  try {
    file = readFileSync(prebuiltPath(encoding, dir));
  } catch {
    return loadRanks(encoding);
  }
  return ranksFromPrebuilt(file, statSync(source).size) ?? loadRanks(encoding);
}
