/**
 * The assembly manifest: one layer entry per planned segment (slots with their budgets,
 * items and source failures; plain segments with their refs), the plan's figures and
 * cache keys, and both decision logs.
 */
import { computeCacheKeys, promptVersion, versionId } from "../cache/index.js";
import type { MemoryPlan } from "../memory/index.js";
import { DEFAULT_CACHE_TIER, type PlanDecision, type PromptPlan } from "../plan/index.js";
import type { AssemblyManifest, LayerManifest, SourceFailure } from "../trace/index.js";
import type { SlotFill } from "./fill.js";
import type { AssembleSegment } from "./global-plan.js";
import type { FilledLayer } from "./layers.js";

/** What the manifest records of the assembly itself. */
export type ManifestMeta = Pick<
  AssemblyManifest,
  "mode" | "fallbackFrom" | "renderer" | "now" | "tokenizer" | "instructions" | "timings"
>;

type FailedFill = Extract<SlotFill, { status: "source_failed" | "source_timeout" }>;

function segmentLayer(d: PlanDecision, e: AssembleSegment): LayerManifest {
  const included = d.status === "included";
  return {
    id: d.name,
    priority: d.priority,
    budgetPriority: d.budgetPriority,
    required: d.required,
    neverTruncate: e.neverTruncate ?? false,
    cacheTier: d.cacheTier ?? DEFAULT_CACHE_TIER,
    budget: {},
    used: { chars: included ? d.renderedChars : 0, tokens: included ? d.renderedTokens : 0 },
    status: d.status,
    reason: d.reason,
    detail: d.detail,
    versionId: versionId(e.content ?? ""),
    sourceRefs: [...(e.sourceRefs ?? [])],
    sources: [d.provenance],
    error: null,
    items: [],
  };
}

// A slot whose source failed is reported skipped with the failure, whatever the planner said.
function slotLayer(d: PlanDecision, l: FilledLayer, failed: FailedFill | null): LayerManifest {
  const included = d.status === "included";
  const content = l.packed?.rendered ?? "";
  const filter = l.slot.filter ?? {};
  const budget: LayerManifest["budget"] = {};
  if (filter.charBudget !== undefined) budget.chars = filter.charBudget;
  if (filter.tokenBudget !== undefined) budget.tokens = filter.tokenBudget;
  return {
    id: d.name,
    priority: d.priority,
    budgetPriority: d.budgetPriority,
    required: d.required,
    neverTruncate: l.slot.neverTruncate,
    cacheTier: l.slot.cacheTier,
    budget,
    used: { chars: included ? d.renderedChars : 0, tokens: included ? d.renderedTokens : 0 },
    status: failed ? "skipped" : d.status,
    reason: failed ? failed.status : d.reason,
    detail: failed
      ? failed.message
      : l.fill.status === "no_source"
        ? "no source serves this slot"
        : d.detail,
    versionId: versionId(content),
    sourceRefs: (l.packed?.selected ?? []).map((s) =>
      s.item.memory !== undefined
        ? `memory:${s.item.id}`
        : (s.item.sourceRef ?? `${s.sourceId}:${s.item.id}`),
    ),
    sources: l.fill.sourceIds,
    error: failed ? failed.message : null,
    items: l.decisions,
  };
}

/** The manifest of an assembly: its layers in plan order, its failures, figures and logs. */
export function buildManifest(
  layers: readonly FilledLayer[],
  extra: readonly AssembleSegment[],
  plan: PromptPlan,
  memoryPlan: MemoryPlan | null,
  meta: ManifestMeta,
): AssemblyManifest {
  const byName = new Map(layers.map((l) => [l.slot.kind, l]));
  const failures: SourceFailure[] = [];
  const extraByName = new Map(extra.map((e) => [e.name, e]));
  const layerManifests: LayerManifest[] = plan.decisions.map((d) => {
    const e = extraByName.get(d.name);
    if (e !== undefined) return segmentLayer(d, e);
    const l = byName.get(d.name) as FilledLayer;
    const failed =
      l.fill.status === "source_failed" || l.fill.status === "source_timeout" ? l.fill : null;
    if (failed)
      failures.push({
        slot: d.name,
        sourceId: failed.sourceId,
        reason: failed.status,
        message: failed.message,
      });
    return slotLayer(d, l, failed);
  });
  return {
    promptVersion: promptVersion(plan.prompt),
    cacheKeys: computeCacheKeys(plan),
    tokenizer: meta.tokenizer,
    mode: meta.mode,
    fallbackFrom: meta.fallbackFrom,
    renderer: meta.renderer,
    now: meta.now,
    budget: { chars: plan.budgetChars, tokens: plan.budgetTokens },
    used: { chars: plan.usedChars, tokens: plan.usedTokens },
    layers: layerManifests,
    failures,
    memoryDecisions: memoryPlan?.decisions ?? null,
    segmentDecisions: plan.decisions,
    instructions: meta.instructions,
    timings: meta.timings,
  };
}
