/**
 * Lines that quote ids and numbers: the facts an agent comes back for ("build b-1f2e
 * failed", "listening on port 41234"). One rule for the two places that keep them when
 * the rest of a tool result goes — the digest of what left the window and the part of a
 * truncated result that is elided.
 */
import { cpPrefix } from "../text/index.js";

/**
 * A line quoting an id (ticket-like `AUTH-1234`, codes `E21206`, hex hashes). Not global:
 * `test` keeps no state between lines.
 */
const QUOTES_ID =
  /\b(?:[A-Za-z]+\d*[-_#][A-Za-z0-9_-]*\d[A-Za-z0-9_-]*|[A-Za-z]+\d{3,}[A-Za-z0-9_-]*|[0-9a-f]{7,40})\b/;
/** Weaker: a line quoting a number of three digits or more. */
const QUOTES_NUMBER = /\b\d{3,}(?:\.\d+)?\b/;

/** Code points a quoted line keeps (longer lines are cut and end with `…`). */
export const QUOTE_CHARS = 200;

/**
 * How strongly `line` quotes a fact: 0 for an id, 1 for a number only, `null` for
 * neither. Lower tiers are kept first.
 *
 * @example quoteTier("note: build id b-1f2e3a4b") // 0
 */
export function quoteTier(line: string): 0 | 1 | null {
  if (QUOTES_ID.test(line)) return 0;
  return QUOTES_NUMBER.test(line) ? 1 : null;
}

/**
 * `line` cut to {@link QUOTE_CHARS} code points (`…` marks a cut).
 *
 * @example clipQuote("short line") // "short line"
 */
export function clipQuote(line: string): string {
  const head = cpPrefix(line, QUOTE_CHARS);
  return head.length === line.length ? line : `${cpPrefix(line, QUOTE_CHARS - 1)}…`;
}

/** A line of a text that quotes a fact, with where it sits (UTF-16 offsets). */
export interface QuotedLine {
  readonly start: number;
  /** Offset just past the line's last character (its `\n` excluded). */
  readonly end: number;
  readonly tier: 0 | 1;
  /** The line as it is kept: {@link clipQuote} of it. */
  readonly text: string;
}

/**
 * Every line of `text` that quotes an id or a number, in order.
 *
 * @example quotedLines("a\nport 41234\nb").map((l) => l.text) // ["port 41234"]
 */
export function quotedLines(text: string): QuotedLine[] {
  const out: QuotedLine[] = [];
  let start = 0;
  while (start <= text.length) {
    const nl = text.indexOf("\n", start);
    const end = nl < 0 ? text.length : nl;
    const line = text.slice(start, end);
    const tier = line.trim() === "" ? null : quoteTier(line);
    if (tier !== null) out.push({ start, end, tier, text: clipQuote(line) });
    start = end + 1;
  }
  return out;
}

/**
 * `lines` in the order they are kept when room is short: ids first, then numbers, each in
 * the text's order.
 *
 * @example byTier(quotedLines("port 41234\nbuild b-1f2e3a4b")).map((l) => l.text) // ["build b-1f2e3a4b", "port 41234"]
 */
export function byTier(lines: readonly QuotedLine[]): QuotedLine[] {
  return [...lines.filter((q) => q.tier === 0), ...lines.filter((q) => q.tier === 1)];
}
