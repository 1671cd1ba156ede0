// Token ledgers: the token cost of the prompt rendered from a growing set of admitted segments.
import { WS_CLASS } from "../text/index.js";
import type { TokenCounter } from "../tokens/index.js";
import { type Layout, ownTokens, render } from "./layout.js";

/**
 * Token cost of the prompt rendered from a growing set of segments, identified by their
 * display index. `costWith` prices a proposal without committing it; `add` commits.
 * `costUpTo(d, limit)` is `costWith(d)` when that is at most `limit`, otherwise some
 * number above `limit`; then `bounded` is true and `room` holds what the limit left for
 * d's own piece (a ledger may find that without tokenizing all of d).
 */
export interface TokenLedger {
  costWith(d: number): number;
  costUpTo(d: number, limit: number): number;
  readonly bounded: boolean;
  readonly room: number;
  add(d: number): void;
  total(): number;
}

// The join a piece starts with in the SplitLedger, and whether the piece ends the prompt:
// variant = join * 2 + (last ? 1 : 0). (NONE, last) is the content alone.
const NONE = 0;
const SEP = 1;
const MARK = 2;
const VARIANTS = 6;
/** The (none, last) variant: the content alone, i.e. the segment's own count. */
const OWN = NONE * 2 + 1;
const TAIL = "\n\n";

/**
 * The exact shortcut, for counters whose `newlineCut` holds (chosen by {@link makeLedger}):
 * `count(a + b) = count(a) + count(b)` when `a` ends with "\n" and `b` starts with a
 * character that is neither whitespace nor "/". Every join J has the shape "\n\n" + J'
 * with J' starting with such a character (the separator's J' is "---\n\n"), so a prompt
 * `s1 J1 s2 J2 … sk` has such a cut just before every J' (the left side ends with "\n",
 * the right side starts with J'), whatever the segments contain. Hence
 *
 *   T(prompt) = T(s1 + "\n\n") + Σ_{1<i<k} T(J'_{i-1} + si + "\n\n") + T(J'_{k-1} + sk)
 *
 * (and T(s1) when k = 1): each segment costs one of six variants, fixed by the join before
 * it (none / separator / marker) and whether it is the last one. Admitting a segment
 * changes the variant of at most one admitted neighbour (the next one's join, or the old
 * last one's tail), found from the first and last admitted segment of each tier, so a
 * proposal is priced in O(1) counts of single-segment texts, each counted at most once,
 * instead of recounting the whole growing prompt. The naive-planner test proves the
 * decisions identical.
 */
class SplitLedger implements TokenLedger {
  private readonly memo: Float64Array;
  /** Current variant of each admitted segment, -1 when not admitted. */
  private readonly variant: Int8Array;
  /** First and last admitted display index of each tier, -1 when none. */
  private readonly firstOf = [-1, -1, -1];
  private readonly lastOf = [-1, -1, -1];
  private readonly heads: readonly string[];
  /** Tokens of each head, counted on first need; -1 until then. */
  private readonly headTokens = [-1, -1, -1];
  private sum = 0;
  private admitted = 0;
  // The last proposal: the new segment's variant and the neighbour whose variant changes.
  private proposedVariant = 0;
  private neighbour = -1;
  private neighbourVariant = 0;
  bounded = false;
  room = 0;

  constructor(
    private readonly counter: TokenCounter,
    private readonly layout: Layout,
    markerTail: string,
  ) {
    const n = layout.contents.length;
    this.heads = ["", layout.separator.slice(TAIL.length), markerTail];
    this.memo = new Float64Array(n * VARIANTS).fill(-1);
    this.variant = new Int8Array(n).fill(-1);
  }

  // The (none, last) variant is the content alone: the segment's own count.
  private ownTokens(d: number): number {
    return ownTokens(this.layout, this.counter, d);
  }

  /** The text whose count is piece (d, variant). */
  private pieceText(d: number, variant: number): string {
    const content = this.layout.contents[d]!;
    return this.heads[variant >> 1]! + content + ((variant & 1) === 1 ? "" : TAIL);
  }

  private piece(d: number, variant: number): number {
    const slot = d * VARIANTS + variant;
    const hit = this.memo[slot]!;
    if (hit >= 0) return hit;
    if (variant === OWN) return this.ownTokens(d);
    const content = this.layout.contents[d]!;
    const last = (variant & 1) === 1;
    const n =
      this.derivedPiece(variant >> 1, content, last, d) ??
      this.counter.count(this.pieceText(d, variant));
    this.memo[slot] = n;
    return n;
  }

  /**
   * Tokens of the head of join `join` when it splits off from `content` (newlineCut: the
   * head ends with "\n" and the content starts with a cut character; no head splits
   * trivially), else -1. The three heads are counted once each.
   */
  private splitHead(join: number, content: string): number {
    const head = this.heads[join]!;
    if (head === "") return 0;
    if (!head.endsWith("\n") || !startsWithCut(content)) return -1;
    let t = this.headTokens[join]!;
    if (t < 0) {
      t = this.counter.count(head);
      this.headTokens[join] = t;
    }
    return t;
  }

