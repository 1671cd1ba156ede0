/**
 * Memory selection of spec 02: one ranking, then scope gate → confidence gate → exact
 * dedupe → conflict slots → top-k and budget packing, with exactly one decision per
 * candidate in rank order.
 */
import { InvalidInputError, invalidFromZod } from "../errors/index.js";
import {
  compareCodePoints,
  compareInstantParts,
  cpLength,
  formatScore,
  type InstantParts,
  normalizeKey,
  parseInstantParts,
  trimWs,
} from "../text/index.js";
import { resolveTokenCounter, type TokenCounter } from "../tokens/index.js";
import { BLOCK_CLOSE, renderBlockOpen, renderMemoryBlock, renderMemoryHit } from "./render.js";
import {
  AUTHORITY_RANK,
  type Authority,
  type Candidate,
  type Policy,
  type SelectMemoryRequest,
  SelectMemoryRequestSchema,
} from "./schema.js";

/** Reason codes of spec 02, stable across releases. */
export type MemoryReason =
  | "selected"
  | "scope_mismatch"
  | "low_confidence"
  | "duplicate_content"
  | "authority_loser"
  | "conflict_loser"
  | "top_k_reached"
  | "char_budget_exceeded"
  | "token_budget_exceeded";

interface DecisionFields {
  memoryId: string;
  score: number;
  sourceRank: number;
  authority: Authority;
  candidateChars: number;
  candidateTokens: number;
  detail: string;
}

/** One terminal decision per candidate, keyed by reason code. */
export type MemoryDecision =
  | (DecisionFields & { status: "selected"; reason: "selected"; relatedMemoryId: null })
  | (DecisionFields & {
      status: "rejected";
      reason:
        | "scope_mismatch"
        | "low_confidence"
        | "top_k_reached"
        | "char_budget_exceeded"
        | "token_budget_exceeded";
      relatedMemoryId: null;
    })
  | (DecisionFields & {
      status: "rejected";
      reason: "duplicate_content" | "authority_loser" | "conflict_loser";
      relatedMemoryId: string;
    });

/** The plan of spec 02. */
export interface MemoryPlan {
  context: string;
  userScope: string;
  tokenizer: string;
  policy: Policy;
  candidateCount: number;
  usedChars: number;
  usedTokens: number;
  selectedMemoryIds: string[];
  rejectedMemoryIds: string[];
  decisions: MemoryDecision[];
}

/** Options of {@link selectMemoryContext}. */
export interface SelectOptions {
  /** Overrides `request.tokenizer` (e.g. a shared memoizing counter or a custom one). */
  tokenCounter?: TokenCounter;
}

interface Ranked {
  c: Candidate;
  authority: Authority;
  // The sort keys copied out of the candidate: the comparator reads them ~12 times each.
  rank: number; // AUTHORITY_RANK[authority]
  score: number;
  sourceRank: number;
  // The fields the gates read, copied too: the gates visit candidates in rank order, all
  // over memory, and one object per candidate is one cache miss instead of two.
  id: string;
  scope: string;
  slotKey: string | null;
  text: string;
  /** capturedAt parsed, on the first tie that needs it (score and sourceRank rarely tie). */
  instant: InstantParts | null;
  /**
   * The hit's rendering, kept only once needed again (see {@link lineOf}): holding 50,000
   * lines until the end would make every young-generation GC copy them.
   */
  line: string | null;
  chars: number;
  tokens: number;
  /** T(line + "\n"): from the line's own count when the counter can extend it; -1 until known. */
  joined: number;
}

function lineOf(r: Ranked): string {
  if (r.line === null) r.line = renderMemoryHit(r.c);
  return r.line;
}

// authority desc → score desc → sourceRank asc → capturedAt desc → memoryId asc.
function compareRank(a: Ranked, b: Ranked): number {
  if (a.rank !== b.rank) return b.rank - a.rank;
  if (a.score !== b.score) return b.score - a.score;
  if (a.sourceRank !== b.sourceRank) return a.sourceRank - b.sourceRank;
  const when = compareInstantParts(instantOf(b), instantOf(a));
  if (when !== 0) return when;
  return compareCodePoints(a.id, b.id);
}

