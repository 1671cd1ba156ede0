/**
 * User-supplied patterns (skill triggers, red lines) compiled in one place, for the
 * linear-time RE2 engine (`re2js`): JavaScript's backtracking engine cannot be interrupted,
 * and no static check can tell every catastrophic pattern from a safe one, so a user
 * pattern never reaches it. Matching time is linear in the text for every pattern that
 * compiles; what RE2 cannot run — lookaround, backreferences, a repetition count over
 * 1000, a program over {@link MAX_PATTERN_PROGRAM} instructions — is refused here, at
 * load, with `unsupported_pattern`, the field path, the pattern and why.
 *
 * Syntax is RE2's (https://github.com/google/re2/wiki/Syntax), close to JavaScript's; a
 * few JavaScript spellings are accepted and rewritten: `\uXXXX` (surrogate pairs joined)
 * and `\u{X…}` become `\x{…}`, `\p{Script=Han}` / `\p{sc=Han}` become `\p{Han}`. `\s` and
 * `\S` mean whitespace as the text rules define it (`WS_RANGES`), not RE2's ASCII set.
 */
import { RE2JS, RE2JSException, RE2JSSyntaxException } from "re2js";
import { type FieldPath, InvalidInputError, UnsupportedPatternError } from "../errors/index.js";
import { cpLength } from "./chars.js";
import { WS_RANGES } from "./whitespace.js";

/** Largest compiled program (RE2 instructions) a user pattern may have. */
export const MAX_PATTERN_PROGRAM = 2000;

/** A user pattern compiled for the linear-time engine. */
export interface UserPattern {
  /** The pattern as the user wrote it. */
  readonly source: string;
  /** The RE2 syntax actually compiled (after the rewrites of the module comment). */
  readonly re2Source: string;
  /** The compiled RE2 program (never a native `RegExp`). */
  readonly engine: RE2JS;
  /** Instructions of the program: a deterministic measure of the cost per character. */
  readonly programSize: number;
  /**
   * True when matching each line of a text separately finds nothing unless the whole
   * text (`\r\n` as `\n`) matches under the `m` flag: no `\A`, `\z` or `m` flag toggle.
   */
  readonly lineProbeSafe: boolean;
}

/** Line probes (the source under the `m` flag), compiled on first use. */
const PROBES = new WeakMap<UserPattern, RE2JS>();

/**
 * False only when no line of `text` (split at `\n`, a trailing `\r` dropped) has a match
 * of `p`: one linear pass over the whole text under the `m` flag, so a check of many short
 * lines skips them all at once when nothing matches. True when unsure (`lineProbeSafe`
 * false).
 *
 * @example mayMatchSomeLine(compileUserPattern("^b$", "p"), "a\r\nb") // true
 */
export function mayMatchSomeLine(p: UserPattern, text: string): boolean {
  if (!p.lineProbeSafe) return true;
  let probe = PROBES.get(p);
  if (probe === undefined) {
    probe = RE2JS.compile(p.re2Source, RE2JS.MULTILINE);
    PROBES.set(p, probe);
  }
  return probe.test(text.replaceAll("\r\n", "\n"));
}

/** Options of {@link compileUserPattern}. */
export interface UserPatternOptions {
  /** Longest source in code points (default 500). */
  maxLength?: number;
  /** Refuse a pattern that matches the empty string (default false). */
  refuseEmptyMatch?: boolean;
}

const hex = (cp: number) => cp.toString(16);
const item = (a: number, b: number) =>
  a === b ? `\\x{${hex(a)}}` : `\\x{${hex(a)}}-\\x{${hex(b)}}`;
/** `\s`: whitespace as the text rules define it, as class items. */
const WS_ITEMS = WS_RANGES.map(([a, b]) => item(a, b)).join("");
/** `\S`: every other code point, as class items (so it also works inside a class). */
const NON_WS_ITEMS = (() => {
  const out: string[] = [];
  let next = 0;
  for (const [a, b] of WS_RANGES) {
    if (a > next) out.push(item(next, a - 1));
    next = b + 1;
  }
  out.push(item(next, 0x10ffff));
  return out.join("");
})();

