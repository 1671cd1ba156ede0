/**
 * The memory slot of docs/assembler.md served by the docs/memory-selection.md gates: its items checked as candidates,
 * gated and packed into one memory plan (settled by the plan step, `global-plan.ts`, once
 * the global planner has decided the slot's fate).
 */
import { SourceError } from "../errors/index.js";
import {
  type Candidate,
  gateCandidates,
  type MemoryDecision,
  type MemoryPlan,
  renderMemoryBlock,
  renderMemoryHit,
  withHitTokens,
} from "../memory/index.js";
import type { SlotFilter, SourceItem } from "../sources/index.js";
import { cpLength } from "../text/index.js";
import type { TokenCounter } from "../tokens/index.js";
import type { SlotFill } from "./fill.js";
import {
  type ItemDecision,
  type PackedSlot,
  packRanked,
  type RankedItem,
  type SlotDecisions,
  type SlotRendering,
  type SourcedItem,
} from "./pack.js";
import type { ResolvedSlot } from "./schema.js";

/** minScore of the recall slot when its filter names none (docs/memory-selection.md default). */
const DEFAULT_MEMORY_MIN_SCORE = 0.35;

const isCandidate = (s: SourcedItem) => s.item.memory !== undefined && s.item.score !== undefined;

/** Whether a slot is served as memory: the recall slot, or one whose items are all candidates. */
export const isMemorySlot = (slot: ResolvedSlot, items: readonly SourcedItem[]) =>
  slot.kind === "recall_memory" || (items.length > 0 && items.every(isCandidate));

/**
 * Items of the recall slot must be docs/memory-selection.md candidates (memory fields and a score). One
 * that is not is an invalid item: the slot fails like any other invalid item (skipped
 * when optional, fail closed when required) instead of crashing the assembly.
 */
export function checkRecallItems(
  slot: ResolvedSlot,
  fill: SlotFill,
  ranked: readonly RankedItem[],
): SlotFill {
  if (fill.status !== "ok" || slot.kind !== "recall_memory") return fill;
  let bad: SourcedItem | undefined;
  for (const r of ranked) {
    if (!isCandidate(r.s)) {
      bad = r.s;
      break;
    }
  }
  if (bad === undefined) return fill;
  return {
    status: "source_failed",
    sourceId: bad.sourceId,
    message: `${bad.sourceId}: item ${bad.item.id} of memory slot ${slot.kind} lacks memory fields or a score`,
    sourceIds: fill.sourceIds,
  };
}

/**
 * Candidates of frozen items, made once and frozen: an unchanged recall source hands the
 * same frozen items to every assembly, so the gates see the same candidates and what they
 * derive from one (its normalized text) is not derived again. The weak map holds no item
 * alive.
 */
const frozenCandidates = new WeakMap<SourceItem, Candidate>();

function candidateOf(s: SourcedItem, slot: string): Candidate {
  if (!frozenMemory(s.item)) return toCandidate(s, slot);
  let c = frozenCandidates.get(s.item);
  if (c === undefined) {
    c = Object.freeze(toCandidate(s, slot));
    frozenCandidates.set(s.item, c);
  }
  return c;
}

// Whether every value a candidate is made of is frozen: the item, its memory fields,
// their provenance and match (a candidate copies the scope and rank out of them).
function frozenMemory(item: SourceItem): boolean {
  const m = item.memory;
  return (
    Object.isFrozen(item) &&
    (m === undefined ||
      (Object.isFrozen(m) &&
        Object.isFrozen(m.provenance) &&
        (m.match === undefined || Object.isFrozen(m.match))))
  );
}

function toCandidate(s: SourcedItem, slot: string): Candidate {
  const m = s.item.memory;
  if (m === undefined || s.item.score === undefined) {
    throw new SourceError(
      "source_failed",
      `${s.sourceId}: item ${s.item.id} of memory slot ${slot} lacks memory fields or a score`,
      slot,
      s.sourceId,
    );
  }
  // The item was validated by SourceItemSchema, whose memory fields are the candidate's.
  return {
    memoryId: s.item.id,
    text: s.item.text,
    userScope: m.userScope,
    score: s.item.score,
    sourceRank: m.sourceRank,
    provenance: m.provenance,
    conflictKey: m.conflictKey ?? null,
    authority: m.authority,
    ...(m.match === undefined ? {} : { match: m.match }),
  };
}

/** One item's line as the renderer's `renderItem` gives it, and its code points. */
export interface ItemLines {
  line(s: SourcedItem): string;
  chars(s: SourcedItem): number;
}

/**
 * The recall slot: the docs/memory-selection.md gates (scope, confidence, dedupe, conflict slots) run on
 * the filtered entries, then the slot packer applies topK and the budgets to the slot as
 * rendered; every entry gets its item decision and the memory plan keeps exactly one
 * decision per candidate. Hits are counted only once admitted: the decisions of the
 * others carry no `candidateTokens`.
 * The plan describes the slot the prompt holds: `context`/`usedChars`/`usedTokens` are the
 * slot's rendering and each decision's `candidateChars`/`candidateTokens` price the hit as
 * `itemLines` gives it (with a heading renderer the `- text (importance=…, score=…)`
 * line; with `tagged` the docs/memory-selection.md `<memory_hit>`, the block being the 02 block). Without
 * `itemLines` the plan keeps the docs/memory-selection.md block and hits.
 */
