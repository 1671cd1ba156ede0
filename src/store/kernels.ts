/**
 * The integer loops of the candidate index (scope-index.ts) as a small WebAssembly
 * module: the Hamming distance of every sign code to the query's (`i64.popcnt`, one
 * instruction per 64 bits), the rows within a distance, asymmetric scores of chosen sign
 * codes against a table of the query's sums per code byte, and int8 dot products of
 * chosen codes against the query (SIMD: `i32x4.dot_i16x8_s`, sixteen codes per 128-bit
 * read). The same loops in JavaScript took most of a search of 100,000 vectors
 * (docs/sources.md "Recall by meaning"). Integer work only: the results are exact and
 * the same on every platform (test/store/kernels.test.ts checks them against plain loops).
 *
 * The module is written out here (there is no WebAssembly compiler in the build); what
 * each function computes (all parameters i32 addresses or counts):
 *
 *   hamming(codes, n, words, q, out, hist)   ;; words: 64-bit words a code
 *     for r < n: d = Σ_j popcnt(i64[codes + 8(r·words + j)] ^ i64[q + 8j])
 *                u16[out + 2r] = d; i32[hist + 4d] += 1
 *   select(dist, n, cut, out) → m            ;; the rows r with u16[dist + 2r] ≤ cut
 *     in order into i32[out + 4·0..m)
 *   asym(codes, words, slots, count, table, out)
 *     for c < count: code = the code of row i32[slots + 4c], bytes b < 8·words
 *       i32[out + 8c] = Σ_b u16[table + 2(256b + u8[code + b])]
 *       i32[out + 8c + 4] = Σ_j popcnt(code_j)
 *   dot8(codes, span, slots, count, q16, out) ;; span: a multiple of 16
 *     for c < count: i32[out + 4c] = Σ_i i8[codes + span · i32[slots + 4c] + i] · i16[q16 + 2i]
 *
 * They read and write one memory, imported: the index owns it and grows it.
 */

/** Unsigned LEB128. */
function leb(n: number): number[] {
  const out: number[] = [];
  do {
    let b = n & 0x7f;
    n >>>= 7;
    if (n !== 0) b |= 0x80;
    out.push(b);
  } while (n !== 0);
  return out;
}

/** Signed LEB128 (`i32.const`). */
function sleb(n: number): number[] {
  const out: number[] = [];
  for (;;) {
    const b = n & 0x7f;
    n >>= 7;
    if ((n === 0 && (b & 0x40) === 0) || (n === -1 && (b & 0x40) !== 0)) return [...out, b];
    out.push(b | 0x80);
  }
}

/** A section: id, then its byte length and bytes. */
function section(id: number, bytes: number[]): number[] {
  return [id, ...leb(bytes.length), ...bytes];
}

/** A vector of items: count, then the items. */
function vec(items: number[][]): number[] {
  return [...leb(items.length), ...items.flat()];
}

// Opcodes (WebAssembly core 2.0 and its fixed-width SIMD).
const I32 = 0x7f;
const I64 = 0x7e;
const V128 = 0x7b;
const [BLOCK, LOOP, IF, END, BR, BR_IF] = [0x02, 0x03, 0x04, 0x0b, 0x0c, 0x0d];
const VOID = 0x40;
const [GET, SET] = [0x20, 0x21];
const [I32_LOAD, I64_LOAD, I32_LOAD8_U, I32_LOAD16_U] = [0x28, 0x29, 0x2d, 0x2f];
const [I32_STORE, I32_STORE16] = [0x36, 0x3b];
const [I32_CONST, I64_CONST] = [0x41, 0x42];
const [I32_LE_U, I32_GE_U, I32_ADD, I32_MUL, I32_SHL] = [0x4d, 0x4f, 0x6a, 0x6c, 0x74];
const [I64_POPCNT, I64_ADD, I64_XOR, I32_WRAP_I64] = [0x7b, 0x7c, 0x85, 0xa7];
const simd = (op: number): number[] => [0xfd, ...leb(op)];
const V128_LOAD = simd(0x00);
const V128_CONST = simd(0x0c);
const I32X4_EXTRACT_LANE = simd(0x1b);
const I16X8_EXTEND_LOW_I8X16_S = simd(0x87);
const I16X8_EXTEND_HIGH_I8X16_S = simd(0x88);
const I32X4_ADD = simd(0xae);
const I32X4_DOT_I16X8_S = simd(0xba);

const get = (i: number): number[] => [GET, i];
const set = (i: number): number[] => [SET, i];
const i32 = (n: number): number[] => [I32_CONST, ...sleb(n)];
/** `local[i] += n` (i32). */
const addTo = (i: number, n: number): number[] => [...get(i), ...i32(n), I32_ADD, ...set(i)];
/** `for (; local[i] < local[limit]; ) { body }`: a block around a loop. */
const until = (i: number, limit: number, body: number[]): number[] => [
  BLOCK,
  VOID,
  LOOP,
  VOID,
  ...get(i),
  ...get(limit),
  I32_GE_U,
  BR_IF,
  1,
  ...body,
  BR,
  0,
  END,
  END,
];

