/**
 * The memory slot of spec 04 served by the spec 02 gates: its items checked as candidates,
 * gated and packed into one memory plan, and that plan settled once the global planner
 * has decided the slot's fate.
 */
import { SourceError } from "../errors/index.js";
import {
  type CandidateInput,
  type MemoryDecision,
  type MemoryPlan,
  renderMemoryBlock,
  renderMemoryHit,
  selectMemoryContext,
} from "../memory/index.js";
import type { PromptPlan } from "../plan/index.js";
import type { SlotFilter } from "../sources/index.js";
import { cpLength } from "../text/index.js";
import type { TokenCounter } from "../tokens/index.js";
import type { SlotFill } from "./fill.js";
import { compareItems, type PackedSlot, packItems, type SourcedItem } from "./pack.js";
import type { ResolvedSlot } from "./schema.js";

/** minScore of the recall slot when its filter names none (spec 02 default). */
const DEFAULT_MEMORY_MIN_SCORE = 0.35;

const isCandidate = (s: SourcedItem) => s.item.memory !== undefined && s.item.score !== undefined;

/** Whether a slot is served as memory: the recall slot, or one whose items are all candidates. */
export const isMemorySlot = (slot: ResolvedSlot, items: readonly SourcedItem[]) =>
  slot.kind === "recall_memory" || (items.length > 0 && items.every(isCandidate));

/**
 * Items of the recall slot must be spec 02 candidates (memory fields and a score). One
 * that is not is an invalid item: the slot fails like any other invalid item (skipped
 * when optional, fail closed when required) instead of crashing the assembly.
 */
export function checkRecallItems(slot: ResolvedSlot, fill: SlotFill): SlotFill {
  if (fill.status !== "ok" || slot.kind !== "recall_memory") return fill;
  const bad = [...fill.items].sort(compareItems).find((s) => !isCandidate(s));
  if (bad === undefined) return fill;
  return {
    status: "source_failed",
    sourceId: bad.sourceId,
    message: `${bad.sourceId}: item ${bad.item.id} of memory slot ${slot.kind} lacks memory fields or a score`,
    sourceIds: fill.sourceIds,
  };
}

/**
 * When the global planner drops the memory slot, none of its memories reaches the
 * prompt: the memory plan's `selected` decisions become rejections with the slot's
 * reason, so `selectedMemoryIds` and `context` always match what was rendered.
 */
export function settleMemoryPlan(
  slotKind: string,
  plan: MemoryPlan,
  segmentPlan: PromptPlan,
  counter: TokenCounter,
): MemoryPlan {
  const d = segmentPlan.decisions.find((x) => x.name === slotKind);
  if (d === undefined || d.status !== "dropped" || plan.selectedMemoryIds.length === 0) return plan;
  const decisions = plan.decisions.map((m) =>
    m.status !== "selected"
      ? m
      : ({
          ...m,
          status: "rejected",
          reason: d.reason,
          relatedMemoryId: null,
          detail: `slot ${d.name} dropped by the global budget: ${d.detail}`,
        } as MemoryDecision),
  );
  return {
    ...plan,
    context: "",
    usedChars: 0,
    usedTokens: counter.count(""),
    selectedMemoryIds: [],
    rejectedMemoryIds: decisions.filter((m) => m.status === "rejected").map((m) => m.memoryId),
    decisions,
  };
}

function toCandidate(s: SourcedItem, slot: string): CandidateInput {
  const m = s.item.memory;
  if (m === undefined || s.item.score === undefined) {
    throw new SourceError(
      "source_failed",
      `${s.sourceId}: item ${s.item.id} of memory slot ${slot} lacks memory fields or a score`,
      slot,
      s.sourceId,
    );
  }
  return {
    memoryId: s.item.id,
    text: s.item.text,
    userScope: m.userScope,
    score: s.item.score,
    sourceRank: m.sourceRank,
    provenance: m.provenance,
    conflictKey: m.conflictKey ?? null,
    authority: m.authority,
  };
}

/**
 * The recall slot: the spec 02 gates (scope, confidence, dedupe, conflict slots) run on
 * the filtered items, then the slot packer applies topK and the budgets to the slot as
 * rendered; the memory plan is patched so every candidate keeps exactly one decision.
 */
export function packMemorySlot(
  slot: ResolvedSlot,
  kept: SourcedItem[],
  filter: SlotFilter,
  scope: string,
  render: (items: readonly SourcedItem[]) => string,
  counter: TokenCounter,
): { packed: PackedSlot; plan: MemoryPlan } {
  const byId = new Map(kept.map((s) => [s.item.id, s]));
  const gates = selectMemoryContext(
    {
      userScope: scope,
      policy: {
        minScore: filter.minScore ?? DEFAULT_MEMORY_MIN_SCORE,
        topK: Number.MAX_SAFE_INTEGER,
        maxChars: null,
        maxTokens: null,
      },
      candidates: kept.map((s) => toCandidate(s, slot.kind)),
    },
    { tokenCounter: counter },
  );
  const survivors = gates.selectedMemoryIds.map((id) => byId.get(id) as SourcedItem);
  const packed = packItems(
    survivors,
    { ...filter, minScore: undefined },
    render,
    counter,
    slot.kind,
  );
  const outcome = new Map(packed.decisions.map((d) => [d.id, d]));
  const decisions: MemoryDecision[] = gates.decisions.map((d) => {
    const p = outcome.get(d.memoryId);
    if (d.status !== "selected" || p === undefined || p.status === "selected") return d;
    return {
      ...d,
      status: "rejected",
      reason: p.reason,
      relatedMemoryId: null,
      detail: p.detail,
    } as MemoryDecision;
  });
  const selected = packed.selected.map((s) => s.item.id);
  const lines = packed.selected.map((s) =>
    renderMemoryHit(toCandidate(s, slot.kind) as Parameters<typeof renderMemoryHit>[0]),
  );
  const context = renderMemoryBlock(gates.userScope, lines);
  const plan: MemoryPlan = {
    ...gates,
    policy: {
      minScore: gates.policy.minScore,
      topK: filter.topK !== undefined && filter.topK > 0 ? filter.topK : Number.MAX_SAFE_INTEGER,
      maxChars: filter.charBudget ?? null,
      maxTokens: filter.tokenBudget ?? null,
    },
    context,
    usedChars: cpLength(context),
    usedTokens: counter.count(context),
    selectedMemoryIds: selected,
    rejectedMemoryIds: decisions.filter((d) => d.status === "rejected").map((d) => d.memoryId),
    decisions,
  };
  return { packed, plan };
}
