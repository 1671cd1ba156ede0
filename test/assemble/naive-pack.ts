/**
 * The per-slot layer as the assembler computed it before lazy counting (issue 15): every
 * item validated, ranked by a comparator that parses dates on every comparison, every
 * recall candidate rendered and counted by the docs/memory-selection.md selection, and every candidate
 * priced by rendering the whole slot again. Kept as the naive reference the property test
 * compares the lazy assembler against; the one change since is issue 11 item 4 (the memory
 * plan describes the recall slot as rendered, each hit priced as the renderer's line).
 */

import type { SlotFill } from "../../src/assemble/fill.js";
import type { FilledLayer, LayerContext } from "../../src/assemble/layers.js";
import type { ItemDecision, ItemReason, PackedSlot, SourcedItem } from "../../src/assemble/pack.js";
import type { ResolvedSlot } from "../../src/assemble/schema.js";
import { PromptBudgetError, SourceError } from "../../src/errors/index.js";
import {
  type CandidateInput,
  type MemoryDecision,
  type MemoryPlan,
  renderMemoryBlock,
  renderMemoryHit,
  selectMemoryContext,
} from "../../src/memory/index.js";
import type { SlotFilter, SourceItem } from "../../src/sources/index.js";
import { compareCodePoints, cpLength, formatScore, instantMillis } from "../../src/text/index.js";
import type { TokenCounter } from "../../src/tokens/index.js";

/**
 * Generic item rank: pinned first, then score desc (unscored last), the source's own
 * `rank` (unranked last), newest first (undated last), then id and source id by code
 * point — never input order.
 */
export function compareItems(a: SourcedItem, b: SourcedItem): number {
  const pa = a.item.pinned === true ? 1 : 0;
  const pb = b.item.pinned === true ? 1 : 0;
  if (pa !== pb) return pb - pa;
  const sa = a.item.score ?? -1;
  const sb = b.item.score ?? -1;
  if (sa !== sb) return sb - sa;
  const ra = a.item.rank ?? Number.POSITIVE_INFINITY;
  const rb = b.item.rank ?? Number.POSITIVE_INFINITY;
  if (ra !== rb) return ra < rb ? -1 : 1;
  const ta = a.item.createdAt === undefined ? null : instantMillis(a.item.createdAt);
  const tb = b.item.createdAt === undefined ? null : instantMillis(b.item.createdAt);
  if (ta !== tb) {
    if (ta === null) return 1;
    if (tb === null) return -1;
    return tb - ta;
  }
  return compareCodePoints(a.item.id, b.item.id) || compareCodePoints(a.sourceId, b.sourceId);
}

/** Applies the declarative part of a filter (categories, tags, minScore, age) to one item. */
function filterReason(
  item: SourceItem,
  filter: SlotFilter,
  nowMs: number,
): { reason: ItemReason; detail: string } | null {
  const categories = filter.categories ?? [];
  if (
    categories.length > 0 &&
    (item.category === undefined || !categories.includes(item.category))
  ) {
    return {
      reason: "category_filtered",
      detail: `category ${JSON.stringify(item.category ?? null)} is not one of ${categories.join(", ")}`,
    };
  }
  const tags = filter.requireTags ?? [];
  const missing = tags.filter((t) => !(item.tags ?? []).includes(t));
  if (missing.length > 0) {
    return { reason: "tag_filtered", detail: `missing required tags ${missing.join(", ")}` };
  }
  if (filter.minScore !== undefined && item.score !== undefined && item.score < filter.minScore) {
    return {
      reason: "low_confidence",
      detail: `score ${formatScore(item.score)} is below minScore ${formatScore(filter.minScore)}`,
    };
  }
  if (filter.maxAgeHours !== undefined && filter.maxAgeHours > 0 && item.createdAt !== undefined) {
    const ageHours = (nowMs - (instantMillis(item.createdAt) as number)) / 3_600_000;
    if (ageHours > filter.maxAgeHours) {
      return {
        reason: "too_old",
        detail: `${Math.floor(ageHours)}h old; maxAgeHours is ${filter.maxAgeHours}`,
      };
    }
  }
  return null;
}

