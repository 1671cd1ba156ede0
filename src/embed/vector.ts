/**
 * Vector arithmetic shared by every embedder and store: unit length and cosine (a dot
 * product of unit vectors). One place, so SQLite, PostgreSQL and the tests agree.
 */

/**
 * `v` scaled to unit length (a zero vector stays zero), as a new Float32Array.
 *
 * @example unitVector(Float32Array.of(3, 4)) // Float32Array [0.6, 0.8]
 */
export function unitVector(v: ArrayLike<number>): Float32Array {
  let sum = 0;
  for (let i = 0; i < v.length; i++) sum += v[i]! * v[i]!;
  const norm = Math.sqrt(sum);
  const out = new Float32Array(v.length);
  if (norm === 0) return out;
  for (let i = 0; i < v.length; i++) out[i] = v[i]! / norm;
  return out;
}

/**
 * The cosine similarity of two unit vectors (their dot product), in [-1, 1].
 *
 * @example cosine(Float32Array.of(1, 0), Float32Array.of(0, 1)) // 0
 */
export function cosine(a: Float32Array, b: Float32Array): number {
  let dot = 0;
  for (let i = 0; i < a.length; i++) dot += a[i]! * b[i]!;
  return dot;
}

/** True when every component is a finite number (no NaN, no infinity). */
export function isFiniteVector(v: Float32Array): boolean {
  for (let i = 0; i < v.length; i++) if (!Number.isFinite(v[i]!)) return false;
  return true;
}
