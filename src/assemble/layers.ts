/**
 * A slot's fill made a layer: a missing or failed source skips an optional slot and fails
 * a required one closed; otherwise the slot filter and the packer (after the spec 02 gates,
 * for the memory slot) decide every item, and the decisions are listed in rank order.
 */
import { SourceError } from "../errors/index.js";
import type { MemoryPlan } from "../memory/index.js";
import type { SlotRenderer } from "../render/index.js";
import type { TokenCounter } from "../tokens/index.js";
import type { SlotFill } from "./fill.js";
import { checkRecallItems, isMemorySlot, packMemorySlot } from "./memory-slot.js";
import {
  applyFilter,
  compareItems,
  type ItemDecision,
  type PackedSlot,
  packItems,
  type SourcedItem,
} from "./pack.js";
import type { ResolvedSlot } from "./schema.js";

/** One slot after filling and packing: what the global planner and the manifest read. */
export interface FilledLayer {
  slot: ResolvedSlot;
  fill: SlotFill;
  packed: PackedSlot | null;
  decisions: ItemDecision[];
  memoryPlan: MemoryPlan | null;
}

/** What packing a slot reads besides its fill. */
export interface LayerContext {
  renderer: SlotRenderer;
  /** The trusted user scope (trimmed). */
  scope: string;
  /** The assembly's `now`, in milliseconds. */
  nowMs: number;
  counter: TokenCounter;
}

type OkFill = Extract<SlotFill, { status: "ok" }>;
type RenderItems = (items: readonly SourcedItem[]) => string;

/**
 * The layer of `slot` from what its sources returned. Throws when a required slot has no
 * source, or its source failed or timed out.
 */
export function toLayer(slot: ResolvedSlot, filled: SlotFill, ctx: LayerContext): FilledLayer {
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
  return { slot, fill, packed: null, decisions: [], memoryPlan: null };
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
  const { packed, plan } = packMemorySlot(slot, kept, filter, ctx.scope, render, ctx.counter);
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
  };
}

// Item decisions in the slot's rank order, whatever stage produced them.
function orderDecisions(ranked: readonly SourcedItem[], decisions: ItemDecision[]): ItemDecision[] {
  const byKey = new Map(decisions.map((d) => [`${d.sourceId}\u0000${d.id}`, d]));
  return ranked.map((s) => byKey.get(`${s.sourceId}\u0000${s.item.id}`) as ItemDecision);
}
