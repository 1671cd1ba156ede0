/**
 * The red-line check of spec 07: after the model drafts a reply, `checkDraft` looks for
 * the red lines contributed by skills (`redLines`) and by the identity / soul boundaries,
 * and reports every violation with its id, severity, span and an excerpt, for the trace.
 *
 * Decisions (documented so peers can mirror them):
 * - A red line has exactly one of `literal` and `pattern`, an `id` unique in the set and a
 *   severity: `block` (the caller must not send the draft), `warn` (send, log) or `review`
 *   (a person should look: the violation is `flagged`).
 * - Literals match case-insensitively as whole words on NFKC-casefolded text with
 *   whitespace runs collapsed (the `normalizeKey` rules of spec 01), so `"Do  NOT share"`
 *   matches `do not share` across a line break. Normalization is applied per character
 *   cluster (a code point plus its combining marks) so every match maps back to a span of
 *   the original draft; a cluster that folds to several characters (`ß` → `ss`) is
 *   matched as a whole. A literal edge that is a letter, digit or mark needs a word
 *   boundary on that side, except Han / Hiragana / Katakana (written without spaces).
 * - Patterns are JavaScript regexes compiled with the `u` flag, case-sensitive unless
 *   written otherwise (as skill trigger patterns), at most 500 code points, and must not
 *   match the empty string. They are matched line by line (a match never spans a line
 *   break; `^` and `$` anchor at line edges). A line longer than {@link REGEX_WINDOW} code
 *   points is scanned in windows of that size overlapping by {@link REGEX_OVERLAP}: a
 *   match longer than the overlap can be missed where it straddles a window edge, and at a
 *   window's right edge `$` and `\b` see the cut as an edge.
 * - Catastrophic backtracking: JavaScript cannot interrupt a running regex, so the
 *   primary protection is static — {@link regexSafetyProblem} rejects at load, with the
 *   reason, every pattern whose backtracking is worse than one linear scan per start
 *   position: nested variable quantifiers under an unbounded repetition (`(a+)+`,
 *   `(a*)*`), ambiguous alternation under repetition (`(a|a)*`, `(a|ab)+`), two wide
 *   quantifiers in sequence that can share characters (`a*a*`, `.*x.*`, `\w+\d+`), bounded
 *   repetitions with more than 10,000 combinations, and backreferences. It is conservative:
 *   some safe patterns are rejected (rewrite `(\w+\s)+` as `[\w\s]+`). The remaining
 *   (quadratic at worst) cost is bounded by the window and by `maxDraftChars`.
 * - Only the first `maxDraftChars` code points are checked (literals and patterns alike);
 *   a longer draft comes back `truncated: true` and `flagged: true`.
 * - At most `maxMatchesPerLine` violations are reported per red line (leftmost first,
 *   non-overlapping); a red line that reaches the cap is listed in `capped`.
 * - Spans are `[start, end)` code-point offsets into the draft. The excerpt is up to 40
 *   code points either side of the match, whitespace runs collapsed to one space (a single
 *   line), `…` where it was cut; a match over 160 code points keeps its first and last 80.
 * - Violations are ordered by start, end, then red-line id (code-point order).
 */
import { z } from "zod";
import { InvalidInputError, invalidFromZod } from "../errors/index.js";
import type { RedLine, Skill } from "../sources/index.js";
import {
  casefold,
  collapseWs,
  compareCodePoints,
  cpLength,
  cpOffsets,
  isBlank,
  normalizeKey,
  WS_CLASS,
} from "../text/index.js";

/** Longest accepted red-line regex source, in code points. */
export const MAX_RED_LINE_PATTERN_LENGTH = 500;
/** Default `maxDraftChars`. */
export const DEFAULT_MAX_DRAFT_CHARS = 200_000;
/** Default `maxMatchesPerLine` (per red line). */
export const DEFAULT_MAX_MATCHES_PER_LINE = 20;
/** Lines longer than this many code points are scanned in windows. */
export const REGEX_WINDOW = 512;
/** Overlap of two consecutive windows of one long line. */
export const REGEX_OVERLAP = 128;
/** Code points of context either side of a match in an excerpt. */
export const EXCERPT_CONTEXT = 40;

