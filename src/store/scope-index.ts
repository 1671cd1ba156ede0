/**
 * An in-memory candidate index over one large scope's vectors, shared by both dialects
 * (sqlite/vectors.ts and pg/vectors.ts keep one per large scope of an open store). An
 * exact scan reads every float of the scope (100,000 × 512 dimensions: ~200 ms with
 * sqlite-vec, more with pgvector); this index finds the nearest in a fraction of that, in
 * three passes:
 *
 * 1. **sign codes** (1 bit per dimension, sixteen 32-bit words at 512): the Hamming
 *    distance of each vector's code to the query's, a popcount per 16 bits from a 64 KB
 *    table — integer work only, ~4× the speed of scoring bytes against the float query —
 *    and the nearest 8 × {@link CANDIDATE_SHARE} kept (ties at the cut included), then
 *    those scored against the float query (Σ qᵢ over the set bits, per byte from a
 *    256-entry table) and the best {@link CANDIDATE_SHARE} kept. A vector's code is the
 *    sign of its difference to the scope's **center** ({@link ScopeIndex.recenter}: the
 *    mean of the vectors the index was built from);
 * 2. **int8 codes** (per-vector scale): those candidates re-scored by an int8 dot product
 *    against the query in int8 (four codes per 32-bit read), the best `pool` kept (ties
 *    by rowid);
 * 3. the best `pool` re-scored against the float query: their similarity is the cosine
 *    up to the vector's int8 rounding (within ~0.001 at 512 dimensions).
 *
 * Every pass is a pure function of the vectors held and the query: the hits do not depend
 * on the order the vectors were added in. The caller checks each candidate is still
 * embedded in the store (vectors.ts): a vector dropped since it was indexed is never a
 * hit. Measured recall@10 of the top 10 against a brute-force cosine top 10 on random
 * unit vectors: docs/sources.md "Recall by meaning".
 */

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
export const CANDIDATE_SHARE = 0.02;
const MIN_CANDIDATES = 512;
/** Candidates of the Hamming pass per candidate kept by the asymmetric one. */
const WIDE = 8;

/** Set bits of every 16-bit value (one table for every index: it is never written). */
const POPCOUNT16 = (() => {
  const t = new Uint8Array(65536);
  for (let i = 1; i < 65536; i++) t[i] = t[i >> 1]! + (i & 1);
  return t;
})();

/**
 * Positions whose distance (`dist`, counted in `hist`; `0xffff`: none) is among the
 * `keep` smallest, ties at the cut included.
 */
function cutAt(dist: Uint16Array, hist: Int32Array, keep: number): number[] {
  let acc = 0;
  let cut = 0;
  for (; cut < hist.length - 1; cut++) {
    acc += hist[cut]!;
    if (acc >= keep) break;
  }
  const out: number[] = [];
  for (let r = 0; r < dist.length; r++) if (dist[r]! <= cut) out.push(r);
  return out;
}

/** One large scope's vectors in compact codes (see the module comment). */
export class ScopeIndex {
  readonly dims: number;
  /** 32-bit words of a sign code. */
  #words: number;
  /** Bytes of an int8 code (dims rounded up to a multiple of 4, zero padded). */
  #span: number;
  #center: Float32Array;
  #n = 0;
  #cap = 0;
  #rowids = new Float64Array(0);
  #cats = new Uint16Array(0);
  #signs = new Uint32Array(0);
  #q8 = new Int8Array(0);
  #q32 = new Int32Array(0);
  #inv = new Float32Array(0);
  #slot = new Map<number, number>();
  #catIds = new Map<string, number>();

