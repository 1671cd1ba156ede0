/**
 * Segment planner of spec 03: decides which named segments enter the system prompt under
 * a char budget and an optional token budget, reserving required segments first and
 * logging exactly one decision per segment in display order.
 */
import { InvalidInputError, invalidFromZod, PromptBudgetError } from "../errors/index.js";
import { compareCodePoints, cpLength } from "../text/index.js";
import { resolveTokenCounter, type TokenCounter } from "../tokens/index.js";
import {
  type CacheTier,
  type ParsedPlanPromptRequest,
  type PlanPromptRequest,
  PlanPromptRequestSchema,
  type Segment,
} from "./schema.js";

/** Placed between two rendered segments; its cost counts against the budget. */
export const SEGMENT_SEPARATOR = "\n\n---\n\n";
const SEPARATOR_CHARS = cpLength(SEGMENT_SEPARATOR);

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
  | (DecisionFields & {
      status: "inactive";
      reason: "inactive";
      originalChars: 0;
      renderedChars: 0;
      originalTokens: 0;
      renderedTokens: 0;
    });

/** The plan of spec 03. */
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
}

/** Options of {@link planPrompt}. */
export interface PlanOptions {
  /** Overrides `request.tokenizer` (e.g. a shared memoizing counter or a custom one). */
  tokenCounter?: TokenCounter;
}

/**
 * Token cost of the prompt rendered from a growing set of segments, identified by their
 * display index. `costWith` prices a proposal without committing it; `add` commits.
 */
interface TokenLedger {
  costWith(d: number): number;
  add(d: number): void;
  total(): number;
}

const ONLY = 0;
const FIRST = 1;
const MIDDLE = 2;
const LAST = 3;
const HEAD = "---\n\n";
const TAIL = "\n\n";

/**
 * The exact shortcut, for counters whose `newlineCut` holds:
 * `count(a + b) = count(a) + count(b)` when `a` ends with "\n" and `b` starts with a
 * character that is neither whitespace nor "/". The separator is "\n\n" + "---" + "\n\n",
 * so a prompt `s1 SEP s2 SEP … SEP sk` has such a cut just before every "---" (left side
 * ends with "\n", right side starts with "-"), whatever the segments contain. Hence
 *
 *   T(prompt) = T(s1 + "\n\n") + Σ_{1<i<k} T("---\n\n" + si + "\n\n") + T("---\n\n" + sk)
 *
 * (and T(s1) when k = 1): each segment costs one of four variants (only / first / middle /
 * last) depending only on whether it is the first or last admitted one. Admitting a
 * segment changes at most the variant of the current first or last one, so a proposal
 * is priced in O(1) counts of single-segment texts, each counted at most once, instead of
 * recounting the whole growing prompt. The naive-planner test proves decisions identical.
 */
class SplitLedger implements TokenLedger {
  private readonly memo: Float64Array;
  private first = -1;
  private last = -1;
  private sum = 0;

  constructor(
    private readonly counter: TokenCounter,
    private readonly contents: readonly string[],
    tokens: readonly number[],
  ) {
    this.memo = new Float64Array(contents.length * 4).fill(-1);
    // The "only" variant is the content itself, already counted by the caller.
    tokens.forEach((n, d) => {
      this.memo[d * 4 + ONLY] = n;
    });
  }

  private piece(d: number, variant: number): number {
    const slot = d * 4 + variant;
    const hit = this.memo[slot]!;
    if (hit >= 0) return hit;
    const s = this.contents[d]!;
    const text =
      variant === ONLY
        ? s
        : variant === FIRST
          ? s + TAIL
          : variant === MIDDLE
            ? HEAD + s + TAIL
            : HEAD + s;
    const n = this.counter.count(text);
    this.memo[slot] = n;
    return n;
  }

  costWith(d: number): number {
    const { first, last } = this;
    if (first < 0) return this.piece(d, ONLY);
    const single = first === last;
    if (d < first) {
      // d becomes first; the old first becomes a middle one (or the last, if alone).
      return (
        this.sum -
        this.piece(first, single ? ONLY : FIRST) +
        this.piece(first, single ? LAST : MIDDLE) +
        this.piece(d, FIRST)
      );
    }
    if (d > last) {
      return (
        this.sum -
        this.piece(last, single ? ONLY : LAST) +
        this.piece(last, single ? FIRST : MIDDLE) +
        this.piece(d, LAST)
      );
    }
    return this.sum + this.piece(d, MIDDLE);
  }

