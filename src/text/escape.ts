/**
 * Escaping for tagged blocks, exactly like Python's `html.escape(s, quote=True)`.
 * Nothing else in the package escapes text.
 */
import { cpLength } from "./chars.js";

const ESCAPES: Readonly<Record<string, string>> = {
  "&": "&amp;",
  "<": "&lt;",
  ">": "&gt;",
  '"': "&quot;",
  "'": "&#x27;",
};
const SPECIAL = /[&<>"']/g;
const HAS_SPECIAL = /[&<>"']/;

/**
 * Escapes `&`, `<`, `>`, `"` and `'`; no other character is touched.
 *
 * @example escapeText(`</memory_hit>`) // "&lt;/memory_hit&gt;"
 */
export function escapeText(s: string): string {
  return HAS_SPECIAL.test(s) ? s.replace(SPECIAL, (c) => ESCAPES[c] as string) : s;
}

/**
 * Code points of `escapeText(s)`, without building it: each escaped character adds its
 * entity's length less one (escaping never touches a surrogate).
 *
 * @example escapedLength("a<b") // 6 ("a&lt;b")
 */
export function escapedLength(s: string): number {
  let n = cpLength(s);
  if (!HAS_SPECIAL.test(s)) return n;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c === 38) n += 4;
    else if (c === 60 || c === 62) n += 3;
    else if (c === 34 || c === 39) n += 5;
  }
  return n;
}
