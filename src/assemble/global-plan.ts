/**
 * The plan step, the global layer of the two-layer budget (docs/assembler.md): the filled
 * slots and the plain segments become planner segments, planned together under the global
 * budget by docs/planner.md; what the plan decides is then carried back into the layers (a
 * dropped cascade layer cascaded again, a dropped memory slot's memory plan settled).
 */
import type { MemoryDecision, MemoryPlan } from "../memory/index.js";
import {
  type CacheTier,
  DEFAULT_CACHE_TIER,
  type PlanPromptRequest,
  type PromptPlan,
  planPrompt,
  type SegmentInput,
} from "../plan/index.js";
import type { TokenCounter } from "../tokens/index.js";
import { cascadeGlobally } from "./cascade.js";
import type { PackedSlot } from "./items.js";
import type { FilledLayer } from "./layers.js";
import { DEFAULT_GLOBAL_BUDGET_CHARS, type ModeSchema } from "./schema.js";

/**
 * A plain segment planned together with the slots (base rules, identity, skills, …):
 * content is already built, so it costs no fetch.
 */
export interface AssembleSegment {
  name: string;
  content: string | null;
  priority?: number;
  budgetPriority?: number;
  required?: boolean;
  cacheTier?: CacheTier;
  provenance?: string;
  neverTruncate?: boolean;
  /** File paths + hashes, skill ids + versions, … for the manifest. */
  sourceRefs?: string[];
}

/**
 * How the planned layers are laid out (docs/inline-assembly.md): `cache` (default) by cache tier, static →
 * session → dynamic, with boundary markers and the docs/planner.md separator; `priority` in slot
 * priority order, separated by one blank line, with no marker in the text.
 */
export type AssemblyLayout = "cache" | "priority";

/** Separator of the `priority` layout: one blank line. */
export const PRIORITY_SEPARATOR = "\n\n";

/** What the caller sets of the global plan; an unset budget falls back to the schema's. */
export interface GlobalBudget {
  budgetChars?: number | null;
  budgetTokens?: number | null;
  cacheBoundary?: string;
  layout?: AssemblyLayout;
}

// Slots first, in schema order, then the plain segments. The priority layout plans them
// untiered (their tiers stay in the manifest).
function segmentInputs(
  layers: readonly FilledLayer[],
  extra: readonly AssembleSegment[],
  tiered: boolean,
): SegmentInput[] {
  const segments: SegmentInput[] = layers.map((l) => ({
    name: l.slot.kind,
    content: l.packed && l.packed.rendered !== "" ? l.packed.rendered : null,
    priority: l.slot.priority,
    budgetPriority: 100 - l.slot.priority,
    required: l.slot.required,
    neverTruncate: l.slot.neverTruncate,
    ...(tiered ? { cacheTier: l.slot.cacheTier } : {}),
    provenance: l.fill.sourceIds.length > 0 ? l.fill.sourceIds.join(",") : "none",
  }));
  for (const seg of extra) {
    segments.push({
      name: seg.name,
      content: seg.content,
      priority: seg.priority ?? 50,
      budgetPriority: seg.budgetPriority ?? 50,
      required: seg.required ?? false,
      neverTruncate: seg.neverTruncate ?? false,
      ...(tiered ? { cacheTier: seg.cacheTier ?? DEFAULT_CACHE_TIER } : {}),
      provenance: seg.provenance ?? "runtime",
    });
  }
  return segments;
}

/** The global budgets: the caller's, else the schema's, else the default char budget. */
export function resolveGlobalBudget(
  given: GlobalBudget,
  schema: ModeSchema,
): { budgetChars: number | null; budgetTokens: number | null } {
  return {
    budgetChars:
      given.budgetChars !== undefined
        ? given.budgetChars
        : schema.budgetChars !== undefined
          ? schema.budgetChars
          : DEFAULT_GLOBAL_BUDGET_CHARS,
    budgetTokens:
      given.budgetTokens !== undefined ? given.budgetTokens : (schema.budgetTokens ?? null),
  };
}

/**
 * Plans one request of segments under `counter`. The pure one is {@link PURE_PLANNER}; a
 * layer memo (`memo/`) is one that hands back the plan it made for an equal request.
 */
export interface Planner {
  plan(request: PlanPromptRequest, counter: TokenCounter): PromptPlan;
}