const SEVERITIES = ["block", "warn", "review"] as const;
export type RedLineSeverity = (typeof SEVERITIES)[number];

/** A red line validated and ready to run. */
export interface CompiledRedLine {
  id: string;
  severity: RedLineSeverity;
  kind: "literal" | "pattern";
  /** The literal as given, or the regex source. */
  source: string;
  /** Literal: its normalized form (`normalizeKey`). */
  key: string | null;
  /** Pattern: compiled with `gu`. */
  regex: RegExp | null;
}

/** The output of {@link compileRedLines}: pass it to {@link checkDraft} as often as needed. */
export interface CompiledRedLines {
  readonly compiled: true;
  readonly lines: readonly CompiledRedLine[];
}

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

/** The result of {@link checkDraft}: goes to the trace as is. */
export interface DraftCheck {
  violations: Violation[];
  /** Code points of the draft that were checked. */
  checkedChars: number;
  /** True when the draft was longer than `maxDraftChars` (the rest was not checked). */
  truncated: boolean;
  /** Red-line ids that hit `maxMatchesPerLine` (more matches may exist), sorted. */
  capped: string[];
  /** Distinct violated red-line ids, sorted by code point. */
  redLineIds: string[];
  /** Some violation has severity `block`. */
  blocked: boolean;
  /** Some violation has severity `review`, or the check was truncated. */
  flagged: boolean;
}

/** Options of {@link checkDraft}. */
export interface CheckDraftOptions {
  maxDraftChars?: number;
  maxMatchesPerLine?: number;
}

// ---------------------------------------------------------------------------------------
// static regex safety

type Atom =
  | { t: "char"; ch: string; src: string }
  | { t: "set"; src: string }
  | { t: "assert" }
  | { t: "backref" }
  | { t: "group"; alts: Term[][]; look: boolean };

interface Term {
  atom: Atom;
  min: number;
  max: number;
}

/** A quantifier this wide (max − min) or unbounded counts as "wide". */
const WIDE = 16;
/** Most combinations a bounded repetition may explore. */
const MAX_COMBINATIONS = 10_000;

class RegexParser {
  private i = 0;
  constructor(private readonly s: string[]) {}

  parse(): Term[][] {
    return this.alternatives();
  }

  /** Reads one escape at the start (`\\…`); see {@link consumed}. */
  escapeAt(): Atom {
    this.i = 1;
    return this.escape(0);
  }

  /** Code points read so far. */
  consumed(): number {
    return this.i;
  }

  private peek(k = 0): string | undefined {
    return this.s[this.i + k];
  }

  private alternatives(): Term[][] {
    const alts: Term[][] = [[]];
    while (this.i < this.s.length) {
      const c = this.peek();
      if (c === ")") break;
      if (c === "|") {
        this.i++;
        alts.push([]);
        continue;
      }
      const atom = this.atom();
      const [min, max] = this.quantifier();
      (alts[alts.length - 1] as Term[]).push({ atom, min, max });
    }
    return alts;
  }

  private until(end: string): string {
    let out = "";
    while (this.i < this.s.length && this.peek() !== end) out += this.s[this.i++];
    this.i++;
    return out;
  }

  private atom(): Atom {
    const start = this.i;
    const c = this.s[this.i++] as string;
    const src = () => this.s.slice(start, this.i).join("");
    switch (c) {
      case "^":
      case "$":
        return { t: "assert" };
      case ".":
        return { t: "set", src: "." };
      case "[": {
        while (this.i < this.s.length && this.peek() !== "]") {
          if (this.s[this.i++] === "\\") {
            const e = this.s[this.i++];
            if ((e === "p" || e === "P" || e === "u") && this.peek() === "{") this.until("}");
          }
        }
        this.i++;
        return { t: "set", src: src() };
      }
      case "(": {
        let look = false;
        if (this.peek() === "?") {
          const n = this.peek(1);
          if (n === ":") this.i += 2;
          else if (n === "=" || n === "!") {
            this.i += 2;
            look = true;
          } else if (n === "<" && (this.peek(2) === "=" || this.peek(2) === "!")) {
            this.i += 3;
            look = true;
          } else if (n === "<") {
            this.i += 2;
            this.until(">");
          }
        }
        const alts = this.alternatives();
        this.i++; // ")"
        return { t: "group", alts, look };
      }
      case "\\":
        return this.escape(start);
      default:
        return { t: "char", ch: c, src: src() };
    }
  }

