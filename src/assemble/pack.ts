/**
 * Per-slot layer of the two-layer budget (docs/assembler.md): the slot filter applied to what the
 * sources returned, then atomic packing in rank order, with one decision and reason code
 * per item — exactly as memory candidates get one.
 *
 * Work is done in order of cheapness: every item's rank keys are read once, the filter
 * decides from fields alone, and only the items the packer reaches are rendered — each
 * priced by its own line when the renderer gives its rendering in pieces — and counted
 * only when the slot has a token budget. Items past `topK` are decided unrendered.
 */
import { PromptBudgetError } from "../errors/index.js";
import type { SlotFrame } from "../render/index.js";
import type { SlotFilter, SourceItem } from "../sources/index.js";
import { compareCodePoints, cpLength, formatScore, instantMillis } from "../text/index.js";
import type { TokenCounter } from "../tokens/index.js";
import type {
  BudgetOverrun,
  ItemDecision,
  ItemReason,
  PackedSlot,
  SlotRendering,
  SourcedItem,
} from "./items.js";
import { SlotPricer } from "./slot-pricer.js";

// The packer's types, importable from here as before they moved to items.ts.
export type * from "./items.js";

/**
 * An item with its rank keys read once and its place in the slot's rank order. Entries are
 * never changed once ranked (only the instant, read on first use, is filled in), so one
 * ranking serves every assembly over the same items array; an assembly's decisions are
 * kept apart, by position ({@link SlotDecisions}).
 */
export interface RankedItem {
  readonly s: SourcedItem;
  /**
   * The item's id, score (null when unscored) and category, read once with the rank keys:
   * items come in many shapes, and the loops that decide every item of every assembly
   * then read one shape only.
   */
  readonly id: string;
  readonly itemScore: number | null;
  readonly category: string | undefined;
  readonly pinned: boolean;
  /** The score, -1 when unscored. */
  readonly score: number;
  /** The source's rank, +∞ when unranked. */
  readonly rank: number;
  /**
   * `createdAt` in milliseconds, null when undated; undefined until first read through
   * {@link timeOf} — most orders are settled by score or rank, and most filters ask no age.
   */
  time: number | null | undefined;
  /** Position in the slot's rank order: the index of the entry's decision. */
  readonly pos: number;
}

/** One slot's item decisions by rank position, each null until a stage makes it. */
export type SlotDecisions = (ItemDecision | null)[];

/** A slot's decisions, none made yet, for `n` ranked entries. */
export function noDecisions(n: number): SlotDecisions {
  return new Array<ItemDecision | null>(n).fill(null);
}

/**
 * Generic item rank: pinned first, then score desc (unscored last), the source's own
 * `rank` (unranked last), newest first (undated last), then id and source id by code
 * point — never input order.
 */
export function compareItems(a: SourcedItem, b: SourcedItem): number {
  return compareRanked(rankKeys(a, 0), rankKeys(b, 0));
}

function rankKeys(s: SourcedItem, pos: number): RankedItem {
  const item = s.item;
  const score = item.score;
  return {
    s,
    id: item.id,
    itemScore: score ?? null,
    category: item.category,
    pinned: item.pinned === true,
    score: score ?? -1,
    rank: item.rank ?? Number.POSITIVE_INFINITY,
    time: undefined,
    pos,
  };
}

/** `items` as entries in their own order (positions 0, 1, …). */
function entriesInOrder(items: readonly SourcedItem[]): RankedItem[] {
  const out: RankedItem[] = new Array(items.length);
  for (let i = 0; i < items.length; i++) out[i] = rankKeys(items[i] as SourcedItem, i);
  return out;
}

/** `r`'s `createdAt` in milliseconds (null when undated), read once. */
function timeOf(r: RankedItem): number | null {
  let t = r.time;
  if (t === undefined) {
    t = itemTime(r.s.item);
    r.time = t;
  }
  return t;
}

/**
 * Instants of frozen items, parsed once: an unchanged item a source hands out again (a
 * task buffer's observations) is not parsed again on the next turn. A frozen item's
 * `createdAt` cannot change, and the weak map holds no item alive.
 */
const frozenTimes = new WeakMap<SourceItem, number | null>();

function itemTime(item: SourceItem): number | null {
  const createdAt = item.createdAt;
  if (createdAt === undefined) return null;
  if (!Object.isFrozen(item)) return instantMillis(createdAt);
  let t = frozenTimes.get(item);
  if (t === undefined) {
    t = instantMillis(createdAt);
    frozenTimes.set(item, t);
  }
  return t;
}

function compareRanked(a: RankedItem, b: RankedItem): number {
  if (a.pinned !== b.pinned) return a.pinned ? -1 : 1;
  if (a.score !== b.score) return b.score - a.score;
  if (a.rank !== b.rank) return a.rank < b.rank ? -1 : 1;
  const ta = timeOf(a);
  const tb = timeOf(b);
  if (ta !== tb) {
    if (ta === null) return 1;
    if (tb === null) return -1;
    return tb - ta;
  }
  return (
    compareCodePoints(a.s.item.id, b.s.item.id) || compareCodePoints(a.s.sourceId, b.s.sourceId)
  );
}