/** The pure {@link Planner}: docs/planner.md's planner, once per call. */
export const PURE_PLANNER: Planner = {
  plan: (request, counter) => planPrompt(request, { tokenCounter: counter }),
};

/**
 * Plans the layers and the plain segments under the global budget `given` (falling back
 * to `schema`'s): required and `neverTruncate` segments are reserved, never dropped, and
 * when they cannot fit it fails closed.
 */
export function planGlobal(
  layers: readonly FilledLayer[],
  extra: readonly AssembleSegment[],
  given: GlobalBudget,
  schema: ModeSchema,
  counter: TokenCounter,
  planner: Planner = PURE_PLANNER,
): PromptPlan {
  const priority = given.layout === "priority";
  const request: PlanPromptRequest = {
    ...resolveGlobalBudget(given, schema),
    segments: segmentInputs(layers, extra, !priority),
    ...(priority ? { separator: PRIORITY_SEPARATOR } : {}),
    ...(!priority && given.cacheBoundary !== undefined
      ? { cacheBoundary: given.cacheBoundary }
      : {}),
  };
  return planner.plan(request, counter);
}

/**
 * When the global planner drops the memory slot, none of its memories reaches the
 * prompt: the memory plan's `selected` decisions become rejections with the slot's
 * reason, so `selectedMemoryIds` and `context` always match what was rendered.
 */
function settleMemoryPlan(
  slotKind: string,
  plan: MemoryPlan,
  segmentPlan: PromptPlan,
  counter: TokenCounter,
): MemoryPlan {
  const d = segmentPlan.decisions.find((x) => x.name === slotKind);
  if (d === undefined || d.status !== "dropped" || plan.selectedMemoryIds.length === 0) return plan;
  const decisions = plan.decisions.map((m) =>
    m.status !== "selected"
      ? m
      : ({
          ...m,
          status: "rejected",
          reason: d.reason,
          relatedMemoryId: null,
          detail: `slot ${d.name} dropped by the global budget: ${d.detail}`,
        } as MemoryDecision),
  );
  return {
    ...plan,
    context: "",
    usedChars: 0,
    usedTokens: counter.count(""),
    selectedMemoryIds: [],
    rejectedMemoryIds: decisions.filter((m) => m.status === "rejected").map((m) => m.memoryId),
    decisions,
  };
}

// The last memory layer's plan, settled against the global plan (null without one).
function settledMemoryPlan(
  layers: readonly FilledLayer[],
  segmentPlan: PromptPlan,
  counter: TokenCounter,
): MemoryPlan | null {
  const memoryLayer = layers.findLast((l) => l.memoryPlan !== null);
  return memoryLayer?.memoryPlan != null
    ? settleMemoryPlan(memoryLayer.slot.kind, memoryLayer.memoryPlan, segmentPlan, counter)
    : null;
}

/**
 * The plan step: the global plan of the layers and segments; a cascade layer (KB tiers)
 * the plan dropped is cascaded again into the room the plan leaves it (see
 * {@link cascadeGlobally}), so the layers come back with their final packing and item
 * decisions; the memory plan of the last memory layer comes back settled against the plan.
 */
export function planLayers(
  filled: readonly FilledLayer[],
  extra: readonly AssembleSegment[],
  given: GlobalBudget,
  schema: ModeSchema,
  counter: TokenCounter,
  planner: Planner = PURE_PLANNER,
): { layers: FilledLayer[]; plan: PromptPlan; memoryPlan: MemoryPlan | null } {
  const planOf = (ls: readonly FilledLayer[]) =>
    planGlobal(ls, extra, given, schema, counter, planner);
  const layers = [...filled];
  let planned = planOf(layers);
  for (let i = 0; i < layers.length; i++) {
    const l = layers[i] as FilledLayer;
    if (l.cascade === undefined || l.packed === null) continue;
    const replan = (packed: PackedSlot) =>
      planOf(layers.map((x, j) => (j === i ? { ...x, packed } : x)));
    const out = cascadeGlobally(
      { kind: l.slot.kind, packed: l.packed, decisions: l.decisions, render: l.cascade },
      planned,
      replan,
      counter,
    );
    if (out === null) continue;
    layers[i] = { ...l, packed: out.packed, decisions: out.decisions };
    planned = out.plan;
  }
  return { layers, plan: planned, memoryPlan: settledMemoryPlan(layers, planned, counter) };
}