function instantOf(r: Ranked): InstantParts {
  if (r.instant === null) r.instant = parseInstantParts(r.c.provenance.capturedAt) as InstantParts; // validated
  return r.instant;
}

function parseRequest(request: SelectMemoryRequest) {
  const parsed = SelectMemoryRequestSchema.safeParse(request);
  if (!parsed.success) throw invalidFromZod(parsed.error);
  // One hash operation per id (add, then see whether the set grew); the first index of a
  // duplicate is searched for only on that error path.
  const seen = new Set<string>();
  const candidates = parsed.data.candidates;
  for (let i = 0; i < candidates.length; i++) {
    const id = (candidates[i] as Candidate).memoryId;
    const size = seen.size;
    if (seen.add(id).size === size) {
      const first = candidates.findIndex((c) => c.memoryId === id);
      throw new InvalidInputError(`duplicate memoryId "${id}" (also candidates[${first}])`, [
        "candidates",
        i,
        "memoryId",
      ]);
    }
  }
  return parsed.data;
}

// Hits rendered and counted per chunk: rendering a chunk, then counting it in a pass of
// its own keeps the tokenizer's tables hot in the CPU cache (10 % faster than alternating
// per hit, measured on 5,000 hits), while only one chunk of lines is alive at a time.
const CHUNK = 2048;

/**
 * Every candidate's hit rendering measured once: code points, tokens and, for counters
 * that can extend a count, the tokens with its joining newline. Lines are counted past the
 * memo (countUncached): they are one-off, and thousands would only flush a shared memo.
 */
function measureHits(candidates: readonly Candidate[], counter: TokenCounter): Ranked[] {
  const ranked: Ranked[] = new Array(candidates.length);
  const lines: string[] = new Array(Math.min(CHUNK, candidates.length));
  const extend = counter.newlineCut && counter.extendWithNewlines !== undefined;
  for (let start = 0; start < candidates.length; start += CHUNK) {
    const end = Math.min(candidates.length, start + CHUNK);
    for (let i = start; i < end; i++) {
      const c = candidates[i] as Candidate;
      const line = renderMemoryHit(c);
      const authority = c.authority ?? "user_default";
      lines[i - start] = line;
      ranked[i] = {
        c,
        authority,
        rank: AUTHORITY_RANK[authority],
        score: c.score,
        sourceRank: c.sourceRank,
        id: c.memoryId,
        scope: c.userScope,
        slotKey: c.conflictKey ?? null,
        text: c.text,
        instant: null,
        line: null,
        chars: cpLength(line),
        tokens: 0,
        joined: -1,
      };
    }
    for (let i = start; i < end; i++) {
      const r = ranked[i] as Ranked;
      const line = lines[i - start] as string;
      r.tokens = counter.countUncached ? counter.countUncached(line) : counter.count(line);
      if (extend) r.joined = counter.extendWithNewlines?.(line, r.tokens, "\n") ?? -1;
    }
  }
  return ranked;
}

/**
 * Tokens of the block made of `open` + hit lines, computed piecewise. With a counter
 * whose `newlineCut` holds, the block `open\nH1\n…\nHn\nclose` splits exactly at every
 * newline (each next piece starts with "<"), so its count is the sum of its pieces and a
 * growing block is never recounted. Other counters count the whole rendering.
 */
class BlockMeter {
  private hitTokens = 0; // Σ T(line + "\n") over selected lines (newlineCut only)
  private hitChars = 0; // Σ (cpLength(line) + 1)
  private readonly lines: string[] = [];
  private readonly closeTokens: number;
  private readonly closeChars = cpLength(BLOCK_CLOSE);
  // The open tag of the block with one more hit than selected (it names the count), in
  // chars and tokens: it changes only when a hit is added, not per candidate priced.
  private openChars = -1;
  private openTokens = -1;