class Unsupported extends Error {}

/** A left-to-right rewrite of the source into RE2 syntax (see the module comment). */
class Translator {
  private i = 0;
  private out = "";
  private inClass = false;
  lineProbeSafe = true;
  constructor(private readonly s: string) {}

  run(): string {
    while (this.i < this.s.length) {
      const c = this.s[this.i] as string;
      if (c === "\\") this.escape();
      else if (this.inClass) this.classChar(c);
      else if (c === "[") this.openClass();
      else if (c === "(") this.group();
      else this.copy(1);
    }
    return this.out;
  }

  private copy(n: number): void {
    this.out += this.s.slice(this.i, this.i + n);
    this.i += n;
  }

  private openClass(): void {
    this.inClass = true;
    let n = 1;
    if (this.s[this.i + n] === "^") n++;
    if (this.s[this.i + n] === "]") n++; // a leading `]` is a literal
    this.copy(n);
  }

  private classChar(c: string): void {
    if (c === "]") this.inClass = false;
    if (c === "[" && this.s[this.i + 1] === ":") {
      const end = this.s.indexOf(":]", this.i + 2);
      if (end >= 0) {
        this.copy(end + 2 - this.i);
        return;
      }
    }
    this.copy(1);
  }

  /** A group: captures become non-capturing (nothing reads them; the search is cheaper). */
  private group(): void {
    const named = /^\(\?P?<[A-Za-z_][A-Za-z0-9_]*>/.exec(this.s.slice(this.i, this.i + 40));
    if (this.s[this.i + 1] !== "?" || named !== null) {
      this.out += "(?:";
      this.i += named === null ? 1 : named[0].length;
      return;
    }
    const rest = this.s.slice(this.i + 2, this.i + 4);
    if (rest.startsWith("=") || rest.startsWith("!")) {
      throw new Unsupported(`lookahead (?${rest[0]}…) is not supported`);
    }
    if (rest === "<=" || rest === "<!") {
      throw new Unsupported(`lookbehind (?${rest}…) is not supported`);
    }
    const flags = /^\(\?([A-Za-z-]*)[:)]/.exec(this.s.slice(this.i));
    if (flags?.[1]?.includes("m")) this.lineProbeSafe = false;
    this.copy(2);
  }

  private escape(): void {
    const e = this.s[this.i + 1] ?? "";
    if (!this.inClass && /[1-9]/.test(e))
      throw new Unsupported(`backreference \\${e} is not supported`);
    if (e === "k" && this.s[this.i + 2] === "<") {
      throw new Unsupported("backreference \\k<…> is not supported");
    }
    if (e === "Q") {
      // RE2's quoting: everything up to `\E` is literal, copied as is.
      const end = this.s.indexOf("\\E", this.i + 2);
      this.copy(end < 0 ? this.s.length - this.i : end + 2 - this.i);
      return;
    }
    if (e === "s" || e === "S") {
      const items = e === "s" ? WS_ITEMS : NON_WS_ITEMS;
      this.out += this.inClass ? items : `[${items}]`;
      this.i += 2;
    } else if (e === "u") this.unicodeEscape();
    else if ((e === "p" || e === "P") && this.s[this.i + 2] === "{") {
      const m = /^\{(?:Script|sc)=([^}]*)\}/.exec(this.s.slice(this.i + 2));
      if (m === null) this.copy(2);
      else {
        this.out += `\\${e}{${m[1]}}`;
        this.i += 2 + m[0].length;
      }
    } else {
      if (!this.inClass && (e === "A" || e === "z")) this.lineProbeSafe = false;
      const unit = this.s.charCodeAt(this.i + 1); // the escaped code point: one or two units
      this.copy(Number.isNaN(unit) ? 1 : unit >= 0xd800 && unit <= 0xdbff ? 3 : 2);
    }
  }

