/**
 * The red-line check of docs/manifest-wire-guard.md: after the model drafts a reply, `checkDraft` looks for
 * the red lines contributed by skills (`redLines`) and by the identity / soul boundaries,
 * and reports every violation with its id, severity, span and an excerpt, for the trace.
 * Validation and compilation of the red lines live in `red-lines.ts`.
 *
 * Decisions (documented so peers can mirror them):
 * - A red line has exactly one of `literal` and `pattern`, an `id` unique in the set and a
 *   severity: `block` (the caller must not send the draft), `warn` (send, log) or `review`
 *   (a person should look: the violation is `flagged`).
 * - Literals match case-insensitively as whole words on NFKC-casefolded text with
 *   whitespace runs collapsed (the `normalizeKey` rules of docs/text-and-tokens.md), so `"Do  NOT share"`
 *   matches `do not share` across a line break. Normalization is applied per character
 *   cluster (a code point plus its combining marks) so every match maps back to a span of
 *   the original draft; a cluster that folds to several characters (`ß` → `ss`) is
 *   matched as a whole. A literal edge that is a letter, digit or mark needs a word
 *   boundary on that side, except Han / Hiragana / Katakana (written without spaces).
 * - Patterns are user patterns (`compileUserPattern`, text/user-pattern.ts): RE2 syntax,
 *   run on the linear-time engine `re2js` — never on JavaScript's backtracking engine —
 *   case-sensitive unless written `(?i)`, at most 500 code points, and must not match the
 *   empty string. What RE2 cannot run (lookaround, backreferences) is refused at load with
 *   `unsupported_pattern`. They are matched line by line over the whole draft, exactly (a
 *   match never spans a line break; `^` and `$` anchor at the true line edges; spans are
 *   the true start and end, whatever the line's length or the match's position).
 * - Cost: one pass over the whole draft per pattern (the `m`-flag probe) tells whether any
 *   line can match; then each line is tested (linear), and only a line with a match is
 *   searched for spans. The work is counted against `maxScanSteps` before it runs
 *   (deterministic, not a clock): a code unit tested costs 1, a code unit a span search
 *   may cross costs the pattern's program size.
 * - Fail closed: a draft longer than `maxDraftChars` code points is not checked at all,
 *   and a check that would exceed `maxScanSteps` stops; either way the result is
 *   `incomplete` (`draft_too_long` / `scan_budget_exceeded`), `blocked` (the caller must
 *   not send the draft) and `flagged`, with `checkedChars: 0`.
 * - At most `maxMatchesPerLine` violations are reported per red line (leftmost first,
 *   non-overlapping); a red line that reaches the cap is listed in `capped`.
 * - Spans are `[start, end)` code-point offsets into the draft. The excerpt is up to 40
 *   code points either side of the match, whitespace runs collapsed to one space (a single
 *   line), `…` where it was cut; a match over 160 code points keeps its first and last 80.
 * - Violations are ordered by start, end, then red-line id (code-point order).
 */
import { z } from "zod";
import { InvalidInputError } from "../errors/index.js";
import type { RedLine } from "../sources/index.js";
import {
  casefold,
  collapseWs,
  compareCodePoints,
  cpAt,
  cpBefore,
  cpOffsets,
  mayMatchSomeLine,
  needsWordBoundary,
  type UserPattern,
  WORD_CHAR,
  WS_CLASS,
} from "../text/index.js";
import {
  type CompiledRedLine,
  type CompiledRedLines,
  compileRedLines,
  isCompiled,
  type RedLineSeverity,
} from "./red-lines.js";

/** Default `maxDraftChars`. */
export const DEFAULT_MAX_DRAFT_CHARS = 200_000;
/** Default `maxMatchesPerLine` (per red line). */
export const DEFAULT_MAX_MATCHES_PER_LINE = 20;
/**
 * Default `maxScanSteps`: engine work units over the whole check (a tested code unit costs
 * 1, a code unit a span search may cross costs the pattern's program size).
 */
export const DEFAULT_MAX_SCAN_STEPS = 5_000_000;
/** Code points of context either side of a match in an excerpt. */
export const EXCERPT_CONTEXT = 40;

