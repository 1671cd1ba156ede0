/**
 * The normalization key of docs/text-and-tokens.md: NFKC, full Unicode case folding (Python's
 * `str.casefold`), whitespace collapsed and trimmed. Used by dedupe and conflict slots.
 */
import { CASEFOLD_EXCEPTIONS } from "./casefold-table.js";
import { collapseWs } from "./whitespace.js";

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

// ASCII text is its own NFKC form and folds by lowercasing; native scans (faster than a
// JavaScript loop over the characters) tell whether any Unicode pass is needed, and
// whether collapsing would change anything: whitespace other than a lone inner space.
const NON_ASCII_UNIT = /[^\x00-\x7f]/;
const ASCII_UNCOLLAPSED = /^ | $| {2}|[\t-\r\x1c-\x1f]/;

/**
 * The key under which two texts (or two conflict slots) count as the same.
 *
 * @example normalizeKey("ＵＳＥ  Python\n") === normalizeKey("use python") // true
 */
export function normalizeKey(s: string): string {
  if (!NON_ASCII_UNIT.test(s)) {
    const lower = s.toLowerCase();
    return ASCII_UNCOLLAPSED.test(lower) ? collapseWs(lower) : lower;
  }
  return collapseWs(casefold(s.normalize("NFKC")));
}