/** Splits items into those the declarative filter keeps and decisions for the rest. */
export function applyFilter(
  items: readonly SourcedItem[],
  filter: SlotFilter,
  nowMs: number,
): { kept: SourcedItem[]; decisions: ItemDecision[] } {
  const kept: SourcedItem[] = [];
  const decisions: ItemDecision[] = [];
  for (const s of items) {
    const out = s.item.pinned === true ? null : filterReason(s.item, filter, nowMs);
    if (out === null) kept.push(s);
    else decisions.push(decide(s, "rejected", out.reason, out.detail));
  }
  return { kept, decisions };
}

function decide(
  s: SourcedItem,
  status: ItemDecision["status"],
  reason: ItemReason,
  detail: string,
): ItemDecision {
  return {
    id: s.item.id,
    sourceId: s.sourceId,
    status,
    reason,
    score: s.item.score ?? null,
    detail,
  };
}

interface BudgetOverrun {
  unit: "chars" | "tokens";
  field: "charBudget" | "tokenBudget";
  used: number;
  budget: number;
}

// The first slot budget `text` breaks (chars checked before tokens), or null.
function overSlotBudget(
  text: string,
  filter: SlotFilter,
  counter: TokenCounter,
): BudgetOverrun | null {
  if (filter.charBudget !== undefined) {
    const used = cpLength(text);
    if (used > filter.charBudget)
      return { unit: "chars", field: "charBudget", used, budget: filter.charBudget };
  }
  if (filter.tokenBudget !== undefined) {
    const used = counter.count(text);
    if (used > filter.tokenBudget)
      return { unit: "tokens", field: "tokenBudget", used, budget: filter.tokenBudget };
  }
  return null;
}

/**
 * Packs already-ranked items into a slot: pinned items always (failing closed with
 * {@link PromptBudgetError} if they alone break the slot budget), then each other item
 * while `topK` and the char/token budgets of the slot's own rendering hold. Items are
 * atomic; an item that does not fit is skipped and smaller ones may still fit.
 */
