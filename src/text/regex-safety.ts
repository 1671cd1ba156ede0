/**
 * Static regex safety: decides whether a regex source stays in the subset that cannot
 * backtrack catastrophically. JavaScript cannot interrupt a running regex, so the
 * protection is static — {@link regexSafetyProblem} rejects, with the reason, every
 * pattern whose backtracking is worse than one linear scan per start position: nested
 * variable quantifiers under an unbounded repetition (`(a+)+`, `(a*)*`), ambiguous
 * alternation under repetition (`(a|a)*`, `(a|ab)+`), two wide quantifiers in sequence
 * that can share characters (`a*a*`, `.*x.*`, `\w+\d+`), bounded repetitions with more
 * than 10,000 combinations, and backreferences. It is conservative: some safe patterns are
 * rejected (rewrite `(\w+\s)+` as `[\w\s]+`). The remaining cost is at worst quadratic in
 * the text scanned, so callers bound the text (the red-line check scans in windows).
 */
import {
  type Atom,
  allGroups,
  allTerms,
  expandClass,
  parseRegex,
  type Term,
} from "./regex-syntax.js";

/** A quantifier this wide (max − min) or unbounded counts as "wide". */
const WIDE = 16;
/** Most combinations a bounded repetition may explore. */
const MAX_COMBINATIONS = 10_000;

const isWide = (t: Term) => t.max === Number.POSITIVE_INFINITY || t.max - t.min >= WIDE;
const isVariable = (t: Term) => t.max > t.min;

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
    case "opaque":
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
  if (a.t === "backref" || b.t === "backref" || a.t === "opaque" || b.t === "opaque") {
    return false;
  }
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
  const alts = parseRegex(source);
  for (const t of allTerms(alts)) {
    if (t.atom.t === "backref")
      return "backreferences are not allowed (they defeat the static check)";
    if (t.atom.t === "opaque") return `unsupported group syntax ${t.atom.src}`;
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
