/**
 * Terminal display width: the one rule for how many columns text takes on a terminal
 * (East Asian wide characters count two, everything else one), with shortening and word
 * wrapping measured by it. Used by the CLI's tables and fitted text.
 */

/** East Asian wide code points (two columns each), as inclusive ranges: the one list. */
export const WIDE_RANGES: ReadonlyArray<readonly [number, number]> = [
  [0x1100, 0x115f],
  [0x2e80, 0xa4cf],
  [0xac00, 0xd7a3],
  [0xf900, 0xfaff],
  [0xfe30, 0xfe4f],
  [0xff00, 0xff60],
  [0xffe0, 0xffe6],
  [0x1f300, 0x1faff],
  [0x20000, 0x3fffd],
];

function charWidth(cp: number): number {
  for (const [lo, hi] of WIDE_RANGES) if (cp >= lo && cp <= hi) return 2;
  return 1;
}

const hex = (n: number) => `\\u${n.toString(16).padStart(4, "0")}`;

// Without surrogates and wide BMP characters, every UTF-16 unit is one character one
// column wide: most cells, measured by a native scan instead of a loop over characters.
// Built from WIDE_RANGES's BMP ranges and the surrogate block.
const NARROW = new RegExp(
  `^[^${[...WIDE_RANGES.filter(([, hi]) => hi <= 0xffff), [0xd800, 0xdfff]]
    .map(([lo, hi]) => `${hex(lo)}-${hex(hi)}`)
    .join("")}]*$`,
);

/**
 * The terminal columns `s` takes (East Asian wide characters count two).
 *
 * @example displayWidth("表a") // 3
 */
export function displayWidth(s: string): number {
  if (NARROW.test(s)) return s.length;
  let w = 0;
  for (const ch of s) w += charWidth(ch.codePointAt(0) as number);
  return w;
}

/**
 * `s` shortened to at most `width` columns, ending in "…" when anything was cut: the
 * characters that fit in `width - 1` columns, then "…".
 *
 * @example shorten("abcdef", 4) // "abc…"
 */
export function shorten(s: string, width: number): string {
  if (NARROW.test(s)) return s.length <= width ? s : `${s.slice(0, Math.max(0, width - 1))}…`;
  let used = 0;
  let at = 0;
  let cut = -1;
  for (const ch of s) {
    used += charWidth(ch.codePointAt(0) as number);
    if (cut < 0 && used > width - 1) cut = at;
    if (used > width) return `${s.slice(0, cut)}…`;
    at += ch.length;
  }
  return s;
}

// Cuts a word into pieces: the first of at most `first` columns, the others of at most
// `rest` (a wide character never splits; a piece holds at least one character, so a
// width of 1 still makes progress).
function breakWord(word: string, first: number, rest: number): string[] {
  const out: string[] = [];
  let piece = "";
  let used = 0;
  for (const ch of word) {
    const w = charWidth(ch.codePointAt(0) as number);
    if (used + w > (out.length === 0 ? first : rest) && piece !== "") {
      out.push(piece);
      piece = "";
      used = 0;
    }
    piece += ch;
    used += w;
  }
  if (piece !== "") out.push(piece);
  return out;
}

// One paragraph (no newline) wrapped: the first line `width` wide, the others `hang` +
// at most `width - |hang|` columns.
function wrapParagraph(para: string, width: number, indent: string): string[] {
  // A hang that would leave less than two columns (one wide character) is dropped.
  const hang = displayWidth(indent) <= width - 2 ? indent : "";
  const room = width - displayWidth(hang);
  const lines: string[] = [];
  const lead = /^ */.exec(para)?.[0] ?? "";
  let line = lead.length < width ? lead : "";
  let used = line.length;
  let fresh = true; // no word on the line yet
  const limit = () => (lines.length === 0 ? width : room);
  const push = () => {
    lines.push(lines.length === 0 ? line : `${hang}${line}`);
    line = "";
    used = 0;
    fresh = true;
  };
  for (const word of para.slice(lead.length).split(/ +/)) {
    if (word === "") continue;
    const w = displayWidth(word);
    if (!fresh && used + 1 + w <= limit()) {
      line += ` ${word}`;
      used += 1 + w;
      continue;
    }
    if (!fresh) push();
    // Indentation that leaves no room for a wide character gives way to the word.
    if (used + w > limit() && limit() - used < 2) {
      line = "";
      used = 0;
    }
    if (used + w > limit()) {
      const pieces = breakWord(word, limit() - used, room);
      for (const piece of pieces.slice(0, -1)) {
        line += piece;
        push();
      }
      line += pieces.at(-1) as string;
    } else line += word;
    used = displayWidth(line);
    fresh = false;
  }
  if (!fresh || lines.length === 0) push();
  return lines;
}

/**
 * `text` word-wrapped to lines of at most `width` columns: breaks at spaces (the spaces at
 * a break are dropped), a word wider than a line is cut into pieces, a line's leading
 * indentation is kept, and each continuation line starts with `hang` (counted in the
 * width). Newlines in `text` stay line breaks; a line that fits is kept as it is. Every
 * non-space character of `text` appears, in order.
 *
 * @example wrapToWidth("the quick brown fox", 10) // ["the quick", "brown fox"]
 */
export function wrapToWidth(text: string, width: number, hang = ""): string[] {
  return text
    .split("\n")
    .flatMap((para) => (displayWidth(para) <= width ? [para] : wrapParagraph(para, width, hang)));
}