/** One red-line hit in a draft. */
export interface Violation {
  redLineId: string;
  severity: RedLineSeverity;
  kind: "literal" | "pattern";
  /** Code-point offsets into the draft, `[start, end)`. */
  span: { start: number; end: number };
  excerpt: string;
  /** True for `review` severity: a person should look at it. */
  flagged: boolean;
}

/** Why a check could not decide (the draft is then blocked: fail closed). */
export type IncompleteReason = "draft_too_long" | "scan_budget_exceeded";

/** The result of {@link checkDraft}: goes to the trace as is. */
export interface DraftCheck {
  /** Violations found (when `incomplete`, those found before the check stopped). */
  violations: Violation[];
  /** Code points of the draft the check covered: all of it, or 0 when `incomplete`. */
  checkedChars: number;
  /** True when the draft was longer than `maxDraftChars` (it was not checked, and is blocked). */
  truncated: boolean;
  /** Null when the whole draft was checked; else why not (then `blocked` and `flagged`). */
  incomplete: IncompleteReason | null;
  /** Red-line ids that hit `maxMatchesPerLine` (more matches may exist), sorted. */
  capped: string[];
  /** Distinct violated red-line ids, sorted by code point. */
  redLineIds: string[];
  /** Some violation has severity `block`, or the check is `incomplete`: do not send the draft. */
  blocked: boolean;
  /** Some violation has severity `review`, or the check is `incomplete`. */
  flagged: boolean;
}

/** Options of {@link checkDraft}. */
export interface CheckDraftOptions {
  maxDraftChars?: number;
  maxMatchesPerLine?: number;
  maxScanSteps?: number;
}

// matching

const WS = new RegExp(`^[${WS_CLASS}]$`);
const MARK_OR_JAMO = /^[\p{M}\u1160-\u11ff]$/u;

/** Code point index of every UTF-16 unit of `s` (length s.length + 1). */
function unitToCp(offsets: Uint32Array, units: number): Uint32Array {
  const out = new Uint32Array(units + 1);
  for (let k = 0; k + 1 < offsets.length; k++) {
    for (let u = offsets[k] as number; u < (offsets[k + 1] as number); u++) out[u] = k;
  }
  out[units] = offsets.length - 1;
  return out;
}

/** The draft folded for literal search, with each folded unit's source span in code points. */
interface Folded {
  text: string;
  from: Int32Array;
  to: Int32Array;
}

const isAsciiWs = (code: number) => (code >= 9 && code <= 13) || (code >= 0x1c && code <= 0x20);

function fold(text: string, offsets: Uint32Array): Folded {
  const n = offsets.length - 1;
  let cap = text.length + 16;
  let units = new Uint16Array(cap);
  let from = new Int32Array(cap);
  let to = new Int32Array(cap);
  let len = 0;
  let lastWs = false;
  const put = (unit: number, i: number, j: number) => {
    if (len === cap) {
      cap *= 2;
      const u = new Uint16Array(cap);
      u.set(units);
      units = u;
      const f = new Int32Array(cap);
      f.set(from);
      from = f;
      const t = new Int32Array(cap);
      t.set(to);
      to = t;
    }
    units[len] = unit;
    from[len] = i;
    to[len] = j;
    len++;
  };
  // Is code point k a combining mark (or conjoining jamo) that belongs to the cluster before it?
  const isMark = (k: number) => {
    if (k >= n) return false;
    const u = offsets[k] as number;
    if (text.charCodeAt(u) < 0x300) return false;
    return MARK_OR_JAMO.test(text.slice(u, offsets[k + 1]));
  };
  let i = 0;
  while (i < n) {
    const code = text.charCodeAt(offsets[i] as number);
    if (code < 0x80 && !isMark(i + 1)) {
      // ASCII without combining marks: NFKC is the identity, folding is lowercasing.
      const ws = isAsciiWs(code);
      if (ws && lastWs) to[len - 1] = i + 1;
      else put(ws ? 0x20 : code >= 65 && code <= 90 ? code + 32 : code, i, i + 1);
      lastWs = ws;
      i++;
      continue;
    }
    let j = i + 1;
    while (isMark(j)) j++;
    const cluster = text.slice(offsets[i], offsets[j]);
    for (const ch of casefold(cluster.normalize("NFKC"))) {
      const ws = ch.length === 1 && WS.test(ch);
      if (ws && lastWs) to[len - 1] = j;
      else if (ws) put(0x20, i, j);
      else for (let k = 0; k < ch.length; k++) put(ch.charCodeAt(k), i, j);
      lastWs = ws;
    }
    i = j;
  }
  let out = "";
  for (let k = 0; k < len; k += 8192) {
    out += String.fromCharCode(...units.subarray(k, Math.min(len, k + 8192)));
  }
  return { text: out, from, to };
}

