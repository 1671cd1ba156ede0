/**
 * The pre-tokenizer of the BPE encodings: each encoding's split regex written out as a
 * scanner over a per-code-unit class table (the classes are taken from V8's own `\p{…}`
 * and `\s`, so they agree with the regex by construction). It finds where each piece
 * ends, without making strings.
 */

// Character classes, one bit each, of the split regexes.
const L = 1; // \p{L}
const N = 2; // \p{N}
const S = 4; // JavaScript's \s
const U = 8; // [\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}] (o200k: an upper-case run)
const W = 16; // [\p{Ll}\p{Lm}\p{Lo}\p{M}] (o200k: a lower-case run)
const CLASS_SOURCES: readonly (readonly [number, string])[] = [
  [L, "\\p{L}"],
  [N, "\\p{N}"],
  [S, "\\s"],
  [U, "[\\p{Lu}\\p{Lt}\\p{Lm}\\p{Lo}\\p{M}]"],
  [W, "[\\p{Ll}\\p{Lm}\\p{Lo}\\p{M}]"],
];
const CLASS_TESTS = CLASS_SOURCES.map(([bit, src]) => [bit, new RegExp(`^${src}$`, "u")] as const);

/** Classes of a code point, by asking V8's regex engine (the split regexes' own). */
function classify(cp: number): number {
  const ch = String.fromCodePoint(cp);
  let f = 0;
  for (const [bit, re] of CLASS_TESTS) if (re.test(ch)) f |= bit;
  return f;
}

/** Classes of every BMP code unit; surrogates get none (a lone one is "other"). */
export function bmpClasses(): Uint8Array {
  const flags = new Uint8Array(0x10000);
  let all = "";
  for (let c = 0; c < 0x10000; c += 0x400) {
    if (c >= 0xd800 && c < 0xe000) continue;
    all += String.fromCharCode(...Array.from({ length: 0x400 }, (_, k) => c + k));
  }
  // Index in `all` → code unit: the surrogate block is left out.
  const unit = (i: number) => (i < 0xd800 ? i : i + 0x800);
  for (const [bit, src] of CLASS_SOURCES) {
    const run = new RegExp(`${src}+`, "gu");
    for (let m = run.exec(all); m !== null; m = run.exec(all)) {
      for (let i = m.index; i < m.index + m[0].length; i++) flags[unit(i)]! |= bit;
    }
  }
  return flags;
}

const isNewline = (c: number) => c === 0x0a || c === 0x0d;

/**
 * Piece ends of one encoding's split regex over text, by code-unit classes (see
 * {@link bmpClasses}). Methods of one class, shared with its counter, for the reason
 * given at BpeCounter.
 */
export class BpeScanner {
  private readonly classes: Uint8Array;
  private readonly o200k: boolean;
  // Classes of astral code points, asked of the regex engine once each (bounded: there are
  // about a million of them).
  private readonly astral = new Map<number, number>();

  constructor(classes: Uint8Array, o200k: boolean) {
    this.classes = classes;
    this.o200k = o200k;
  }

  /** Classes of the code point at i (its width from {@link width}). */
  private cls(text: string, i: number): number {
    const c = text.charCodeAt(i);
    if (c < 0xd800 || c >= 0xe000) return this.classes[c]!;
    const cp = text.codePointAt(i)!;
    if (cp <= 0xffff) return 0; // a lone surrogate
    let f = this.astral.get(cp);
    if (f === undefined) {
      f = classify(cp);
      this.astral.set(cp, f);
    }
    return f;
  }

  /**
   * Whether the split regex always ends a piece before `p`: `text[p - 1]` is "\n" and
   * `text[p]` is neither whitespace nor "/" (see TokenCounter.newlineCut).
   */
  splitsBefore(text: string, p: number): boolean {
    if (p <= 0 || p >= text.length || text.charCodeAt(p - 1) !== 0x0a) return false;
    const c = text.charCodeAt(p);
    return c !== 0x2f && (this.cls(text, p) & S) === 0;
  }

  /** End of the run of code points from i that have one of `bits`. */
  private runEnd(text: string, i: number, bits: number): number {
    const n = text.length;
    const classes = this.classes;
    while (i < n) {
      const c = text.charCodeAt(i);
      // Most text is BMP outside the surrogates: one table read per unit.
      if (c < 0xd800 || c >= 0xe000) {
        if ((classes[c]! & bits) === 0) return i;
        i++;
      } else {
        if ((this.cls(text, i) & bits) === 0) return i;
        i += width(text, i);
      }
    }
    return i;
  }

  /** End of the run from i of code points that are neither whitespace, letters nor numbers. */
  private otherEnd(text: string, i: number): number {
    const n = text.length;
    const classes = this.classes;
    while (i < n) {
      const c = text.charCodeAt(i);
      if (c < 0xd800 || c >= 0xe000) {
        if ((classes[c]! & (L | N | S)) !== 0) return i;
        i++;
      } else {
        if ((this.cls(text, i) & (L | N | S)) !== 0) return i;
        i += width(text, i);
      }
    }
    return i;
  }

  /** `\p{N}{1,3}` from i. */
  private numberEnd(text: string, i: number): number {
    const n = text.length;
    let j = i;
    for (let k = 0; k < 3 && j < n && (this.cls(text, j) & N) !== 0; k++) j += width(text, j);
    return j;
  }

