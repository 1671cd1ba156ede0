/**
 * Rank tables prebuilt at build time (`scripts/build-bpe-tables.mjs` writes one file per
 * encoding next to the compiled bpe-ranks.js): every array of the {@link RankTable} the
 * rank file's parse builds, hash slots included, in its final form, so loading is one read
 * and typed-array views of its bytes — no per-token work (decoding 200,000 lines of base64
 * and hashing each token, or inserting each into the hash table). The tests compare the
 * loaded table with the parsed one field for field. The first count of a process waits
 * for this load, so it is part of every first call's latency (docs/performance.md).
 */
import { readFileSync, statSync } from "node:fs";
import { type BpeEncoding, loadRanks, type RankTable, rankFilePath } from "./bpe-ranks.js";
import { bmpClasses } from "./bpe-scan.js";

/** "PCRK": a prebuilt rank table. */
const MAGIC = 0x4b524350;
/** Bumped when the layout changes: an older file is then ignored (the rank file is parsed). */
const VERSION = 2;
/** Header: magic, version, source bytes, ranks, mask, pool bytes, highTokens, 0. */
const HEADER = 8;
const PAIRS = 0x10000;
const BYTES = 256;

/** The int32 arrays of a table, in file order, with their lengths. */
function intArrays(t: RankTable): Int32Array[] {
  return [t.slots, t.pairs, t.byteRank, t.offset, t.length, t.highTokens];
}

/**
 * The prebuilt form of `table`, parsed from a rank file of `sourceBytes` bytes: a header,
 * then its int32 arrays as they are (slots, pairs, byteRank, offset, length, highTokens)
 * and the pool.
 *
 * @example prebuiltRanks(loadRanks("cl100k_base"), 1681126).length // about 6 MB
 */
export function prebuiltRanks(table: RankTable, sourceBytes: number): Uint8Array {
  const arrays = intArrays(table);
  const ints = HEADER + arrays.reduce((n, a) => n + a.length, 0);
  const out = new Uint8Array(ints * 4 + table.pool.length);
  const view = new Int32Array(out.buffer, 0, ints);
  view.set([
    MAGIC,
    VERSION,
    sourceBytes,
    table.offset.length,
    table.mask,
    table.pool.length,
    table.highTokens.length,
    0,
  ]);
  let at = HEADER;
  for (const a of arrays) {
    view.set(a, at);
    at += a.length;
  }
  out.set(table.pool, ints * 4);
  return out;
}

/**
 * The table of a prebuilt file's bytes (views of them, not copies), or `null` when they
 * are not one made from a rank file of `sourceBytes` bytes by this version (then the rank
 * file is parsed instead).
 *
 * @example ranksFromPrebuilt(readFileSync(file), 1681126)?.pool.length
 */
export function ranksFromPrebuilt(file: Uint8Array, sourceBytes: number): RankTable | null {
  if (file.length < HEADER * 4) return null;
  // Int32 views need an aligned start: a file read on its own usually is; else copy.
  const bytes = file.byteOffset % 4 === 0 ? file : file.slice();
  const head = new Int32Array(bytes.buffer, bytes.byteOffset, HEADER);
  const [magic, version, source, maxRank, mask, poolBytes, highLength] = head as unknown as [
    number,
    number,
    number,
    number,
    number,
    number,
    number,
  ];
  if (magic !== MAGIC || version !== VERSION || source !== sourceBytes) return null;
  if (mask < 0 || ((mask + 1) & mask) !== 0 || maxRank < 0 || highLength < 0) return null;
  const lengths = [(mask + 1) * 4, PAIRS, BYTES, maxRank, maxRank, highLength];
  const ints = HEADER + lengths.reduce((n, k) => n + k, 0);
  if (bytes.length !== ints * 4 + poolBytes) return null;
  // Views of the file's bytes: the table lives as long as the process, and copying fresh
  // megabytes costs more than reading them.
  let at = bytes.byteOffset + HEADER * 4;
  const [slots, pairs, byteRank, offset, length, highTokens] = lengths.map((n) => {
    const view = new Int32Array(bytes.buffer, at, n);
    at += n * 4;
    return view;
  }) as [Int32Array, Int32Array, Int32Array, Int32Array, Int32Array, Int32Array];
  if (byteRank.includes(-1)) return null;
  const pool = bytes.subarray(ints * 4);
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

/** "PCCL": a prebuilt class table; then the layout version and the Unicode version. */
const CLASS_MAGIC = 0x4c434350;
const CLASS_VERSION = 1;
/** Bytes before the table: magic, version, then the Unicode version in ASCII, 0-padded. */
const CLASS_HEADER = 40;
const BMP = 0x10000;

/**
 * The prebuilt form of the BMP class table ({@link bmpClasses}) made under the Unicode
 * version `unicode` (`process.versions.unicode`: the classes are V8's `\p{…}` and `\s`,
 * which follow it).
 *
 * @example prebuiltClasses(bmpClasses(), process.versions.unicode).length // 65576
 */
export function prebuiltClasses(classes: Uint8Array, unicode: string): Uint8Array {
  const out = new Uint8Array(CLASS_HEADER + BMP);
  const head = new Int32Array(out.buffer, 0, 2);
  head.set([CLASS_MAGIC, CLASS_VERSION]);
  const name = new TextEncoder().encode(unicode);
  if (name.length > CLASS_HEADER - 8) throw new Error(`Unicode version "${unicode}" too long`);
  out.set(name, 8);
  out.set(classes, CLASS_HEADER);
  return out;
}

/**
 * The class table of a prebuilt file's bytes (a view), or `null` when they are not one
 * made by this version under the Unicode version `unicode` (then it is computed).
 *
 * @example classesFromPrebuilt(readFileSync(file), process.versions.unicode)?.length // 65536
 */
export function classesFromPrebuilt(file: Uint8Array, unicode: string): Uint8Array | null {
  if (file.length !== CLASS_HEADER + BMP) return null;
  const bytes = file.byteOffset % 4 === 0 ? file : file.slice();
  const head = new Int32Array(bytes.buffer, bytes.byteOffset, 2);
  if (head[0] !== CLASS_MAGIC || head[1] !== CLASS_VERSION) return null;
  const name = bytes.subarray(8, CLASS_HEADER);
  const end = name.indexOf(0);
  const made = new TextDecoder().decode(end < 0 ? name : name.subarray(0, end));
  return made === unicode ? bytes.subarray(CLASS_HEADER) : null;
}

/** Where the build writes the prebuilt class table: next to this module. */
export function classesPath(dir: URL = new URL(".", import.meta.url)): URL {
  return new URL("bmp-classes.bin", dir);
}

/**
 * The BMP class table of the pre-tokenizers: from the build's file in `dir` when it was
 * made under this process's Unicode version, else computed by asking V8's regex engine
 * about every code unit (tens of milliseconds on a process's first count).
 *
 * @example loadClasses()[0x41] // the classes of "A"
 */
export function loadClasses(dir?: URL): Uint8Array {
  const unicode = process.versions.unicode ?? "";
  try {
    return classesFromPrebuilt(readFileSync(classesPath(dir)), unicode) ?? bmpClasses();
  } catch {
    return bmpClasses();
  }
}
