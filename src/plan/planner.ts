/**
 * Segment planner of spec 03: decides which named segments enter the system prompt under
 * a char budget and an optional token budget, reserving required segments first and
 * logging exactly one decision per segment in display order.
 */
import {
  type FieldPath,
  InvalidInputError,
  invalidFromZod,
  PromptBudgetError,
} from "../errors/index.js";
import { compareCodePoints, cpLength, hasSurrogate, WS_CLASS } from "../text/index.js";
import { resolveTokenCounter, type TokenCounter } from "../tokens/index.js";
import {
  type CacheTier,
  DEFAULT_CACHE_BOUNDARY,
  DEFAULT_CACHE_TIER,
  type ParsedPlanPromptRequest,
  type PlanPromptRequest,
  PlanPromptRequestSchema,
  type Segment,
} from "./schema.js";

/** Placed between two rendered segments (of the same tier); its cost counts against the budget. */
export const SEGMENT_SEPARATOR = "\n\n---\n\n";
const SEPARATOR_CHARS = cpLength(SEGMENT_SEPARATOR);

/** Rank of each tier in tiered mode: the display and admission order of tiers. */
const TIER_RANK: Readonly<Record<CacheTier, number>> = { static: 0, session: 1, dynamic: 2 };

/** Terminal status of a segment. */
export type SegmentStatus = "included" | "dropped" | "inactive";
/** Reason codes of spec 03, stable across releases. */
export type SegmentReason =
  | "required"
  | "fits_budget"
  | "char_budget_exceeded"
  | "token_budget_exceeded"
  | "inactive";

interface DecisionFields {
  name: string;
  priority: number;
  required: boolean;
  budgetPriority: number;
  provenance: string;
  /** The tier the segment was laid out in (a tierless one counts as `dynamic`); null when untiered. */
  cacheTier: CacheTier | null;
  detail: string;
  originalChars: number;
  renderedChars: number;
  originalTokens: number;
  renderedTokens: number;
}

/** One decision per segment, keyed by reason code. */
export type PlanDecision =
  | (DecisionFields & { required: true; status: "included"; reason: "required" })
  | (DecisionFields & { required: false; status: "included"; reason: "fits_budget" })
  | (DecisionFields & {
      required: false;
      status: "dropped";
      reason: "char_budget_exceeded" | "token_budget_exceeded";
      renderedChars: 0;
      renderedTokens: 0;
    })
  // Dropped after counting only part of its rendering: it provably could not fit, and its
  // own tokens were never counted, so it has no token figures (spec 03 makes them optional).
  | (Omit<DecisionFields, "originalTokens" | "renderedTokens"> & {
      required: false;
      status: "dropped";
      reason: "token_budget_exceeded";
      renderedChars: 0;
      originalTokens?: undefined;
      renderedTokens?: undefined;
    })
  | (DecisionFields & {
      status: "inactive";
      reason: "inactive";
      originalChars: 0;
      renderedChars: 0;
      originalTokens: 0;
      renderedTokens: 0;
    });

/** One cache tier of a tiered prompt that has admitted content (spec 05). */
export interface PlanTier {
  tier: CacheTier;
  /** Its included segments, in display order. */
  names: string[];
  /** Code points of its rendered content: its segments joined by the separator. */
  chars: number;
  /** Tokens of that content under the plan's counter. */
  tokens: number;
  /** UTF-16 offsets of that content in `prompt` (boundary markers excluded): `prompt.slice(start, end)`. */
  start: number;
  end: number;
}

/** The plan of spec 03, with the cache-tier layout of spec 05. */
export interface PromptPlan {
  prompt: string;
  usedChars: number;
  usedTokens: number;
  budgetChars: number | null;
  budgetTokens: number | null;
  /** Name of the counter behind every token figure, so the log can be replayed. */
  tokenizer: string;
  includedNames: string[];
  droppedNames: string[];
  decisions: PlanDecision[];
  /** Tiers with admitted content, most stable first; `[]` when the plan is untiered. */
  tiers: PlanTier[];
  /** The marker placed between two tiers; null when the plan is untiered. */
  cacheBoundary: string | null;
}

