/**
 * The tagged (XML-style) renderer of docs/assembler.md. Every attribute value and every text is
 * escaped per docs/text-and-tokens.md, so item text can never open or close a tag. The `recall_memory`
 * slot renders exactly as the `<recalled_memory>` block of docs/memory-selection.md.
 */
import { InvalidInputError } from "../errors/index.js";
import {
  BLOCK_CLOSE,
  type RenderableHit,
  renderBlockOpen,
  renderMemoryHit,
} from "../memory/index.js";
import type { SourceItem } from "../sources/index.js";
import { escapeText } from "../text/index.js";
import { type RenderContext, renderFramed, type SlotFrame, type SlotRenderer } from "./types.js";

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

// Frames are class instances, for the reason given in heading.ts.

/** The docs/memory-selection.md block: its open tag names the hit count. */
class RecallFrame implements SlotFrame {
  /** An instance kept for the life of the class: see "Object shapes" in docs/performance.md. */
  // biome-ignore lint/correctness/noUnusedPrivateClassMembers: held only to keep the shape alive
  static readonly #shape = new RecallFrame("");
  readonly separator = "\n";
  readonly tail = `\n${BLOCK_CLOSE}`;
  constructor(private readonly scope: string) {}
  head(count: number): string {
    return `${renderBlockOpen(this.scope, count)}\n`;
  }
  line(item: SourceItem, index: number): string {
    return renderMemoryHit(toHit(item, index));
  }
}

/** `<kind>`, one `<item>` line per item, `</kind>`. */
class TagFrame implements SlotFrame {
  /** An instance kept for the life of the class: see "Object shapes" in docs/performance.md. */
  // biome-ignore lint/correctness/noUnusedPrivateClassMembers: held only to keep the shape alive
  static readonly #shape = new TagFrame("x");
  readonly separator = "\n";
  readonly tail: string;
  private readonly open: string;
  constructor(kind: string) {
    const safe = SAFE_TAG.test(kind);
    this.open = safe ? `<${kind}>` : `<slot kind="${escapeText(kind)}">`;
    this.tail = `\n${safe ? `</${kind}>` : "</slot>"}`;
  }
  head(): string {
    return `${this.open}\n`;
  }
  line(item: SourceItem): string {
    return itemLine(item);
  }
}

function frame(slot: { kind: string }, ctx: RenderContext): SlotFrame {
  return slot.kind === "recall_memory" ? new RecallFrame(ctx.userScope) : new TagFrame(slot.kind);
}

/**
 * `<KIND>\n<item id="ID"[ category="C"]>TEXT</item>\n…\n</KIND>`; `recall_memory` is the
 * docs/memory-selection.md block (items must carry `memory` fields and a `score`, else `InvalidInputError`
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
    return items.length === 0 ? "" : renderFramed(frame(slot, ctx), items);
  },
  frame,
  renderItem(slot: { kind: string }, item: SourceItem) {
    return slot.kind === "recall_memory" ? renderMemoryHit(toHit(item, 0)) : itemLine(item);
  },
});
