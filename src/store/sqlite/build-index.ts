/**
 * Building a large scope's candidate index (scope-index.ts) from the stored vectors.
 *
 * sqlite-vec keeps a partition's vectors in chunks of 128 (its shadow tables
 * `<table>_chunks`: a validity bitmap and the rowids as int64, and
 * `<table>_vector_chunks00`: the float32 vectors): reading a chunk row reads 128 vectors,
 * where a point read through the `vec0` table costs ~30–100 µs per vector (100,000
 * vectors: 0.5 s against 4–9 s, measured in docs/sources.md). The layout is sqlite-vec
 * 0.1.9's; it is checked (blob lengths, the first vector against a point read), and a
 * vector not found in the chunks is read point by point: another layout costs speed,
 * never a wrong vector.
 *
 * The index's center (the point sign codes are taken around) is the mean of the scope's
 * vectors, rounded to 1/1024 so that the order the vectors are summed in cannot change it.
 */
import type Database from "better-sqlite3";
import { ScopeIndex } from "../scope-index.js";

/** The chunk layout is not the one this module reads. */
class LayoutError extends Error {}

/** The floats of a stored vector (copied: the buffer may be reused). */
export function floats(b: Buffer): Float32Array {
  const out = new Float32Array(b.byteLength / 4);
  new Uint8Array(out.buffer).set(b);
  return out;
}

interface ChunkRow {
  id: number;
  size: number;
  validity: Buffer;
  rowids: Buffer;
}

/** Whether this connection has checked the chunk layout (once is enough). */
export interface LayoutCheck {
  done: boolean;
}

/**
 * The vectors of `wanted` (rowids of `scope`) from the scope's chunks, then any left over
 * point by point.
 */
export function* scopeVectors(
  db: Database.Database,
  table: string,
  scope: string,
  dims: number,
  wanted: ReadonlyMap<number, string>,
  layout: LayoutCheck = { done: false },
): Generator<[number, Float32Array]> {
  const one = db.prepare(`SELECT embedding FROM ${table} WHERE rowid = ?`).pluck();
  const seen = new Set<number>();
  try {
    // Chunks in order, then each one's vectors by key: one query joining both sorts
    // every vector blob through a temporary b-tree (2× the time).
    const chunks = db
      .prepare(`SELECT chunk_id AS id, size, validity, rowids FROM ${table}_chunks
        WHERE partition00 = ? ORDER BY chunk_id`)
      .iterate(scope) as IterableIterator<ChunkRow>;
    const vectorsOf = db
      .prepare(`SELECT vectors FROM ${table}_vector_chunks00 WHERE rowid = ?`)
      .pluck();
    for (const c of chunks) {
      const size = c.size;
      const vectors = vectorsOf.get(c.id) as Buffer | undefined;
      if (vectors === undefined) throw new LayoutError();
      if (
        c.validity.byteLength !== Math.ceil(size / 8) ||
        c.rowids.byteLength !== size * 8 ||
        vectors.byteLength !== size * dims * 4
      ) {
        throw new LayoutError();
      }
      const all = floats(vectors);
      for (let i = 0; i < size; i++) {
        if ((c.validity[i >> 3]! & (1 << (i & 7))) === 0) continue;
        const rowid = Number(c.rowids.readBigInt64LE(i * 8));
        if (!wanted.has(rowid) || seen.has(rowid)) continue;
        const v = all.subarray(i * dims, (i + 1) * dims);
        if (!layout.done) {
          const stored = one.get(BigInt(rowid)) as Buffer | undefined;
          if (
            stored === undefined ||
            !Buffer.from(v.buffer, v.byteOffset, v.byteLength).equals(stored)
          )
            throw new LayoutError();
          layout.done = true;
        }
        seen.add(rowid);
        yield [rowid, v];
      }
    }
  } catch (err) {
    // A missing shadow table or column, or another layout: every vector point by point.
    if (!(err instanceof LayoutError) && !(err instanceof Error && /no such/.test(err.message)))
      throw err;
    seen.clear();
  }
  for (const rowid of wanted.keys()) {
    if (seen.has(rowid)) continue;
    const stored = one.get(BigInt(rowid)) as Buffer | undefined;
    if (stored !== undefined) yield [rowid, floats(stored)];
  }
}

