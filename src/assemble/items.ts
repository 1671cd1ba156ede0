/**
 * The values every packing step shares: an item with the source that returned it, the
 * decision each item gets, a packed slot, how a slot renders, and the budget a rendering
 * breaks. Types only, so the packer, its pricer, the cascade and the memory slot all
 * read them from here and none imports another for a type.
 */
import type { SlotFrame } from "../render/index.js";
import type { SourceItem } from "../sources/index.js";

/** Reason codes of item decisions (memory items also carry the docs/memory-selection.md gate reasons). */
export type ItemReason =
  | "pinned"
  | "scope_mismatch"
  | "quarantined"
  | "duplicate_content"
  | "authority_loser"
  | "conflict_loser"
  | "selected"
  | "category_filtered"
  | "tag_filtered"
  | "low_confidence"
  | "too_old"
  | "top_k_reached"
  | "level_skipped"
  | "char_budget_exceeded"
  | "token_budget_exceeded";

/** One decision per item a slot's sources returned. */
export interface ItemDecision {
  id: string;
  sourceId: string;
  status: "selected" | "rejected";
  reason: ItemReason;
  score: number | null;
  detail: string;
}

/** An item with the source that returned it. */
export interface SourcedItem {
  item: SourceItem;
  sourceId: string;
}

/** The outcome of packing one slot. */
export interface PackedSlot {
  selected: SourcedItem[];
  rendered: string;
  chars: number;
  tokens: number;
  decisions: ItemDecision[];
}

/** How a slot renders: the whole slot, and optionally its pieces (see {@link SlotFrame}). */
export interface SlotRendering {
  render(items: readonly SourcedItem[]): string;
  readonly frame?: SlotFrame | undefined;
}

/** The first slot budget a rendering breaks. */
export interface BudgetOverrun {
  unit: "chars" | "tokens";
  field: "charBudget" | "tokenBudget";
  used: number;
  budget: number;
}
