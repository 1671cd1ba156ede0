// The char ledger: the code points of the prompt rendered from the admitted segments.
import type { Entry } from "./entry.js";
import { SEPARATOR_CHARS } from "./layout.js";

/**
 * The chars of the admitted prompt: additive, Σ chars of the admitted segments + one
 * separator between two of the same tier + one marker between two tiers.
 */
export interface CharLedger {
  used: number;
  admitted: number;
  /** Admitted segments per tier rank. */
  perTier: number[];
  separator: number;
  marker: number;
}

/** Chars of the prompt if `e` were admitted. */
export function charsWith(c: CharLedger, e: Entry): number {
  if (c.admitted === 0) return e.chars;
  return c.used + (c.perTier[e.tier]! > 0 ? c.separator : c.marker) + e.chars;
}

/** Admits `e`, `chars` being its {@link charsWith}. */
export function commitChars(c: CharLedger, e: Entry, chars: number): void {
  c.used = chars;
  c.admitted++;
  c.perTier[e.tier]!++;
}

/** An empty char ledger for a prompt whose tiers are joined by a marker of `markerChars`. */
export function charLedger(markerChars: number): CharLedger {
  return {
    used: 0,
    admitted: 0,
    perTier: [0, 0, 0],
    separator: SEPARATOR_CHARS,
    marker: markerChars,
  };
}
