// Ranking: every candidate's hit measured once, then ordered by authority, score, source rank, recency and id.
import {
  compareCodePoints,
  compareInstantParts,
  cpLength,
  type InstantParts,
  parseInstantParts,
} from "../text/index.js";
import type { TokenCounter } from "../tokens/index.js";
import { memoryHitChars, renderMemoryHit } from "./render.js";
import { AUTHORITY_RANK, type Authority, type Candidate } from "./schema.js";

/** A candidate with its sort keys, gate fields and measured hit, as selection reads it. */
export interface Ranked {
  c: Candidate;
  authority: Authority;
  // The sort keys copied out of the candidate: the comparator reads them ~12 times each.
  rank: number; // AUTHORITY_RANK[authority]
  score: number;
  sourceRank: number;
  // The fields the gates read, copied too: the gates visit candidates in rank order, all
  // over memory, and one object per candidate is one cache miss instead of two.
  id: string;
  scope: string;
  slotKey: string | null;
  text: string;
  /** capturedAt parsed, on the first tie that needs it (score and sourceRank rarely tie). */
  instant: InstantParts | null;
  /**
   * The hit's rendering, kept only once needed again (see {@link lineOf}): holding 50,000
   * lines until the end would make every young-generation GC copy them.
   */
  line: string | null;
  chars: number;
  /** Tokens of the hit's own rendering; -1 while never counted (see {@link HitCounting}). */
  tokens: number;
  /** T(line + "\n"): from the line's own count when the counter can extend it; -1 until known. */
  joined: number;
}

/** The hit's rendering of `r`, rendered again on first need after measuring and then kept. */
export function lineOf(r: Ranked): string {
  if (r.line === null) r.line = renderMemoryHit(r.c);
  return r.line;
}

// authority desc → score desc → sourceRank asc → capturedAt desc → memoryId asc.
function compareRank(a: Ranked, b: Ranked): number {
  if (a.rank !== b.rank) return b.rank - a.rank;
  if (a.score !== b.score) return b.score - a.score;
  if (a.sourceRank !== b.sourceRank) return a.sourceRank - b.sourceRank;
  const when = compareInstantParts(instantOf(b), instantOf(a));
  if (when !== 0) return when;
  return compareCodePoints(a.id, b.id);
}

function instantOf(r: Ranked): InstantParts {
  if (r.instant === null) r.instant = parseInstantParts(r.c.provenance.capturedAt) as InstantParts; // validated
  return r.instant;
}

/**
 * Which hits are counted while ranking: `every` one (docs/memory-selection.md: every decision carries the
 * hit's tokens), or none, leaving each hit to be rendered and counted only once a budget
 * prices it (the assembler's recall slot, where only what is admitted is counted); its
 * size in chars is then the caller's `hitChars` (by default computed from its values,
 * {@link memoryHitChars}).
 */
export type HitCounting = "every" | "priced";

// Hits rendered and counted per chunk: rendering a chunk, then counting it in a pass of
// its own keeps the tokenizer's tables hot in the CPU cache (10 % faster than alternating
// per hit, measured on 5,000 hits), while only one chunk of lines is alive at a time.
const CHUNK = 2048;

/**
 * Every candidate's hit rendering measured once: code points, tokens and, for counters
 * that can extend a count, the tokens with its joining newline. Lines are counted past the
 * memo (countUncached): they are one-off, and thousands would only flush a shared memo.
 */
function measureHits(
  candidates: readonly Candidate[],
  counter: TokenCounter,
  counting: HitCounting,
  hitChars: HitChars,
): Ranked[] {
  const sized = typeof hitChars === "function" ? null : hitChars;
  const size = typeof hitChars === "function" ? hitChars : memoryHitChars;
  const ranked: Ranked[] = new Array(candidates.length);
  const lines: string[] = new Array(Math.min(CHUNK, candidates.length));
  const extend = counter.newlineCut && counter.extendWithNewlines !== undefined;
  for (let start = 0; start < candidates.length; start += CHUNK) {
    const end = Math.min(candidates.length, start + CHUNK);
    for (let i = start; i < end; i++) {
      const c = candidates[i] as Candidate;
      const line = counting === "every" ? renderMemoryHit(c) : "";
      const authority = c.authority ?? "user_default";
      lines[i - start] = line;
      ranked[i] = {
        c,
        authority,
        rank: AUTHORITY_RANK[authority],
        score: c.score,
        sourceRank: c.sourceRank,
        id: c.memoryId,
        scope: c.userScope,
        slotKey: c.conflictKey ?? null,
        text: c.text,
        instant: null,
        line: null,
        chars:
          counting === "every" ? cpLength(line) : sized !== null ? (sized[i] as number) : size(c),
        tokens: -1,
        joined: -1,
      };
    }
    if (counting === "priced") continue;
    for (let i = start; i < end; i++) {
      const r = ranked[i] as Ranked;
      const line = lines[i - start] as string;
      r.tokens = counter.countUncached ? counter.countUncached(line) : counter.count(line);
      if (extend) r.joined = counter.extendWithNewlines?.(line, r.tokens, "\n") ?? -1;
    }
  }
  return ranked;
}

/**
 * How a priced hit's size in chars is known: a function of the candidate, or the sizes
 * themselves, by the candidate's index (a caller that measured every hit in one loop).
 */
export type HitChars = ((c: Candidate) => number) | readonly number[];

/** The candidates measured (see measureHits) and sorted in rank order. */
export function rankCandidates(
  candidates: readonly Candidate[],
  counter: TokenCounter,
  counting: HitCounting = "every",
  hitChars: HitChars = memoryHitChars,
): Ranked[] {
  const ranked = measureHits(candidates, counter, counting, hitChars);
  ranked.sort(compareRank);
  return ranked;
}