  private escape(start: number): Atom {
    const e = this.s[this.i++] as string;
    const src = () => this.s.slice(start, this.i).join("");
    if ("dDwWsS".includes(e)) return { t: "set", src: src() };
    if (e === "b" || e === "B") return { t: "assert" };
    if (e === "p" || e === "P") {
      this.until("}");
      return { t: "set", src: src() };
    }
    if (/[1-9]/.test(e)) {
      while (/[0-9]/.test(this.peek() ?? "")) this.i++;
      return { t: "backref" };
    }
    if (e === "k") {
      this.until(">");
      return { t: "backref" };
    }
    let ch: string;
    if (e === "u" && this.peek() === "{") {
      ch = String.fromCodePoint(Number.parseInt(this.until("}").slice(1), 16));
    } else if (e === "u") {
      ch = String.fromCharCode(Number.parseInt(this.s.slice(this.i, this.i + 4).join(""), 16));
      this.i += 4;
    } else if (e === "x") {
      ch = String.fromCharCode(Number.parseInt(this.s.slice(this.i, this.i + 2).join(""), 16));
      this.i += 2;
    } else if (e === "c") {
      ch = String.fromCharCode((this.s[this.i++] as string).charCodeAt(0) % 32);
    } else {
      const named: Record<string, string> = {
        t: "\t",
        n: "\n",
        r: "\r",
        v: "\v",
        f: "\f",
        "0": "\0",
      };
      ch = named[e] ?? e;
    }
    return { t: "char", ch, src: src() };
  }

  private quantifier(): [number, number] {
    const c = this.peek();
    let q: [number, number] | null = null;
    if (c === "*") q = [0, Number.POSITIVE_INFINITY];
    else if (c === "+") q = [1, Number.POSITIVE_INFINITY];
    else if (c === "?") q = [0, 1];
    if (q !== null) this.i++;
    else if (c === "{") {
      const m = /^\{(\d+)(,(\d*))?\}/.exec(this.s.slice(this.i, this.i + 24).join(""));
      if (m === null) return [1, 1];
      this.i += cpLength(m[0]);
      const min = Number(m[1]);
      const max = m[2] === undefined ? min : m[3] === "" ? Number.POSITIVE_INFINITY : Number(m[3]);
      q = [min, max];
    } else return [1, 1];
    if (this.peek() === "?") this.i++; // lazy: same search space
    return q;
  }
}

const isWide = (t: Term) => t.max === Number.POSITIVE_INFINITY || t.max - t.min >= WIDE;
const isVariable = (t: Term) => t.max > t.min;

function* allTerms(alts: readonly Term[][]): Generator<Term> {
  for (const seq of alts) {
    for (const t of seq) {
      yield t;
      if (t.atom.t === "group") yield* allTerms(t.atom.alts);
    }
  }
}

function* allGroups(alts: readonly Term[][]): Generator<Term[][]> {
  for (const t of allTerms(alts)) if (t.atom.t === "group") yield t.atom.alts;
}

/** Can `atom` consume the character `ch`? (Conservative: true when unsure.) */
function canMatch(atom: Atom, ch: string): boolean {
  switch (atom.t) {
    case "char":
      return atom.ch === ch;
    case "set":
      try {
        return new RegExp(`^(?:${atom.src})$`, "u").test(ch);
      } catch {
        return true;
      }
    case "assert":
      return false;
    case "backref":
      return true;
    case "group":
      return atom.alts.some((seq) => seq.some((t) => canMatch(t.atom, ch)));
  }
}

// Pairs of escapes known to share no character (either order).
const DISJOINT = new Set(["\\s|\\w", "\\s|\\d", "\\s|\\S", "\\d|\\D", "\\w|\\W"]);

