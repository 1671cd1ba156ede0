/** The renderer contract of docs/assembler.md: one slot's items → the text that enters the prompt. */
import type { SourceItem } from "../sources/index.js";

/** What a renderer may need besides the slot and its items. */
export interface RenderContext {
  /** The trusted caller's user scope (the recall block of docs/memory-selection.md names it). */
  userScope: string;
}

/** A slot's rendering of n ≥ 1 items in pieces: `head(n) + lines.join(separator) + tail`. */
export interface SlotFrame {
  /** Everything before the first item line (it may name the item count). */
  head(count: number): string;
  /** One item's line (`index` is the item's position, for error paths). */
  line(item: SourceItem, index: number): string;
  /** Optional: code points of `line(item, index)`, without building the line. */
  lineChars?(item: SourceItem, index: number): number;
  readonly separator: string;
  readonly tail: string;
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
   * Optional: the same rendering in pieces ({@link SlotFrame}), exactly `renderSlot` for
   * any n ≥ 1 items, so a packer prices one more item without rendering the slot again.
   */
  frame?(
    slot: { kind: string; title?: string; itemStyle?: "list" | "block" },
    ctx: RenderContext,
  ): SlotFrame;
  /**
   * Optional: what one item contributes to the slot's rendering (its line or lines, the
   * list prefix included), so decision logs can price each item as the prompt holds it.
   */
  renderItem?(
    slot: { kind: string; title?: string; itemStyle?: "list" | "block" },
    item: SourceItem,
    ctx: RenderContext,
  ): string;
  /**
   * Optional, with `renderItem`: code points of `renderItem(slot, item, ctx)` without
   * building it, so a packer can price thousands of items it will not show.
   */
  itemChars?(
    slot: { kind: string; title?: string; itemStyle?: "list" | "block" },
    item: SourceItem,
    ctx: RenderContext,
  ): number;
}

/** `items` rendered through `frame` (`""` for none): what a framed `renderSlot` returns. */
export function renderFramed(frame: SlotFrame, items: readonly SourceItem[]): string {
  if (items.length === 0) return "";
  let body = frame.line(items[0] as SourceItem, 0);
  for (let i = 1; i < items.length; i++)
    body += frame.separator + frame.line(items[i] as SourceItem, i);
  return frame.head(items.length) + body + frame.tail;
}
