/**
 * The normalization key of spec 01: NFKC, full Unicode case folding (Python's
 * `str.casefold`), whitespace collapsed and trimmed. Used by dedupe and conflict slots.
 */
import { CASEFOLD_EXCEPTIONS } from "./casefold-table.js";
import { collapseWs, isWsCode } from "./whitespace.js";

const EXCEPTIONS: ReadonlyMap<number, string> = new Map(CASEFOLD_EXCEPTIONS);
// 1 for a code point whose folding differs from lowercasing (all are in the BMP, which the
// table test checks); any of them sends a string to the slow path.
const EXCEPTION_TABLE = new Uint8Array(0x10000);
for (const [cp] of CASEFOLD_EXCEPTIONS) EXCEPTION_TABLE[cp] = 1;

function hasException(s: string): boolean {
  for (let i = 0; i < s.length; i++) if (EXCEPTION_TABLE[s.charCodeAt(i)] === 1) return true;
  return false;
}

/**
 * Full Unicode case folding, like Python's `str.casefold()`.
 *
 * @example casefold("Straße") // "strasse"
 */
export function casefold(s: string): string {
  // Fast path: whole-string lowercasing is exact unless an exception character occurs;
  // its only context rule (final sigma) is undone because folding has no final form.
  if (!hasException(s)) {
    const lower = s.toLowerCase();
    return lower.includes("ς") ? lower.replace(/ς/g, "σ") : lower;
  }
  let out = "";
  for (const ch of s) {
    const cp = ch.codePointAt(0) as number;
    out += EXCEPTIONS.get(cp) ?? ch.toLowerCase();
  }
  return out;
}

// What one scan of an ASCII text finds: an uppercase letter, whitespace that collapsing
// would change (any but a lone inner space), or a non-ASCII unit (then: NOT_ASCII).
const UPPER = 1;
const UNCOLLAPSED = 2;
const NOT_ASCII = 4;

// A native scan rejects non-ASCII text at once; the loop below then only ever sees
// one-byte strings, which V8 reads fastest (mixed string kinds make it several times slower).
const NON_ASCII_UNIT = /[^\x00-\x7f]/;

function asciiScan(s: string): number {
  if (NON_ASCII_UNIT.test(s)) return NOT_ASCII;
  const n = s.length;
  let flags = 0;
  let prevSpace = true; // a space at the start is leading whitespace
  for (let i = 0; i < n; i++) {
    const c = s.charCodeAt(i);
    if (c >= 0x41 && c <= 0x5a) flags |= UPPER;
    else if (c === 0x20) {
      if (prevSpace) flags |= UNCOLLAPSED;
      prevSpace = true;
      continue;
    } else if (c <= 0x1f) flags |= isWsCode(c) ? UNCOLLAPSED : 0;
    prevSpace = false;
  }
  return prevSpace && n > 0 ? flags | UNCOLLAPSED : flags;
}

/**
 * The key under which two texts (or two conflict slots) count as the same.
 *
 * @example normalizeKey("ＵＳＥ  Python\n") === normalizeKey("use python") // true
 */
export function normalizeKey(s: string): string {
  // ASCII is its own NFKC form and folds by lowercasing: one scan tells which of the
  // remaining steps change anything (most keys come back as the input itself).
  const scan = asciiScan(s);
  if (scan !== NOT_ASCII) {
    const lower = scan & UPPER ? s.toLowerCase() : s;
    return scan & UNCOLLAPSED ? collapseWs(lower) : lower;
  }
  return collapseWs(casefold(s.normalize("NFKC")));
}