/** Do the two atoms certainly share no character? (Conservative: false when unsure.) */
function disjoint(a: Atom, b: Atom): boolean {
  if (a.t === "assert" || b.t === "assert") return true;
  if (a.t === "backref" || b.t === "backref") return false;
  if (a.t === "group") return [...allTerms(a.alts)].every((t) => disjoint(t.atom, b));
  if (b.t === "group") return [...allTerms(b.alts)].every((t) => disjoint(a, t.atom));
  if (a.t === "char") return !canMatch(b, a.ch);
  if (b.t === "char") return !canMatch(a, b.ch);
  const ea = expandClass(a.src);
  if (ea !== null) return ea.every((x) => disjoint(x, b));
  const eb = expandClass(b.src);
  if (eb !== null) return eb.every((x) => disjoint(a, x));
  return DISJOINT.has(`${a.src}|${b.src}`) || DISJOINT.has(`${b.src}|${a.src}`);
}

/**
 * A positive class `[...]` as the atoms it unites (characters, ranges of at most 256
 * characters, class escapes), or null when it is negated or not that simple.
 */
function expandClass(src: string): Atom[] | null {
  if (!src.startsWith("[") || src.startsWith("[^")) return null;
  const s = Array.from(src.slice(1, -1));
  const out: Atom[] = [];
  let i = 0;
  const one = (): Atom | null => {
    const c = s[i++] as string;
    if (c !== "\\") return { t: "char", ch: c, src: c };
    const e = s[i] as string;
    if ("dDwWsS".includes(e)) {
      i++;
      return { t: "set", src: `\\${e}` };
    }
    if (e === "b") {
      i++;
      return { t: "char", ch: "\b", src: "\\b" };
    }
    if (e === "p" || e === "P") return null;
    const p = new RegexParser(["\\", ...s.slice(i)]);
    const atom = p.escapeAt();
    i += p.consumed() - 1;
    return atom;
  };
  while (i < s.length) {
    const a = one();
    if (a === null) return null;
    if (a.t === "char" && s[i] === "-" && i + 1 < s.length) {
      i++;
      const b = one();
      if (b === null || b.t !== "char") return null;
      const lo = a.ch.codePointAt(0) as number;
      const hi = b.ch.codePointAt(0) as number;
      if (hi - lo > 256) return null;
      for (let cp = lo; cp <= hi; cp++) {
        const ch = String.fromCodePoint(cp);
        out.push({ t: "char", ch, src: ch });
      }
    } else out.push(a);
  }
  return out;
}

const ANY: Atom = { t: "backref" };

/** The atoms a term can start consuming with (ANY when unsure). */
function firstAtoms(t: Term): Atom[] {
  if (t.atom.t !== "group") return [t.atom];
  if (t.atom.look) return [ANY];
  return t.atom.alts.flatMap((seq) => {
    const first = flatten(seq)[0];
    return first === undefined || first.min < 1 ? [ANY] : firstAtoms(first);
  });
}

/** Terms of a sequence with plain (unquantified, single-branch, capturing or not) groups inlined. */
function flatten(seq: readonly Term[]): Term[] {
  return seq.flatMap((t) =>
    t.atom.t === "group" && !t.atom.look && t.min === 1 && t.max === 1 && t.atom.alts.length === 1
      ? flatten(t.atom.alts[0] as Term[])
      : [t],
  );
}

/** First mandatory literal character a sequence starts with, or null. */
function firstLiteral(seq: readonly Term[]): string | null {
  const t = flatten(seq)[0];
  if (t === undefined || t.min < 1) return null;
  return t.atom.t === "char" ? t.atom.ch : null;
}

/** A wide item in a sequence: a wide quantifier, or an unquantified group holding one. */
function wideItem(t: Term): boolean {
  if (isWide(t)) return true;
  return t.atom.t === "group" && !t.atom.look && [...allTerms(t.atom.alts)].some(isWide);
}

/** Number of ways one pass over `alts` can split a fixed string (a bound, capped). */
function combinations(alts: readonly Term[][]): number {
  let n = alts.length;
  for (const seq of alts) {
    for (const t of seq) {
      const range = t.max === Number.POSITIVE_INFINITY ? MAX_COMBINATIONS : t.max - t.min + 1;
      n *= range;
      if (t.atom.t === "group") n *= combinations(t.atom.alts);
      if (n > MAX_COMBINATIONS) return MAX_COMBINATIONS + 1;
    }
  }
  return n;
}

/**
 * Polynomial backtracking: for one start position, a wide item W is entered at Θ(n) split
 * points only when an earlier wide item P can end at Θ(n) places, i.e. when nothing
 * between them fences P off. An item fences P when it is mandatory and its characters are
 * disjoint from P's; a wide item is allowed only when it starts with characters disjoint
 * from every unfenced P (then P must end where its run ends).
 */