interface Spans {
  spans: Array<[number, number]>;
  capped: boolean;
}

function literalSpans(folded: Folded, key: string, cap: number): Spans {
  const spans: Array<[number, number]> = [];
  const checkStart = needsWordBoundary(cpAt(key, 0));
  const checkEnd = needsWordBoundary(cpBefore(key, key.length));
  const t = folded.text;
  for (let i = t.indexOf(key); i >= 0; ) {
    const end = i + key.length;
    const ok =
      (!checkStart || !WORD_CHAR.test(cpBefore(t, i))) &&
      (!checkEnd || !WORD_CHAR.test(cpAt(t, end)));
    if (!ok) {
      i = t.indexOf(key, i + 1);
      continue;
    }
    if (spans.length === cap) return { spans, capped: true };
    spans.push([folded.from[i] as number, folded.to[end - 1] as number]);
    i = t.indexOf(key, end);
  }
  return { spans, capped: false };
}

/** The draft with, for every UTF-16 unit, its code-point index (for pattern spans). */
interface Subject {
  text: string;
  offsets: Uint32Array;
  toCp: Uint32Array;
}

function subject(text: string, offsets: Uint32Array): Subject {
  return { text, offsets, toCp: unitToCp(offsets, text.length) };
}

/** UTF-16 ranges `[start, end)` of the lines (split at `\n`, a trailing `\r` dropped). */
function lineRanges(text: string): Array<[number, number]> {
  const out: Array<[number, number]> = [];
  for (let from = 0; from <= text.length; ) {
    let nl = text.indexOf("\n", from);
    if (nl < 0) nl = text.length;
    out.push([from, nl > from && text[nl - 1] === "\r" ? nl - 1 : nl]);
    from = nl + 1;
  }
  return out;
}

/** Remaining engine work of one check (see {@link DEFAULT_MAX_SCAN_STEPS}). */
interface Budget {
  left: number;
}

type PatternSpans = Spans | { incomplete: IncompleteReason };

/**
 * Leftmost, non-overlapping matches of a pattern, line by line, on the linear-time engine.
 * A line is searched for spans only when a boolean test says it has a match; each search
 * is charged `programSize × units left on the line` before it runs.
 */
function patternSpans(
  sub: Subject,
  lines: ReadonlyArray<[number, number]>,
  line: CompiledRedLine,
  cap: number,
  budget: Budget,
): PatternSpans {
  const spans: Array<[number, number]> = [];
  const p = line.pattern as UserPattern;
  const over = (units: number) => {
    budget.left -= units;
    return budget.left < 0;
  };
  if (over(sub.text.length + 1)) return { incomplete: "scan_budget_exceeded" };
  if (!mayMatchSomeLine(p, sub.text)) return { spans, capped: false };
  for (const [base, end] of lines) {
    const text = sub.text.slice(base, end);
    if (over(text.length + 1)) return { incomplete: "scan_budget_exceeded" };
    if (!p.engine.test(text)) continue;
    const m = p.engine.matcher(text);
    for (let from = 0; from <= text.length; ) {
      if (over(p.programSize * (text.length - from + 1))) {
        return { incomplete: "scan_budget_exceeded" };
      }
      if (!m.find(from)) break;
      const [s, e] = [m.start(), m.end()];
      if (e === s) {
        // zero-width: step over one code point
        from = s + ((text.codePointAt(s) ?? 0) > 0xffff ? 2 : 1);
        continue;
      }
      if (spans.length === cap) return { spans, capped: true };
      spans.push([sub.toCp[base + s] as number, sub.toCp[base + e] as number]);
      from = e;
    }
  }
  return { spans, capped: false };
}

