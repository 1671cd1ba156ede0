/**
 * An in-memory candidate index over one large scope's vectors, shared by both dialects
 * (sqlite/vectors.ts and pg/vectors.ts keep one per large scope of an open store). An
 * exact scan reads every float of the scope (100,000 × 512 dimensions: ~200 ms with
 * sqlite-vec, more with pgvector); this index finds the nearest in a fraction of that, in
 * three passes:
 *
 * 1. **sign codes** (1 bit per dimension, eight 64-bit words at 512): the Hamming
 *    distance of each vector's code to the query's (`popcnt` in WebAssembly, kernels.ts)
 *    and the nearest 8 × {@link CANDIDATE_SHARE} kept (ties at the cut included), then
 *    those scored against the query (Σ qᵢ over the set bits, the query in 256 steps, one
 *    bit plane at a time) and the best {@link CANDIDATE_SHARE} kept. A vector's code is
 *    the sign of its difference to the scope's **center** ({@link ScopeIndex.recenter}:
 *    the mean of the vectors the index was built from);
 * 2. **int8 codes** (per-vector scale): those candidates re-scored by an int8 dot product
 *    against the query in int8 (SIMD in WebAssembly), the best `pool` kept (ties by rowid);
 * 3. the best `pool` re-scored against the float query: their similarity is the cosine
 *    up to the vector's int8 rounding (within ~0.001 at 512 dimensions).
 *
 * The codes live in two WebAssembly memories the index owns (the kernels read them in
 * place), each search's scratch right after them.
 *
 * Every pass is a pure function of the vectors held and the query: the hits do not depend
 * on the order the vectors were added in. The caller checks each candidate is still
 * embedded in the store (vectors.ts): a vector dropped since it was indexed is never a
 * hit. Measured recall@10 of the top 10 against a brute-force cosine top 10 on random
 * unit vectors: docs/sources.md "Recall by meaning".
 */

import { type Kernels, kernels } from "./kernels.js";

/** Vectors in a scope from which it is searched through a {@link ScopeIndex}. */
export const LARGE_SCOPE = 1024;
/** Bytes of scope indexes an open store keeps (the least recently searched go first). */
export const INDEX_BUDGET = 256 * 1024 * 1024;
/** Candidates re-scored per search: k and this many more (int8 ranks them closely). */
export const EXACT_MARGIN = 16;

/**
 * Keeps `indexes` (least recently searched first) within `budget` bytes by dropping the
 * oldest; the one searched last always stays.
 */
export function trimIndexes<K, V extends { readonly byteSize: number }>(
  indexes: Map<K, V>,
  budget = INDEX_BUDGET,
): void {
  let total = 0;
  for (const i of indexes.values()) total += i.byteSize;
  for (const [key, i] of indexes) {
    if (total <= budget || indexes.size === 1) break;
    indexes.delete(key);
    total -= i.byteSize;
  }
}

/** Share of the scope kept by the sign-code pass (at least {@link MIN_CANDIDATES}). */
export const CANDIDATE_SHARE = 0.03;
const MIN_CANDIDATES = 512;
/** Candidates of the Hamming pass per candidate kept by the asymmetric one. */
const WIDE = 8;
/**
 * Bits of the query's steps in the asymmetric pass: 8 (4 cost little less and, at 64
 * dimensions, let a true top-10 vector slip past the pass in the PostgreSQL exactness test).
 */
const QUERY_BITS = 8;

/** The smallest distance whose count, with all below it, reaches `keep` (else the last). */
function cutOf(hist: Int32Array, keep: number): number {
  let acc = 0;
  let cut = 0;
  for (; cut < hist.length - 1; cut++) {
    acc += hist[cut]!;
    if (acc >= keep) break;
  }
  return cut;
}

/**
 * Positions whose distance (`dist`, counted in `hist`; `0xffff`: none) is among the
 * `keep` smallest, ties at the cut included.
 */