  /**
   * A piece priced from the content's own count, so each segment's text is tokenized once:
   * the head ends with "\n" and the content starts with a cut character, so newlineCut
   * splits head from body; the counter's `extendWithNewlines` prices the trailing "\n\n".
   * `null` when either step does not apply (then the piece is counted whole).
   */
  private derivedPiece(join: number, content: string, last: boolean, d: number): number | null {
    const headTokens = this.splitHead(join, content);
    if (headTokens < 0) return null;
    const own = this.ownTokens(d);
    if (last) return headTokens + own;
    const body = this.counter.extendWithNewlines?.(content, own, TAIL) ?? null;
    return body === null ? null : headTokens + body;
  }

  // Last admitted segment of a tier before `t`, first admitted one of a tier after `t`.
  private lastBefore(t: number): number {
    for (let u = t - 1; u >= 0; u--) if (this.lastOf[u]! >= 0) return this.lastOf[u]!;
    return -1;
  }
  private firstAfter(t: number): number {
    for (let u = t + 1; u < 3; u++) if (this.firstOf[u]! >= 0) return this.firstOf[u]!;
    return -1;
  }

  costWith(d: number): number {
    this.propose(d);
    return this.neighbourBase() + this.piece(d, this.proposedVariant);
  }

  /**
   * costWith(d) = the admitted prompt with the neighbour's change (priced exactly: the
   * neighbour is admitted, its own count known) + d's piece. While d's content is still
   * uncounted and the counter can stop early, d's piece is counted only up to the room
   * the limit leaves it: past that, d cannot fit, whatever the rest of its text holds.
   */
  costUpTo(d: number, limit: number): number {
    this.propose(d);
    const base = this.neighbourBase();
    const v = this.proposedVariant;
    this.bounded = false;
    this.room = limit - base;
    const length =
      this.heads[v >> 1]!.length +
      this.layout.contents[d]!.length +
      ((v & 1) === 1 ? 0 : TAIL.length);
    // Priced exactly from the segment's own count (tokenized once, kept for its decision)
    // when that is known, when the counter cannot stop early, or when the piece surely
    // fits: a built-in count never exceeds the UTF-8 bytes, at most 3 per UTF-16 unit.
    // (Either path is exact; this only picks the cheaper one.)
    if (
      this.counter.countUpTo === undefined ||
      this.memo[d * VARIANTS + v]! >= 0 ||
      this.layout.tokens[d]! >= 0 ||
      this.room >= 3 * length
    )
      return base + this.piece(d, v);
    const n = this.pieceUpTo(d, v, this.room);
    if (n > this.room) {
      this.bounded = true;
      return base + n;
    }
    // Within the room the count is exact; for the content alone it is the own count.
    this.memo[d * VARIANTS + v] = n;
    if (v === OWN) this.layout.tokens[d] = n;
    return base + n;
  }

  /**
   * countUpTo of piece (d, v) within `room`. When the head splits off (as in derivedPiece)
   * the content is bounded alone, with the tail's newlines passed along rather than
   * joined: building the piece's text would copy it, which costs more than the few pieces
   * the bound reads when the budget is nearly full.
   */
  private pieceUpTo(d: number, v: number, room: number): number {
    const counter = this.counter as TokenCounter & Required<Pick<TokenCounter, "countUpTo">>;
    const content = this.layout.contents[d]!;
    const headTokens = this.splitHead(v >> 1, content);
    if (headTokens < 0) return counter.countUpTo(this.pieceText(d, v), room);
    const left = room - headTokens;
    if ((v & 1) === 1) {
      const own = counter.countUpTo(content, left);
      if (own <= left) this.layout.tokens[d] = own; // within the room: exact
      return headTokens + own;
    }
    const body =
      counter.countUpToWithNewlines?.(content, TAIL, left) ??
      counter.countUpTo(`${content}${TAIL}`, left);
    return headTokens + body;
  }

  /** The admitted total with the proposal's change to its neighbour. */
  private neighbourBase(): number {
    const nb = this.neighbour;
    if (nb < 0) return this.sum;
    return this.sum + this.piece(nb, this.neighbourVariant) - this.piece(nb, this.variant[nb]!);
  }

