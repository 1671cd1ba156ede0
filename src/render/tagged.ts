/**
 * The tagged (XML-style) renderer of spec 04. Every attribute value and every text is
 * escaped per spec 01, so item text can never open or close a tag. The `recall_memory`
 * slot renders exactly as the `<recalled_memory>` block of spec 02.
 */
import { InvalidInputError } from "../errors/index.js";
import { type RenderableHit, renderMemoryBlock, renderMemoryHit } from "../memory/index.js";
import type { SourceItem } from "../sources/index.js";
import { escapeText } from "../text/index.js";
import type { RenderContext, SlotRenderer } from "./types.js";

/** Kinds usable as a tag name as they are; others render as `<slot kind="…">`. */
const SAFE_TAG = /^[a-z_][a-z0-9_-]*$/;

function itemLine(item: SourceItem): string {
  const category = item.category === undefined ? "" : ` category="${escapeText(item.category)}"`;
  return `<item id="${escapeText(item.id)}"${category}>${escapeText(item.text)}</item>`;
}

function toHit(item: SourceItem, index: number): RenderableHit {
  const m = item.memory;
  if (m === undefined || m === null) {
    throw new InvalidInputError(
      `recall item "${item.id}" has no memory fields (the tagged recall block needs them)`,
      ["items", index, "memory"],
    );
  }
  if (item.score === undefined || item.score === null) {
    throw new InvalidInputError(
      `recall item "${item.id}" has no score (the tagged recall block needs it)`,
      ["items", index, "score"],
    );
  }
  return {
    memoryId: item.id,
    text: item.text,
    userScope: m.userScope,
    score: item.score,
    sourceRank: m.sourceRank,
    authority: m.authority,
    provenance: m.provenance,
    conflictKey: m.conflictKey,
  };
}

function renderRecall(items: readonly SourceItem[], ctx: RenderContext): string {
  return renderMemoryBlock(
    ctx.userScope,
    items.map((item, i) => renderMemoryHit(toHit(item, i))),
  );
}

/**
 * `<KIND>\n<item id="ID"[ category="C"]>TEXT</item>\n…\n</KIND>`; `recall_memory` is the
 * spec 02 block (items must carry `memory` fields and a `score`, else `InvalidInputError`
 * naming the item). Slot titles are not shown.
 *
 * @example
 * taggedRenderer.renderSlot({ kind: "constraints" }, [{ id: "r1", text: "no <rm>" }], { userScope: "u1" });
 * // '<constraints>\n<item id="r1">no &lt;rm&gt;</item>\n</constraints>'
 */
export const taggedRenderer: SlotRenderer = Object.freeze({
  name: "tagged",
  renderSlot(
    slot: { kind: string; title?: string },
    items: readonly SourceItem[],
    ctx: RenderContext,
  ) {
    if (items.length === 0) return "";
    if (slot.kind === "recall_memory") return renderRecall(items, ctx);
    const safe = SAFE_TAG.test(slot.kind);
    const open = safe ? `<${slot.kind}>` : `<slot kind="${escapeText(slot.kind)}">`;
    const close = safe ? `</${slot.kind}>` : "</slot>";
    return [open, ...items.map(itemLine), close].join("\n");
  },
  renderItem(slot: { kind: string }, item: SourceItem) {
    return slot.kind === "recall_memory" ? renderMemoryHit(toHit(item, 0)) : itemLine(item);
  },
});
