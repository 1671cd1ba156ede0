/**
 * An exact, linear-time "where can a match start?" scan for the regexes that pass
 * `regexSafetyProblem`. JavaScript cannot interrupt a running regex and a native scan of a
 * long line is quadratic even for safe patterns (`\w{150,}!` on 10,000 letters takes a
 * second), so the red-line check finds match starts with this automaton instead and asks
 * the native engine only for the match at a start known to match (one attempt, linear for
 * a safe pattern).
 *
 * How: the pattern is compiled (Thompson construction, bounded repetitions unrolled) into
 * a program of at most {@link MAX_SCAN_STATES} states; one backward pass over the subject's
 * code points computes, for every position, the set of states from which the rest of the
 * pattern can match — a match starts at `p` when the entry state is in the set at `p`.
 * Lookaheads are tables from their own backward pass, lookbehinds from a forward pass;
 * `^`/`$` are the subject's edges (no `m` flag) and `\b` uses ASCII word characters (the
 * `u` flag without `i`). Classes are decided by the native engine, one code point at a
 * time, cached. Work is counted in state visits against a caller's {@link ScanBudget}: a
 * scan that would exceed it stops and says so, so callers can fail closed.
 */
import { type Atom, parseRegex, type Term } from "./regex-syntax.js";

/** Largest program (states) a pattern may compile to. */
export const MAX_SCAN_STATES = 4096;

const CHAR = 0;
const SET = 1;
const SPLIT = 2;
const JMP = 3;
const ASSERT = 4;
const MATCH = 5;

/** A class decided by the native engine per code point, cached. */
class ClassTest {
  private readonly re: RegExp;
  private readonly ascii = new Int8Array(128).fill(-1);
  private readonly other = new Map<number, boolean>();
  constructor(src: string) {
    this.re = new RegExp(`^(?:${src})$`, "u");
  }
  has(cp: number): boolean {
    if (cp < 128) {
      const v = this.ascii[cp] as number;
      if (v >= 0) return v === 1;
      const r = this.re.test(String.fromCodePoint(cp));
      this.ascii[cp] = r ? 1 : 0;
      return r;
    }
    let r = this.other.get(cp);
    if (r === undefined) {
      r = this.re.test(String.fromCodePoint(cp));
      this.other.set(cp, r);
    }
    return r;
  }
}

type Assertion =
  | { kind: "^" | "$" | "b" | "B" }
  | { kind: "look"; behind: boolean; negate: boolean; program: Program };

/**
 * A compiled program: `op[pc]` with operands `x[pc]`, `y[pc]`; CHAR/SET/ASSERT go on to
 * pc+1; the last state is MATCH. Reverse edges for the backward pass: the ε-predecessors
 * of state z are `epsList[epsStart[z] .. epsStart[z+1])`, its consuming predecessor
 * `eatPred[z]` (−1 when none).
 */
interface Program {
  op: Uint8Array;
  x: Int32Array;
  y: Int32Array;
  sets: ClassTest[];
  asserts: Assertion[];
  epsStart: Int32Array;
  epsList: Int32Array;
  eatPred: Int32Array;
}

/** The compiled form of one pattern, for {@link scanMatchStarts}. */
export interface ScanRegex {
  readonly source: string;
  readonly program: Program;
}

/** Remaining work, in state visits; shared by the scans of one check. */
export interface ScanBudget {
  left: number;
}

const sat = (n: number) => Math.min(n, MAX_SCAN_STATES + 1);

/** States a term tree compiles to (saturating just above the cap). */
function size(alts: readonly Term[][]): number {
  let n = 2 * alts.length;
  for (const seq of alts) {
    for (const t of seq) {
      const a = t.atom.t === "group" ? size(t.atom.alts) + 1 : 1;
      const extra = t.max === Number.POSITIVE_INFINITY ? a + 2 : sat((t.max - t.min) * (a + 1));
      n = sat(n + sat(t.min * a) + extra);
    }
  }
  return n;
}

/** Thompson construction into plain arrays; {@link finish} makes the {@link Program}. */
class Compiler {
  private readonly op: number[] = [];
  private readonly x: number[] = [];
  private readonly y: number[] = [];
  private readonly sets: ClassTest[] = [];
  private readonly asserts: Assertion[] = [];
  private readonly classes = new Map<string, number>();

  constructor(private readonly shared: Map<string, ClassTest>) {}

  program(alts: readonly Term[][]): Program {
    this.alts(alts);
    this.emit(MATCH);
    return finish(this.op, this.x, this.y, this.sets, this.asserts);
  }

  private emit(op: number, x = 0, y = 0): number {
    this.op.push(op);
    this.x.push(x);
    this.y.push(y);
    return this.op.length - 1;
  }

  /** A SPLIT whose first branch is the next state; the second is patched later. */
  private split(): number {
    const pc = this.emit(SPLIT);
    this.x[pc] = pc + 1;
    return pc;
  }