  add(d: number): void {
    this.sum = this.costWith(d);
    if (this.first < 0 || d < this.first) this.first = d;
    if (this.last < 0 || d > this.last) this.last = d;
  }

  total(): number {
    return this.first < 0 ? this.counter.count("") : this.sum;
  }
}

/** The naive definition, for counters without `newlineCut`: render and count it all. */
class RenderLedger implements TokenLedger {
  private readonly admitted: boolean[];
  private probe = -1;
  private probeTokens = 0;
  private sum = -1; // unknown until counted

  constructor(
    private readonly counter: TokenCounter,
    private readonly contents: readonly string[],
  ) {
    this.admitted = contents.map(() => false);
  }

  private render(extra: number): string {
    const parts: string[] = [];
    for (let i = 0; i < this.contents.length; i++) {
      if (this.admitted[i] || i === extra) parts.push(this.contents[i]!);
    }
    return parts.join(SEGMENT_SEPARATOR);
  }

  costWith(d: number): number {
    this.probe = d;
    this.probeTokens = this.counter.count(this.render(d));
    return this.probeTokens;
  }

  add(d: number): void {
    this.admitted[d] = true;
    this.sum = this.probe === d ? this.probeTokens : -1;
    this.probe = -1;
  }

  total(): number {
    if (this.sum < 0) this.sum = this.counter.count(this.render(-1));
    return this.sum;
  }
}