/** hamming(codes, n, words, q, out, hist); locals r, j, d (i64), p, h. */
function hammingBody(): number[] {
  const [codes, n, words, q, out, hist, r, j, d, p, h] = [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10];
  const word = [
    ...get(p),
    I64_LOAD,
    3,
    0,
    ...get(q),
    ...get(j),
    ...i32(3),
    I32_SHL,
    I32_ADD,
    I64_LOAD,
    3,
    0,
    I64_XOR,
    I64_POPCNT,
    ...get(d),
    I64_ADD,
    ...set(d),
    ...addTo(p, 8),
    ...addTo(j, 1),
  ];
  const row = [
    I64_CONST,
    0,
    ...set(d),
    ...i32(0),
    ...set(j),
    ...until(j, words, word),
    ...get(out),
    ...get(r),
    ...i32(1),
    I32_SHL,
    I32_ADD,
    ...get(d),
    I32_WRAP_I64,
    I32_STORE16,
    1,
    0,
    // hist[d] += 1
    ...get(hist),
    ...get(d),
    I32_WRAP_I64,
    ...i32(2),
    I32_SHL,
    I32_ADD,
    ...set(h),
    ...get(h),
    ...get(h),
    I32_LOAD,
    2,
    0,
    ...i32(1),
    I32_ADD,
    I32_STORE,
    2,
    0,
    ...addTo(r, 1),
  ];
  const locals = vec([
    [2, I32],
    [1, I64],
    [2, I32],
  ]);
  return [...locals, ...get(codes), ...set(p), ...until(r, n, row), END];
}

/** select(dist, n, cut, out) → count: the rows whose u16 distance is at most `cut`. */
function selectBody(): number[] {
  const [dist, n, cut, out, r, m] = [0, 1, 2, 3, 4, 5];
  const row = [
    ...get(dist),
    ...get(r),
    ...i32(1),
    I32_SHL,
    I32_ADD,
    I32_LOAD16_U,
    1,
    0,
    ...get(cut),
    I32_LE_U,
    IF,
    VOID,
    ...get(out),
    ...get(m),
    ...i32(2),
    I32_SHL,
    I32_ADD,
    ...get(r),
    I32_STORE,
    2,
    0,
    ...addTo(m, 1),
    END,
    ...addTo(r, 1),
  ];
  return [...vec([[2, I32]]), ...until(r, n, row), ...get(m), END];
}

/** dot8(codes, span, slots, count, q16, out); locals c, i, base, acc (v128), x (v128). */
function dotBody(): number[] {
  const [codes, span, slots, count, q16, out, c, i, base, acc, x] = [
    0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10,
  ];
  // q16 + 2i (+ 16): the query's 16-bit halves for the low and high eight codes.
  const half = (high: boolean): number[] => [
    ...get(x),
    ...(high ? I16X8_EXTEND_HIGH_I8X16_S : I16X8_EXTEND_LOW_I8X16_S),
    ...get(q16),
    ...get(i),
    ...i32(1),
    I32_SHL,
    I32_ADD,
    ...V128_LOAD,
    4,
    high ? 16 : 0,
    ...I32X4_DOT_I16X8_S,
    ...get(acc),
    ...I32X4_ADD,
    ...set(acc),
  ];
  const step = [
    ...get(base),
    ...get(i),
    I32_ADD,
    ...V128_LOAD,
    4,
    0,
    ...set(x),
    ...half(false),
    ...half(true),
    ...addTo(i, 16),
  ];
  const lane = (l: number): number[] => [...get(acc), ...I32X4_EXTRACT_LANE, l];
  const candidate = [
    ...get(codes),
    ...get(slots),
    ...get(c),
    ...i32(2),
    I32_SHL,
    I32_ADD,
    I32_LOAD,
    2,
    0,
    ...get(span),
    I32_MUL,
    I32_ADD,
    ...set(base),
    ...V128_CONST,
    ...new Array<number>(16).fill(0),
    ...set(acc),
    ...i32(0),
    ...set(i),
    ...until(i, span, step),
    ...get(out),
    ...get(c),
    ...i32(2),
    I32_SHL,
    I32_ADD,
    ...lane(0),
    ...lane(1),
    I32_ADD,
    ...lane(2),
    I32_ADD,
    ...lane(3),
    I32_ADD,
    I32_STORE,
    2,
    0,
    ...addTo(c, 1),
  ];
  const locals = vec([
    [3, I32],
    [2, V128],
  ]);
  return [...locals, ...until(c, count, candidate), END];
}

/**
 * asym's parameters (codes, words, slots, count, table, out) and locals (c, j, base, tb, t;
 * p of i64): per slot, t = Σ_b u16[table + 2(256b + byte b of the code)] over the code's
 * bytes, p = popcnt(code). One table read per byte (eight bits at once) instead of one
 * popcount per bit plane and word: a quarter of the work per candidate, same sums.
 */
