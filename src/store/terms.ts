/**
 * Search terms, defined once for indexing and for queries (so they always agree).
 *
 * Text is normalized with spec 01's {@link normalizeKey} (NFKC, full case folding,
 * whitespace collapsed). Then every run of letters, digits and marks is split into
 * script runs: a non-CJK run is one term (`"Python3"` → `python3`); a CJK run (Han,
 * Hiragana, Katakana, Hangul) becomes its overlapping **bigrams** (`天气预报` → `天气`,
 * `气预`, `预报`), or the single character when the run is one character long.
 *
 * The FTS index stores these terms (each prefixed with its scope's hash) space-separated
 * in a `terms` column, so the SQLite tokenizer only has to split on spaces: CJK text is searchable although SQLite's
 * tokenizers do not segment it. A CJK query matches when it shares a bigram with the
 * memory (`天气` finds `天气预报`); a lone CJK character only matches a lone one.
 */
import { normalizeKey } from "../text/index.js";

const WORD_RUN = /[\p{L}\p{N}\p{M}]+/gu;
const CJK_SPLIT = /([\p{scx=Han}\p{scx=Hiragana}\p{scx=Katakana}\p{scx=Hangul}]+)/u;
const CJK_RUN = /^[\p{scx=Han}\p{scx=Hiragana}\p{scx=Katakana}\p{scx=Hangul}]+$/u;

/** Upper bound on distinct query terms (a pasted essay must not become a 5,000-way OR). */
export const MAX_QUERY_TERMS = 64;

/**
 * Every term of `text` in order, repeats kept (term frequency matters to bm25).
 *
 * @example indexTerms("Ｔｈｅ 天气预报, v2") // ["the", "天气", "气预", "预报", "v2"]
 */
export function indexTerms(text: string): string[] {
  const out: string[] = [];
  for (const m of normalizeKey(text).matchAll(WORD_RUN)) {
    for (const part of m[0].split(CJK_SPLIT)) {
      if (part === "") continue;
      if (!CJK_RUN.test(part)) {
        out.push(part);
        continue;
      }
      const chars = Array.from(part);
      if (chars.length === 1) out.push(part);
      else for (let i = 0; i + 1 < chars.length; i++) out.push(chars[i]! + chars[i + 1]!);
    }
  }
  return out;
}

/**
 * The distinct terms of a query, first occurrence first, at most {@link MAX_QUERY_TERMS}.
 * An empty result means the query has nothing searchable (recall then returns no hits).
 *
 * @example queryTerms("weather 天气 weather") // ["weather", "天气"]
 */
export function queryTerms(text: string): string[] {
  const seen = new Set<string>();
  for (const t of indexTerms(text)) {
    if (seen.size >= MAX_QUERY_TERMS) break;
    seen.add(t);
  }
  return [...seen];
}

/**
 * An FTS5 string literal: the term in double quotes, inner quotes doubled. A quoted
 * string is always a phrase, never an operator (`OR`, `NEAR(`, `*`, `-`, `:` stay text).
 * Terms never contain quotes (they are letters, digits and marks), so this is a second
 * line of defence.
 *
 * @example ftsQuote('a"b') // '"a""b"'
 */
export function ftsQuote(term: string): string {
  return `"${term.replaceAll('"', '""')}"`;
}