/** Options of {@link planPrompt}. */
export interface PlanOptions {
  /** Overrides `request.tokenizer` (e.g. a shared memoizing counter or a custom one). */
  tokenCounter?: TokenCounter;
}

/**
 * Token cost of the prompt rendered from a growing set of segments, identified by their
 * display index. `costWith` prices a proposal without committing it; `add` commits.
 * `costUpTo(d, limit)` is `costWith(d)` when that is at most `limit`, otherwise some
 * number above `limit`; then `bounded` is true and `room` holds what the limit left for
 * d's own piece (a ledger may find that without tokenizing all of d).
 */
interface TokenLedger {
  costWith(d: number): number;
  costUpTo(d: number, limit: number): number;
  readonly bounded: boolean;
  readonly room: number;
  add(d: number): void;
  total(): number;
}

/**
 * How the segments join: two consecutive rendered segments of the same tier are joined
 * by {@link SEGMENT_SEPARATOR}, two of different tiers by `marker` (untiered: one tier).
 */
interface Layout {
  contents: readonly string[];
  /** Tier rank of each segment, by display index (all 0 when untiered). */
  tiers: readonly number[];
  marker: string;
  /** Each segment's own token count, by display index; -1 until counted (see ownTokens). */
  tokens: Float64Array;
}

/**
 * Segment d's own token count, counted on first need. A plain function over plain data
 * (not a closure made per plan), so V8's optimized code calling it survives the plan.
 */
function ownTokens(layout: Layout, counter: TokenCounter, d: number): number {
  let t = layout.tokens[d]!;
  if (t < 0) {
    t = counter.count(layout.contents[d]!);
    layout.tokens[d] = t;
  }
  return t;
}

/** The prompt rendered from the segments (display indexes, ascending) for which `keep` holds. */
function render(layout: Layout, keep: (d: number) => boolean): string {
  let out = "";
  let prev = -1;
  for (let d = 0; d < layout.contents.length; d++) {
    if (!keep(d)) continue;
    if (prev >= 0)
      out += layout.tiers[prev] === layout.tiers[d] ? SEGMENT_SEPARATOR : layout.marker;
    out += layout.contents[d]!;
    prev = d;
  }
  return out;
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
    this.heads = ["", SEGMENT_SEPARATOR.slice(TAIL.length), markerTail];
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
// spec 01's WS_CLASS), "/", or a lone surrogate (in `u` mode a pair is one code point and
// does not match the surrogate range). One native test: the ledger asks for every piece.
const NOT_CUT_START = new RegExp(`^(?:[\\s/${WS_CLASS}]|[\\uD800-\\uDFFF])`, "u");

// True when a newlineCut cut is guaranteed between a text ending in "\n" and `b`: b starts
// with a character that is whitespace in neither sense (spec 01's or JavaScript's) nor "/".
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
 *   "whitespace" in either sense: Python's `isspace` of spec 01 or JavaScript's `\s`).
 * Then the prompt splits at a cut before every J', and the sum of the per-segment pieces
 * (see {@link SplitLedger}) equals the count of the whole prompt. Otherwise every proposal
 * is priced by rendering and counting the whole proposed prompt, which is exact by
 * definition.
 */
function makeLedger(counter: TokenCounter, layout: Layout, tiered: boolean): TokenLedger {
  return splits(counter, tiered, layout.marker)
    ? new SplitLedger(counter, layout, tiered ? layout.marker.slice(TAIL.length) : "")
    : new RenderLedger(counter, layout);
}

