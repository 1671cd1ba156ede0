/**
 * The assembly manifest: one layer entry per planned segment (slots with their budgets,
 * items and source failures; plain segments with their refs), the plan's figures and
 * cache keys, and both decision logs.
 */
import { type CacheKeys, computeCacheKeys, promptVersion, versionId } from "../cache/index.js";
import type { MemoryPlan } from "../memory/index.js";
import {
  CACHE_TIERS,
  type CacheTier,
  DEFAULT_CACHE_TIER,
  type PlanDecision,
  type PromptPlan,
  SEGMENT_SEPARATOR,
} from "../plan/index.js";
import type { AssemblyManifest, LayerManifest, SourceFailure } from "../trace/index.js";
import type { SlotFill } from "./fill.js";
import type { AssembleSegment } from "./global-plan.js";
import type { FilledLayer } from "./layers.js";

/** What the manifest records of the assembly itself. */
export type ManifestMeta = Pick<
  AssemblyManifest,
  | "layout"
  | "mode"
  | "fallbackFrom"
  | "renderer"
  | "now"
  | "tokenizer"
  | "instructions"
  | "skills"
  | "timings"
> & { hints?: AssemblyManifest["hints"] };

/** A fill whose source failed or timed out. */
export type FailedFill = Extract<SlotFill, { status: "source_failed" | "source_timeout" }>;

/**
 * How the manifest step makes each layer's entry and hashes its texts. The pure parts are
 * {@link PURE_MANIFEST_PARTS}; a layer memo's manifest memo (`memo/manifest-memo.ts`)
 * hands out the entries and hashes it kept instead. Either way the manifest is the same.
 */
export interface ManifestParts {
  /** A plain segment's entry ({@link segmentLayer}). */
  segmentEntry(d: PlanDecision, e: AssembleSegment): LayerManifest;
  /** A slot's entry ({@link slotLayer}); `failed` when its source failed. */
  slotEntry(d: PlanDecision, l: FilledLayer, failed: FailedFill | null): LayerManifest;
  /** The version id of a layer's text or a prompt prefix (`versionId`). */
  versionId(text: string): string;
  promptVersion(prompt: string): string;
  cacheKeys(plan: PromptPlan): CacheKeys;
}

/** The manifest parts made afresh each time: nothing kept, every text hashed. */
export const PURE_MANIFEST_PARTS: ManifestParts = {
  segmentEntry: (d, e) => segmentLayer(d, e, PURE_MANIFEST_PARTS),
  slotEntry: (d, l, failed) => slotLayer(d, l, failed, PURE_MANIFEST_PARTS),
  versionId: (text) => versionId(text),
  promptVersion: (prompt) => promptVersion(prompt),
  cacheKeys: (plan) => computeCacheKeys(plan),
};

/** What hashes a layer's text. */
type Hashing = Pick<ManifestParts, "versionId">;

/** A plain segment's entry: made of values and copies only. */
export function segmentLayer(d: PlanDecision, e: AssembleSegment, hash: Hashing): LayerManifest {
  const included = d.status === "included";
  return {
    id: d.name,
    priority: d.priority,
    budgetPriority: d.budgetPriority,
    required: d.required,
    neverTruncate: e.neverTruncate ?? false,
    cacheTier: e.cacheTier ?? DEFAULT_CACHE_TIER,
    budget: {},
    used: { chars: included ? d.renderedChars : 0, tokens: included ? d.renderedTokens : 0 },
    status: d.status,
    reason: d.reason,
    detail: d.detail,
    versionId: hash.versionId(e.content ?? ""),
    sourceRefs: [...(e.sourceRefs ?? [])],
    sources: [d.provenance],
    error: null,
    items: [],
  };
}

/** A slot's entry: one whose source failed is skipped with the failure, whatever the plan said. */
export function slotLayer(
  d: PlanDecision,
  l: FilledLayer,
  failed: FailedFill | null,
  hash: Hashing,
): LayerManifest {
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
    versionId: hash.versionId(content),
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

const TIER_RANK: Readonly<Record<CacheTier, number>> = { static: 0, session: 1, dynamic: 2 };

/**
 * Cache keys of a `priority` layout, where tiers interleave: the key of tier T hashes the
 * longest prefix of the prompt made only of layers of tier T or more stable (what a
 * provider can still serve from cache while only less stable layers change), null when
 * that prefix holds no layer of tier T itself.
 */
function priorityCacheKeys(
  plan: PromptPlan,
  layers: readonly FilledLayer[],
  extra: readonly AssembleSegment[],
  hash: Hashing,
): CacheKeys {
  const tierOf = new Map<string, CacheTier>([
    ...layers.map((l) => [l.slot.kind, l.slot.cacheTier] as const),
    ...extra.map((e) => [e.name, e.cacheTier ?? DEFAULT_CACHE_TIER] as const),
  ]);
  const contentOf = new Map<string, string>([
    ...layers.map((l) => [l.slot.kind, l.packed?.rendered ?? ""] as const),
    ...extra.map((e) => [e.name, e.content ?? ""] as const),
  ]);
  const separator = plan.separator ?? SEGMENT_SEPARATOR;
  const keys: CacheKeys = { static: null, session: null, dynamic: null };
  for (const tier of CACHE_TIERS) {
    let end = 0;
    let holdsTier = false;
    for (const [i, name] of plan.includedNames.entries()) {
      const t = tierOf.get(name) ?? "dynamic";
      if (TIER_RANK[t] > TIER_RANK[tier]) break;
      end += (i > 0 ? separator.length : 0) + (contentOf.get(name) ?? "").length;
      holdsTier ||= t === tier;
    }
    keys[tier] = holdsTier ? hash.versionId(plan.prompt.slice(0, end)) : null;
  }
  return keys;
}

/**
 * The manifest step: the assembly's layers in plan order, its failures, figures and logs.
 * Each entry, version and cache key comes from `parts` (pure by default; a layer memo's
 * manifest memo hands back what it kept for the same inputs).
 */
export function buildManifest(
  layers: readonly FilledLayer[],
  extra: readonly AssembleSegment[],
  plan: PromptPlan,
  memoryPlan: MemoryPlan | null,
  meta: ManifestMeta,
  parts: ManifestParts = PURE_MANIFEST_PARTS,
): AssemblyManifest {
  const byName = new Map(layers.map((l) => [l.slot.kind, l]));
  const failures: SourceFailure[] = [];
  const extraByName = new Map(extra.map((e) => [e.name, e]));
  const layerManifests: LayerManifest[] = plan.decisions.map((d) => {
    const e = extraByName.get(d.name);
    if (e !== undefined) return parts.segmentEntry(d, e);
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
    return parts.slotEntry(d, l, failed);
  });
  return {
    promptVersion: parts.promptVersion(plan.prompt),
    cacheKeys:
      meta.layout === "priority"
        ? priorityCacheKeys(plan, layers, extra, parts)
        : parts.cacheKeys(plan),
    tokenizer: meta.tokenizer,
    layout: meta.layout,
    mode: meta.mode,
    fallbackFrom: meta.fallbackFrom,
    renderer: meta.renderer,
    now: meta.now,
    budget: { chars: plan.budgetChars, tokens: plan.budgetTokens },
    used: { chars: plan.usedChars, tokens: plan.usedTokens },
    layers: layerManifests,
    failures,
    ...(meta.hints !== undefined && meta.hints.length > 0 ? { hints: meta.hints } : {}),
    memoryDecisions: memoryPlan?.decisions ?? null,
    segmentDecisions: plan.decisions,
    instructions: meta.instructions,
    skills: meta.skills,
    timings: meta.timings,
  };
}
