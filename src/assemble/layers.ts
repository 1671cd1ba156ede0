/**
 * A slot's fill made a layer: a missing or failed source skips an optional slot and fails
 * a required one closed; otherwise the slot filter and the packer (after the docs/memory-selection.md gates,
 * for the memory slot) decide every item, and the decisions are listed in rank order.
 */
import { SourceError } from "../errors/index.js";
import type { MemoryPlan } from "../memory/index.js";
import type { RenderContext, SlotFrame, SlotRenderer } from "../render/index.js";
import { cpLength } from "../text/index.js";
import type { TokenCounter } from "../tokens/index.js";
import { isCascadeSlot, packCascade, type RenderItems } from "./cascade.js";
import type { SlotFill } from "./fill.js";
import { checkRecallItems, isMemorySlot, packMemorySlot, withoutMinScore } from "./memory-slot.js";
import {
  filterRanked,
  type ItemDecision,
  noDecisions,
  type PackedSlot,
  packRanked,
  type RankedItem,
  rankFill,
  type SlotDecisions,
  type SlotRendering,
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
  /** Set for a cascade slot (items with `cascadeLevel`): how to render a smaller selection. */
  cascade?: RenderItems;
  /**
   * True when a layer memo keeps this layer (its decision lists frozen and shared by the
   * assemblies that reuse it), so what is made from it may be kept too; false as packed.
   */
  kept: boolean;
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

/**
 * The pack step for one slot: its layer from what its sources returned, a pure function of
 * the slot, the fill and `ctx` (a layer memo, `memo/`, keeps its results from outside).
 * Throws when a required slot has no source, or its source failed or timed out.
 */
export function toLayer(slot: ResolvedSlot, filled: SlotFill, ctx: LayerContext): FilledLayer {
  if (filled.status !== "ok") return unfilledLayer(slot, filled);
  return packLayer(slot, filled, ctx);
}

// The layer of a filled slot: ranked, filtered and packed.
function packLayer(slot: ResolvedSlot, filled: OkFill, ctx: LayerContext): FilledLayer {
  const ranked = rankFill(filled.items, filled.parts);
  const fill = checkRecallItems(slot, filled, ranked);
  if (fill.status !== "ok") return unfilledLayer(slot, fill);
  const rendering = new LayerRendering(ctx.renderer, slot, ctx.scope);
  const filter = slot.filter ?? {};
  const decisions = noDecisions(ranked.length);
  if (isMemorySlot(slot, fill.items)) {
    const kept = filterRanked(ranked, withoutMinScore(filter), ctx.nowMs, decisions);
    const { packed, plan } = packMemorySlot(
      slot,
      kept,
      filter,
      ctx.scope,
      rendering,
      ctx.counter,
      decisions,
      ctx.renderer.renderItem === undefined ? undefined : rendering,
    );
    return {
      slot,
      fill,
      packed,
      decisions: everyDecision(decisions),
      memoryPlan: plan,
      kept: false,
    };
  }
  const kept = filterRanked(ranked, filter, ctx.nowMs, decisions);
  // Items with cascade levels (KB tiers) are packed by the cascade, not greedily.
  if (isCascadeSlot(fill.items)) {
    return cascadeLayer(slot, fill, kept, decisions, rendering, ctx);
  }
  const packed = packRanked(kept, filter, rendering, ctx.counter, slot.kind, decisions);
  return { slot, fill, packed, decisions: everyDecision(decisions), memoryPlan: null, kept: false };
}

/** The fields of a slot a renderer reads. */
type SlotView = { kind: string; title?: string; itemStyle?: "list" | "block" };

/**
 * The slot as renderers see it: its kind, title and item style, in one of four literal
 * shapes. A resolved slot is a spread made per assembly, whose hidden class dies with it;
 * the renderers' optimized code, which checks the class of the slot it is given, would be
 * discarded at every full GC (see "Object shapes" in docs/performance.md). A literal's
 * class lives as long as the code that creates it.
 */
function slotView(slot: ResolvedSlot): SlotView {
  const { kind, title, itemStyle } = slot;
  if (title === undefined) return itemStyle === undefined ? { kind } : { kind, itemStyle };
  return itemStyle === undefined ? { kind, title } : { kind, title, itemStyle };
}

/**
 * How a layer's slot renders. A class, not a literal of closures over the slot: the
 * packer's hot code then calls long-lived methods, and optimized code does not die with
 * each assembly's closures (V8 discards code tied to dead objects after a full GC).
 */
class LayerRendering implements SlotRendering {
  /** An instance kept for the life of the class: see "Object shapes" in docs/performance.md. */
  // biome-ignore lint/correctness/noUnusedPrivateClassMembers: held only to keep the shape alive
  static readonly #shape = new LayerRendering(
    { name: "", renderSlot: () => "" },
    { kind: "" } as ResolvedSlot,
    "",
  );
  readonly frame: SlotFrame | undefined;
  readonly #ctx: RenderContext;
  /** What renderers are shown of the slot (see {@link slotView}). */
  private readonly slot: SlotView;

  constructor(
    private readonly renderer: SlotRenderer,
    slot: ResolvedSlot,
    scope: string,
  ) {
    this.#ctx = { userScope: scope };
    this.slot = slotView(slot);
    this.frame = renderer.frame?.(this.slot, this.#ctx);
  }

  render(items: readonly SourcedItem[]): string {
    return this.renderer.renderSlot(
      this.slot,
      items.map((s) => s.item),
      this.#ctx,
    );
  }

  /** One item's line (only for a renderer with `renderItem`). */
  line(s: SourcedItem): string {
    return (this.renderer.renderItem as NonNullable<SlotRenderer["renderItem"]>)(
      this.slot,
      s.item,
      this.#ctx,
    );
  }

  /** Code points of {@link line}: by the renderer's `itemChars` when it has one. */
  chars(s: SourcedItem): number {
    const itemChars = this.renderer.itemChars;
    return itemChars === undefined
      ? cpLength(this.line(s))
      : itemChars.call(this.renderer, this.slot, s.item, this.#ctx);
  }
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

// A cascade slot (KB tiers): its kept entries packed by the cascade, each given its decision.
function cascadeLayer(
  slot: ResolvedSlot,
  fill: OkFill,
  kept: readonly RankedItem[],
  decisions: SlotDecisions,
  rendering: SlotRendering,
  ctx: LayerContext,
): FilledLayer {
  const packed = packCascade(
    kept.map((r) => r.s),
    slot.filter ?? {},
    (items) => rendering.render(items),
    ctx.counter,
    slot.kind,
  );
  const byKey = new Map(packed.decisions.map((d) => [`${d.sourceId}\u0000${d.id}`, d]));
  for (const r of kept) {
    decisions[r.pos] = byKey.get(`${r.s.sourceId}\u0000${r.s.item.id}`) ?? null;
  }
  return {
    slot,
    fill,
    packed,
    decisions: everyDecision(decisions),
    memoryPlan: null,
    cascade: (items) => rendering.render(items),
    kept: false,
  };
}

/**
 * The slot's item decisions in rank order, whatever stage made them. Every entry gets one
 * (filter, gates, packer or cascade); a gap would be a bug, so it throws rather than
 * listing fewer decisions than items.
 */
function everyDecision(decisions: SlotDecisions): ItemDecision[] {
  for (let i = 0; i < decisions.length; i++) {
    if (decisions[i] === null) throw new Error(`internal: ranked entry ${i} has no decision`);
  }
  return decisions as ItemDecision[];
}