function checkSequences(alts: readonly Term[][]): string | null {
  const seqs: Term[][] = [...alts];
  for (const g of allGroups(alts)) seqs.push(...g);
  for (const seq of seqs) {
    let pending: Term[] = []; // wide items not yet fenced off
    for (const t of flatten(seq)) {
      if (t.atom.t === "group" && t.atom.look) continue; // atomic, zero-width
      const starts = firstAtoms(t);
      const startsDisjoint = (p: Term) => starts.every((a) => disjoint(p.atom, a));
      if (wideItem(t)) {
        if (!pending.every(startsDisjoint)) {
          return "two wide quantifiers in sequence can share characters (polynomial backtracking, e.g. a*a* or .*x.*); separate them with a mandatory character the first cannot match";
        }
        pending = t.min >= 1 ? [t] : [...pending, t];
      } else if (t.min >= 1) {
        pending = pending.filter((p) => !disjoint(p.atom, t.atom));
      }
    }
  }
  return null;
}

/**
 * Why a regex source could backtrack catastrophically, or null when it passes the static
 * check (see the module comment for the rules). Assumes `source` compiles with `u`.
 *
 * @example regexSafetyProblem("(a+)+$") // "nested quantifier …"
 * regexSafetyProblem("\\bpassword\\s*[:=]") // null
 */
export function regexSafetyProblem(source: string): string | null {
  const alts = new RegexParser(Array.from(source)).parse();
  for (const t of allTerms(alts)) {
    if (t.atom.t === "backref")
      return "backreferences are not allowed (they defeat the static check)";
    if (t.atom.t !== "group" || t.max <= 1) continue;
    const inner = [...allTerms(t.atom.alts)];
    const unbounded = t.max === Number.POSITIVE_INFINITY || t.max > WIDE;
    if (unbounded) {
      if (inner.some(isVariable)) {
        return "nested quantifier: a variable quantifier inside a repeated group can backtrack catastrophically (e.g. (a+)+, (a*)*)";
      }
      for (const g of [t.atom.alts, ...allGroups(t.atom.alts)]) {
        if (g.length < 2) continue;
        const firsts = g.map(firstLiteral);
        if (firsts.some((f) => f === null) || new Set(firsts).size !== firsts.length) {
          return "ambiguous alternation inside a repeated group can backtrack catastrophically (e.g. (a|a)*, (a|ab)+); branches must start with distinct literal characters, or use a character class";
        }
      }
    } else {
      const per = combinations(t.atom.alts);
      if (per > 1 && per ** t.max > MAX_COMBINATIONS) {
        return `bounded repetition explores more than ${MAX_COMBINATIONS} combinations`;
      }
    }
  }
  return checkSequences(alts);
}

// ---------------------------------------------------------------------------------------
// loading

const RedLineSchema = z
  .object({
    id: z.string().refine((s) => !isBlank(s), { message: "must be a non-blank string" }),
    severity: z.enum(SEVERITIES),
    literal: z.string().optional(),
    pattern: z.string().optional(),
  })
  .strict();

function isCompiled(x: unknown): x is CompiledRedLines {
  return typeof x === "object" && x !== null && (x as CompiledRedLines).compiled === true;
}

/**
 * Validates and compiles red lines at load. Throws invalid input naming the line and the
 * reason (`redLines[3].pattern: nested quantifier …`); `prefix` replaces `redLines`.
 *
 * @example
 * const lines = compileRedLines([
 *   { id: "no-secrets", severity: "block", pattern: "\\bsk-[A-Za-z0-9]{20,}" },
 *   { id: "no-promise", severity: "review", literal: "guaranteed returns" },
 * ]);
 */