  constructor(
    private readonly scope: string,
    private readonly counter: TokenCounter,
  ) {
    this.closeTokens = counter.newlineCut ? counter.count(BLOCK_CLOSE) : 0;
  }

  get selected(): readonly string[] {
    return this.lines;
  }

  private nextOpen(): string {
    return renderBlockOpen(this.scope, this.lines.length + 1);
  }

  /** Chars of the block if `r` were added. */
  charsWith(r: Ranked): number {
    if (this.openChars < 0) this.openChars = cpLength(this.nextOpen());
    return this.openChars + 1 + this.hitChars + r.chars + 1 + this.closeChars;
  }

  /** Tokens of the block if `r` were added. */
  tokensWith(r: Ranked): number {
    if (!this.counter.newlineCut) {
      return this.counter.count(renderMemoryBlock(this.scope, [...this.lines, lineOf(r)]));
    }
    if (this.openTokens < 0) this.openTokens = this.counter.count(`${this.nextOpen()}\n`);
    return this.openTokens + this.hitTokens + this.joinedTokens(r) + this.closeTokens;
  }

  // T(line + "\n"): measured with the line's count when the counter could extend it,
  // else counted (and kept for when the hit is added).
  private joinedTokens(r: Ranked): number {
    if (r.joined < 0) r.joined = this.counter.count(`${lineOf(r)}\n`);
    return r.joined;
  }

  add(r: Ranked): void {
    this.lines.push(lineOf(r));
    this.hitChars += r.chars + 1;
    if (this.counter.newlineCut) this.hitTokens += this.joinedTokens(r);
    this.openChars = -1;
    this.openTokens = -1;
  }
}

/**
 * Selects which recalled memories enter the prompt and renders the
 * `<recalled_memory>` block, explaining every candidate with one decision in rank order.
 * Invalid input throws {@link InvalidInputError} naming the field path.
 *
 * @example
 * const plan = selectMemoryContext({
 *   userScope: "u1",
 *   candidates: [{ memoryId: "m1", text: "Use Python", userScope: "u1", score: 0.9, sourceRank: 1,
 *     provenance: { sourceId: "s", sourceType: "chat", title: "t", capturedAt: "2026-08-17T09:00:00Z" } }],
 * });
 * plan.selectedMemoryIds; // ["m1"]
 */
