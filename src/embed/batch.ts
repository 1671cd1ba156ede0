/** Batching shared by the embedders and the store's writes. */

/**
 * `items` in consecutive slices of at most `size` (the last may be shorter).
 *
 * @example chunked([1, 2, 3], 2) // [[1, 2], [3]]
 */
export function chunked<T>(items: readonly T[], size: number): T[][] {
  const out: T[][] = [];
  for (let i = 0; i < items.length; i += size) out.push(items.slice(i, i + size));
  return out;
}
