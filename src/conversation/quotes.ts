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
/**
 * Weaker: a line quoting a token of six or more letters and digits that mixes them
 * (digits, letters, digits: a short hash or run id such as `e34d1f`, `a1b2c3`, `v1beta2`).
 * Not an id: counted as ids, 6-hex names (JSON rows of `"name": "a1b2c3"`) crowded the
 * facts out of cut results on the wider agent study (64k facts on seeds 10, 19 and 24 fell
 * below the hand-built loop's); ranked below ids, it still goes before bare numbers.
 */
const QUOTES_TOKEN = /\b(?=[A-Za-z0-9]{6,}\b)[A-Za-z]*\d+[A-Za-z]+\d/;
/** Weakest: a line quoting a number of three digits or more. */
const QUOTES_NUMBER = /\b\d{3,}(?:\.\d+)?\b/;

/** Code points a quoted line keeps (longer lines are cut and end with `…`). */
export const QUOTE_CHARS = 200;

/** How strongly a line quotes a fact: 0 an id, 1 a mixed token, 2 a number only. */
export type QuoteTier = 0 | 1 | 2;

/**
 * How strongly `line` quotes a fact: 0 for an id, 1 for a token mixing letters and
 * digits, 2 for a number only, `null` for none of them. Lower tiers are kept first.
 *
 * @example quoteTier("note: build id b-1f2e3a4b") // 0
 */
export function quoteTier(line: string): QuoteTier | null {
  if (QUOTES_ID.test(line)) return 0;
  if (QUOTES_TOKEN.test(line)) return 1;
  return QUOTES_NUMBER.test(line) ? 2 : null;
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
  readonly tier: QuoteTier;
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
 * `lines` in the order they are kept when room is short: ids first, then mixed tokens,
 * then numbers, each in the text's order.
 *
 * @example byTier(quotedLines("port 41234\nbuild b-1f2e3a4b")).map((l) => l.text) // ["build b-1f2e3a4b", "port 41234"]
 */
export function byTier(lines: readonly QuotedLine[]): QuotedLine[] {
  return [0, 1, 2].flatMap((t) => lines.filter((q) => q.tier === t));
}