function excerpt(text: string, offsets: Uint32Array, start: number, end: number): string {
  const n = offsets.length - 1;
  const from = Math.max(0, start - EXCERPT_CONTEXT);
  const to = Math.min(n, end + EXCERPT_CONTEXT);
  const slice = (a: number, b: number) => text.slice(offsets[a], offsets[b]);
  const match =
    end - start > 160 ? `${slice(start, start + 80)}…${slice(end - 80, end)}` : slice(start, end);
  const one = collapseWs(slice(from, start) + match + slice(end, to));
  return `${from > 0 ? "…" : ""}${one}${to < n ? "…" : ""}`;
}

const positiveInt = z.number().int().min(1);

function checkOptions(options: CheckDraftOptions): Required<CheckDraftOptions> {
  const out = {
    maxDraftChars: options.maxDraftChars ?? DEFAULT_MAX_DRAFT_CHARS,
    maxMatchesPerLine: options.maxMatchesPerLine ?? DEFAULT_MAX_MATCHES_PER_LINE,
    maxScanSteps: options.maxScanSteps ?? DEFAULT_MAX_SCAN_STEPS,
  };
  for (const [key, value] of Object.entries(out)) {
    if (!positiveInt.safeParse(value).success) {
      throw new InvalidInputError("must be a positive integer", `options.${key}`);
    }
  }
  return out;
}

/** Every violation of every red line, or why the check could not finish. */
function findViolations(
  draft: string,
  offsets: Uint32Array,
  set: CompiledRedLines,
  opts: Required<CheckDraftOptions>,
): { violations: Violation[]; capped: string[]; incomplete: IncompleteReason | null } {
  const needsLiterals = set.lines.some((l) => l.kind === "literal");
  const needsPatterns = set.lines.some((l) => l.kind === "pattern");
  const folded = needsLiterals ? fold(draft, offsets) : null;
  const sub = needsPatterns ? subject(draft, offsets) : null;
  const lines = sub === null ? [] : lineRanges(draft);
  const budget: Budget = { left: opts.maxScanSteps };
  const violations: Violation[] = [];
  const capped: string[] = [];
  for (const line of set.lines) {
    const found =
      line.kind === "literal"
        ? literalSpans(folded as Folded, line.key as string, opts.maxMatchesPerLine)
        : patternSpans(sub as Subject, lines, line, opts.maxMatchesPerLine, budget);
    if ("incomplete" in found) return { violations, capped, incomplete: found.incomplete };
    if (found.capped) capped.push(line.id);
    for (const [start, end] of found.spans) {
      violations.push({
        redLineId: line.id,
        severity: line.severity,
        kind: line.kind,
        span: { start, end },
        excerpt: excerpt(draft, offsets, start, end),
        flagged: line.severity === "review",
      });
    }
  }
  return { violations, capped, incomplete: null };
}

/**
 * Checks a draft against red lines (raw, validated here, or from {@link compileRedLines}).
 * The whole draft is checked exactly, or the result is `incomplete` and `blocked`.
 *
 * @example
 * const r = checkDraft("Sure — guaranteed returns!", [{ id: "promise", severity: "review", literal: "Guaranteed Returns" }]);
 * r.violations[0]; // { redLineId: "promise", severity: "review", span: { start: 7, end: 25 }, flagged: true, … }
 */
export function checkDraft(
  draft: string,
  redLines: readonly RedLine[] | CompiledRedLines,
  options: CheckDraftOptions = {},
): DraftCheck {
  if (typeof draft !== "string") throw new InvalidInputError("must be a string", "draft");
  const opts = checkOptions(options);
  const set = isCompiled(redLines) ? redLines : compileRedLines(redLines);
  const offsets = cpOffsets(draft);
  const truncated = offsets.length - 1 > opts.maxDraftChars;
  const { violations, capped, incomplete } = truncated
    ? { violations: [], capped: [], incomplete: "draft_too_long" as const }
    : findViolations(draft, offsets, set, opts);
  violations.sort(
    (a, b) =>
      a.span.start - b.span.start ||
      a.span.end - b.span.end ||
      compareCodePoints(a.redLineId, b.redLineId),
  );
  const ids = [...new Set(violations.map((v) => v.redLineId))].sort(compareCodePoints);
  return {
    violations,
    checkedChars: incomplete === null ? offsets.length - 1 : 0,
    truncated,
    incomplete,
    capped: capped.sort(compareCodePoints),
    redLineIds: ids,
    blocked: incomplete !== null || violations.some((v) => v.severity === "block"),
    flagged: incomplete !== null || violations.some((v) => v.flagged),
  };
}