export function compileRedLines(lines: unknown, prefix = "redLines"): CompiledRedLines {
  if (!Array.isArray(lines)) throw new InvalidInputError("must be a list of red lines", prefix);
  const seen = new Set<string>();
  const out = lines.map((raw, i): CompiledRedLine => {
    const parsed = RedLineSchema.safeParse(raw);
    if (!parsed.success) throw invalidFromZod(parsed.error, [prefix, i]);
    const line = parsed.data;
    if (seen.has(line.id)) {
      throw new InvalidInputError(`duplicate red line id ${JSON.stringify(line.id)}`, [
        prefix,
        i,
        "id",
      ]);
    }
    seen.add(line.id);
    if ((line.literal === undefined) === (line.pattern === undefined)) {
      throw new InvalidInputError("needs exactly one of literal and pattern", [prefix, i]);
    }
    if (line.literal !== undefined) {
      if (isBlank(line.literal)) {
        throw new InvalidInputError("must not be blank", [prefix, i, "literal"]);
      }
      return {
        id: line.id,
        severity: line.severity,
        kind: "literal",
        source: line.literal,
        key: normalizeKey(line.literal),
        regex: null,
      };
    }
    const source = line.pattern as string;
    const where = [prefix, i, "pattern"];
    const fail = (why: string): never => {
      throw new InvalidInputError(`/${source}/u: ${why}`, where);
    };
    if (source === "") fail("must not be empty");
    const n = cpLength(source);
    if (n > MAX_RED_LINE_PATTERN_LENGTH) {
      fail(`pattern is ${n} code points, the limit is ${MAX_RED_LINE_PATTERN_LENGTH}`);
    }
    let regex: RegExp;
    try {
      regex = new RegExp(source, "gu");
    } catch (err) {
      return fail(`invalid regex: ${(err as Error).message}`);
    }
    const problem = regexSafetyProblem(source);
    if (problem !== null) fail(problem);
    regex.lastIndex = 0;
    if (regex.test("")) fail("matches the empty string");
    return { id: line.id, severity: line.severity, kind: "pattern", source, key: null, regex };
  });
  return { compiled: true, lines: out };
}

/**
 * The red lines of loaded skills, ids namespaced by skill (`<skill>:<id>`) so two skills'
 * ids never clash; skills in the order given, lines in file order.
 *
 * @example redLinesFromSkills(catalog.skills) // [{ id: "deploy:no-force-push", … }]
 */
export function redLinesFromSkills(skills: readonly Pick<Skill, "name" | "redLines">[]): RedLine[] {
  return skills.flatMap((s) => s.redLines.map((l) => ({ ...l, id: `${s.name}:${l.id}` })));
}

// ---------------------------------------------------------------------------------------
// matching

const WS = new RegExp(`^[${WS_CLASS}]$`);
const MARK_OR_JAMO = /^[\p{M}\u1160-\u11ff]$/u;
const WORD_CHAR = /[\p{L}\p{N}\p{M}_]/u;
const UNSPACED = /[\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}]/u;

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

function needsBoundary(edge: string): boolean {
  return WORD_CHAR.test(edge) && !UNSPACED.test(edge);
}

/** The code point ending at UTF-16 offset `i` of `s`, or "" at the start. */
function charBefore(s: string, i: number): string {
  if (i === 0) return "";
  const chars = Array.from(s.slice(Math.max(0, i - 2), i));
  return chars[chars.length - 1] as string;
}

/** The code point starting at UTF-16 offset `i` of `s`, or "" at the end. */
function charAt(s: string, i: number): string {
  return i >= s.length ? "" : String.fromCodePoint(s.codePointAt(i) as number);
}

interface Spans {
  spans: Array<[number, number]>;
  capped: boolean;
}

