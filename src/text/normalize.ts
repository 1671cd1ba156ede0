/**
 * The normalization key of spec 01: NFKC, full Unicode case folding (Python's
 * `str.casefold`), whitespace collapsed and trimmed. Used by dedupe and conflict slots.
 */
import { CASEFOLD_EXCEPTIONS } from "./casefold-table.js";
import { collapseWs } from "./whitespace.js";

const EXCEPTIONS: ReadonlyMap<number, string> = new Map(CASEFOLD_EXCEPTIONS);
// Any code point whose folding differs from lowercasing sends a string to the slow path.
const HAS_EXCEPTION = new RegExp(
  `[${CASEFOLD_EXCEPTIONS.map(([cp]) => `\\u{${cp.toString(16)}}`).join("")}]`,
  "u",
);

/**
 * Full Unicode case folding, like Python's `str.casefold()`.
 *
 * @example casefold("Straße") // "strasse"
 */
export function casefold(s: string): string {
  // Fast path: whole-string lowercasing is exact unless an exception character occurs;
  // its only context rule (final sigma) is undone because folding has no final form.
  if (!HAS_EXCEPTION.test(s)) return s.toLowerCase().replace(/ς/g, "σ");
  let out = "";
  for (const ch of s) {
    const cp = ch.codePointAt(0) as number;
    out += EXCEPTIONS.get(cp) ?? ch.toLowerCase();
  }
  return out;
}

const ASCII = /^[\x00-\x7f]*$/;

/**
 * The key under which two texts (or two conflict slots) count as the same.
 *
 * @example normalizeKey("ＵＳＥ  Python\n") === normalizeKey("use python") // true
 */
export function normalizeKey(s: string): string {
  // ASCII is its own NFKC form and folds by lowercasing: skip both Unicode passes.
  if (ASCII.test(s)) return collapseWs(s.toLowerCase());
  return collapseWs(casefold(s.normalize("NFKC")));
}
