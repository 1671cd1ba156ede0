/**
 * A deliberately naive reference for docs/memory-selection.md selection. Every stage is a separate plain
 * pass over the ranking, and packing renders the WHOLE proposed block (selected hits plus
 * the candidate) with `renderMemoryBlock` and counts it with the counter for every
 * candidate: no running totals, no piecewise counting, no shortcuts.
 *
 * It assumes valid input (validation is tested separately) and reproduces the plan shape
 * and the detail sentences of `selectMemoryContext` so plans compare as JSON.
 */
import {
  type Authority,
  type CandidateInput,
  type MemoryDecision,
  type MemoryPlan,
  type MemoryReason,
  type PolicyInput,
  renderMemoryBlock,
  renderMemoryHit,
} from "../../src/memory/index.js";
import { formatScore, normalizeKey, parseInstant, trimWs } from "../../src/text/index.js";
import type { TokenCounter } from "../../src/tokens/index.js";

const LEVEL: Record<Authority, number> = {
  current_turn: 3,
  workspace_override: 2,
  user_default: 1,
};

/** Code-point order written the obvious way: compare arrays of code points. */
export function naiveCodePointCompare(a: string, b: string): number {
  const x = Array.from(a, (ch) => ch.codePointAt(0) as number);
  const y = Array.from(b, (ch) => ch.codePointAt(0) as number);
  for (let i = 0; i < Math.min(x.length, y.length); i++) {
    if (x[i] !== y[i]) return (x[i] as number) < (y[i] as number) ? -1 : 1;
  }
  return x.length === y.length ? 0 : x.length < y.length ? -1 : 1;
}

function authorityOf(c: CandidateInput): Authority {
  return c.authority ?? "user_default";
}

function instantOf(c: CandidateInput): bigint {
  const t = parseInstant(c.provenance.capturedAt);
  if (t === null) throw new Error(`bad capturedAt in test data: ${c.provenance.capturedAt}`);
  return t;
}

/** authority desc → score desc → sourceRank asc → capturedAt desc → memoryId asc. */
export function naiveRank(candidates: readonly CandidateInput[]): CandidateInput[] {
  return [...candidates].sort((a, b) => {
    if (LEVEL[authorityOf(a)] !== LEVEL[authorityOf(b)]) {
      return LEVEL[authorityOf(b)] - LEVEL[authorityOf(a)];
    }
    if (a.score !== b.score) return a.score > b.score ? -1 : 1;
    if (a.sourceRank !== b.sourceRank) return a.sourceRank < b.sourceRank ? -1 : 1;
    const ta = instantOf(a);
    const tb = instantOf(b);
    if (ta !== tb) return ta > tb ? -1 : 1;
    return naiveCodePointCompare(a.memoryId, b.memoryId);
  });
}

interface Verdict {
  reason: MemoryReason;
  related: string | null;
  detail: string;
}

function chars(s: string): number {
  return Array.from(s).length;
}

function slotOf(c: CandidateInput): string | null {
  return c.conflictKey === undefined || c.conflictKey === null ? null : normalizeKey(c.conflictKey);
}