export function packItems(
  ranked: readonly SourcedItem[],
  filter: SlotFilter,
  render: (items: readonly SourcedItem[]) => string,
  counter: TokenCounter,
  slotName: string,
): PackedSlot {
  const selected: SourcedItem[] = [];
  const decisions: ItemDecision[] = [];
  const topK =
    filter.topK !== undefined && filter.topK > 0 ? filter.topK : Number.POSITIVE_INFINITY;
  const pinned = ranked.filter((s) => s.item.pinned === true);
  if (pinned.length > 0) {
    const over = overSlotBudget(render(pinned), filter, counter);
    if (over !== null) {
      throw new PromptBudgetError(
        `pinned items of slot ${slotName} need ${over.used} ${over.unit}; its ${over.field} is ${over.budget}`,
        [slotName],
        ["slots", slotName, over.field],
      );
    }
    for (const s of pinned) {
      selected.push(s);
      decisions.push(decide(s, "selected", "pinned", "pinned: never dropped"));
    }
  }
  for (const s of ranked) {
    if (s.item.pinned === true) continue;
    if (selected.length >= topK) {
      decisions.push(
        decide(s, "rejected", "top_k_reached", `topK ${filter.topK} already selected`),
      );
      continue;
    }
    if (filter.charBudget !== undefined || filter.tokenBudget !== undefined) {
      const over = overSlotBudget(render([...selected, s]), filter, counter);
      if (over !== null) {
        const reason = over.unit === "chars" ? "char_budget_exceeded" : "token_budget_exceeded";
        const detail = `would use ${over.used} ${over.unit}; slot budget is ${over.budget}`;
        decisions.push(decide(s, "rejected", reason, detail));
        continue;
      }
    }
    selected.push(s);
    decisions.push(decide(s, "selected", "selected", `selected as item ${selected.length}`));
  }
  const rendered = render(selected);
  return {
    selected,
    rendered,
    chars: cpLength(rendered),
    tokens: counter.count(rendered),
    decisions,
  };
}

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
 * The recall slot: the docs/memory-selection.md gates (scope, confidence, dedupe, conflict slots) run on
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
  renderLine?: (item: SourcedItem) => string,
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
  // A hit is priced as the line the prompt holds, when the renderer says what that is.
  const priced = (d: MemoryDecision): MemoryDecision => {
    const item = byId.get(d.memoryId);
    if (renderLine === undefined || item === undefined) return d;
    const line = renderLine(item);
    return { ...d, candidateChars: cpLength(line), candidateTokens: counter.count(line) };
  };
  const decisions: MemoryDecision[] = gates.decisions.map((gate) => {
    const d = priced(gate);
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
  const context =
    renderLine === undefined ? renderMemoryBlock(gates.userScope, lines) : packed.rendered;
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

type OkFill = Extract<SlotFill, { status: "ok" }>;
type RenderItems = (items: readonly SourcedItem[]) => string;

/**
 * The layer of `slot` from what its sources returned. Throws when a required slot has no
 * source, or its source failed or timed out.
 */
export function naiveToLayer(slot: ResolvedSlot, filled: SlotFill, ctx: LayerContext): FilledLayer {
  const fill = checkRecallItems(slot, filled);
  if (fill.status !== "ok") return unfilledLayer(slot, fill);
  const ranked = [...fill.items].sort(compareItems);
  const render: RenderItems = (items) =>
    ctx.renderer.renderSlot(
      slot,
      items.map((s) => s.item),
      { userScope: ctx.scope },
    );
  return isMemorySlot(slot, ranked)
    ? memoryLayer(slot, fill, ranked, render, ctx)
    : plainLayer(slot, fill, ranked, render, ctx);
}

// No source, or a failed one: an optional slot is skipped, a required one fails closed.
function unfilledLayer(slot: ResolvedSlot, fill: Exclude<SlotFill, OkFill>): FilledLayer {
  if (slot.required) {
    if (fill.status === "no_source") {
      throw new SourceError(
        "source_failed",
        `no source serves required slot ${slot.kind}`,
        slot.kind,
        "none",
      );
    }
    throw new SourceError(
      fill.status,
      `required slot ${slot.kind}: ${fill.message}`,
      slot.kind,
      fill.sourceId,
    );
  }
  return { slot, fill, packed: null, decisions: [], memoryPlan: null, kept: false };
}

function memoryLayer(
  slot: ResolvedSlot,
  fill: OkFill,
  ranked: SourcedItem[],
  render: RenderItems,
  ctx: LayerContext,
): FilledLayer {
  const filter = slot.filter ?? {};
  const { kept, decisions: filtered } = applyFilter(
    ranked,
    { ...filter, minScore: undefined },
    ctx.nowMs,
  );
  const renderItem = ctx.renderer.renderItem?.bind(ctx.renderer);
  const renderLine =
    renderItem === undefined
      ? undefined
      : (s: SourcedItem) => renderItem(slot, s.item, { userScope: ctx.scope });
  const { packed, plan } = packMemorySlot(
    slot,
    kept,
    filter,
    ctx.scope,
    render,
    ctx.counter,
    renderLine,
  );
  // Lookups by id: a recall slot may hold a thousand candidates.
  const packedIds = new Set(packed.decisions.map((p) => p.id));
  const sourceOf = new Map(kept.map((s) => [s.item.id, s.sourceId]));
  const gateDecisions: ItemDecision[] = plan.decisions
    .filter((d) => !packedIds.has(d.memoryId))
    .map((d) => ({
      id: d.memoryId,
      sourceId: sourceOf.get(d.memoryId) as string,
      status: "rejected",
      reason: d.reason,
      score: d.score,
      detail: d.detail,
    }));
  return {
    slot,
    fill,
    packed,
    decisions: orderDecisions(ranked, [...filtered, ...gateDecisions, ...packed.decisions]),
    memoryPlan: plan,
    kept: false,
  };
}

function plainLayer(
  slot: ResolvedSlot,
  fill: OkFill,
  ranked: SourcedItem[],
  render: RenderItems,
  ctx: LayerContext,
): FilledLayer {
  const filter = slot.filter ?? {};
  const { kept, decisions: filtered } = applyFilter(ranked, filter, ctx.nowMs);
  const packed = packItems(kept, filter, render, ctx.counter, slot.kind);
  return {
    slot,
    fill,
    packed,
    decisions: orderDecisions(ranked, [...filtered, ...packed.decisions]),
    memoryPlan: null,
    kept: false,
  };
}

// Item decisions in the slot's rank order, whatever stage produced them.
function orderDecisions(ranked: readonly SourcedItem[], decisions: ItemDecision[]): ItemDecision[] {
  const byKey = new Map(decisions.map((d) => [`${d.sourceId}\u0000${d.id}`, d]));
  return ranked.map((s) => byKey.get(`${s.sourceId}\u0000${s.item.id}`) as ItemDecision);
}
