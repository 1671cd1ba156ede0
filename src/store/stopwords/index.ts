/**
 * Stop words of recall queries (docs/sources.md), as data: English words (en.ts), Chinese
 * (zh.ts) and Japanese (ja.ts) function words and grammar characters. Backend-neutral:
 * every store applies them through {@link queryTerms} (../terms.ts).
 */
import { ENGLISH_STOP_WORDS } from "./en.js";
import { JAPANESE_STOP_CHARS, JAPANESE_STOP_WORDS } from "./ja.js";
import { CHINESE_STOP_CHARS, CHINESE_STOP_WORDS } from "./zh.js";

export { ENGLISH_STOP_WORDS } from "./en.js";
export { JAPANESE_STOP_CHARS, JAPANESE_STOP_WORDS } from "./ja.js";
export { CHINESE_STOP_CHARS, CHINESE_STOP_WORDS } from "./zh.js";

const STOP_TERMS: ReadonlySet<string> = new Set([
  ...ENGLISH_STOP_WORDS,
  ...CHINESE_STOP_WORDS,
  ...JAPANESE_STOP_WORDS,
  ...CHINESE_STOP_CHARS,
  ...JAPANESE_STOP_CHARS,
]);

const CJK_STOP_CHARS: ReadonlySet<string> = new Set([
  ...CHINESE_STOP_CHARS,
  ...JAPANESE_STOP_CHARS,
]);

/** CJK stop words by first character, longest first (the cut is greedy, longest match). */
const CJK_STOP_WORDS: ReadonlyMap<string, readonly string[]> = (() => {
  const byFirst = new Map<string, string[]>();
  for (const w of [...CHINESE_STOP_WORDS, ...JAPANESE_STOP_WORDS]) {
    const first = Array.from(w)[0]!;
    const list = byFirst.get(first) ?? [];
    list.push(w);
    byFirst.set(first, list);
  }
  for (const list of byFirst.values()) list.sort((a, b) => b.length - a.length || (a < b ? -1 : 1));
  return byFirst;
})();

/**
 * Whether a query term is a stop word (any list; terms are already normalized).
 *
 * @example isStopWord("the") // true
 * @example isStopWord("什么") // true
 */
export function isStopWord(term: string): boolean {
  return STOP_TERMS.has(term);
}

/**
 * A CJK run with its stop words and stop characters cut out: the pieces left between
 * them, in order (possibly none). Scanning left to right, the longest stop word starting
 * at a position is cut, else a stop character, else the character is kept.
 *
 * @example cjkContentPieces("北京的天气怎么样") // ["北京", "天气"]
 */
export function cjkContentPieces(run: string): string[] {
  const chars = Array.from(run);
  const pieces: string[] = [];
  let piece = "";
  let i = 0;
  while (i < chars.length) {
    const c = chars[i]!;
    const cut = stopWordAt(chars, i) ?? (CJK_STOP_CHARS.has(c) ? 1 : 0);
    if (cut === 0) {
      piece += c;
      i++;
      continue;
    }
    if (piece !== "") pieces.push(piece);
    piece = "";
    i += cut;
  }
  if (piece !== "") pieces.push(piece);
  return pieces;
}

/** Length in characters of the longest CJK stop word at `chars[i]`, if any. */
function stopWordAt(chars: readonly string[], i: number): number | undefined {
  for (const w of CJK_STOP_WORDS.get(chars[i]!) ?? []) {
    const n = Array.from(w).length;
    if (chars.slice(i, i + n).join("") === w) return n;
  }
  return undefined;
}