function cutAt(dist: Uint16Array, hist: Int32Array, keep: number): number[] {
  const cut = cutOf(hist, keep);
  const out: number[] = [];
  for (let r = 0; r < dist.length; r++) if (dist[r]! <= cut) out.push(r);
  return out;
}

/** Bytes of a WebAssembly page. */
const PAGE = 65536;

/** Grows `k`'s memory to hold at least `bytes`; whether it grew (its views are then stale). */
function reserve(k: Kernels, bytes: number): boolean {
  const have = k.memory.buffer.byteLength;
  if (have >= bytes) return false;
  k.memory.grow(Math.ceil((bytes - have) / PAGE));
  return true;
}

/**
 * Positions of the `keep` highest `scores` (at least: ties and near ties at the cut are
 * included), from a histogram of 4,096 bins: no sort of every candidate.
 */
function bestOf(scores: Float64Array | Float32Array, keep: number): number[] {
  if (scores.length <= keep) return Array.from(scores.keys());
  let lo = Number.POSITIVE_INFINITY;
  let hi = Number.NEGATIVE_INFINITY;
  for (const x of scores) {
    if (x < lo) lo = x;
    if (x > hi) hi = x;
  }
  const H = 4096;
  const scale = hi > lo ? (H - 1) / (hi - lo) : 0;
  // Bin H − 1 − ⌊…⌋: the best scores in the lowest bins, as distances.
  const bins = new Uint16Array(scores.length);
  const hist = new Int32Array(H);
  for (let c = 0; c < scores.length; c++) {
    const b = H - 1 - Math.min(H - 1, ((scores[c]! - lo) * scale) | 0);
    bins[c] = b;
    hist[b]!++;
  }
  return cutAt(bins, hist, keep);
}

/**
 * The `asym` kernel's table: for code byte b (dimensions 8b..8b+7, bit k of the byte for
 * dimension 8b + k) and each of its 256 values, Σ uᵢ over the set bits, uᵢ the query's
 * step count `round((qᵢ − lo) / step)` (0 past the dimensions). At most 8 · 255: a u16.
 */
function byteSums(q: Float32Array, lo: number, step: number, table: Uint16Array): void {
  const bytes = table.length >> 8;
  const u = new Int32Array(bytes * 8);
  if (step > 0) for (let i = 0; i < q.length; i++) u[i] = Math.round((q[i]! - lo) / step);
  for (let b = 0; b < bytes; b++) {
    const row = b << 8;
    table[row] = 0;
    for (let v = 1; v < 256; v++) {
      const low = v & -v; // the lowest set bit (its dimension) plus the other bits' sum
      table[row + v] = table[row + (v ^ low)]! + u[8 * b + 31 - Math.clz32(low)]!;
    }
  }
}

/** One large scope's vectors in compact codes (see the module comment). */
export class ScopeIndex {
  readonly dims: number;
  /** 32-bit words of a sign code (whole 64-bit words: the kernel reads those). */
  #words: number;
  /** Bytes of an int8 code (dims rounded up to a multiple of 16, zero padded). */
  #span: number;
  #center: Float32Array;
  #n = 0;
  #cap = 0;
  #rowids = new Float64Array(0);
  #cats = new Uint16Array(0);
  #inv = new Float32Array(0);
  /** The sign codes from byte 0 of their kernels' memory, then that search's scratch. */
  #hamming: Kernels;
  /** The int8 codes from byte 0 of their kernels' memory, then that search's scratch. */
  #dot: Kernels;
  #signs = new Uint32Array(0);
  #q8 = new Int8Array(0);
  #slot = new Map<number, number>();
  #catIds = new Map<string, number>();

  /** @param reserve vectors to make room for at once (a build knows how many). */
  constructor(dims: number, reserve = 0) {
    this.dims = dims;
    this.#words = Math.ceil(dims / 64) * 2;
    this.#span = Math.ceil(dims / 16) * 16;
    this.#center = new Float32Array(dims);
    this.#hamming = kernels(1);
    this.#dot = kernels(1);
    if (reserve > 0) this.#grow(reserve);
  }