export function selectMemoryContext(
  request: SelectMemoryRequest,
  options: SelectOptions = {},
): MemoryPlan {
  const req = parseRequest(request);
  const counter = options.tokenCounter ?? resolveTokenCounter(req.tokenizer);
  const scope = trimWs(req.userScope);
  const policy = req.policy;

  const ranked = measureHits(req.candidates, counter);
  ranked.sort(compareRank);

  const meter = new BlockMeter(scope, counter);
  const slotless = new Map<string, string>(); // text key → first id, among slot-less hits
  const slotTexts = new Map<string, Map<string, string>>(); // slot → (text key → first id)
  const slots = new Map<string, Ranked>(); // slot key → winner
  const decisions: MemoryDecision[] = [];
  let usedTokens = 0;
  const minScoreText = formatScore(policy.minScore);
  const topKDetail = `topK ${policy.topK} already selected`;
  // Details shared by value: thousands of candidates priced near a full budget repeat a
  // few hundred totals, and most out-of-scope ones a few scopes. Keys: a scope (string),
  // a token total (n >= 0) or a char total (-1 - n).
  const details = new Map<string | number, string>();
  const sharedDetail = (key: string | number, make: () => string): string => {
    let d = details.get(key);
    if (d === undefined) {
      d = make();
      details.set(key, d);
    }
    return d;
  };

  for (const r of ranked) {
    if (r.scope !== scope) {
      decisions.push(
        decision(
          r,
          "rejected",
          "scope_mismatch",
          null,
          sharedDetail(r.scope, () => `scope ${JSON.stringify(r.scope)} is not the query scope`),
        ),
      );
      continue;
    }
    if (r.score < policy.minScore) {
      decisions.push(
        decision(
          r,
          "rejected",
          "low_confidence",
          null,
          `score ${formatScore(r.score)} is below minScore ${minScoreText}`,
        ),
      );
      continue;
    }
    const slot = r.slotKey === null ? null : normalizeKey(r.slotKey);
    // Texts are compared within their slot (or among slot-less hits): a map of texts per
    // slot, keyed by the normalized text itself (no joined key to build and hash).
    const text = normalizeKey(r.text);
    let texts = slot === null ? slotless : slotTexts.get(slot);
    if (texts === undefined) {
      texts = new Map();
      slotTexts.set(slot as string, texts);
    }
    const original = texts.get(text);
    if (original !== undefined) {
      decisions.push(
        decision(r, "rejected", "duplicate_content", original, `same content as ${original}`),
      );
      continue;
    }
    texts.set(text, r.id);
    if (slot !== null) {
      const winner = slots.get(slot);
      if (winner !== undefined) {
        const weaker = r.rank < winner.rank;
        const detail = weaker
          ? `slot ${JSON.stringify(slot)} is held by ${winner.id} with higher authority ${winner.authority}`
          : `slot ${JSON.stringify(slot)} is held by higher-ranked ${winner.id}`;
        decisions.push(
          decision(r, "rejected", weaker ? "authority_loser" : "conflict_loser", winner.id, detail),
        );
        continue;
      }
      slots.set(slot, r);
    }
    if (meter.selected.length >= policy.topK) {
      decisions.push(decision(r, "rejected", "top_k_reached", null, topKDetail));
      continue;
    }
    if (policy.maxChars !== null) {
      const chars = meter.charsWith(r);
      if (chars > policy.maxChars) {
        const detail = sharedDetail(
          -1 - chars,
          () => `would use ${chars} chars; budget is ${policy.maxChars}`,
        );
        decisions.push(decision(r, "rejected", "char_budget_exceeded", null, detail));
        continue;
      }
    }
    let tokens = -1;
    if (policy.maxTokens !== null) {
      tokens = meter.tokensWith(r);
      if (tokens > policy.maxTokens) {
        const detail = sharedDetail(
          tokens,
          () => `would use ${tokens} tokens; budget is ${policy.maxTokens}`,
        );
        decisions.push(decision(r, "rejected", "token_budget_exceeded", null, detail));
        continue;
      }
    }
    meter.add(r);
    usedTokens = tokens;
    decisions.push(
      decision(r, "selected", "selected", null, `selected as hit ${meter.selected.length}`),
    );
  }

  const context = renderMemoryBlock(scope, meter.selected);
  // The last admitted total is exact already; recount only when it was not measured.
  if (policy.maxTokens === null || context === "") usedTokens = counter.count(context);
  return {
    context,
    userScope: scope,
    tokenizer: counter.name,
    policy,
    candidateCount: ranked.length,
    usedChars: cpLength(context),
    usedTokens,
    selectedMemoryIds: decisions.filter((d) => d.status === "selected").map((d) => d.memoryId),
    rejectedMemoryIds: decisions.filter((d) => d.status === "rejected").map((d) => d.memoryId),
    decisions,
  };
}

// Builds a decision with the fields in the documented order (stable JSON).
function decision(
  r: Ranked,
  status: MemoryDecision["status"],
  reason: MemoryReason,
  relatedMemoryId: string | null,
  detail: string,
): MemoryDecision {
  return {
    memoryId: r.id,
    status,
    reason,
    score: r.score,
    sourceRank: r.sourceRank,
    authority: r.authority,
    candidateChars: r.chars,
    candidateTokens: r.tokens,
    relatedMemoryId,
    detail,
  } as MemoryDecision;
}