  /** `\u{X…}` or `\uXXXX` (a surrogate pair `\uD83D\uDE00` is one code point). */
  private unicodeEscape(): void {
    const braced = /^\\u\{([0-9A-Fa-f]{1,6})\}/.exec(this.s.slice(this.i));
    if (braced !== null) {
      this.out += `\\x{${braced[1]}}`;
      this.i += braced[0].length;
      return;
    }
    const pair = /^\\u([0-9A-Fa-f]{4})(?:\\u([0-9A-Fa-f]{4}))?/.exec(this.s.slice(this.i));
    if (pair === null) {
      this.copy(2); // RE2 reports the bad escape
      return;
    }
    const hi = Number.parseInt(pair[1] as string, 16);
    const lo = pair[2] === undefined ? -1 : Number.parseInt(pair[2], 16);
    if (hi >= 0xd800 && hi <= 0xdbff && lo >= 0xdc00 && lo <= 0xdfff) {
      this.out += `\\x{${hex(0x10000 + ((hi - 0xd800) << 10) + (lo - 0xdc00))}}`;
      this.i += 12;
    } else {
      this.out += `\\x{${hex(hi)}}`;
      this.i += 6;
    }
  }
}

// RE2's messages for syntax it knows but cannot run (as opposed to malformed syntax).
const UNSUPPORTED_SYNTAX = ["invalid or unsupported Perl syntax", "invalid repeat count"];

/** RE2 compilation of the translated source; errors typed, naming the pattern. */
function compileRe2(source: string, re2Source: string, path: FieldPath | string): RE2JS {
  try {
    return RE2JS.compile(re2Source);
  } catch (err) {
    if (err instanceof RE2JSSyntaxException) {
      const detail = `${err.error}${err.input ? `: \`${err.input}\`` : ""}`;
      if (UNSUPPORTED_SYNTAX.includes(err.error)) {
        throw new UnsupportedPatternError(
          `/${source}/: ${detail} (user patterns run on the linear-time RE2 engine; repetition counts are at most 1000)`,
          path,
        );
      }
      throw new InvalidInputError(`/${source}/: invalid regex: ${detail}`, path);
    }
    if (err instanceof RE2JSException) {
      throw new UnsupportedPatternError(`/${source}/: ${err.message}`, path);
    }
    throw err;
  }
}

/**
 * Compiles a user-supplied pattern for the linear-time engine — the only way any user
 * pattern is compiled. Throws `invalid_input` (too long, malformed, matches the empty
 * string when refused) or `unsupported_pattern` (lookaround, backreferences, too large),
 * at `path`, naming the pattern and why.
 *
 * @example
 * const p = compileUserPattern("(?i)\\bsk-[a-z0-9]{20,}", "redLines[0].pattern");
 * p.engine.test("key: SK-abcdefghijklmnopqrstu"); // true
 * compileUserPattern("a(?=b)", "triggers.patterns[0]"); // throws unsupported_pattern
 */
export function compileUserPattern(
  source: string,
  path: FieldPath | string,
  options: UserPatternOptions = {},
): UserPattern {
  const maxLength = options.maxLength ?? 500;
  if (source === "") throw new InvalidInputError("pattern must not be empty", path);
  const n = cpLength(source);
  if (n > maxLength) {
    throw new InvalidInputError(`pattern is ${n} code points, the limit is ${maxLength}`, path);
  }
  const t = new Translator(source);
  let re2Source: string;
  try {
    re2Source = t.run();
  } catch (err) {
    if (!(err instanceof Unsupported)) throw err;
    const why = `${err.message} (user patterns run on the linear-time RE2 engine)`;
    throw new UnsupportedPatternError(`/${source}/: ${why}`, path);
  }
  const engine = compileRe2(source, re2Source, path);
  const programSize = engine.programSize();
  if (programSize > MAX_PATTERN_PROGRAM) {
    throw new UnsupportedPatternError(
      `/${source}/: compiles to ${programSize} instructions, the limit is ${MAX_PATTERN_PROGRAM} (use smaller repetition counts)`,
      path,
    );
  }
  if (options.refuseEmptyMatch === true && engine.test("")) {
    throw new InvalidInputError(`/${source}/: matches the empty string`, path);
  }
  return { source, re2Source, engine, programSize, lineProbeSafe: t.lineProbeSafe };
}