function literalSpans(folded: Folded, key: string, cap: number): Spans {
  const spans: Array<[number, number]> = [];
  const checkStart = needsBoundary(charAt(key, 0));
  const checkEnd = needsBoundary(charBefore(key, key.length));
  const t = folded.text;
  for (let i = t.indexOf(key); i >= 0; ) {
    const end = i + key.length;
    const ok =
      (!checkStart || !WORD_CHAR.test(charBefore(t, i))) &&
      (!checkEnd || !WORD_CHAR.test(charAt(t, end)));
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

/**
 * Leftmost, non-overlapping matches of `regex`, line by line; an over-long line in
 * overlapping windows, each reporting the matches that start in its first `step` code
 * points (the last window: all), so no start is scanned twice for a report.
 */
function patternSpans(
  text: string,
  offsets: Uint32Array,
  toCp: Uint32Array,
  regex: RegExp,
  cap: number,
): Spans {
  const spans: Array<[number, number]> = [];
  const re = new RegExp(regex.source, regex.flags);
  const total = offsets.length - 1;
  const step = REGEX_WINDOW - REGEX_OVERLAP;
  let lineStart = 0; // code points
  let lastEnd = 0;
  while (lineStart <= total) {
    let nl = text.indexOf("\n", offsets[lineStart]);
    if (nl < 0) nl = text.length;
    const lineEndUnit = nl > (offsets[lineStart] as number) && text[nl - 1] === "\r" ? nl - 1 : nl;
    const lineEnd = toCp[lineEndUnit] as number;
    for (let ws = lineStart; ; ws += step) {
      const last = ws + REGEX_WINDOW >= lineEnd;
      const we = last ? lineEnd : ws + REGEX_WINDOW;
      const ctx = Math.max(lineStart, ws - 32); // left context for \b and lookbehind
      const base = offsets[ctx] as number;
      const slice = text.slice(base, offsets[we]);
      re.lastIndex = (offsets[Math.max(ws, lastEnd)] as number) - base;
      for (let m = re.exec(slice); m !== null; m = re.exec(slice)) {
        const s = toCp[base + m.index] as number;
        if (!last && s >= ws + step) break;
        if (m[0] === "") {
          // Zero-width: step over one code point.
          re.lastIndex = m.index + ((slice.codePointAt(m.index) ?? 0) > 0xffff ? 2 : 1);
          continue;
        }
        const e = toCp[base + m.index + m[0].length] as number;
        if (spans.length === cap) return { spans, capped: true };
        spans.push([s, e]);
        lastEnd = e;
      }
      if (last) break;
    }
    lineStart = (toCp[nl] as number) + 1;
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

/**
 * Checks a draft against red lines (raw, validated here, or from {@link compileRedLines}).
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
  const maxDraftChars = options.maxDraftChars ?? DEFAULT_MAX_DRAFT_CHARS;
  const maxMatches = options.maxMatchesPerLine ?? DEFAULT_MAX_MATCHES_PER_LINE;
  if (!positiveInt.safeParse(maxDraftChars).success) {
    throw new InvalidInputError("must be a positive integer", "options.maxDraftChars");
  }
  if (!positiveInt.safeParse(maxMatches).success) {
    throw new InvalidInputError("must be a positive integer", "options.maxMatchesPerLine");
  }
  const set = isCompiled(redLines) ? redLines : compileRedLines(redLines);

  const draftOffsets = cpOffsets(draft);
  const truncated = draftOffsets.length - 1 > maxDraftChars;
  const text = truncated ? draft.slice(0, draftOffsets[maxDraftChars]) : draft;
  const offsets = truncated ? draftOffsets.subarray(0, maxDraftChars + 1) : draftOffsets;
  const needsLiterals = set.lines.some((l) => l.kind === "literal");
  const needsPatterns = set.lines.some((l) => l.kind === "pattern");
  const folded = needsLiterals ? fold(text, offsets) : null;
  const toCp = needsPatterns ? unitToCp(offsets, text.length) : null;

  const violations: Violation[] = [];
  const capped: string[] = [];
  for (const line of set.lines) {
    const { spans, capped: hit } =
      line.kind === "literal"
        ? literalSpans(folded as Folded, line.key as string, maxMatches)
        : patternSpans(text, offsets, toCp as Uint32Array, line.regex as RegExp, maxMatches);
    if (hit) capped.push(line.id);
    for (const [start, end] of spans) {
      violations.push({
        redLineId: line.id,
        severity: line.severity,
        kind: line.kind,
        span: { start, end },
        excerpt: excerpt(text, offsets, start, end),
        flagged: line.severity === "review",
      });
    }
  }
  violations.sort(
    (a, b) =>
      a.span.start - b.span.start ||
      a.span.end - b.span.end ||
      compareCodePoints(a.redLineId, b.redLineId),
  );
  const ids = [...new Set(violations.map((v) => v.redLineId))].sort(compareCodePoints);
  return {
    violations,
    checkedChars: offsets.length - 1,
    truncated,
    capped: capped.sort(compareCodePoints),
    redLineIds: ids,
    blocked: violations.some((v) => v.severity === "block"),
    flagged: truncated || violations.some((v) => v.flagged),
  };
}