  /** Vectors held. */
  get size(): number {
    return this.#n;
  }

  /** Bytes held by the codes (for the cache's budget). */
  get byteSize(): number {
    return this.#cap * (8 + 2 + 4 + this.#words * 4 + this.#span);
  }

  /** Views over the kernels' memories, made again after one grew. */
  #views(): void {
    this.#signs = new Uint32Array(this.#hamming.memory.buffer);
    this.#q8 = new Int8Array(this.#dot.memory.buffer);
  }

  #grow(atLeast = 0): void {
    const cap = Math.max(1024, this.#cap * 2, atLeast);
    const grow = <T extends Float64Array | Uint16Array | Float32Array>(
      old: T,
      make: (n: number) => T,
    ): T => {
      const next = make(cap);
      next.set(old);
      return next;
    };
    this.#rowids = grow(this.#rowids, (n) => new Float64Array(n));
    this.#cats = grow(this.#cats, (n) => new Uint16Array(n));
    this.#inv = grow(this.#inv, (n) => new Float32Array(n));
    // The codes stay where they are: each kind at the start of its own memory.
    reserve(this.#hamming, cap * this.#words * 4);
    reserve(this.#dot, cap * this.#span);
    this.#views();
    this.#cap = cap;
  }

  /**
   * Adds or replaces the vector of `rowid`. `code` false leaves its sign code to a
   * {@link ScopeIndex.recenter} that follows (a build codes once, around the mean).
   */
  set(rowid: number, category: string, v: Float32Array, code = true): void {
    let s = this.#slot.get(rowid);
    if (s === undefined) {
      if (this.#n === this.#cap) this.#grow();
      s = this.#n++;
      this.#slot.set(rowid, s);
    }
    let cat = this.#catIds.get(category);
    if (cat === undefined) {
      cat = this.#catIds.size;
      this.#catIds.set(category, cat);
    }
    this.#rowids[s] = rowid;
    this.#cats[s] = cat;
    const D = this.dims;
    let max = 0;
    for (let i = 0; i < D; i++) max = Math.max(max, Math.abs(v[i]!));
    const scale = max === 0 ? 0 : 127 / max;
    this.#inv[s] = max === 0 ? 0 : 1 / scale;
    const q8 = this.#q8;
    const qo = s * this.#span;
    q8.fill(0, qo, qo + this.#span);
    for (let i = 0; i < D; i++) q8[qo + i] = Math.round(v[i]! * scale);
    if (code) this.#code(s);
  }

  /**
   * The sign code of slot `s`, from its int8 code (so recentering needs no floats): bit i
   * is set when the vector's i-th component, as rounded, is at least the center's.
   */
  #code(s: number): void {
    const D = this.dims;
    const W = this.#words;
    const signs = this.#signs;
    const q8 = this.#q8;
    const c = this.#center;
    const inv = this.#inv[s]!;
    const so = s * W;
    const qo = s * this.#span;
    signs.fill(0, so, so + W);
    for (let i = 0; i < D; i++)
      if (q8[qo + i]! * inv >= c[i]!) signs[so + (i >> 5)]! |= 1 << (i & 31);
  }

  /**
   * Takes the sign codes around `center` from now on (the scope's mean vector: sentence
   * encoders' vectors share a common direction, and signs around zero would be nearly
   * the same for all of them) and recodes every vector held.
   */
  recenter(center: Float32Array): void {
    this.#center = Float32Array.from(center);
    for (let s = 0; s < this.#n; s++) this.#code(s);
  }

  /** Removes the vector of `rowid` (the last slot moves into its place). */
  delete(rowid: number): void {
    const s = this.#slot.get(rowid);
    if (s === undefined) return;
    this.#slot.delete(rowid);
    const last = --this.#n;
    if (s === last) return;
    const moved = this.#rowids[last]!;
    this.#rowids[s] = moved;
    this.#cats[s] = this.#cats[last]!;
    this.#inv[s] = this.#inv[last]!;
    const w = this.#words;
    this.#signs.copyWithin(s * w, last * w, (last + 1) * w);
    const p = this.#span;
    this.#q8.copyWithin(s * p, last * p, (last + 1) * p);
    this.#slot.set(moved, s);
  }

  /** The category filter as a mask over category ids (`null`: every category). */
  #mask(categories?: readonly string[]): Uint8Array | null {
    if (categories === undefined) return null;
    const mask = new Uint8Array(Math.max(1, this.#catIds.size));
    for (const c of categories) {
      const id = this.#catIds.get(c);
      if (id !== undefined) mask[id] = 1;
    }
    return mask;
  }

  /**
   * Pass 1: the slots whose code is among the `keep` nearest to the query's by Hamming
   * distance (the `hamming` and `select` kernels), ties at the cut included (so the set
   * does not depend on slot order): how many, written in slot order at {@link #pass1End}.
   */
  #nearestCodes(q: Float32Array, mask: Uint8Array | null, keep: number): number {
    const W = this.#words;
    const D = this.dims;
    const n = this.#n;
    // Scratch after the codes: the query's code, a histogram, a distance per vector, the
    // slots kept (then pass 1b's scratch, see #bestByQuery).
    const qAt = this.#cap * W * 4;
    const histAt = qAt + W * 4;
    const distAt = histAt + (D + 1) * 4;
    const slotsAt = this.#pass1End();
    if (reserve(this.#hamming, slotsAt + n * 4)) this.#views();
    const buffer = this.#hamming.memory.buffer;
    const qw = new Uint32Array(buffer, qAt, W);
    qw.fill(0);
    // The query's side of the center, as the vectors' codes (ranking by q·(v − c) is
    // ranking by q·v: q·c is the same for every vector).
    for (let i = 0; i < D; i++) if (q[i]! >= 0) qw[i >> 5]! |= 1 << (i & 31);
    const hist = new Int32Array(buffer, histAt, D + 1);
    hist.fill(0);
    this.#hamming.hamming(0, n, W >> 1, qAt, distAt, histAt);
    if (mask !== null) {
      // Vectors of other categories: beyond any cut.
      const dist = new Uint16Array(buffer, distAt, n);
      const cats = this.#cats;
      for (let r = 0; r < n; r++) {
        if (mask[cats[r]!] === 1) continue;
        hist[dist[r]!]!--;
        dist[r] = 0xffff;
      }
    }
    return this.#hamming.select(distAt, n, cutOf(hist, keep), slotsAt);
  }

  /** Where pass 1's scratch ends (8-byte aligned): pass 1's slots start there. */
  #pass1End(): number {
    const W = this.#words;
    return Math.ceil((this.#cap * W * 4 + W * 4 + (this.dims + 1) * 4 + this.#n * 2) / 8) * 8;
  }

  /**
   * Pass 1b: each of `slots` scored against the query (asymmetric: Σ qᵢ over the
   * dimensions where the code's bit is set, the query in {@link QUERY_BITS}-bit steps,
   * summed by the `asym` kernel a code byte at a time from a table of the query's sums
   * over each byte's 256 values), the best `keep` kept (ties at the cut included), of
   * pass 1's `m` slots. Runs right after pass 1, on its scratch.
   */
  #bestByQuery(q: Float32Array, m: number, keep: number): number[] {
    const W = this.#words;
    const D = this.dims;
    // Scratch after pass 1's: its slots, the byte table (256 u16 a code byte), two sums
    // per slot.
    const slotsAt = this.#pass1End();
    const tableAt = slotsAt + Math.ceil(m / 2) * 8;
    const outAt = tableAt + W * 4 * 256 * 2;
    if (reserve(this.#hamming, outAt + m * 8)) this.#views();
    const buffer = this.#hamming.memory.buffer;
    const slots = new Int32Array(buffer, slotsAt, m);
    if (m <= keep) return Array.from(slots);
    let lo = Number.POSITIVE_INFINITY;
    let hi = Number.NEGATIVE_INFINITY;
    for (let i = 0; i < D; i++) {
      lo = Math.min(lo, q[i]!);
      hi = Math.max(hi, q[i]!);
    }
    // qᵢ ≈ lo + step · uᵢ, uᵢ an unsigned integer of QUERY_BITS bits.
    const step = hi > lo ? (hi - lo) / (2 ** QUERY_BITS - 1) : 0;
    byteSums(q, lo, step, new Uint16Array(buffer, tableAt, W * 4 * 256));
    this.#hamming.asym(0, W >> 1, slotsAt, m, tableAt, outAt);
    const sums = new Int32Array(buffer, outAt, m * 2);
    const scores = new Float64Array(m);
    for (let c = 0; c < m; c++) scores[c] = lo * sums[2 * c + 1]! + step * sums[2 * c]!;
    return bestOf(scores, keep).map((c) => slots[c]!);
  }

  /**
   * Pass 2: the int8 dot product of each of `slots` with the query in int8 (the `dot8`
   * kernel), times the vector's scale: an estimate of its cosine within ~0.01.
   */
  #estimates(q: Float32Array, slots: readonly number[]): Float64Array {
    const D = this.dims;
    const span = this.#span;
    const m = slots.length;
    // Scratch after the codes: the query as int16, the slots, a dot product per slot.
    const qAt = this.#cap * span;
    const slotsAt = qAt + span * 2;
    const outAt = slotsAt + m * 4;
    if (reserve(this.#dot, outAt + m * 4)) this.#views();
    const buffer = this.#dot.memory.buffer;
    let qmax = 0;
    for (let i = 0; i < D; i++) qmax = Math.max(qmax, Math.abs(q[i]!));
    const qs = qmax === 0 ? 0 : 127 / qmax;
    const q16 = new Int16Array(buffer, qAt, span);
    q16.fill(0);
    for (let i = 0; i < D; i++) q16[i] = Math.round(q[i]! * qs);
    new Int32Array(buffer, slotsAt, m).set(slots);
    this.#dot.dot8(0, span, slotsAt, m, qAt, outAt);
    const dots = new Int32Array(buffer, outAt, m);
    const inv = this.#inv;
    const est = new Float64Array(m);
    for (let c = 0; c < m; c++) est[c] = dots[c]! * inv[slots[c]!]!;
    return est;
  }

  /**
   * The `pool` best candidates for `q` (unit length) with their estimated cosine
   * similarity, in the order of the integer estimate (the caller sorts by `similarity`).
   */
  candidates(
    q: Float32Array,
    pool: number,
    categories?: readonly string[],
  ): { rowid: number; similarity: number }[] {
    if (this.#n === 0) return [];
    const keep = Math.max(MIN_CANDIDATES, pool, Math.ceil(this.#n * CANDIDATE_SHARE));
    const wide = this.#nearestCodes(q, this.#mask(categories), keep * WIDE);
    const slots = this.#bestByQuery(q, wide, keep);
    const est = this.#estimates(q, slots);
    // The pool: the estimates' best bins (a histogram: no sort of every candidate), then
    // only those ordered (ties by rowid).
    const rowids = this.#rowids;
    const order = bestOf(est, pool);
    order.sort((a, b) => est[b]! - est[a]! || rowids[slots[a]!]! - rowids[slots[b]!]!);
    // Pass 3: the best `pool` scored against the float query (only the vector's own
    // quantization error is left: within ~0.001 of the exact cosine at 512 dimensions).
    const D = this.dims;
    const q8 = this.#q8;
    const span = this.#span;
    const inv = this.#inv;
    return order.slice(0, pool).map((c) => {
      const slot = slots[c]!;
      const o = slot * span;
      let s = 0;
      for (let i = 0; i < D; i++) s += q8[o + i]! * q[i]!;
      return { rowid: rowids[slot]!, similarity: s * inv[slot]! };
    });
  }
}
