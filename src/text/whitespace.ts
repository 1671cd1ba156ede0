/**
 * Whitespace, defined once: the characters for which Python's `str.isspace()` is true,
 * so that trimming, blank checks and collapsing agree with a Python peer byte for byte.
 * (JavaScript's `\s` differs: it adds U+FEFF and lacks U+001C..U+001F and U+0085.)
 */
const WS_BUT_SPACE =
  "\\t\\n\\v\\f\\r\\x1c-\\x1f\\x85\\xa0\\u1680\\u2000-\\u200a\\u2028\\u2029\\u202f\\u205f\\u3000";
export const WS_CLASS = `${WS_BUT_SPACE}\\x20`;
const WS_RUN = new RegExp(`[${WS_CLASS}]+`, "g");
const WS_EDGES = new RegExp(`^[${WS_CLASS}]+|[${WS_CLASS}]+$`, "g");
const NON_WS = new RegExp(`[^${WS_CLASS}]`);
const WS_CHAR = new RegExp(`[${WS_CLASS}]`);
// Inside text, what collapsing would change: whitespace other than a space, or a space
// followed by another. Most text has none (nor a space at either end) and is returned as
// is, with no copy.
const UNCOLLAPSED = new RegExp(`[${WS_BUT_SPACE}]| (?= )`);

/** `s` without leading and trailing whitespace. @example trimWs("\u3000a ") // "a" */
export function trimWs(s: string): string {
  // Whitespace characters are all in the BMP: the first and last code units tell.
  if (s === "" || (!WS_CHAR.test(s[0]!) && !WS_CHAR.test(s[s.length - 1]!))) return s;
  return s.replace(WS_EDGES, "");
}

/** True when `s` is empty or whitespace only. @example isBlank(" \n") // true */
export function isBlank(s: string): boolean {
  return !NON_WS.test(s);
}

/** Every whitespace run collapsed to one space, then trimmed. @example collapseWs(" a \n b ") // "a b" */
export function collapseWs(s: string): string {
  if (s[0] !== " " && s[s.length - 1] !== " " && !UNCOLLAPSED.test(s)) return s;
  return trimWs(s.replace(WS_RUN, " "));
}
