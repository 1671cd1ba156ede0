/**
 * Code-point length and code-point ordering: the only definitions of "char" and of
 * string order used anywhere in promptctx (spec 01).
 */

/**
 * Number of Unicode code points in `s` (a lone surrogate counts as one).
 *
 * @example cpLength("🚀a") // 2
 */
export function cpLength(s: string): number {
  let n = s.length;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c >= 0xd800 && c <= 0xdbff && i + 1 < s.length) {
      const d = s.charCodeAt(i + 1);
      if (d >= 0xdc00 && d <= 0xdfff) {
        n--;
        i++;
      }
    }
  }
  return n;
}

// Maps a UTF-16 unit so that unit order equals code-point order: surrogates (astral
// characters) must sort after U+E000..U+FFFF.
function fixup(u: number): number {
  if (u >= 0xe000) return u - 0x800;
  if (u >= 0xd800) return u + 0x2000;
  return u;
}

/**
 * Compares two strings by code point (never locale). Returns -1, 0 or 1.
 *
 * @example ["b", "😀", "\uffff"].sort(compareCodePoints) // ["b", "\uffff", "😀"]
 */
export function compareCodePoints(a: string, b: string): number {
  if (a === b) return 0;
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) {
    const ca = a.charCodeAt(i);
    const cb = b.charCodeAt(i);
    if (ca !== cb) return fixup(ca) < fixup(cb) ? -1 : 1;
  }
  return a.length < b.length ? -1 : 1;
}
