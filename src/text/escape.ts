/**
 * Escaping for tagged blocks, exactly like Python's `html.escape(s, quote=True)`.
 * Nothing else in the package escapes text.
 */
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