  private alts(alts: readonly Term[][]): void {
    const jumps: number[] = [];
    alts.forEach((seq, i) => {
      const split = i < alts.length - 1 ? this.split() : -1;
      for (const t of seq) this.term(t);
      if (split >= 0) {
        jumps.push(this.emit(JMP));
        this.y[split] = this.op.length;
      }
    });
    for (const j of jumps) this.x[j] = this.op.length;
  }

  private term(t: Term): void {
    for (let i = 0; i < t.min; i++) this.atom(t.atom);
    if (t.max === Number.POSITIVE_INFINITY) {
      const split = this.split();
      this.atom(t.atom);
      this.emit(JMP, split);
      this.y[split] = this.op.length;
      return;
    }
    const splits: number[] = [];
    for (let i = t.min; i < t.max; i++) {
      splits.push(this.split());
      this.atom(t.atom);
    }
    for (const s of splits) this.y[s] = this.op.length;
  }

  private atom(a: Atom): void {
    if (a.t === "char") this.emit(CHAR, a.ch.codePointAt(0) as number);
    else if (a.t === "set") this.emit(SET, this.classIndex(a.src));
    else if (a.t === "assert") this.assertion({ kind: a.kind ?? "b" });
    else if (a.t === "group" && !a.look) this.alts(a.alts);
    else if (a.t === "group") {
      const program = new Compiler(this.shared).program(a.alts);
      this.assertion({
        kind: "look",
        behind: a.behind === true,
        negate: a.negate === true,
        program,
      });
    } else throw new Error("unsupported atom"); // excluded by compileScanRegex
  }

  private assertion(a: Assertion): void {
    this.emit(ASSERT, this.asserts.push(a) - 1);
  }

  private classIndex(src: string): number {
    let i = this.classes.get(src);
    if (i === undefined) {
      let test = this.shared.get(src);
      if (test === undefined) {
        test = new ClassTest(src);
        this.shared.set(src, test);
      }
      i = this.sets.push(test) - 1;
      this.classes.set(src, i);
    }
    return i;
  }
}

/** Typed arrays and reverse edges for the passes. */
function finish(
  op: number[],
  x: number[],
  y: number[],
  sets: ClassTest[],
  asserts: Assertion[],
): Program {
  const n = op.length;
  const preds: number[][] = op.map(() => []);
  const eatPred = new Int32Array(n).fill(-1);
  op.forEach((o, pc) => {
    if (o === SPLIT) {
      preds[x[pc] as number]?.push(pc);
      preds[y[pc] as number]?.push(pc);
    } else if (o === JMP) preds[x[pc] as number]?.push(pc);
    else if (o === ASSERT) preds[pc + 1]?.push(pc);
    else if (o === CHAR || o === SET) eatPred[pc + 1] = pc;
  });
  const epsStart = new Int32Array(n + 1);
  preds.forEach((p, z) => {
    epsStart[z + 1] = (epsStart[z] as number) + p.length;
  });
  return {
    op: Uint8Array.from(op),
    x: Int32Array.from(x),
    y: Int32Array.from(y),
    sets,
    asserts,
    epsStart,
    epsList: Int32Array.from(preds.flat()),
    eatPred,
  };
}

/**
 * Compiles a regex source (valid under `u`) for {@link scanMatchStarts}, or returns why it
 * cannot be scanned exactly (backreferences, unknown syntax, a program over
 * {@link MAX_SCAN_STATES} states).
 *
 * @example compileScanRegex("sk-[A-Za-z0-9]{20,}") // { source, program }
 */
export function compileScanRegex(source: string): ScanRegex | string {
  const alts = parseRegex(source);
  const stack: Term[][][] = [alts];
  for (let g = stack.pop(); g !== undefined; g = stack.pop()) {
    for (const t of g.flat()) {
      if (t.atom.t === "backref") return "backreferences cannot be scanned exactly";
      if (t.atom.t === "opaque") return `unsupported group syntax ${t.atom.src}`;
      if (t.atom.t === "group") stack.push(t.atom.alts);
    }
  }
  if (size(alts) > MAX_SCAN_STATES) {
    return `too large for the exact scan (over ${MAX_SCAN_STATES} states once repetitions are unrolled)`;
  }
  return { source, program: new Compiler(new Map()).program(alts) };
}

// ---------------------------------------------------------------------------------------
// passes

const isWord = (cp: number | undefined) =>
  cp !== undefined &&
  ((cp >= 48 && cp <= 57) || (cp >= 65 && cp <= 90) || (cp >= 97 && cp <= 122) || cp === 95);

function edgeTable(kind: "^" | "$" | "b" | "B", n: number, cps: Int32Array): Uint8Array {
  const t = new Uint8Array(n + 1);
  if (kind === "^") t[0] = 1;
  else if (kind === "$") t[n] = 1;
  else {
    for (let i = 0; i <= n; i++) {
      const edge = isWord(cps[i - 1]) !== isWord(cps[i]);
      t[i] = edge === (kind === "b") ? 1 : 0;
    }
  }
  return t;
}