  /** @param reserve vectors to make room for at once (a build knows how many). */
  constructor(dims: number, reserve = 0) {
    this.dims = dims;
    this.#words = Math.ceil(dims / 32);
    this.#span = Math.ceil(dims / 4) * 4;
    this.#center = new Float32Array(dims);
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

  #grow(atLeast = 0): void {
    const cap = Math.max(1024, this.#cap * 2, atLeast);
    const grow = <T extends Float64Array | Uint16Array | Uint32Array | Int8Array | Float32Array>(
      old: T,
      make: (n: number) => T,
      per: number,
    ): T => {
      const next = make(cap * per);
      next.set(old);
      return next;
    };
    this.#rowids = grow(this.#rowids, (n) => new Float64Array(n), 1);
    this.#cats = grow(this.#cats, (n) => new Uint16Array(n), 1);
    this.#inv = grow(this.#inv, (n) => new Float32Array(n), 1);
    this.#signs = grow(this.#signs, (n) => new Uint32Array(n), this.#words);
    this.#q8 = grow(this.#q8, (n) => new Int8Array(n), this.#span);
    this.#q32 = new Int32Array(this.#q8.buffer);
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
   * distance, ties at the cut included (so the set does not depend on slot order).
   */
  #nearestCodes(q: Float32Array, mask: Uint8Array | null, keep: number): number[] {
    const W = this.#words;
    const D = this.dims;
    const qw = new Uint32Array(W);
    // The query's side of the center, as the vectors' codes (ranking by q·(v − c) is
    // ranking by q·v: q·c is the same for every vector).
    for (let i = 0; i < D; i++) if (q[i]! >= 0) qw[i >> 5]! |= 1 << (i & 31);
    const n = this.#n;
    const NONE = 0xffff;
    const dist = new Uint16Array(n);
    const hist = new Int32Array(D + 1);
    const signs = this.#signs;
    const cats = this.#cats;
    const pc = POPCOUNT16;
    // Locals in the hot loop (a private field read per row costs as much as the row).
    for (let r = 0, o = 0; r < n; r++, o += W) {
      if (mask !== null && mask[cats[r]!] !== 1) {
        dist[r] = NONE;
        continue;
      }
      let d = 0;
      for (let w = 0; w < W; w++) {
        const x = signs[o + w]! ^ qw[w]!;
        d += pc[x & 0xffff]! + pc[x >>> 16]!;
      }
      dist[r] = d;
      hist[d]!++;
    }
    return cutAt(dist, hist, keep);
  }

  /**
   * Pass 1b: each of `slots` scored against the float query (asymmetric: Σ qᵢ over the
   * dimensions where the code's bit is set, summed per byte from a 256-entry table), the
   * best `keep` kept (ties at the cut included).
   */
  #bestByQuery(q: Float32Array, slots: readonly number[], keep: number): number[] {
    if (slots.length <= keep) return [...slots];
    const W = this.#words;
    const D = this.dims;
    const lut = new Float32Array(W * 4 * 256);
    for (let b = 0; b < W * 4; b++) {
      const o = b << 8;
      for (let v = 1; v < 256; v++) {
        const bit = 31 - Math.clz32(v & -v);
        const d = b * 8 + bit;
        lut[o + v] = lut[o + (v & (v - 1))]! + (d < D ? q[d]! : 0);
      }
    }
    const scores = new Float32Array(slots.length);
    const signs = this.#signs;
    for (let c = 0; c < slots.length; c++) {
      const o = slots[c]! * W;
      let s = 0;
      for (let w = 0, l = 0; w < W; w++, l += 1024) {
        const x = signs[o + w]!;
        s +=
          lut[l + (x & 255)]! +
          lut[l + 256 + ((x >>> 8) & 255)]! +
          lut[l + 512 + ((x >>> 16) & 255)]! +
          lut[l + 768 + (x >>> 24)]!;
      }
      scores[c] = s;
    }
    // The cut from a histogram of the scores (4,096 bins): no sort of every candidate.
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
    return cutAt(bins, hist, keep).map((c) => slots[c]!);
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
    // Pass 2: int8 dot products against the query in int8 too (integer arithmetic),
    // four codes per 32-bit read (little-endian on every platform Node runs on).
    const D = this.dims;
    const P = this.#span >> 2;
    let qmax = 0;
    for (let i = 0; i < D; i++) qmax = Math.max(qmax, Math.abs(q[i]!));
    const qs = qmax === 0 ? 0 : 127 / qmax;
    const qi = new Int32Array(this.#span);
    for (let i = 0; i < D; i++) qi[i] = Math.round(q[i]! * qs);
    const est = new Float64Array(slots.length);
    const q32 = this.#q32;
    const inv = this.#inv;
    for (let c = 0; c < slots.length; c++) {
      const o = slots[c]! * P;
      let s0 = 0;
      let s1 = 0;
      for (let w = 0, i = 0; w < P; w++, i += 4) {
        const x = q32[o + w]!;
        s0 += ((x << 24) >> 24) * qi[i]! + ((x << 16) >> 24) * qi[i + 1]!;
        s1 += ((x << 8) >> 24) * qi[i + 2]! + (x >> 24) * qi[i + 3]!;
      }
      est[c] = (s0 + s1) * inv[slots[c]!]!;
    }
    // The pool's cut from the estimates sorted as numbers (no comparator over every
    // candidate), then only those at or above it ordered (ties by rowid).
    const rowids = this.#rowids;
    const cut = est.slice().sort()[Math.max(0, est.length - pool)]!;
    const order: number[] = [];
    for (let c = 0; c < est.length; c++) if (est[c]! >= cut) order.push(c);
    order.sort((a, b) => est[b]! - est[a]! || rowids[slots[a]!]! - rowids[slots[b]!]!);
    // Pass 3: the best `pool` scored against the float query (only the vector's own
    // quantization error is left: within ~0.001 of the exact cosine at 512 dimensions).
    const q8 = this.#q8;
    const span = this.#span;
    return order.slice(0, pool).map((c) => {
      const slot = slots[c]!;
      const o = slot * span;
      let s = 0;
      for (let i = 0; i < D; i++) s += q8[o + i]! * q[i]!;
      return { rowid: rowids[slot]!, similarity: s * inv[slot]! };
    });
  }
}
