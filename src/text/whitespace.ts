/**
 * Whitespace, defined once: the characters for which Python's `str.isspace()` is true,
 * so that trimming, blank checks and collapsing agree with a Python peer byte for byte.
 * (JavaScript's `\s` differs: it adds U+FEFF and lacks U+001C..U+001F and U+0085.)
 */

/** The whitespace code points, as [first, last] ranges; all are in the BMP. */
export const WS_RANGES: ReadonlyArray<readonly [number, number]> = [
  [0x09, 0x0d],
  [0x1c, 0x20],
  [0x85, 0x85],
  [0xa0, 0xa0],
  [0x1680, 0x1680],
  [0x2000, 0x200a],
  [0x2028, 0x2029],
  [0x202f, 0x202f],
  [0x205f, 0x205f],
  [0x3000, 0x3000],
];
const WS_MAX = 0x3000;

/** The whitespace ranges as the body of a regex character class (for other stages' regexes). */
export const WS_CLASS = WS_RANGES.map(([a, b]) =>
  a === b ? uEscape(a) : `${uEscape(a)}-${uEscape(b)}`,
).join("");

function uEscape(cp: number): string {
  return `\\u${cp.toString(16).padStart(4, "0")}`;
}

// 1 for a whitespace code unit. The loops below read each unit once; the regexes they
// replaced (a class with alternation and lookahead) were ~15 % slower on benchmark texts.
const WS_TABLE = new Uint8Array(WS_MAX + 1);
for (const [a, b] of WS_RANGES) WS_TABLE.fill(1, a, b + 1);

/** True when the UTF-16 code unit `c` is whitespace (no whitespace is a surrogate). */
function isWsCode(c: number): boolean {
  return c <= WS_MAX && WS_TABLE[c] === 1;
}

/** `s` without leading and trailing whitespace. @example trimWs("\u3000a ") // "a" */
export function trimWs(s: string): string {
  let start = 0;
  let end = s.length;
  while (start < end && isWsCode(s.charCodeAt(start))) start++;
  while (end > start && isWsCode(s.charCodeAt(end - 1))) end--;
  return start === 0 && end === s.length ? s : s.slice(start, end);
}

/** True when `s` is empty or whitespace only. @example isBlank(" \n") // true */
export function isBlank(s: string): boolean {
  for (let i = 0; i < s.length; i++) if (!isWsCode(s.charCodeAt(i))) return false;
  return true;
}

/** Every whitespace run collapsed to one space, then trimmed. @example collapseWs(" a \n b ") // "a b" */
export function collapseWs(s: string): string {
  const n = s.length;
  let out = "";
  let from = 0; // start of the input not yet copied to `out`
  let i = 0;
  while (i < n) {
    if (!isWsCode(s.charCodeAt(i))) {
      i++;
      continue;
    }
    let j = i + 1;
    while (j < n && isWsCode(s.charCodeAt(j))) j++;
    // A lone space inside the text stays as it is (most text changes nowhere: no copy).
    if (i === 0 || j === n || j !== i + 1 || s.charCodeAt(i) !== 0x20) {
      out += s.slice(from, i);
      if (i !== 0 && j !== n) out += " ";
      from = j;
    }
    i = j;
  }
  return from === 0 ? s : out + s.slice(from);
}