/** True when {@link makeLedger} picks the split ledger. */
function splits(counter: TokenCounter, tiered: boolean, marker: string): boolean {
  if (!counter.newlineCut) return false;
  if (!tiered) return true;
  return marker.startsWith(TAIL) && startsWithCut(marker.slice(TAIL.length));
}

interface Entry {
  seg: Segment;
  // Copies of the ordering keys as plain fields: sorting 2,000 segments reads them often.
  name: string;
  priority: number;
  budgetPriority: number;
  required: boolean;
  provenance: string;
  /** The name has no surrogate, so native `<` orders it by code point (see compareNames). */
  plainName: boolean;
  /** Index in the request, for error paths. */
  index: number;
  /** Resolved content; `""` when inactive. */
  content: string;
  /** Why the segment is inactive, or null when active. */
  inactive: string | null;
  /** Tier rank (static 0, session 1, dynamic 2); 0 for every segment when untiered. */
  tier: number;
  /** The tier recorded in the decision; null when untiered. */
  cacheTier: CacheTier | null;
  /** Position in display order. */
  display: number;
  chars: number;
  // The decision's outcome, set once by admission (an inactive segment keeps "inactive").
  // Its PlanDecision object is built only in the final pass: see makeDecision.
  status: SegmentStatus;
  reason: SegmentReason;
  detail: string;
}

function parseRequest(request: PlanPromptRequest): ParsedPlanPromptRequest {
  const parsed = PlanPromptRequestSchema.safeParse(request);
  if (!parsed.success) throw invalidFromZod(parsed.error);
  const seen = new Map<string, number>();
  parsed.data.segments.forEach((s, i) => {
    const first = seen.get(s.name);
    if (first !== undefined) {
      throw new InvalidInputError(
        `duplicate segment name "${s.name}" (also segments[${first}].name)`,
        ["segments", i, "name"],
      );
    }
    seen.set(s.name, i);
  });
  return parsed.data;
}

// Code-point order of two distinct names. Sorting compares names on every priority tie,
// often sharing a long prefix ("segment-0041" vs "segment-0042"): without surrogates the
// native `<` gives the same order, far faster than compareCodePoints' loop.
function compareNames(a: Entry, b: Entry): number {
  if (a.plainName && b.plainName) return a.name < b.name ? -1 : 1;
  return compareCodePoints(a.name, b.name);
}

// Display order: (tier asc →) priority asc → name asc (names are unique, so the order is
// total). Untiered, every tier rank is 0.
function compareDisplay(a: Entry, b: Entry): number {
  if (a.tier !== b.tier) return a.tier - b.tier;
  if (a.priority !== b.priority) return a.priority < b.priority ? -1 : 1;
  return compareNames(a, b);
}

// Admission order: (tier asc →) budgetPriority desc → priority asc → name asc. Within one
// tier, priority asc → name asc is the display order, already computed as `display`.
function compareAdmission(a: Entry, b: Entry): number {
  if (a.tier !== b.tier) return a.tier - b.tier;
  if (a.budgetPriority !== b.budgetPriority) {
    return a.budgetPriority > b.budgetPriority ? -1 : 1;
  }
  return a.display - b.display;
}

/*
 * Sorting 2,000 entries with Array.prototype.sort costs ~19k comparator callbacks, which
 * dominate the planner's own work. In the usual case, where the numeric ordering field
 * (priority or budgetPriority) holds integers of a modest range, the order is instead
 * that of one packed integer key per entry, which a Uint32Array sorts natively with no
 * callback, many times faster. Otherwise the comparators above.
 */

// `max` and `span` (= max − min + 1) of `field` over `list`, or null when a value is not
// an integer or a key `(tier × span + offset) × n + index` (3 tiers) would not fit in a
// Uint32Array exactly. -0 and 0 key alike, as the comparators treat them.
function packedRange(
  list: readonly Entry[],
  field: (e: Entry) => number,
  n: number,
): { max: number; min: number; span: number } | null {
  let min = Number.POSITIVE_INFINITY;
  let max = Number.NEGATIVE_INFINITY;
  for (const e of list) {
    const v = field(e);
    if (!Number.isInteger(v)) return null;
    if (v < min) min = v;
    if (v > max) max = v;
  }
  const span = max - min + 1;
  return list.length > 0 && 3 * span * n <= 2 ** 32 ? { max, min, span } : null;
}

