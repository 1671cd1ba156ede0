/** The renderer contract of spec 04: one slot's items → the text that enters the prompt. */
import type { SourceItem } from "../sources/index.js";

/** What a renderer may need besides the slot and its items. */
export interface RenderContext {
  /** The trusted caller's user scope (the recall block of spec 02 names it). */
  userScope: string;
}

/**
 * Renders one filled slot. Zero items render `""` (empty or skipped slots render
 * nothing). Items are atomic: each is rendered whole, as given, never trimmed or cut.
 */
export interface SlotRenderer {
  readonly name: string;
  renderSlot(
    slot: { kind: string; title?: string; itemStyle?: "list" | "block" },
    items: readonly SourceItem[],
    ctx: RenderContext,
  ): string;
  /**
   * Optional: what one item contributes to the slot's rendering (its line or lines, the
   * list prefix included), so decision logs can price each item as the prompt holds it.
   */
  renderItem?(
    slot: { kind: string; title?: string; itemStyle?: "list" | "block" },
    item: SourceItem,
    ctx: RenderContext,
  ): string;
}