/** `items` in rank order ({@link compareItems}), each with its keys read once. */
export function rankItems(items: readonly SourcedItem[]): RankedItem[] {
  const entries = entriesInOrder(items).sort(compareRanked);
  // Positions follow the sort: each entry is still the ranking's own, so it is set here once.
  for (let i = 0; i < entries.length; i++) (entries[i] as { pos: number }).pos = i;
  return entries;
}

/**
 * A fill's items in rank order, as {@link rankItems} gives them. A slot filled by one
 * part alone keeps the ranking of that part's items array: it is never changed, and the
 * assembler hands the same array to later assemblies while its source's data is
 * unchanged (a kept part, `memo/kept-parts.ts`; a caller's items equal to last time,
 * `validate-items.ts`), so its items are not keyed and sorted again — and, the entries
 * being unchanging, the very same ranking is returned.
 */
export function rankFill(
  items: readonly SourcedItem[],
  parts: readonly { readonly items: readonly SourcedItem[] }[],
): readonly RankedItem[] {
  const only = parts.length === 1 ? parts[0] : undefined;
  if (only === undefined) return rankItems(items);
  let order = rankedParts.get(only.items);
  if (order === undefined) {
    order = rankItems(only.items);
    rankedParts.set(only.items, order);
  }
  return order;
}

/** Per part's items, ranked once. */
const rankedParts = new WeakMap<object, readonly RankedItem[]>();

/**
 * Detail sentences by key: thousands of items rejected for the same category, age or
 * size share one string instead of building one each. Callers write
 * `details.get(k) ?? details.set(k, sentence)`, so a sentence is built only for a new key
 * and no closure is made per item.
 */
class Details {
  /** An instance kept for the life of the class: see "Object shapes" in docs/performance.md. */
  // biome-ignore lint/correctness/noUnusedPrivateClassMembers: held only to keep the shape alive
  static readonly #shape = new Details();
  private readonly byKey = new Map<string | number | null, string>();
  get(key: string | number | null): string | undefined {
    return this.byKey.get(key);
  }
  set(key: string | number | null, detail: string): string {
    this.byKey.set(key, detail);
    return detail;
  }
}

/** The filter's shared detail sentences, one memo per reason. */
interface FilterDetails {
  category: Details;
  score: Details;
  age: Details;
}

/**
 * The declarative part of a filter (categories, tags, minScore, age) on one item: its
 * rejection, or null when the filter keeps it.
 */
function filterDecision(
  r: RankedItem,
  filter: SlotFilter,
  nowMs: number,
  details: FilterDetails,
): ItemDecision | null {
  const categories = filter.categories;
  if (
    categories !== undefined &&
    categories.length > 0 &&
    (r.category === undefined || !categories.includes(r.category))
  ) {
    const category = r.category ?? null;
    const detail =
      details.category.get(category) ??
      details.category.set(
        category,
        `category ${JSON.stringify(category)} is not one of ${categories.join(", ")}`,
      );
    return decideRanked(r, "rejected", "category_filtered", detail);
  }
  const tags = filter.requireTags;
  if (tags !== undefined && tags.length > 0) {
    const own = r.s.item.tags ?? [];
    const missing = tags.filter((t) => !own.includes(t));
    if (missing.length > 0) {
      const detail = `missing required tags ${missing.join(", ")}`;
      return decideRanked(r, "rejected", "tag_filtered", detail);
    }
  }
  const { minScore, maxAgeHours } = filter;
  const score = r.itemScore;
  if (minScore !== undefined && score !== null && score < minScore) {
    const key = Object.is(score, -0) ? "-0" : score;
    const detail =
      details.score.get(key) ??
      details.score.set(
        key,
        `score ${formatScore(score)} is below minScore ${formatScore(minScore)}`,
      );
    return decideRanked(r, "rejected", "low_confidence", detail);
  }
  if (maxAgeHours !== undefined && maxAgeHours > 0) {
    const time = timeOf(r);
    const ageHours = time === null ? 0 : (nowMs - time) / 3_600_000;
    if (ageHours > maxAgeHours) {
      const hours = Math.floor(ageHours);
      const detail =
        details.age.get(hours) ??
        details.age.set(hours, `${hours}h old; maxAgeHours is ${maxAgeHours}`);
      return decideRanked(r, "rejected", "too_old", detail);
    }
  }
  return null;
}

/**
 * The entries the declarative filter keeps, in their order; each other entry gets its
 * rejection in `decisions`. Pinned items are never filtered.
 */
