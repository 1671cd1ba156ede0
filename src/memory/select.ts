/**
 * Memory selection of docs/memory-selection.md: one ranking, then scope gate → confidence gate → exact
 * dedupe → conflict slots → top-k and budget packing, with exactly one decision per
 * candidate in rank order.
 */
import { InvalidInputError, invalidFromZod } from "../errors/index.js";
import { cpLength, trimWs } from "../text/index.js";
import { resolveTokenCounter, type TokenCounter } from "../tokens/index.js";
import type { MemoryDecision } from "./decision.js";
import { Selection } from "./gates.js";
import { type HitChars, rankCandidates } from "./rank.js";
import { renderMemoryBlock } from "./render.js";
import {
  type Candidate,
  type Policy,
  type SelectMemoryRequest,
  SelectMemoryRequestSchema,
} from "./schema.js";

/** The plan of docs/memory-selection.md. */
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

  const ranked = rankCandidates(req.candidates, counter);
  const selection = new Selection(scope, policy, counter);
  for (const r of ranked) selection.consider(r);
  const { decisions } = selection;

  const context = renderMemoryBlock(scope, selection.meter.lines());
  // The last admitted total is exact already; recount only when it was not measured.
  const usedTokens =
    policy.maxTokens === null || context === "" ? counter.count(context) : selection.usedTokens;
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

/** What the gates of docs/memory-selection.md decided: one decision per candidate in rank order. */
export interface GateOutcome {
  /** The candidates every gate passed, in rank order (their decisions say `selected`). */
  passed: string[];
  decisions: MemoryDecision[];
}

/**
 * The gates of {@link selectMemoryContext} alone — scope, confidence (`minScore`), exact
 * dedupe and conflict slots — for a packer of its own to apply top-k and budgets to what
 * passed (the assembler's recall slot). Candidates must be validated already (by
 * `CandidateSchema` or a schema embedding its fields) with unique ids, `scope` trimmed
 * and non-blank. Each hit is sized for `candidateChars` by `hitChars` — a function of the
 * candidate or the sizes by index (default: its docs/memory-selection.md rendering, computed
 * from its values); none is counted, so no
 * decision carries `candidateTokens` (the packer counts what it admits).
 */
export function gateCandidates(
  candidates: readonly Candidate[],
  scope: string,
  minScore: number,
  counter: TokenCounter,
  hitChars?: HitChars,
): GateOutcome {
  const policy: Policy = {
    minScore,
    topK: Number.MAX_SAFE_INTEGER,
    maxChars: null,
    maxTokens: null,
  };
  const selection = new Selection(scope, policy, counter);
  for (const r of rankCandidates(candidates, counter, "priced", hitChars)) selection.consider(r);
  const { decisions } = selection;
  return {
    passed: decisions.filter((d) => d.status === "selected").map((d) => d.memoryId),
    decisions,
  };
}
