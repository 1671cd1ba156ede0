/**
 * Regex syntax as a term tree: parses a JavaScript regex source (`u` flag) into
 * alternatives of quantified atoms, for the static safety check of `regex-safety.ts` and
 * the exact linear-time scan of `regex-scan.ts` (characters, classes, assertions,
 * lookarounds, backreferences, groups and their quantifiers). It assumes the source
 * compiles; it does not validate it. Group syntax it does not know (`(?i:…)` on engines
 * with modifiers) comes back as an `opaque` atom, which both users refuse.
 */
import { cpLength } from "./chars.js";

/** The zero-width assertions other than lookarounds. */
export type AssertKind = "^" | "$" | "b" | "B";

/**
 * One regex atom: a character (one code point), a class, a zero-width assertion, a
 * backreference, a group (a lookaround when `look`: `behind` for `(?<=`/`(?<!`, `negate`
 * for `(?!`/`(?<!`), or syntax this parser does not know (`opaque`).
 */
export type Atom =
  | { t: "char"; ch: string; src: string }
  | { t: "set"; src: string }
  | { t: "assert"; kind?: AssertKind }
  | { t: "backref" }
  | { t: "opaque"; src: string }
  | { t: "group"; alts: Term[][]; look: boolean; behind?: boolean; negate?: boolean };

/** An atom with its quantifier `{min,max}` (`max` may be infinite). */
export interface Term {
  atom: Atom;
  min: number;
  max: number;
}

/** A recursive-descent reader over the code points of a regex source. */
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
        return { t: "assert", kind: c };
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
      case "(":
        return this.group();
      case "\\":
        return this.escape(start);
      default:
        return { t: "char", ch: c, src: src() };
    }
  }

  /** A group after its `(`: plain, non-capturing, named, a lookaround, or opaque. */
  private group(): Atom {
    const start = this.i - 1;
    let look = false;
    let behind = false;
    let negate = false;
    let opaque = false;
    if (this.peek() === "?") {
      const n = this.peek(1);
      if (n === ":") this.i += 2;
      else if (n === "=" || n === "!") {
        negate = n === "!";
        this.i += 2;
        look = true;
      } else if (n === "<" && (this.peek(2) === "=" || this.peek(2) === "!")) {
        negate = this.peek(2) === "!";
        this.i += 3;
        look = true;
        behind = true;
      } else if (n === "<") {
        this.i += 2;
        this.until(">");
      } else opaque = true;
    }
    const alts = this.alternatives();
    this.i++; // ")"
    if (opaque) return { t: "opaque", src: this.s.slice(start, this.i).join("") };
    return { t: "group", alts, look, behind, negate };
  }

  /** Four hex digits at the cursor as a UTF-16 unit, or null. */
  private hex4(at: number): number | null {
    const h = this.s.slice(at, at + 4).join("");
    return /^[0-9a-fA-F]{4}$/.test(h) ? Number.parseInt(h, 16) : null;
  }

  private escape(start: number): Atom {
    const e = this.s[this.i++] as string;
    const src = () => this.s.slice(start, this.i).join("");
    if ("dDwWsS".includes(e)) return { t: "set", src: src() };
    if (e === "b" || e === "B") return { t: "assert", kind: e };
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
      const hi = this.hex4(this.i) ?? 0;
      this.i += 4;
      const lo =
        this.s[this.i] === "\\" && this.s[this.i + 1] === "u" ? this.hex4(this.i + 2) : null;
      if (hi >= 0xd800 && hi <= 0xdbff && lo !== null && lo >= 0xdc00 && lo <= 0xdfff) {
        ch = String.fromCharCode(hi, lo); // `\uD83D\uDE00` is one code point under `u`
        this.i += 6;
      } else ch = String.fromCharCode(hi);
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

/** The alternatives of a regex source, each a sequence of terms. Assumes it compiles with `u`. */
export function parseRegex(source: string): Term[][] {
  return new RegexParser(Array.from(source)).parse();
}

/** Every term of a tree, depth first (a group, then its inner terms). */
export function* allTerms(alts: readonly Term[][]): Generator<Term> {
  for (const seq of alts) {
    for (const t of seq) {
      yield t;
      if (t.atom.t === "group") yield* allTerms(t.atom.alts);
    }
  }
}

/** Every group's alternatives in a tree, depth first. */
export function* allGroups(alts: readonly Term[][]): Generator<Term[][]> {
  for (const t of allTerms(alts)) if (t.atom.t === "group") yield t.atom.alts;
}

/**
 * A positive class `[...]` as the atoms it unites (characters, ranges of at most 256
 * characters, class escapes), or null when it is negated or not that simple.
 */
export function expandClass(src: string): Atom[] | null {
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
