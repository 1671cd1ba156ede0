/**
 * The budget cascade of docs/sources.md (KB tiers) as a packing mode of the assembler. A slot whose
 * items all carry a `cascadeLevel` is packed by it instead of greedily: whole levels ≥ 1
 * are skipped from the least valuable (correction, then hybrid), then level 0 (golden)
 * loses its lowest-ranked items — first against the slot's own budget, then, when the
 * global plan drops the layer, against the room that plan leaves it. Every item ends with
 * one decision whose reason and detail say which step dropped it.
 */
import { PromptBudgetError } from "../errors/index.js";
import type { PlanDecision, PromptPlan } from "../plan/index.js";
import type { SlotFilter } from "../sources/index.js";
import { cpLength } from "../text/index.js";
import type { TokenCounter } from "../tokens/index.js";
import {
  decide,
  type ItemDecision,
  type ItemReason,
  overSlotBudget,
  type PackedSlot,
  type SourcedItem,
} from "./pack.js";

/** Renders a slot's items as the prompt holds them. */
export type RenderItems = (items: readonly SourcedItem[]) => string;

/** Why a selection does not fit: the reason code and a detail, or null when it fits. */
type Check = (items: readonly SourcedItem[]) => { reason: ItemReason; detail: string } | null;

/** One item the cascade dropped, and how: its whole level skipped, or cut from level 0. */
interface CascadeDrop {
  s: SourcedItem;
  how: "level" | "item";
  /** Why the selection it was dropped from did not fit. */
  why: { reason: ItemReason; detail: string };
}

/** The cascade's outcome: what stays, what went (in the order it went), and whether it fits. */
interface CascadeOutcome {
  kept: SourcedItem[];
  drops: CascadeDrop[];
  fits: boolean;
}

const levelOf = (s: SourcedItem): number => s.item.cascadeLevel ?? 0;
const isPinned = (s: SourcedItem): boolean => s.item.pinned === true;
const levelName = (s: SourcedItem): string => s.item.category ?? `level ${levelOf(s)}`;

/** Whether a slot's items are packed by the cascade: all of them carry a level. */
export function isCascadeSlot(items: readonly SourcedItem[]): boolean {
  return items.length > 0 && items.every((s) => s.item.cascadeLevel !== undefined);
}

/**
 * The cascade over `ordered` (rank order) under `check`: skip whole levels ≥ 1 from the
 * least valuable while it does not fit, then keep the longest prefix of level 0 that fits
 * (pinned items always stay). `fits` is false when even that leaves it over budget.
 */
function runCascade(ordered: readonly SourcedItem[], check: Check): CascadeOutcome {
  let kept = [...ordered];
  const drops: CascadeDrop[] = [];
  let why = check(kept);
  if (why === null) return { kept, drops, fits: true };
  const levels = [...new Set(kept.filter((s) => !isPinned(s)).map(levelOf))]
    .filter((l) => l > 0)
    .sort((a, b) => b - a);
  for (const level of levels) {
    const out = kept.filter((s) => !isPinned(s) && levelOf(s) === level);
    kept = kept.filter((s) => isPinned(s) || levelOf(s) !== level);
    for (const s of out) drops.push({ s, how: "level", why });
    why = check(kept);
    if (why === null) return { kept, drops, fits: true };
  }
  return cutLevelZero(kept, drops, check, why);
}

// Level 0 keeps its longest prefix that fits (binary search: a shorter prefix renders
// shorter); the rest goes, lowest-ranked first, each with why the prefix one longer than
// the kept one did not fit.
function cutLevelZero(
  kept: readonly SourcedItem[],
  drops: CascadeDrop[],
  check: Check,
  overFull: { reason: ItemReason; detail: string },
): CascadeOutcome {
  const cuttable = kept.filter((s) => !isPinned(s));
  const rank = new Map(cuttable.map((s, i) => [s, i]));
  const prefix = (k: number) => kept.filter((s) => isPinned(s) || (rank.get(s) as number) < k);
  const seen = new Map<number, ReturnType<Check>>([[cuttable.length, overFull]]);
  const checkAt = (k: number): ReturnType<Check> => {
    if (!seen.has(k)) seen.set(k, check(prefix(k)));
    return seen.get(k) ?? null;
  };
  let best = -1;
  let lo = 0;
  let hi = cuttable.length - 1;
  while (lo <= hi) {
    const mid = (lo + hi) >> 1;
    if (checkAt(mid) === null) {
      best = mid;
      lo = mid + 1;
    } else hi = mid - 1;
  }
  const k = Math.max(best, 0);
  const why = checkAt(best + 1) ?? overFull;
  for (let i = cuttable.length - 1; i >= k; i--) {
    drops.push({ s: cuttable[i] as SourcedItem, how: "item", why });
  }
  return { kept: prefix(k), drops, fits: best >= 0 };
}

// The decision of one dropped item: `where` says which budget ("slot", "global").
function dropDecision(d: CascadeDrop, where: string): ItemDecision {
  const name = levelName(d.s);
  if (d.how === "level") {
    return decide(
      d.s,
      "rejected",
      "level_skipped",
      `cascade: level ${name} skipped under the ${where} budget (${d.why.detail})`,
    );
  }
  return decide(
    d.s,
    "rejected",
    d.why.reason,
    `cascade: ${name} dropped lowest-ranked first under the ${where} budget (${d.why.detail})`,
  );
}

