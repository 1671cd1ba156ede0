/**
 * An in-memory candidate index over one large scope's vectors, shared by both dialects
 * (sqlite/vectors.ts and pg/vectors.ts keep one per large scope of an open store). An
 * exact scan reads every float of the scope (100,000 × 512 dimensions: ~200 ms with
 * sqlite-vec, more with pgvector); this index finds the nearest in a fraction of that, in
 * three passes:
 *
 * 1. **sign codes** (1 bit per dimension, 64 bytes at 512): each vector scored against the
 *    float query (asymmetric: Σ qᵢ over the dimensions where the vector is ≥ 0, summed per
 *    byte from a 256-entry table), the best {@link CANDIDATE_SHARE} kept;
 * 2. **int8 codes** (per-vector scale): those candidates re-scored by an int8 dot product,
 *    the best `pool` handed back;
 * 3. the best `pool` re-scored against the float query: their similarity is the cosine
 *    up to the vector's int8 rounding (within ~0.001 at 512 dimensions).
 *
 * The caller checks each candidate is still embedded in the store (vectors.ts): a vector
 * dropped since it was indexed is never a hit. Measured recall@10 of the top 10 against a
 * brute-force cosine top 10 on random unit vectors: docs/sources.md "Recall by meaning".
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

/** One large scope's vectors in compact codes (see the module comment). */
export class ScopeIndex {
  readonly dims: number;
  #bytes: number;
  #n = 0;
  #cap = 0;
  #rowids = new Float64Array(0);
  #cats = new Uint16Array(0);
  #signs = new Uint8Array(0);
  #q8 = new Int8Array(0);
  #inv = new Float32Array(0);
  #slot = new Map<number, number>();
  #catIds = new Map<string, number>();

  constructor(dims: number) {
    this.dims = dims;
    this.#bytes = Math.ceil(dims / 8);
  }

  /** Vectors held. */
  get size(): number {
    return this.#n;
  }

  /** Bytes held by the codes (for the cache's budget). */
  get byteSize(): number {
    return this.#cap * (8 + 2 + 4 + this.#bytes + this.dims);
  }

