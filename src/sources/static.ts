/** The generic static source of docs/assembler.md, docs/sources.md ("Others"): fixed items or a function of the slot. */
import { checkSourceId } from "./single-kind.js";
import {
  type ContextSource,
  type SlotSpec,
  type SourceItem,
  SourceItemSchema,
  type SourceQuery,
} from "./types.js";
import { declareUpfrontVersion, markValidated } from "./validated.js";

/**
 * A generic source serving `kinds` with fixed items (copied per fetch) or with a
 * function of the slot and query (called per fetch). Unsupported kinds get no items.
 *
 * @example staticSource("kb", ["kb"], [{ id: "k1", text: "Deploys run on Fridays" }])
 */
export function staticSource(
  id: string,
  kinds: readonly string[],
  items: readonly SourceItem[] | ((slot: SlotSpec, query: SourceQuery) => readonly SourceItem[]),
): ContextSource {
  const sid = checkSourceId(id);
  const served = new Set(kinds);
  const fixed = typeof items === "function" ? null : fixedItems(items);
  // Fixed items never change: one version token for the source's life.
  const version = {};
  const source: ContextSource = {
    id: sid,
    supports: (k) => served.has(k),
    fetch: (slot, query) => {
      if (!served.has(slot.kind)) return [];
      if (fixed !== null) {
        const copies = fixed.items.map(copyItem);
        return fixed.valid ? markValidated(copies, version, fixed.uniqueIds) : copies;
      }
      return (items as (slot: SlotSpec, query: SourceQuery) => readonly SourceItem[])(slot, query);
    },
  };
  if (fixed === null || !fixed.valid) return source;
  return declareUpfrontVersion(source, (kind) => (served.has(kind) ? version : null));
}

/**
 * Fixed items taken when the source is built: validated then, and kept as validated
 * (unknown fields dropped, as the assembler's check would) when all are valid; kept as
 * given otherwise, so the slot fails at fetch time naming the bad item. Whether their ids
 * are unique is noted (two items with one id still fail the slot that gets them).
 */
function fixedItems(items: readonly SourceItem[]): {
  items: SourceItem[];
  valid: boolean;
  uniqueIds: boolean;
} {
  const parsed: SourceItem[] = [];
  const ids = new Set<string>();
  for (const item of items) {
    const r = SourceItemSchema.safeParse(item);
    if (!r.success) return { items: items.map(copyItem), valid: false, uniqueIds: false };
    parsed.push(r.data);
    ids.add(r.data.id);
  }
  return { items: parsed, valid: true, uniqueIds: ids.size === parsed.length };
}

// A copy sharing nothing mutable with `i` (tags and memory fields included).
function copyItem(i: SourceItem): SourceItem {
  const c: SourceItem = { ...i };
  if (i.tags !== undefined) c.tags = [...i.tags];
  if (i.memory !== undefined) c.memory = { ...i.memory, provenance: { ...i.memory.provenance } };
  return c;
}