  /** Sets the proposal's variant for d and the admitted neighbour whose variant changes. */
  private propose(d: number): void {
    const t = this.layout.tiers[d]!;
    const first = this.firstOf[t]!;
    const last = this.lastOf[t]!;
    this.neighbour = -1;
    let join: number;
    let isLast = false;
    if (first >= 0 && first < d) {
      // Preceded by a segment of its own tier.
      join = SEP;
      if (d > last && this.firstAfter(t) < 0) {
        // d becomes the last segment of the prompt; the old last one gains its tail.
        isLast = true;
        this.neighbour = last;
        this.neighbourVariant = this.variant[last]! & ~1;
      }
    } else {
      // d opens its tier: preceded by the marker, or by nothing when it comes first.
      const prev = this.lastBefore(t);
      join = prev < 0 ? NONE : MARK;
      const next = first >= 0 ? first : this.firstAfter(t);
      if (next >= 0) {
        // The next segment is now preceded by d: a separator within the tier, else a marker.
        const nextJoin = first >= 0 ? SEP : MARK;
        const v = (nextJoin << 1) | (this.variant[next]! & 1);
        if (v !== this.variant[next]) {
          this.neighbour = next;
          this.neighbourVariant = v;
        }
      } else {
        isLast = true;
        if (prev >= 0) {
          this.neighbour = prev;
          this.neighbourVariant = this.variant[prev]! & ~1;
        }
      }
    }
    this.proposedVariant = (join << 1) | (isLast ? 1 : 0);
  }

  add(d: number): void {
    this.sum = this.costWith(d);
    this.variant[d] = this.proposedVariant;
    if (this.neighbour >= 0) this.variant[this.neighbour] = this.neighbourVariant;
    const t = this.layout.tiers[d]!;
    if (this.firstOf[t]! < 0 || d < this.firstOf[t]!) this.firstOf[t] = d;
    if (this.lastOf[t]! < 0 || d > this.lastOf[t]!) this.lastOf[t] = d;
    this.admitted++;
  }

  total(): number {
    return this.admitted === 0 ? this.counter.count("") : this.sum;
  }
}

/** The naive definition, for the other cases: render and count the whole proposed prompt. */
class RenderLedger implements TokenLedger {
  private readonly admitted: boolean[];
  private probe = -1;
  private probeTokens = 0;
  private sum = -1; // unknown until counted
  readonly bounded = false;
  readonly room = 0;

  constructor(
    private readonly counter: TokenCounter,
    private readonly layout: Layout,
  ) {
    this.admitted = layout.contents.map(() => false);
  }

  // Always exact here: the segments' own counts are taken up front for this ledger.
  costUpTo(d: number): number {
    return this.costWith(d);
  }

  costWith(d: number): number {
    this.probe = d;
    this.probeTokens = this.counter.count(render(this.layout, (i) => this.admitted[i] || i === d));
    return this.probeTokens;
  }

  add(d: number): void {
    this.admitted[d] = true;
    this.sum = this.probe === d ? this.probeTokens : -1;
    this.probe = -1;
  }

  total(): number {
    if (this.sum < 0) this.sum = this.counter.count(render(this.layout, (i) => this.admitted[i]!));
    return this.sum;
  }
}

// A first code point that rules a cut out: whitespace in either sense (JavaScript's `\s`,
// docs/text-and-tokens.md's WS_CLASS), "/", or a lone surrogate (in `u` mode a pair is one code point and
// does not match the surrogate range). One native test: the ledger asks for every piece.
const NOT_CUT_START = new RegExp(`^(?:[\\s/${WS_CLASS}]|[\\uD800-\\uDFFF])`, "u");

// True when a newlineCut cut is guaranteed between a text ending in "\n" and `b`: b starts
// with a character that is whitespace in neither sense (docs/text-and-tokens.md's or JavaScript's) nor "/".
function startsWithCut(b: string): boolean {
  return b !== "" && !NOT_CUT_START.test(b);
}

/**
 * Picks the token ledger. The split one is exact only when both hold:
 * - the counter declares `newlineCut` (count(a + b) = count(a) + count(b) when `a` ends
 *   with "\n" and `b` starts with a character that is neither whitespace nor "/"), and
 * - every join in use is "\n\n" + J' with J' starting with such a character. The
 *   separator always is; a custom `cacheBoundary` may not be (no leading "\n\n", or J'
 *   starting with whitespace, "/" or a lone surrogate, whose behaviour no test pins down;
 *   "whitespace" in either sense: Python's `isspace` of docs/text-and-tokens.md or JavaScript's `\s`).
 * Then the prompt splits at a cut before every J', and the sum of the per-segment pieces
 * (see {@link SplitLedger}) equals the count of the whole prompt. Otherwise every proposal
 * is priced by rendering and counting the whole proposed prompt, which is exact by
 * definition.
 */
export function makeLedger(counter: TokenCounter, layout: Layout, tiered: boolean): TokenLedger {
  return splits(counter, tiered, layout.marker, layout.separator)
    ? new SplitLedger(counter, layout, tiered ? layout.marker.slice(TAIL.length) : "")
    : new RenderLedger(counter, layout);
}

/** True when {@link makeLedger} picks the split ledger. */
export function splits(
  counter: TokenCounter,
  tiered: boolean,
  marker: string,
  separator: string,
): boolean {
  if (!counter.newlineCut) return false;
  const cuts = (join: string) => join.startsWith(TAIL) && startsWithCut(join.slice(TAIL.length));
  if (!cuts(separator)) return false;
  return !tiered || cuts(marker);
}
