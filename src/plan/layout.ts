// How admitted segments join into the prompt: the separator, the per-segment layout data and its rendering.
import { cpLength } from "../text/index.js";
import type { TokenCounter } from "../tokens/index.js";

/** Placed between two rendered segments (of the same tier); its cost counts against the budget. */
export const SEGMENT_SEPARATOR = "\n\n---\n\n";
export const SEPARATOR_CHARS = cpLength(SEGMENT_SEPARATOR);

/**
 * How the segments join: two consecutive rendered segments of the same tier are joined
 * by {@link SEGMENT_SEPARATOR}, two of different tiers by `marker` (untiered: one tier).
 */
export interface Layout {
  contents: readonly string[];
  /** Tier rank of each segment, by display index (all 0 when untiered). */
  tiers: readonly number[];
  marker: string;
  /** Each segment's own token count, by display index; -1 until counted (see ownTokens). */
  tokens: Float64Array;
}

/**
 * Segment d's own token count, counted on first need. A plain function over plain data
 * (not a closure made per plan), so V8's optimized code calling it survives the plan.
 */
export function ownTokens(layout: Layout, counter: TokenCounter, d: number): number {
  let t = layout.tokens[d]!;
  if (t < 0) {
    t = counter.count(layout.contents[d]!);
    layout.tokens[d] = t;
  }
  return t;
}

/** The prompt rendered from the segments (display indexes, ascending) for which `keep` holds. */
export function render(layout: Layout, keep: (d: number) => boolean): string {
  let out = "";
  let prev = -1;
  for (let d = 0; d < layout.contents.length; d++) {
    if (!keep(d)) continue;
    if (prev >= 0)
      out += layout.tiers[prev] === layout.tiers[d] ? SEGMENT_SEPARATOR : layout.marker;
    out += layout.contents[d]!;
    prev = d;
  }
  return out;
}
