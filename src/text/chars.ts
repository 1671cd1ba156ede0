/**
 * Code-point length and code-point ordering: the only definitions of "char" and of
 * string order used anywhere in promptctx (docs/text-and-tokens.md).
 */

const SURROGATE = /[\uD800-\uDFFF]/;

/**
 * True when `s` has a UTF-16 surrogate (an astral character or a lone surrogate). Without
 * one, code-point length is `s.length` and code-point order is the native UTF-16 order
 * (`<`), which callers comparing many strings may use as a fast path.
 *
 * @example hasSurrogate("a🚀") // true
 */
export function hasSurrogate(s: string): boolean {
  return SURROGATE.test(s);
}

/** A string with ES2024's `isWellFormed` (Node ≥ 20; the compiler's lib is ES2023). */
type WellFormedCheck = string & { isWellFormed(): boolean };

/**
 * True when `s` is well-formed UTF-16 — no lone surrogate — the one check behind every
 * text schema (`textString`): ES2024 `String.prototype.isWellFormed`, native (a `\p{Cs}`
 * regex scan takes several times longer on long text, and every text field is checked).
 *
 * @example isWellFormedText("a🚀") // true
 * isWellFormedText("\ud800") // false
 */
export function isWellFormedText(s: string): boolean {
  return (s as WellFormedCheck).isWellFormed();
}

/**
 * Number of Unicode code points in `s` (a lone surrogate counts as one).
 *
 * @example cpLength("🚀a") // 2
 */
export function cpLength(s: string): number {
  // Fast path: without surrogates every unit is one code point. The regex scan is native,
  // several times faster than the loop below on the long, mostly BMP texts of a prompt.
  if (!hasSurrogate(s)) return s.length;
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
    if (ca !== cb) {
      // A lone surrogate is its own code point: unit fix-up would misplace it.
      if (isSurrogate(ca) || isSurrogate(cb)) return compareFrom(a, b, i);
      return fixup(ca) < fixup(cb) ? -1 : 1;
    }
  }
  return a.length < b.length ? -1 : 1;
}

function isSurrogate(u: number): boolean {
  return u >= 0xd800 && u <= 0xdfff;
}

// Compares code point by code point from the boundary at or just before unit `i`, the
// first unit where `a` and `b` differ (they share every unit before it).
function compareFrom(a: string, b: string, i: number): number {
  const prev = i > 0 ? a.charCodeAt(i - 1) : 0;
  let j = prev >= 0xd800 && prev <= 0xdbff ? i - 1 : i;
  while (j < a.length && j < b.length) {
    const pa = a.codePointAt(j) as number;
    const pb = b.codePointAt(j) as number;
    if (pa !== pb) return pa < pb ? -1 : 1;
    j += pa > 0xffff ? 2 : 1;
  }
  return a.length < b.length ? -1 : 1;
}

/**
 * UTF-16 offset of every code-point boundary of `s` (length = cpLength(s) + 1), to map
 * code-point spans to string indices.
 *
 * @example cpOffsets("a🚀b") // Uint32Array [0, 1, 3, 4]
 */
export function cpOffsets(s: string): Uint32Array {
  const out = new Uint32Array(cpLength(s) + 1);
  let k = 0;
  for (let i = 0; i < s.length; i++) {
    out[k++] = i;
    const c = s.charCodeAt(i);
    if (c >= 0xd800 && c <= 0xdbff && i + 1 < s.length) {
      const d = s.charCodeAt(i + 1);
      if (d >= 0xdc00 && d <= 0xdfff) i++;
    }
  }
  out[k] = s.length;
  return out;
}

/**
 * The code point of `s` that starts at UTF-16 offset `i` ("" at the end). A lone
 * surrogate is its own character.
 *
 * @example cpAt("a🚀", 1) // "🚀"
 */
export function cpAt(s: string, i: number): string {
  const cp = s.codePointAt(i);
  return cp === undefined ? "" : String.fromCodePoint(cp);
}

/**
 * The code point of `s` that ends just before UTF-16 offset `i` ("" at the start). A lone
 * surrogate is its own character.
 *
 * @example cpBefore("a🚀", 3) // "🚀"
 */
export function cpBefore(s: string, i: number): string {
  if (i <= 0) return "";
  const low = s.charCodeAt(i - 1);
  if (low >= 0xdc00 && low <= 0xdfff && i >= 2) {
    const high = s.charCodeAt(i - 2);
    if (high >= 0xd800 && high <= 0xdbff) return s.slice(i - 2, i);
  }
  return s.slice(i - 1, i);
}

/**
 * The first `n` code points of `s` (all of it when shorter). A lone surrogate counts as
 * one code point.
 *
 * @example cpPrefix("🚀ab", 2) // "🚀a"
 */
export function cpPrefix(s: string, n: number): string {
  if (s.length <= n) return s;
  let i = 0;
  for (let k = 0; k < n && i < s.length; k++) {
    const c = s.charCodeAt(i);
    const d = s.charCodeAt(i + 1); // NaN past the end
    i += c >= 0xd800 && c <= 0xdbff && d >= 0xdc00 && d <= 0xdfff ? 2 : 1;
  }
  return s.slice(0, i);
}

/** A character of a word, for whole-word matching: a letter, digit, mark or `_`. */
export const WORD_CHAR = /[\p{L}\p{N}\p{M}_]/u;

/** Scripts written without spaces between words (Han, Hiragana, Katakana). */
const UNSPACED = /[\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}]/u;

/**
 * Whether a whole-word match must check the text's character beside a keyword whose edge
 * character is `edge`: only when the edge is a word character of a spaced script (a
 * keyword ending in `.` or in Han matches inside a run of text).
 *
 * @example [needsWordBoundary("a"), needsWordBoundary("."), needsWordBoundary("漢")] // [true, false, false]
 */
export function needsWordBoundary(edge: string): boolean {
  return WORD_CHAR.test(edge) && !UNSPACED.test(edge);
}