// topK in rank order (pinned items never count against it nor drop).
function applyTopK(
  ranked: readonly SourcedItem[],
  filter: SlotFilter,
): { within: SourcedItem[]; decisions: ItemDecision[] } {
  const topK = filter.topK !== undefined && filter.topK > 0 ? filter.topK : Infinity;
  const within: SourcedItem[] = [];
  const decisions: ItemDecision[] = [];
  let count = 0;
  for (const s of ranked) {
    if (isPinned(s) || count < topK) {
      within.push(s);
      if (!isPinned(s)) count++;
    } else {
      decisions.push(
        decide(s, "rejected", "top_k_reached", `topK ${filter.topK} already selected`),
      );
    }
  }
  return { within, decisions };
}

/**
 * Packs a cascade slot under its own budget: topK in rank order, then the cascade. Pinned
 * items alone over the slot budget fail closed ({@link PromptBudgetError}).
 */
export function packCascade(
  ranked: readonly SourcedItem[],
  filter: SlotFilter,
  render: RenderItems,
  counter: TokenCounter,
  slotName: string,
): PackedSlot {
  const { within, decisions } = applyTopK(ranked, filter);
  const check: Check = (items) => {
    const over = overSlotBudget(render(items), filter, counter);
    if (over === null) return null;
    return {
      reason: over.unit === "chars" ? "char_budget_exceeded" : "token_budget_exceeded",
      detail: `would use ${over.used} ${over.unit}; slot budget is ${over.budget}`,
    };
  };
  const outcome = runCascade(within, check);
  if (!outcome.fits) {
    const over = overSlotBudget(render(outcome.kept), filter, counter);
    throw new PromptBudgetError(
      `pinned items of slot ${slotName} need ${over?.used} ${over?.unit}; its ${over?.field} is ${over?.budget}`,
      [slotName],
      ["slots", slotName, over?.field ?? "charBudget"],
    );
  }
  const dropped = new Set(outcome.drops.map((d) => d.s));
  let n = 0;
  for (const s of within) {
    if (dropped.has(s)) continue;
    n++;
    decisions.push(
      isPinned(s)
        ? decide(s, "selected", "pinned", "pinned: never dropped")
        : decide(s, "selected", "selected", `selected as item ${n}`),
    );
  }
  for (const d of outcome.drops) decisions.push(dropDecision(d, "slot"));
  return packedOf(outcome.kept, render, counter, decisions);
}

function packedOf(
  items: readonly SourcedItem[],
  render: RenderItems,
  counter: TokenCounter,
  decisions: ItemDecision[],
): PackedSlot {
  const rendered = render(items);
  return {
    selected: [...items],
    rendered,
    chars: cpLength(rendered),
    tokens: counter.count(rendered),
    decisions,
  };
}

/** A cascade layer as the global step sees it. */
export interface CascadeLayer {
  kind: string;
  packed: PackedSlot;
  decisions: ItemDecision[];
  render: RenderItems;
}

/** The global step's result for one layer: its new packing and decisions, and the new plan. */
export interface GlobalCascade {
  packed: PackedSlot;
  decisions: ItemDecision[];
  plan: PromptPlan;
}

const decisionOf = (plan: PromptPlan, name: string): PlanDecision | undefined =>
  plan.decisions.find((d) => d.name === name);

/**
 * When the global plan dropped a cascade layer, runs the cascade again on what the slot
 * kept, each smaller selection planned globally, and keeps the largest one the plan
 * admits: the cascade runs against the room the global plan leaves the layer. Returns
 * null when the layer was not dropped; when not even one item fits, the layer stays
 * dropped and every item it held is rejected with the plan's reason.
 */
export function cascadeGlobally(
  layer: CascadeLayer,
  plan: PromptPlan,
  replan: (packed: PackedSlot) => PromptPlan,
  counter: TokenCounter,
): GlobalCascade | null {
  const first = decisionOf(plan, layer.kind);
  if (first === undefined || first.status !== "dropped") return null;
  const layerDetail = (d: PlanDecision) => `with the layer the prompt ${d.detail}`;
  const check: Check = (items) => {
    if (items.length === 0)
      return { reason: first.reason as ItemReason, detail: layerDetail(first) };
    const d = decisionOf(replan(packedOf(items, layer.render, counter, [])), layer.kind);
    if (d === undefined || d.status === "included") return null;
    return { reason: d.reason as ItemReason, detail: layerDetail(d) };
  };
  const outcome = runCascade(layer.packed.selected, check);
  const byItem = new Map<SourcedItem, ItemDecision>();
  if (outcome.fits && outcome.kept.length > 0) {
    for (const d of outcome.drops) byItem.set(d.s, dropDecision(d, "global"));
  } else {
    for (const s of layer.packed.selected) {
      byItem.set(
        s,
        decide(
          s,
          "rejected",
          first.reason as ItemReason,
          `cascade: not even one item fits the room the global budget leaves the layer (${layerDetail(first)})`,
        ),
      );
    }
    return { packed: layer.packed, decisions: updated(layer, byItem), plan };
  }
  const packed = packedOf(outcome.kept, layer.render, counter, layer.packed.decisions);
  return { packed, decisions: updated(layer, byItem), plan: replan(packed) };
}

function updated(
  layer: CascadeLayer,
  byItem: ReadonlyMap<SourcedItem, ItemDecision>,
): ItemDecision[] {
  const key = (id: string, sourceId: string) => `${sourceId}\u0000${id}`;
  const byKey = new Map([...byItem].map(([s, d]) => [key(s.item.id, s.sourceId), d]));
  return layer.decisions.map((d) => byKey.get(key(d.id, d.sourceId)) ?? d);
}
