/**
 * Search terms, defined once for indexing and for queries (so they always agree).
 *
 * Text is normalized with docs/text-and-tokens.md's {@link normalizeKey} (NFKC, full case folding,
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
import { casefold, cpAt, cpBefore, normalizeKey } from "../text/index.js";
import { cjkContentPieces, isStopWord } from "./stopwords/index.js";

const WORD_RUN = /[\p{L}\p{N}\p{M}]+/gu;
const CJK_SPLIT = /([\p{scx=Han}\p{scx=Hiragana}\p{scx=Katakana}\p{scx=Hangul}]+)/u;
const CJK_RUN = /^[\p{scx=Han}\p{scx=Hiragana}\p{scx=Katakana}\p{scx=Hangul}]+$/u;

/** Upper bound on distinct query terms (a pasted essay must not become a 5,000-way OR). */
export const MAX_QUERY_TERMS = 64;

const NON_ASCII = /[^\x00-\x7f]/;

/**
 * `normalizeKey` without its whitespace collapsing (NFKC, full case folding): the same
 * word runs, since whitespace never is part of one, for less work.
 */
function foldForTerms(text: string): string {
  return NON_ASCII.test(text) ? casefold(text.normalize("NFKC")) : text.toLowerCase();
}

/**
 * Every term of `text` in order, repeats kept (term frequency matters to bm25).
 *
 * @example indexTerms("Ｔｈｅ 天气预报, v2") // ["the", "天气", "气预", "预报", "v2"]
 */
export function indexTerms(text: string): string[] {
  const out: string[] = [];
  for (const m of foldForTerms(text).matchAll(WORD_RUN)) {
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
 * The terms a store indexes for a record: those of its content, summary and tags (one
 * definition for every backend).
 *
 * @example recordTerms({ content: "Uses Python", summary: "", tags: ["lang"] }) // ["uses", "python", "lang"]
 */
export function recordTerms(r: {
  content: string;
  summary: string;
  tags: readonly string[];
}): string[] {
  return indexTerms([r.content, r.summary, ...r.tags].join("\n"));
}

/**
 * The distinct **content** terms of a query, first occurrence first, at most
 * {@link MAX_QUERY_TERMS}: the terms recall searches and scores. Stop words are left out
 * (stopwords/: English words; Chinese and Japanese function words and grammar characters),
 * so a query of stop words only has nothing to search and recall returns no hits. A CJK run
 * first has its stop words cut out (see {@link cjkContentPieces}); each remaining piece of two
 * or more characters gives its bigrams, which are all bigrams the index also holds; a
 * one-character piece is dropped, unless the whole run was that one character (a lone
 * character only matches a lone character, see {@link indexTerms}).
 *
 * @example queryTerms("what is the weather in Beijing, weather?") // ["weather", "beijing"]
 * @example queryTerms("北京的天气怎么样") // ["北京", "天气"]
 */
export function queryTerms(text: string): string[] {
  const seen = new Set<string>();
  const add = (t: string) => {
    if (seen.size < MAX_QUERY_TERMS && !isStopWord(t)) seen.add(t);
  };
  for (const m of normalizeKey(text).matchAll(WORD_RUN)) {
    for (const part of m[0].split(CJK_SPLIT)) {
      if (part === "") continue;
      if (!CJK_RUN.test(part)) {
        add(part);
        continue;
      }
      if (Array.from(part).length === 1) {
        add(part);
        continue;
      }
      for (const piece of cjkContentPieces(part)) {
        const chars = Array.from(piece);
        for (let i = 0; i + 1 < chars.length; i++) add(chars[i]! + chars[i + 1]!);
      }
    }
  }
  return [...seen];
}

const WORD_CHAR = /^[\p{L}\p{N}\p{M}]$/u;
const CJK_CHAR = /^[\p{scx=Han}\p{scx=Hiragana}\p{scx=Katakana}\p{scx=Hangul}]$/u;

/** Whether `c` continues a term of the given script class (`""` never does). */
function continues(c: string, cjk: boolean): boolean {
  return c !== "" && WORD_CHAR.test(c) && CJK_CHAR.test(c) === cjk;
}

/** Whether term `t` occurs in `norm` (a normalized text) as one of its index terms. */
function hasTerm(norm: string, t: string): boolean {
  const chars = Array.from(t);
  const cjk = CJK_CHAR.test(chars[0]!);
  // A CJK bigram is a term wherever its two characters are adjacent: they are then in
  // the same CJK run.
  if (cjk && chars.length === 2) return norm.includes(t);
  for (let i = norm.indexOf(t); i !== -1; i = norm.indexOf(t, i + 1)) {
    // Other terms (a word, a lone CJK character) must not continue on either side.
    const before = cpBefore(norm, i);
    const after = cpAt(norm, i + t.length);
    if (!continues(before, cjk) && !continues(after, cjk)) return true;
  }
  return false;
}

/**
 * For each of `terms` (query terms, see {@link queryTerms}), whether it is one of the
 * index terms of `text`: the same answer as `new Set(indexTerms(text)).has(term)`, found
 * without listing every term of the text (recall checks few terms in many memories).
 *
 * @example termPresence("Uses Python3 and 天气预报", ["python3", "python", "天气"]) // [true, false, true]
 */
export function termPresence(text: string, terms: readonly string[]): boolean[] {
  if (terms.length === 0) return [];
  const norm = foldForTerms(text);
  return terms.map((t) => t !== "" && hasTerm(norm, t));
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
