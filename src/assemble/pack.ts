/**
 * Per-slot layer of the two-layer budget (spec 04): the slot filter applied to what the
 * sources returned, then atomic packing in rank order, with one decision and reason code
 * per item — exactly as memory candidates get one.
 */
import { PromptBudgetError } from "../errors/index.js";
import type { SlotFilter, SourceItem } from "../sources/index.js";
import { compareCodePoints, cpLength, formatScore, instantMillis } from "../text/index.js";
import type { TokenCounter } from "../tokens/index.js";

/** Reason codes of item decisions (memory items also carry the spec 02 gate reasons). */
export type ItemReason =
  | "pinned"
  | "scope_mismatch"
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

/** One item decision. */
export function decide(
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

/** A slot budget broken by a rendering. */
export interface BudgetOverrun {
  unit: "chars" | "tokens";
  field: "charBudget" | "tokenBudget";
  used: number;
  budget: number;
}

/** The first slot budget `text` breaks (chars checked before tokens), or null. */
export function overSlotBudget(
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