/** Per assertion, whether it holds at each position 0..n (null when the budget ran out). */
function assertTables(p: Program, cps: Int32Array, budget: ScanBudget): Uint8Array[] | null {
  const n = cps.length;
  const out: Uint8Array[] = [];
  for (const a of p.asserts) {
    if (a.kind !== "look") {
      out.push(edgeTable(a.kind, n, cps));
      budget.left -= n + 1;
      continue;
    }
    const inner = a.behind
      ? endsTable(a.program, cps, budget)
      : startsTable(a.program, cps, budget);
    if (inner === null) return null;
    if (a.negate) for (let i = 0; i <= n; i++) inner[i] = 1 - (inner[i] as number);
    out.push(inner);
  }
  return budget.left < 0 ? null : out;
}

/** Can consuming state `pc` read code point `cp`? */
function consumes(p: Program, pc: number, cp: number): boolean {
  return p.op[pc] === CHAR ? p.x[pc] === cp : (p.sets[p.x[pc] as number] as ClassTest).has(cp);
}

/**
 * `t[i] === 1` when a match of `p` starts at code point `i`, or null when the budget ran
 * out. One backward pass: the states that can still reach MATCH from position i are those
 * ε-before MATCH, or consuming `cps[i]` into a state that can reach it from i + 1.
 */
function startsTable(p: Program, cps: Int32Array, budget: ScanBudget): Uint8Array | null {
  const tables = assertTables(p, cps, budget);
  if (tables === null) return null;
  const { op, x, epsStart, epsList, eatPred } = p;
  const n = cps.length;
  const states = op.length;
  const stamp = new Int32Array(states).fill(-1);
  let prev = new Int32Array(states);
  let cur = new Int32Array(states);
  let prevLen = 0;
  const out = new Uint8Array(n + 1);
  for (let i = n; i >= 0; i--) {
    let len = 0;
    stamp[states - 1] = i;
    cur[len++] = states - 1;
    if (i < n) {
      const cp = cps[i] as number;
      for (let k = 0; k < prevLen; k++) {
        const pc = eatPred[prev[k] as number] as number;
        if (pc >= 0 && stamp[pc] !== i && consumes(p, pc, cp)) {
          stamp[pc] = i;
          cur[len++] = pc;
        }
      }
    }
    for (let k = 0; k < len; k++) {
      const z = cur[k] as number;
      for (let e = epsStart[z] as number; e < (epsStart[z + 1] as number); e++) {
        const pc = epsList[e] as number;
        if (stamp[pc] === i) continue;
        if (op[pc] === ASSERT && (tables[x[pc] as number] as Uint8Array)[i] !== 1) continue;
        stamp[pc] = i;
        cur[len++] = pc;
      }
    }
    budget.left -= len;
    if (budget.left < 0) return null;
    out[i] = stamp[0] === i ? 1 : 0;
    [prev, cur] = [cur, prev];
    prevLen = len;
  }
  return out;
}

/**
 * `t[i] === 1` when a match of `p` ends at code point `i` (starting anywhere before), or
 * null when the budget ran out. One forward pass (Thompson), entering at every position.
 */
function endsTable(p: Program, cps: Int32Array, budget: ScanBudget): Uint8Array | null {
  const tables = assertTables(p, cps, budget);
  if (tables === null) return null;
  const { op, x, y } = p;
  const n = cps.length;
  const states = op.length;
  const stamp = new Int32Array(states).fill(-1);
  const next = new Int32Array(states);
  const cur = new Int32Array(states);
  let nextLen = 0;
  const out = new Uint8Array(n + 1);
  for (let i = 0; i <= n; i++) {
    let len = 0;
    const add = (pc: number) => {
      if (stamp[pc] !== i) {
        stamp[pc] = i;
        cur[len++] = pc;
      }
    };
    for (let k = 0; k < nextLen; k++) add(next[k] as number);
    add(0);
    for (let k = 0; k < len; k++) {
      const pc = cur[k] as number;
      if (op[pc] === SPLIT) {
        add(x[pc] as number);
        add(y[pc] as number);
      } else if (op[pc] === JMP) add(x[pc] as number);
      else if (op[pc] === ASSERT && (tables[x[pc] as number] as Uint8Array)[i] === 1) add(pc + 1);
    }
    out[i] = stamp[states - 1] === i ? 1 : 0;
    nextLen = 0;
    if (i < n) {
      const cp = cps[i] as number;
      for (let k = 0; k < len; k++) {
        const pc = cur[k] as number;
        if ((op[pc] === CHAR || op[pc] === SET) && consumes(p, pc, cp)) next[nextLen++] = pc + 1;
      }
    }
    budget.left -= len;
    if (budget.left < 0) return null;
  }
  return out;
}

/**
 * For a subject given as its code points, `t[i] === 1` exactly when the pattern (no `m`
 * flag: `^`/`$` at the subject's edges) has a match starting at code point `i` — what a
 * native `exec` from `i` would find, without its backtracking. Null when the work would
 * exceed `budget` (the caller then cannot decide, and fails closed).
 *
 * @example scanMatchStarts(compiled, Int32Array.from("a sk-x", (c) => c.codePointAt(0)), { left: 1e6 })
 */
export function scanMatchStarts(
  re: ScanRegex,
  cps: Int32Array,
  budget: ScanBudget,
): Uint8Array | null {
  return startsTable(re.program, cps, budget);
}