const A = {
  ...{ codes: 0, words: 1, slots: 2, count: 3, table: 4, out: 5 },
  ...{ c: 6, j: 7, base: 8, tb: 9, t: 10, p: 11 },
};

/** asym's loop over one code's words: p += popcnt(word); t += its eight bytes' entries. */
function asymWord(): number[] {
  // Byte k of the word (offset k), the table's row of that byte (offset 512k from tb).
  const byte = (k: number): number[] => [
    ...get(A.base),
    I32_LOAD8_U,
    0,
    ...leb(k),
    ...i32(1),
    I32_SHL,
    ...get(A.tb),
    I32_ADD,
    I32_LOAD16_U,
    1,
    ...leb(512 * k),
    ...get(A.t),
    I32_ADD,
    ...set(A.t),
  ];
  return [
    ...get(A.base),
    I64_LOAD,
    3,
    0,
    I64_POPCNT,
    ...get(A.p),
    I64_ADD,
    ...set(A.p),
    ...[0, 1, 2, 3, 4, 5, 6, 7].flatMap(byte),
    ...addTo(A.base, 8),
    ...addTo(A.tb, 4096),
    ...addTo(A.j, 1),
  ];
}

/** asym's body (see {@link A}). */
function asymBody(): number[] {
  const store = (offset: number, v: number[]): number[] => [
    ...get(A.out),
    ...get(A.c),
    ...i32(3),
    I32_SHL,
    I32_ADD,
    ...v,
    I32_STORE,
    2,
    offset,
  ];
  const candidate = [
    ...get(A.codes),
    ...get(A.slots),
    ...get(A.c),
    ...i32(2),
    I32_SHL,
    I32_ADD,
    I32_LOAD,
    2,
    0,
    ...get(A.words),
    ...i32(3),
    I32_SHL,
    I32_MUL,
    I32_ADD,
    ...set(A.base),
    ...get(A.table),
    ...set(A.tb),
    ...i32(0),
    ...set(A.t),
    I64_CONST,
    0,
    ...set(A.p),
    ...i32(0),
    ...set(A.j),
    ...until(A.j, A.words, asymWord()),
    ...store(0, get(A.t)),
    ...store(4, [...get(A.p), I32_WRAP_I64]),
    ...addTo(A.c, 1),
  ];
  const locals = vec([
    [5, I32],
    [1, I64],
  ]);
  return [...locals, ...until(A.c, A.count, candidate), END];
}

/** The module's bytes (see the module comment). */
function moduleBytes(): Uint8Array {
  const fn = (params: number, results = 0) => [
    0x60,
    ...leb(params),
    ...new Array<number>(params).fill(I32),
    ...leb(results),
    ...new Array<number>(results).fill(I32),
  ];
  const name = (s: string) => [...leb(s.length), ...Array.from(s, (ch) => ch.charCodeAt(0))];
  const hamming = hammingBody();
  const dot = dotBody();
  const asym = asymBody();
  const select = selectBody();
  return Uint8Array.from([
    ...[0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00],
    ...section(1, vec([fn(6), fn(4, 1)])),
    ...section(2, vec([[...name("env"), ...name("memory"), 0x02, 0x00, 0x01]])),
    ...section(3, vec([[0], [0], [0], [1]])),
    ...section(
      7,
      vec([
        [...name("hamming"), 0x00, 0],
        [...name("dot8"), 0x00, 1],
        [...name("asym"), 0x00, 2],
        [...name("select"), 0x00, 3],
      ]),
    ),
    ...section(10, vec([hamming, dot, asym, select].map((body) => [...leb(body.length), ...body]))),
  ]);
}

/** The kernels over one memory (see the module comment). */
export interface Kernels {
  readonly memory: { buffer: ArrayBuffer; grow(pages: number): number };
  hamming(codes: number, n: number, words: number, q: number, out: number, hist: number): void;
  select(dist: number, n: number, cut: number, out: number): number;
  dot8(codes: number, span: number, slots: number, count: number, q16: number, out: number): void;
  asym(
    codes: number,
    words: number,
    slots: number,
    count: number,
    table: number,
    out: number,
  ): void;
}

/** What this file uses of the global `WebAssembly` (the lib here has no WebAssembly types). */
interface WasmApi {
  Memory: new (d: { initial: number }) => Kernels["memory"];
  Module: new (bytes: Uint8Array) => object;
  Instance: new (m: object, imports: object) => { exports: object };
}

/**
 * A fresh instance of the kernels over a memory of its own of `pages` 64 KB pages.
 *
 * @example const k = kernels(1); k.hamming(0, 0, 8, 0, 0);
 */
export function kernels(pages: number): Kernels {
  const wasm = (globalThis as unknown as { WebAssembly: WasmApi }).WebAssembly;
  const memory = new wasm.Memory({ initial: pages });
  const { exports } = new wasm.Instance(new wasm.Module(moduleBytes()), { env: { memory } });
  const k = exports as Omit<Kernels, "memory">;
  return { memory, hamming: k.hamming, dot8: k.dot8, asym: k.asym, select: k.select };
}