/** The naive selection. `request` must be valid. */
export function naiveSelect(
  request: { userScope: string; policy?: PolicyInput; candidates: readonly CandidateInput[] },
  counter: TokenCounter,
): MemoryPlan {
  const p = request.policy ?? {};
  const policy = {
    minScore: p.minScore === undefined ? 0.35 : p.minScore,
    topK: p.topK === undefined ? 5 : p.topK,
    maxChars: p.maxChars === undefined ? 3000 : p.maxChars,
    maxTokens: p.maxTokens === undefined ? 800 : p.maxTokens,
  };
  const scope = trimWs(request.userScope);
  const ranking = naiveRank(request.candidates);
  const verdicts = new Map<string, Verdict>();

  // Stage 1: scope gate.
  const inScope: CandidateInput[] = [];
  for (const c of ranking) {
    if (c.userScope === scope) inScope.push(c);
    else {
      verdicts.set(c.memoryId, {
        reason: "scope_mismatch",
        related: null,
        detail: `scope ${JSON.stringify(c.userScope)} is not the query scope`,
      });
    }
  }

  // Stage 2: confidence gate.
  const confident: CandidateInput[] = [];
  for (const c of inScope) {
    if (c.score >= policy.minScore) confident.push(c);
    else {
      verdicts.set(c.memoryId, {
        reason: "low_confidence",
        related: null,
        detail: `score ${formatScore(c.score)} is below minScore ${formatScore(policy.minScore)}`,
      });
    }
  }

  // Stage 3: exact dedupe on (slot or none, text).
  const unique: CandidateInput[] = [];
  for (const c of confident) {
    const first = unique.find(
      (u) => slotOf(u) === slotOf(c) && normalizeKey(u.text) === normalizeKey(c.text),
    );
    if (first === undefined) unique.push(c);
    else {
      verdicts.set(c.memoryId, {
        reason: "duplicate_content",
        related: first.memoryId,
        detail: `same content as ${first.memoryId}`,
      });
    }
  }

  // Stage 4: conflict slots; the first in rank holds the slot.
  const contenders: CandidateInput[] = [];
  for (const c of unique) {
    const slot = slotOf(c);
    const holder =
      slot === null ? undefined : contenders.find((w) => slotOf(w) !== null && slotOf(w) === slot);
    if (holder === undefined) {
      contenders.push(c);
      continue;
    }
    const weaker = LEVEL[authorityOf(c)] < LEVEL[authorityOf(holder)];
    verdicts.set(c.memoryId, {
      reason: weaker ? "authority_loser" : "conflict_loser",
      related: holder.memoryId,
      detail: weaker
        ? `slot ${JSON.stringify(slot)} is held by ${holder.memoryId} with higher authority ${authorityOf(holder)}`
        : `slot ${JSON.stringify(slot)} is held by higher-ranked ${holder.memoryId}`,
    });
  }

  // Stage 5: top-k, then the whole proposed block measured from scratch.
  const selected: CandidateInput[] = [];
  for (const c of contenders) {
    if (selected.length >= policy.topK) {
      verdicts.set(c.memoryId, {
        reason: "top_k_reached",
        related: null,
        detail: `topK ${policy.topK} already selected`,
      });
      continue;
    }
    const proposed = renderMemoryBlock(
      scope,
      [...selected, c].map((s) => renderMemoryHit(s)),
    );
    const proposedChars = chars(proposed);
    if (policy.maxChars !== null && proposedChars > policy.maxChars) {
      verdicts.set(c.memoryId, {
        reason: "char_budget_exceeded",
        related: null,
        detail: `would use ${proposedChars} chars; budget is ${policy.maxChars}`,
      });
      continue;
    }
    const proposedTokens = counter.count(proposed);
    if (policy.maxTokens !== null && proposedTokens > policy.maxTokens) {
      verdicts.set(c.memoryId, {
        reason: "token_budget_exceeded",
        related: null,
        detail: `would use ${proposedTokens} tokens; budget is ${policy.maxTokens}`,
      });
      continue;
    }
    selected.push(c);
    verdicts.set(c.memoryId, {
      reason: "selected",
      related: null,
      detail: `selected as hit ${selected.length}`,
    });
  }

  const decisions = ranking.map((c) => {
    const v = verdicts.get(c.memoryId);
    if (v === undefined) throw new Error(`no verdict for ${c.memoryId}`);
    const line = renderMemoryHit(c);
    return {
      memoryId: c.memoryId,
      status: v.reason === "selected" ? "selected" : "rejected",
      reason: v.reason,
      score: c.score,
      sourceRank: c.sourceRank,
      authority: authorityOf(c),
      candidateChars: chars(line),
      candidateTokens: counter.count(line),
      relatedMemoryId: v.related,
      detail: v.detail,
    } as MemoryDecision;
  });

  const context = renderMemoryBlock(
    scope,
    selected.map((s) => renderMemoryHit(s)),
  );
  return {
    context,
    userScope: scope,
    tokenizer: counter.name,
    policy,
    candidateCount: ranking.length,
    usedChars: chars(context),
    usedTokens: counter.count(context),
    selectedMemoryIds: decisions.filter((d) => d.status === "selected").map((d) => d.memoryId),
    rejectedMemoryIds: decisions.filter((d) => d.status === "rejected").map((d) => d.memoryId),
    decisions,
  };
}