export function packMemorySlot(
  slot: ResolvedSlot,
  kept: readonly RankedItem[],
  filter: SlotFilter,
  scope: string,
  rendering: SlotRendering,
  counter: TokenCounter,
  slotDecisions: SlotDecisions,
  itemLines?: ItemLines,
): { packed: PackedSlot; plan: MemoryPlan } {
  // Plain loops, no closures per call: see "Object shapes" in docs/performance.md.
  const byId = new Map<string, RankedItem>();
  const candidates: Candidate[] = new Array(kept.length);
  // With a line renderer each hit is priced as the line the prompt would hold (measured
  // without building it when the renderer can).
  const chars: number[] | undefined = itemLines === undefined ? undefined : new Array(kept.length);
  for (let i = 0; i < kept.length; i++) {
    const r = kept[i] as RankedItem;
    byId.set(r.s.item.id, r);
    candidates[i] = candidateOf(r.s, slot.kind);
    if (chars !== undefined) chars[i] = (itemLines as ItemLines).chars(r.s);
  }
  const minScore = filter.minScore ?? DEFAULT_MEMORY_MIN_SCORE;
  const gates = gateCandidates(candidates, scope, minScore, counter, chars);
  const survivors: RankedItem[] = [];
  for (const id of gates.passed) survivors.push(byId.get(id) as RankedItem);
  const packed = packRanked(
    survivors,
    withoutMinScore(filter),
    rendering,
    counter,
    slot.kind,
    slotDecisions,
  );
  // The selected hits' lines, in the slot's order.
  const lines = new Map<string, string>();
  for (const s of packed.selected) {
    lines.set(
      s.item.id,
      itemLines === undefined ? renderMemoryHit(candidateOf(s, slot.kind)) : itemLines.line(s),
    );
  }
  const decisions: MemoryDecision[] = new Array(gates.decisions.length);
  for (let i = 0; i < decisions.length; i++) {
    const d = gates.decisions[i] as MemoryDecision;
    decisions[i] = settleHit(d, byId, lines, counter, slotDecisions);
  }
  const head = { scope, minScore, candidateCount: kept.length, tokenizer: counter.name };
  const context =
    itemLines === undefined ? renderMemoryBlock(scope, [...lines.values()]) : packed.rendered;
  return { packed, plan: memoryPlan(head, filter, context, [...lines.keys()], decisions, counter) };
}

/**
 * A hit's memory decision once the slot is packed: the gates' rejection as it was (the
 * entry gets it as its item decision), a selected hit with its line's tokens, or the
 * packer's rejection.
 */
function settleHit(
  d: MemoryDecision,
  byId: ReadonlyMap<string, RankedItem>,
  lines: ReadonlyMap<string, string>,
  counter: TokenCounter,
  slotDecisions: SlotDecisions,
): MemoryDecision {
  const entry = byId.get(d.memoryId) as RankedItem;
  const p = slotDecisions[entry.pos] ?? null;
  if (d.status !== "selected" || p === null) {
    slotDecisions[entry.pos] = gateDecision(entry, d);
    return d;
  }
  const line = lines.get(d.memoryId);
  if (line !== undefined) return withHitTokens(d, counter.count(line));
  return {
    ...d,
    status: "rejected",
    reason: p.reason,
    relatedMemoryId: null,
    detail: p.detail,
  } as MemoryDecision;
}

/**
 * `filter` without its minScore (the gates applied it), as one literal shape whatever the
 * filter's own: the packer's optimized code checks this object's hidden class, and one
 * made by a spread would die with each assembly.
 */
export function withoutMinScore(filter: SlotFilter): SlotFilter {
  const { categories, requireTags, topK, maxAgeHours, tokenBudget, charBudget } = filter;
  // Every field named (a new filter field fails to compile here until it is added).
  const out: Record<keyof SlotFilter, unknown> = {
    categories,
    requireTags,
    minScore: undefined,
    topK,
    maxAgeHours,
    tokenBudget,
    charBudget,
  };
  return out as SlotFilter;
}

// The item decision of an entry the docs/memory-selection.md gates rejected.
function gateDecision(entry: RankedItem, d: MemoryDecision): ItemDecision {
  return {
    id: d.memoryId,
    sourceId: entry.s.sourceId,
    status: "rejected",
    reason: d.reason,
    score: d.score,
    detail: d.detail,
  };
}

// The memory plan of the slot: the gates' figures with the slot's policy, block and
// decisions; `selected` are the selected hits' ids, in the slot's order.
function memoryPlan(
  head: { scope: string; minScore: number; candidateCount: number; tokenizer: string },
  filter: SlotFilter,
  context: string,
  selected: string[],
  decisions: MemoryDecision[],
  counter: TokenCounter,
): MemoryPlan {
  // Fields in the order of docs/memory-selection.md's plan (stable JSON).
  return {
    context,
    userScope: head.scope,
    tokenizer: head.tokenizer,
    policy: {
      minScore: head.minScore,
      topK: filter.topK !== undefined && filter.topK > 0 ? filter.topK : Number.MAX_SAFE_INTEGER,
      maxChars: filter.charBudget ?? null,
      maxTokens: filter.tokenBudget ?? null,
    },
    candidateCount: head.candidateCount,
    usedChars: cpLength(context),
    usedTokens: counter.count(context),
    selectedMemoryIds: selected,
    rejectedMemoryIds: decisions.filter((d) => d.status === "rejected").map((d) => d.memoryId),
    decisions,
  };
}