/**
 * The candidate index of `scope`: its embedded memories' vectors (state `embedded`),
 * coded around their mean.
 *
 * @example const index = buildScopeIndex(db, "memory_vec", "u1", 512);
 */
export function buildScopeIndex(
  db: Database.Database,
  table: string,
  scope: string,
  dims: number,
  layout?: LayoutCheck,
): ScopeIndex {
  const rows = db
    .prepare(`SELECT m.rowid AS rowid, m.category AS category FROM memories m
      JOIN memory_vec_state s ON s.rowid = m.rowid AND s.state = 'embedded'
      WHERE m.user_scope = ? ORDER BY m.rowid`)
    .raw()
    .all(scope) as [number, string][];
  const wanted = new Map(rows);
  const index = new ScopeIndex(dims, wanted.size);
  const sum = new Float64Array(dims);
  for (const [rowid, v] of scopeVectors(db, table, scope, dims, wanted, layout)) {
    for (let i = 0; i < dims; i++) sum[i]! += v[i]!;
    index.set(rowid, wanted.get(rowid)!, v, false);
  }
  const n = index.size;
  const center = new Float32Array(dims);
  if (n > 0) for (let i = 0; i < dims; i++) center[i] = Math.round((sum[i]! / n) * 1024) / 1024;
  index.recenter(center);
  return index;
}

/**
 * Every vector of a scope holding fewer than `limit`, straight from its chunks (its
 * memories' rows are not read: a vector is in the table exactly while its memory is
 * `embedded`); `null` when the scope holds `limit` or more, or the chunks cannot be read
 * here (the caller then searches through sqlite-vec).
 */
export function smallScope(
  db: Database.Database,
  table: string,
  scope: string,
  dims: number,
  limit: number,
  layout: LayoutCheck,
): { rowid: number; vector: Float32Array }[] | null {
  let chunks: ChunkRow[];
  try {
    chunks = db
      .prepare(`SELECT chunk_id AS id, size, validity, rowids FROM ${table}_chunks
        WHERE partition00 = ? ORDER BY chunk_id`)
      .all(scope) as ChunkRow[];
  } catch (err) {
    if (err instanceof Error && /no such/.test(err.message)) return null;
    throw err;
  }
  let n = 0;
  for (const c of chunks) {
    if (c.validity.byteLength !== Math.ceil(c.size / 8) || c.rowids.byteLength !== c.size * 8)
      return null;
    for (let i = 0; i < c.size; i++) if ((c.validity[i >> 3]! & (1 << (i & 7))) !== 0) n++;
  }
  if (n >= limit) return null;
  const vectorsOf = db.prepare(`SELECT vectors FROM ${table}_vector_chunks00 WHERE rowid = ?`);
  const one = db.prepare(`SELECT embedding FROM ${table} WHERE rowid = ?`).pluck();
  const out: { rowid: number; vector: Float32Array }[] = [];
  for (const c of chunks) {
    const blob = vectorsOf.pluck().get(c.id) as Buffer | undefined;
    if (blob === undefined || blob.byteLength !== c.size * dims * 4) return null;
    const all = floats(blob);
    for (let i = 0; i < c.size; i++) {
      if ((c.validity[i >> 3]! & (1 << (i & 7))) === 0) continue;
      const rowid = Number(c.rowids.readBigInt64LE(i * 8));
      const vector = all.subarray(i * dims, (i + 1) * dims);
      if (!layout.done) {
        const stored = one.get(BigInt(rowid)) as Buffer | undefined;
        const same = Buffer.from(vector.buffer, vector.byteOffset, vector.byteLength);
        if (stored === undefined || !same.equals(stored)) return null;
        layout.done = true;
      }
      out.push({ rowid, vector });
    }
  }
  return out;
}