/**
 * The entries (in request order) in display order: by the key (tier, priority − min,
 * request index), then each run of equal (tier, priority) by name. The runs are usually
 * short, and TimSort takes a run already listed by name (a common input) in one pass.
 */
function displayOrder(entries: Entry[]): Entry[] {
  const n = entries.length;
  const range = packedRange(entries, (e) => e.priority, n);
  if (range === null) return entries.sort(compareDisplay);
  const keys = new Uint32Array(n);
  for (let i = 0; i < n; i++) {
    const e = entries[i]!;
    keys[i] = (e.tier * range.span + (e.priority - range.min)) * n + i;
  }
  keys.sort();
  const sorted = entries.map((_, i) => entries[keys[i]! % n]!);
  let start = 0;
  for (let i = 1; i <= n; i++) {
    const a = sorted[start]!;
    const b = sorted[i];
    if (b !== undefined && b.tier === a.tier && b.priority === a.priority) continue;
    if (i - start > 1) {
      const run = sorted.slice(start, i).sort(compareNames);
      for (let j = 0; j < run.length; j++) sorted[start + j] = run[j]!;
    }
    start = i;
  }
  return sorted;
}

/** The optional active entries in admission order, by the key (tier, max − budgetPriority, display). */
function admissionOrder(entries: readonly Entry[]): Entry[] {
  const optional = entries.filter((e) => e.inactive === null && !e.required);
  const n = entries.length;
  const range = packedRange(optional, (e) => e.budgetPriority, n);
  if (range === null) return optional.sort(compareAdmission);
  const keys = new Uint32Array(optional.length);
  for (let i = 0; i < optional.length; i++) {
    const e = optional[i]!;
    keys[i] = (e.tier * range.span + (range.max - e.budgetPriority)) * n + e.display;
  }
  keys.sort();
  for (let i = 0; i < keys.length; i++) optional[i] = entries[keys[i]! % n]!;
  return optional;
}

// A module-level helper rather than a closure, which would be allocated for every entry.
function fieldPath(e: Entry, field: string): FieldPath {
  return ["segments", e.index, field];
}

// Runs the condition, then the builder (each at most once), and records the content or
// why the segment is inactive.
function resolveContent(e: Entry): void {
  const { seg } = e;
  let active = seg.condition ?? true;
  if (typeof active === "function") {
    active = active();
    if (typeof active !== "boolean") {
      throw new InvalidInputError(
        `segments[${e.index}].condition: must return a boolean`,
        fieldPath(e, "condition"),
      );
    }
  }
  if (!active) {
    e.inactive = "condition is false";
    return;
  }
  const built = seg.builder !== undefined;
  const content = built ? seg.builder!() : (seg.content ?? null);
  if (content !== null && typeof content !== "string") {
    throw new InvalidInputError(
      `segments[${e.index}].builder: must return a string or null`,
      fieldPath(e, "builder"),
    );
  }
  if (content === null) e.inactive = built ? "builder returned null" : "content is null";
  else if (content === "")
    e.inactive = built ? "builder returned an empty string" : "content is empty";
  else e.content = content;
}

function decide(e: Entry, status: SegmentStatus, reason: SegmentReason, detail: string): void {
  e.status = status;
  e.reason = reason;
  e.detail = detail;
}

/**
 * The decision of an entry, once admission is over, with its own token count (-1 when it
 * was never counted). Decisions are built together in the
 * final pass rather than as admission goes: objects that outlive a scavenge (here, while
 * the rest of the plan is computed) lead V8 to pretenure their allocation site, after
 * which every decision is allocated in old space, several times slower and at the cost
 * of mark-compact collections (15–28% of a plan's time in the profiles of 2,000 segments).
 */