interface Entry {
  seg: Segment;
  // Copies of the ordering keys as plain fields: sorting 2,000 segments reads them often.
  name: string;
  priority: number;
  budgetPriority: number;
  required: boolean;
  /** Index in the request, for error paths. */
  index: number;
  /** Resolved content; `""` when inactive. */
  content: string;
  /** Why the segment is inactive, or null when active. */
  inactive: string | null;
  /** Position in display order. */
  display: number;
  chars: number;
  tokens: number;
  decision: PlanDecision | null;
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

// Display order: priority asc → name asc (names are unique, so the order is total).
function compareDisplay(a: Entry, b: Entry): number {
  if (a.priority !== b.priority) return a.priority < b.priority ? -1 : 1;
  return compareCodePoints(a.name, b.name);
}

// Admission order: budgetPriority desc → priority asc → name asc.
function compareAdmission(a: Entry, b: Entry): number {
  if (a.budgetPriority !== b.budgetPriority) {
    return a.budgetPriority > b.budgetPriority ? -1 : 1;
  }
  return compareDisplay(a, b);
}

// Runs the condition, then the builder (each at most once), and records the content or
// why the segment is inactive.
function resolveContent(e: Entry): void {
  const { seg } = e;
  const path = (field: string) => ["segments", e.index, field];
  let active = seg.condition ?? true;
  if (typeof active === "function") {
    active = active();
    if (typeof active !== "boolean") {
      throw new InvalidInputError(
        `segments[${e.index}].condition: must return a boolean`,
        path("condition"),
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
      path("builder"),
    );
  }
  if (content === null) e.inactive = built ? "builder returned null" : "content is null";
  else if (content === "")
    e.inactive = built ? "builder returned an empty string" : "content is empty";
  else e.content = content;
}

function makeDecision(
  e: Entry,
  status: SegmentStatus,
  reason: SegmentReason,
  detail: string,
): PlanDecision {
  const included = status === "included";
  // Fields in the documented order, so the JSON form is stable.
  return {
    name: e.name,
    priority: e.priority,
    required: e.required,
    budgetPriority: e.budgetPriority,
    provenance: e.seg.provenance,
    cacheTier: e.seg.cacheTier ?? null,
    status,
    reason,
    detail,
    originalChars: e.chars,
    renderedChars: included ? e.chars : 0,
    originalTokens: e.tokens,
    renderedTokens: included ? e.tokens : 0,
  } as PlanDecision;
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
 */
export function planPrompt(request: PlanPromptRequest, options: PlanOptions = {}): PromptPlan {
  const req = parseRequest(request);
  const counter = options.tokenCounter ?? resolveTokenCounter(req.tokenizer);
  const { budgetChars, budgetTokens } = req;

  const entries: Entry[] = req.segments.map((seg, index) => ({
    seg,
    name: seg.name,
    priority: seg.priority,
    budgetPriority: seg.budgetPriority,
    required: seg.required,
    index,
    content: "",
    inactive: null,
    display: 0,
    chars: 0,
    tokens: 0,
    decision: null,
  }));
  entries.sort(compareDisplay);
  // Conditions and builders run in display order, so even their side effects do not
  // depend on input order.
  for (let d = 0; d < entries.length; d++) {
    const e = entries[d]!;
    e.display = d;
    resolveContent(e);
    if (e.inactive === null) {
      e.chars = cpLength(e.content);
      e.tokens = counter.count(e.content);
    }
  }

  // Without a token budget nothing needs pricing per candidate: the prompt is counted once.
  const contents = entries.map((e) => e.content);
  const ledger: TokenLedger | null =
    budgetTokens === null
      ? null
      : counter.newlineCut
        ? new SplitLedger(
            counter,
            contents,
            entries.map((e) => e.tokens),
          )
        : new RenderLedger(counter, contents);
  // Chars are additive: Σ chars of the admitted segments + one separator between each two.
  let usedChars = 0;
  let admitted = 0;
  const charsWith = (e: Entry) =>
    admitted === 0 ? e.chars : usedChars + SEPARATOR_CHARS + e.chars;

  const required = entries.filter((e) => e.inactive === null && e.required);
  for (const e of required) {
    usedChars = charsWith(e);
    admitted++;
    ledger?.add(e.display);
  }
  if (required.length > 0) {
    const names = required.map((e) => e.name);
    const which = `required segments (${names.join(", ")})`;
    if (budgetChars !== null && usedChars > budgetChars) {
      throw new PromptBudgetError(
        `${which} need ${usedChars} chars; budgetChars is ${budgetChars}`,
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
      e.decision = makeDecision(
        e,
        "included",
        "required",
        "required: reserved before optional segments",
      );
    }
  }

  const optional = entries.filter((e) => e.inactive === null && !e.required);
  optional.sort(compareAdmission);
  for (const e of optional) {
    const chars = charsWith(e);
    if (budgetChars !== null && chars > budgetChars) {
      e.decision = makeDecision(
        e,
        "dropped",
        "char_budget_exceeded",
        `would use ${chars} chars; budget is ${budgetChars}`,
      );
      continue;
    }
    let detail = `fits: prompt at ${chars} chars${budgetChars === null ? "" : ` of ${budgetChars}`}`;
    if (ledger !== null && budgetTokens !== null) {
      const tokens = ledger.costWith(e.display);
      if (tokens > budgetTokens) {
        e.decision = makeDecision(
          e,
          "dropped",
          "token_budget_exceeded",
          `would use ${tokens} tokens; budget is ${budgetTokens}`,
        );
        continue;
      }
      ledger.add(e.display);
      detail += `, ${tokens} of ${budgetTokens} tokens`;
    }
    usedChars = chars;
    admitted++;
    e.decision = makeDecision(e, "included", "fits_budget", detail);
  }

  const included: string[] = [];
  const includedNames: string[] = [];
  const droppedNames: string[] = [];
  const decisions: PlanDecision[] = [];
  for (const e of entries) {
    const decision = e.decision ?? makeDecision(e, "inactive", "inactive", e.inactive ?? "");
    decisions.push(decision);
    if (decision.status === "included") {
      included.push(e.content);
      includedNames.push(e.name);
    } else if (decision.status === "dropped") {
      droppedNames.push(e.name);
    }
  }
  const prompt = included.join(SEGMENT_SEPARATOR);
  return {
    prompt,
    usedChars,
    usedTokens: ledger?.total() ?? counter.count(prompt),
    budgetChars,
    budgetTokens,
    tokenizer: counter.name,
    includedNames,
    droppedNames,
    decisions,
  };
}