  #grow(): void {
    const cap = Math.max(1024, this.#cap * 2);
    const grow = <T extends Float64Array | Uint16Array | Uint8Array | Int8Array | Float32Array>(
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
    this.#signs = grow(this.#signs, (n) => new Uint8Array(n), this.#bytes);
    this.#q8 = grow(this.#q8, (n) => new Int8Array(n), this.dims);
    this.#cap = cap;
  }

  /** Adds or replaces the vector of `rowid`. */
  set(rowid: number, category: string, v: Float32Array): void {
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
    let max = 0;
    for (let i = 0; i < this.dims; i++) max = Math.max(max, Math.abs(v[i]!));
    const scale = max === 0 ? 0 : 127 / max;
    this.#inv[s] = max === 0 ? 0 : 1 / scale;
    const so = s * this.#bytes;
    this.#signs.fill(0, so, so + this.#bytes);
    const qo = s * this.dims;
    for (let i = 0; i < this.dims; i++) {
      this.#q8[qo + i] = Math.round(v[i]! * scale);
      if (v[i]! >= 0) this.#signs[so + (i >> 3)]! |= 1 << (i & 7);
    }
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
    this.#signs.copyWithin(s * this.#bytes, last * this.#bytes, (last + 1) * this.#bytes);
    this.#q8.copyWithin(s * this.dims, last * this.dims, (last + 1) * this.dims);
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

  /** Pass 1: the sign-code score of every vector (masked ones: −∞). */
  #signScores(q: Float32Array, mask: Uint8Array | null): Float32Array {
    const B = this.#bytes;
    const lut = new Float32Array(B * 256);
    for (let b = 0; b < B; b++) {
      const o = b << 8;
      for (let v = 1; v < 256; v++) {
        const bit = 31 - Math.clz32(v & -v);
        const d = b * 8 + bit;
        lut[o + v] = lut[o + (v & (v - 1))]! + (d < this.dims ? q[d]! : 0);
      }
    }
    const n = this.#n;
    const scores = new Float32Array(n);
    const signs = this.#signs;
    const cats = this.#cats;
    // Locals in the hot loop (a private field read per row costs as much as the row).
    for (let r = 0, o = 0; r < n; r++, o += B) {
      if (mask !== null && mask[cats[r]!] !== 1) {
        scores[r] = Number.NEGATIVE_INFINITY;
        continue;
      }
      let s = 0;
      for (let b = 0, l = 0; b < B; b++, l += 256) s += lut[l + signs[o + b]!]!;
      scores[r] = s;
    }
    return scores;
  }

  /** Slots whose score is among the best `keep` (ties at the threshold included). */
  #best(scores: Float32Array, keep: number): number[] {
    const n = scores.length;
    const NONE = Number.NEGATIVE_INFINITY;
    let lo = Number.POSITIVE_INFINITY;
    let hi = NONE;
    for (let r = 0; r < n; r++) {
      const x = scores[r]!;
      if (x === NONE) continue;
      if (x < lo) lo = x;
      if (x > hi) hi = x;
    }
    if (lo > hi) return [];
    const H = 4096;
    const scale = hi > lo ? H / (hi - lo) : 0;
    const bins = new Int32Array(n);
    const hist = new Int32Array(H);
    for (let r = 0; r < n; r++) {
      const x = scores[r]!;
      const b = x === NONE ? -1 : Math.min(H - 1, ((x - lo) * scale) | 0);
      bins[r] = b;
      if (b >= 0) hist[b]!++;
    }
    let acc = 0;
    let cut = H - 1;
    for (; cut > 0; cut--) {
      acc += hist[cut]!;
      if (acc >= keep) break;
    }
    const out: number[] = [];
    for (let r = 0; r < n; r++) if (bins[r]! >= cut) out.push(r);
    return out;
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
    const mask = this.#mask(categories);
    const keep = Math.max(MIN_CANDIDATES, pool, Math.ceil(this.#n * CANDIDATE_SHARE));
    const slots = this.#best(this.#signScores(q, mask), keep);
    // Pass 2: int8 dot products against the query in int8 too (integer arithmetic).
    let qmax = 0;
    for (let i = 0; i < this.dims; i++) qmax = Math.max(qmax, Math.abs(q[i]!));
    const qs = qmax === 0 ? 0 : 127 / qmax;
    const qi = new Int32Array(this.dims);
    for (let i = 0; i < this.dims; i++) qi[i] = Math.round(q[i]! * qs);
    const est = new Float64Array(slots.length);
    const q8 = this.#q8;
    const inv = this.#inv;
    const D = this.dims;
    for (let c = 0; c < slots.length; c++) {
      const o = slots[c]! * D;
      let s0 = 0;
      let s1 = 0;
      for (let i = 0; i < D - 1; i += 2) {
        s0 += q8[o + i]! * qi[i]!;
        s1 += q8[o + i + 1]! * qi[i + 1]!;
      }
      if (D % 2 === 1) s0 += q8[o + D - 1]! * qi[D - 1]!;
      est[c] = (s0 + s1) * inv[slots[c]!]!;
    }
    const order = slots.map((_, c) => c).sort((a, b) => est[b]! - est[a]! || a - b);
    // Pass 3: the best `pool` scored against the float query (only the vector's own
    // quantization error is left: within ~0.001 of the exact cosine at 512 dimensions).
    return order.slice(0, pool).map((c) => {
      const slot = slots[c]!;
      const o = slot * D;
      let s = 0;
      for (let i = 0; i < D; i++) s += q8[o + i]! * q[i]!;
      return { rowid: this.#rowids[slot]!, similarity: s * inv[slot]! };
    });
  }
}