function makeDecision(e: Entry, tokens: number): PlanDecision {
  const included = e.status === "included";
  // Fields in the documented order, so the JSON form is stable.
  const d: Omit<DecisionFields, "originalTokens" | "renderedTokens"> & {
    status: SegmentStatus;
    reason: SegmentReason;
    originalTokens?: number;
    renderedTokens?: number;
  } = {
    name: e.name,
    priority: e.priority,
    required: e.required,
    budgetPriority: e.budgetPriority,
    provenance: e.provenance,
    cacheTier: e.cacheTier,
    status: e.status,
    reason: e.reason,
    detail: e.detail,
    originalChars: e.chars,
    renderedChars: included ? e.chars : 0,
  };
  // A segment dropped after counting only part of it has no token figures.
  if (tokens >= 0) {
    d.originalTokens = tokens;
    d.renderedTokens = included ? tokens : 0;
  }
  return d as PlanDecision;
}

/**
 * The chars of the admitted prompt: additive, Σ chars of the admitted segments + one
 * separator between two of the same tier + one marker between two tiers.
 */
interface CharLedger {
  used: number;
  admitted: number;
  /** Admitted segments per tier rank. */
  perTier: number[];
  separator: number;
  marker: number;
}

/** Chars of the prompt if `e` were admitted. */
function charsWith(c: CharLedger, e: Entry): number {
  if (c.admitted === 0) return e.chars;
  return c.used + (c.perTier[e.tier]! > 0 ? c.separator : c.marker) + e.chars;
}

function commitChars(c: CharLedger, e: Entry, chars: number): void {
  c.used = chars;
  c.admitted++;
  c.perTier[e.tier]!++;
}

/**
 * Plans the whole system prompt under one budget (spec 03): inactive segments cost
 * nothing, required ones are reserved first (or a {@link PromptBudgetError} is thrown
 * when they alone cannot fit), optional ones are admitted by `budgetPriority desc →
 * priority asc → name asc` while the rendered prompt, separators included, fits every
 * budget, and the admitted ones are rendered by `priority asc → name asc`. Returns the
 * prompt and one decision per segment in display order; input order never matters.
 * Invalid input throws {@link InvalidInputError} naming the field path.
 *
 * **Cache tiers (spec 05).** When at least one segment has a `cacheTier` (or the request
 * sets `tiered: true`) the plan is tiered, and a segment without a tier counts as
 * `dynamic`. Display order becomes tier (`static`, `session`, `dynamic`) → priority asc →
 * name asc; segments of one tier are joined by the separator and two tiers by the
 * `cacheBoundary` marker (default `"\n\n<!-- cache-boundary -->\n\n"`), which costs
 * budget like a separator. Only tiers with admitted content appear, with no marker at
 * either end. Optional segments are admitted by tier asc (static first) →
 * `budgetPriority` desc → priority asc → name asc, so every static decision is taken
 * before any optional session or dynamic segment is priced: an optional dynamic segment
 * that grows (or appears) at the same budget can never evict a static (or session)
 * segment that fit before, and the static prefix — and its cache key — stays put.
 * Required segments of every tier are still reserved first, so a growing *required*
 * dynamic segment does take budget from optional static ones. The plan reports each
 * tier's names, size and offsets in `tiers`, and the marker in `cacheBoundary`.
 *
 * @example
 * const plan = planPrompt({
 *   budgetChars: 100,
 *   segments: [
 *     { name: "rules", content: "Never run rm -rf.", required: true, priority: 0 },
 *     { name: "mode", content: "Mode: ask", priority: 90, budgetPriority: 90 },
 *     { name: "skills", content: "x".repeat(200) },
 *   ],
 * });
 * plan.prompt; // "Never run rm -rf.\n\n---\n\nMode: ask"
 * plan.droppedNames; // ["skills"]
 *
 * @example
 * const tiered = planPrompt({
 *   segments: [
 *     { name: "memory", content: "Likes tabs.", cacheTier: "dynamic", priority: 0 },
 *     { name: "rules", content: "Be brief.", cacheTier: "static", priority: 90 },
 *   ],
 * });
 * tiered.prompt; // "Be brief.\n\n<!-- cache-boundary -->\n\nLikes tabs."
 * tiered.tiers.map((t) => [t.tier, t.start, t.end]); // [["static", 0, 9], ["dynamic", 36, 47]]
 */