  /**
   * The whitespace alternatives, shared by both encodings, from i (a whitespace char):
   * cl100k `\s+$|\s*[\r\n]|\s+(?!\S)|\s`, o200k `\s*[\r\n]+|\s+(?!\S)|\s+`.
   */
  private spaceEnd(text: string, i: number): number {
    const n = text.length;
    const j = this.runEnd(text, i, S); // whitespace is never astral: units are code points
    if (j === n && !this.o200k) return n; // cl100k tries `\s+$` first
    // `\s*[\r\n]`: the last newline of the run (o200k's `[\r\n]+` then stops at it too).
    for (let k = j - 1; k >= i; k--) if (isNewline(text.charCodeAt(k))) return k + 1;
    if (j === n) return n; // o200k `\s+(?!\S)` at the end of the text
    // `\s+(?!\S)`: all but the last, which stays with the non-space after it; a single
    // one is cl100k's `\s`, o200k's `\s+`.
    return j - i >= 2 ? j - 1 : j;
  }

  /** ` ?[^\s\p{L}\p{N}]+` from i, or -1; `slash` adds o200k's "/" to the tail `[\r\n]*`. */
  private otherPiece(text: string, i: number, slash: boolean): number {
    const n = text.length;
    const p =
      text.charCodeAt(i) === 0x20 && i + 1 < n && (this.cls(text, i + 1) & (L | N | S)) === 0
        ? i + 1
        : i;
    if ((this.cls(text, p) & (L | N | S)) !== 0) return -1;
    let j = this.otherEnd(text, p);
    for (; j < n; j++) {
      const c = text.charCodeAt(j);
      if (!isNewline(c) && !(slash && c === 0x2f)) break;
    }
    return j;
  }

  /** End of the cl100k_base piece starting at i. */
  cl100kEnd(text: string, i: number): number {
    const n = text.length;
    if (text.charCodeAt(i) === 0x27) {
      const e = contraction(text, i);
      if (e > i) return e;
    }
    const f = this.cls(text, i);
    const w = width(text, i);
    // [^\r\n\p{L}\p{N}]?\p{L}+
    if (
      (f & (L | N)) === 0 &&
      !isNewline(text.charCodeAt(i)) &&
      i + w < n &&
      (this.cls(text, i + w) & L) !== 0
    )
      return this.runEnd(text, i + w, L);
    if ((f & L) !== 0) return this.runEnd(text, i, L);
    if ((f & N) !== 0) return this.numberEnd(text, i);
    const o = this.otherPiece(text, i, false);
    return o >= 0 ? o : this.spaceEnd(text, i);
  }

  /** o200k `X?U*W+C?` from p (after the optional prefix): its end, or -1. */
  private lowerRun(text: string, p: number): number {
    const n = text.length;
    const q = this.runEnd(text, p, U);
    let e: number;
    if (q < n && (this.cls(text, q) & W) !== 0) e = this.runEnd(text, q, W);
    else {
      // U* gives back code points until one of them can start W+; W+ then ends after it
      // (what follows it in the run is not W, and text[q] is not W).
      let last = -1;
      for (let k = p; k < q; k += width(text, k)) if ((this.cls(text, k) & W) !== 0) last = k;
      if (last < 0) return -1;
      e = last + width(text, last);
    }
    return contraction(text, e);
  }

  /** o200k `X?U+W*C?` from p: its end, or -1. */
  private upperRun(text: string, p: number): number {
    const q = this.runEnd(text, p, U);
    if (q === p) return -1;
    return contraction(text, this.runEnd(text, q, W));
  }

  /** End of the o200k_base piece starting at i. */
  o200kEnd(text: string, i: number): number {
    const f = this.cls(text, i);
    const w = width(text, i);
    const prefix = (f & (L | N)) === 0 && !isNewline(text.charCodeAt(i)) && i + w < text.length;
    let e = prefix ? this.lowerRun(text, i + w) : -1;
    if (e < 0) e = this.lowerRun(text, i);
    if (e < 0 && prefix) e = this.upperRun(text, i + w);
    if (e < 0) e = this.upperRun(text, i);
    if (e >= 0) return e;
    if ((f & N) !== 0) return this.numberEnd(text, i);
    const o = this.otherPiece(text, i, true);
    return o >= 0 ? o : this.spaceEnd(text, i);
  }
}

/** Width in UTF-16 units of the code point at i (a lone surrogate is one). */
function width(text: string, i: number): number {
  const c = text.charCodeAt(i);
  if (c < 0xd800 || c > 0xdbff || i + 1 >= text.length) return 1;
  const d = text.charCodeAt(i + 1);
  return d >= 0xdc00 && d <= 0xdfff ? 2 : 1;
}

/**
 * `'s|'t|'re|'ve|'m|'ll|'d` in either case at i: its end, or i. `i` may be the text's
 * end (a run ending there): checked before reading, since a read past the end deoptimized
 * the optimized scanner on a process's first count ("out of bounds"), and it was compiled
 * again.
 */
function contraction(text: string, i: number): number {
  if (i + 1 >= text.length || text.charCodeAt(i) !== 0x27) return i;
  const a = text.charCodeAt(i + 1) | 0x20;
  if (a === 0x73 || a === 0x64 || a === 0x6d || a === 0x74) return i + 2; // s d m t
  if (i + 2 >= text.length) return i;
  const b = text.charCodeAt(i + 2) | 0x20;
  if ((a === 0x6c && b === 0x6c) || (a === 0x76 && b === 0x65) || (a === 0x72 && b === 0x65))
    return i + 3; // ll ve re
  return i;
}