export function filterRanked(
  ranked: readonly RankedItem[],
  filter: SlotFilter,
  nowMs: number,
  decisions: SlotDecisions,
): RankedItem[] {
  const kept: RankedItem[] = [];
  const details: FilterDetails = {
    category: new Details(),
    score: new Details(),
    age: new Details(),
  };
  for (const r of ranked) {
    const rejected = r.pinned ? null : filterDecision(r, filter, nowMs, details);
    if (rejected === null) kept.push(r);
    else decisions[r.pos] = rejected;
  }
  return kept;
}

/** Splits items into those the declarative filter keeps and decisions for the rest. */
export function applyFilter(
  items: readonly SourcedItem[],
  filter: SlotFilter,
  nowMs: number,
): { kept: SourcedItem[]; decisions: ItemDecision[] } {
  const made = noDecisions(items.length);
  const kept = filterRanked(entriesInOrder(items), filter, nowMs, made).map((r) => r.s);
  const decisions = made.filter((d): d is ItemDecision => d !== null);
  return { kept, decisions };
}

/** An item decision, fields in the documented order. */
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

/** {@link decide} for a ranked entry, from the fields read when it was ranked. */
function decideRanked(
  r: RankedItem,
  status: ItemDecision["status"],
  reason: ItemReason,
  detail: string,
): ItemDecision {
  return { id: r.id, sourceId: r.s.sourceId, status, reason, score: r.itemScore, detail };
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
 * Packs ranked entries into a slot, giving each its decision (in `decisions`, at the
 * entry's position; the packed slot lists them too, pinned first): pinned items always
 * (failing closed with {@link PromptBudgetError} if they alone break the slot budget),
 * then each other item while `topK` and the char/token budgets of the slot's own
 * rendering hold. Items are atomic; one that does not fit is skipped and smaller ones may
 * still fit. Past `topK` nothing is rendered; under the budgets, an entry is priced by
 * its own line when `rendering.frame` is given, and counted only for a token budget.
 */
export function packRanked(
  entries: readonly RankedItem[],
  filter: SlotFilter,
  rendering: SlotRendering,
  counter: TokenCounter,
  slotName: string,
  decisions: SlotDecisions,
): PackedSlot {
  const pricer = new SlotPricer(rendering, filter, counter);
  const made: ItemDecision[] = [];
  // Plain loops, no closures per call: see "Object shapes" in docs/performance.md.
  const pinned: RankedItem[] = [];
  const others: RankedItem[] = [];
  for (const r of entries) (r.pinned ? pinned : others).push(r);
  if (pinned.length > 0) {
    const over = pricer.overWith(pinned.map(entryItem));
    if (over !== null) {
      throw new PromptBudgetError(
        `pinned items of slot ${slotName} need ${over.used} ${over.unit}; its ${over.field} is ${over.budget}`,
        [slotName],
        ["slots", slotName, over.field],
      );
    }
    for (const r of pinned) {
      pricer.add(r.s);
      record(decisions, made, r, decideRanked(r, "selected", "pinned", "pinned: never dropped"));
    }
  }
  const topK =
    filter.topK !== undefined && filter.topK > 0 ? filter.topK : Number.POSITIVE_INFINITY;
  const topKDetail = `topK ${filter.topK} already selected`;
  const overDetails = new Details();
  for (const r of others) {
    if (pricer.selected.length >= topK) {
      record(decisions, made, r, decideRanked(r, "rejected", "top_k_reached", topKDetail));
      continue;
    }
    const over = pricer.priceOne(r.s);
    if (over !== null) {
      const reason = over.unit === "chars" ? "char_budget_exceeded" : "token_budget_exceeded";
      const key = over.unit === "chars" ? over.used : -1 - over.used;
      const detail =
        overDetails.get(key) ??
        overDetails.set(key, `would use ${over.used} ${over.unit}; slot budget is ${over.budget}`);
      record(decisions, made, r, decideRanked(r, "rejected", reason, detail));
      continue;
    }
    pricer.add(r.s);
    const detail = `selected as item ${pricer.selected.length}`;
    record(decisions, made, r, decideRanked(r, "selected", "selected", detail));
  }
  return { ...pricer.finish(), decisions: made };
}

const entryItem = (r: RankedItem): SourcedItem => r.s;

// `d` as `r`'s decision, in the slot's decisions and in the packer's own list.
function record(decisions: SlotDecisions, made: ItemDecision[], r: RankedItem, d: ItemDecision) {
  decisions[r.pos] = d;
  made.push(d);
}

/**
 * Packs already-ranked items into a slot (see {@link packRanked}); `frame`, when given,
 * must render exactly as `render`.
 */
export function packItems(
  ranked: readonly SourcedItem[],
  filter: SlotFilter,
  render: (items: readonly SourcedItem[]) => string,
  counter: TokenCounter,
  slotName: string,
  frame?: SlotFrame,
): PackedSlot {
  const entries = entriesInOrder(ranked);
  const rendering = { render, frame };
  return packRanked(entries, filter, rendering, counter, slotName, noDecisions(entries.length));
}