export function planPrompt(request: PlanPromptRequest, options: PlanOptions = {}): PromptPlan {
  const req = parseRequest(request);
  const counter = options.tokenCounter ?? resolveTokenCounter(req.tokenizer);
  const { budgetChars, budgetTokens } = req;
  const tiered = req.tiered === true || req.segments.some((s) => s.cacheTier !== undefined);
  const marker = req.cacheBoundary ?? DEFAULT_CACHE_BOUNDARY;
  const markerChars = cpLength(marker);

  const inRequestOrder: Entry[] = req.segments.map((seg, index) => {
    const cacheTier: CacheTier | null = tiered ? (seg.cacheTier ?? DEFAULT_CACHE_TIER) : null;
    return {
      seg,
      name: seg.name,
      priority: seg.priority,
      budgetPriority: seg.budgetPriority,
      required: seg.required,
      provenance: seg.provenance,
      plainName: !hasSurrogate(seg.name),
      index,
      content: "",
      inactive: null,
      tier: cacheTier === null ? 0 : TIER_RANK[cacheTier],
      cacheTier,
      display: 0,
      chars: 0,
      status: "inactive",
      reason: "inactive",
      detail: "",
    };
  });
  const entries = displayOrder(inRequestOrder);
  // Under a token budget priced by the split ledger with a counter that can stop early, a
  // segment's content is counted only when its figures are needed: an optional one that
  // provably cannot fit is dropped after counting just the part of it the budget had room
  // for. Otherwise every active segment is counted up front.
  const lazy =
    budgetTokens !== null && counter.countUpTo !== undefined && splits(counter, tiered, marker);
  // Conditions and builders run in display order, so even their side effects do not
  // depend on input order.
  for (let d = 0; d < entries.length; d++) {
    const e = entries[d]!;
    e.display = d;
    resolveContent(e);
    if (e.inactive !== null) e.detail = e.inactive;
    else e.chars = cpLength(e.content);
  }
  const layout: Layout = {
    contents: entries.map((e) => e.content),
    tiers: entries.map((e) => e.tier),
    marker,
    tokens: new Float64Array(entries.length).fill(-1),
  };
  for (const e of entries) {
    if (e.inactive !== null) layout.tokens[e.display] = 0;
    else if (!lazy) ownTokens(layout, counter, e.display);
  }
  // Without a token budget nothing needs pricing per candidate: the prompt is counted once.
  const ledger = budgetTokens === null ? null : makeLedger(counter, layout, tiered);
  const chars: CharLedger = {
    used: 0,
    admitted: 0,
    perTier: [0, 0, 0],
    separator: SEPARATOR_CHARS,
    marker: markerChars,
  };

  const required = entries.filter((e) => e.inactive === null && e.required);
  for (const e of required) {
    commitChars(chars, e, charsWith(chars, e));
    ledger?.add(e.display);
  }
  if (required.length > 0) {
    const names = required.map((e) => e.name);
    const which = `required segments (${names.join(", ")})`;
    if (budgetChars !== null && chars.used > budgetChars) {
      throw new PromptBudgetError(
        `${which} need ${chars.used} chars; budgetChars is ${budgetChars}`,
        names,
        "budgetChars",
      );
    }
    const tokens = ledger?.total() ?? 0;
    if (budgetTokens !== null && tokens > budgetTokens) {
      throw new PromptBudgetError(
        `${which} need ${tokens} tokens (${counter.name}); budgetTokens is ${budgetTokens}`,
        names,
        "budgetTokens",
      );
    }
    for (const e of required) {
      ownTokens(layout, counter, e.display);
      decide(e, "included", "required", "required: reserved before optional segments");
    }
  }

  const dropDetails = new Map<number, string>(); // by exact tokens, or -1 - room when bounded
  for (const e of admissionOrder(entries)) {
    const withChars = charsWith(chars, e);
    if (budgetChars !== null && withChars > budgetChars) {
      ownTokens(layout, counter, e.display);
      decide(
        e,
        "dropped",
        "char_budget_exceeded",
        `would use ${withChars} chars; budget is ${budgetChars}`,
      );
      continue;
    }
    let tokens: number | null = null; // stays null without a token budget
    if (ledger !== null && budgetTokens !== null) {
      tokens = ledger.costUpTo(e.display, budgetTokens);
      if (tokens > budgetTokens) {
        if (!ledger.bounded) ownTokens(layout, counter, e.display); // exact: keep its figures
        // Once the budget is nearly full, thousands of drops share a handful of details.
        const key = ledger.bounded ? -1 - Math.max(0, ledger.room) : tokens;
        let detail = dropDetails.get(key);
        if (detail === undefined) {
          detail = ledger.bounded
            ? `would use more than ${budgetTokens} tokens (${-1 - key} left for it); budget is ${budgetTokens}`
            : `would use ${tokens} tokens; budget is ${budgetTokens}`;
          dropDetails.set(key, detail);
        }
        decide(e, "dropped", "token_budget_exceeded", detail);
        continue;
      }
      ledger.add(e.display);
    }
    ownTokens(layout, counter, e.display);
    commitChars(chars, e, withChars);
    // Formatted only once admitted: under a tight budget most candidates are dropped.
    let detail = `fits: prompt at ${withChars} chars${budgetChars === null ? "" : ` of ${budgetChars}`}`;
    if (tokens !== null) detail += `, ${tokens} of ${budgetTokens} tokens`;
    decide(e, "included", "fits_budget", detail);
  }

  const includedNames: string[] = [];
  const droppedNames: string[] = [];
  const decisions: PlanDecision[] = [];
  const tiers: PlanTier[] = [];
  let prompt = "";
  for (const e of entries) {
    decisions.push(makeDecision(e, layout.tokens[e.display]!));
    if (e.status === "dropped") droppedNames.push(e.name);
    if (e.status !== "included") continue;
    let open = tiers.at(-1); // the tier being rendered; undefined when untiered or first
    if (includedNames.length > 0) {
      if (open === undefined || open.tier === e.cacheTier) {
        prompt += SEGMENT_SEPARATOR; // untiered, or within one tier
      } else {
        open.end = prompt.length;
        prompt += marker;
      }
    }
    includedNames.push(e.name);
    if (e.cacheTier !== null && open?.tier !== e.cacheTier) {
      open = { tier: e.cacheTier, names: [], chars: 0, tokens: 0, start: prompt.length, end: 0 };
      tiers.push(open);
    }
    open?.names.push(e.name);
    prompt += e.content;
  }
  const lastTier = tiers.at(-1);
  if (lastTier !== undefined) lastTier.end = prompt.length;
  for (const t of tiers) {
    const content = prompt.slice(t.start, t.end);
    t.chars = cpLength(content);
    t.tokens = counter.count(content);
  }
  return {
    prompt,
    usedChars: chars.used,
    usedTokens: ledger?.total() ?? counter.count(prompt),
    budgetChars,
    budgetTokens,
    tokenizer: counter.name,
    includedNames,
    droppedNames,
    decisions,
    tiers,
    cacheBoundary: tiered ? marker : null,
  };
}
