/**
 * The assembly manifest: one layer entry per planned segment (slots with their budgets,
 * items and source failures; plain segments with their refs), the plan's figures and
 * cache keys, and both decision logs.
 */
import {
  type CacheKeys,
  computeCacheKeys,
  HashMemo,
  promptVersion,
  versionId,
} from "../cache/index.js";
import type { MemoryPlan } from "../memory/index.js";
import {
  CACHE_TIERS,
  type CacheTier,
  DEFAULT_CACHE_TIER,
  type PlanDecision,
  type PromptPlan,
  SEGMENT_SEPARATOR,
} from "../plan/index.js";
import { deepFreeze } from "../text/index.js";
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
>;

type FailedFill = Extract<SlotFill, { status: "source_failed" | "source_timeout" }>;

/**
 * What {@link buildManifest} keeps from one assembly to the next (a {@link LayerMemo}
 * holds one): the hashes of lately versioned texts, and each layer's entry with what it
 * was made from. An entry made from the same inputs — equal plan decision values, the same
 * kept packing and decision list, equal slot settings and source ids — is the same,
 * so the entry itself is handed out again (deep-frozen): a warm service's answers share
 * it, and its JSON (see the server's encoder) is written once.
 */
export class ManifestMemo {
  /** Hashes of lately versioned texts: layer contents, prompt prefixes, the prompt. */
  readonly hashes = new HashMemo();
  readonly #layers = new Map<string, { inputs: readonly unknown[]; entry: LayerManifest }>();

  /**
   * The entry `make()` gave for `name` last time from the same `inputs` (each compared
   * with `Object.is`), else `make()`'s; kept, deep-frozen, when `keep` (everything under
   * it is frozen already or new).
   */
  layer(
    name: string,
    inputs: readonly unknown[],
    keep: boolean,
    make: () => LayerManifest,
  ): LayerManifest {
    const known = this.#layers.get(name);
    if (known !== undefined && sameInputs(known.inputs, inputs)) return known.entry;
    const entry = make();
    if (keep) this.#layers.set(name, { inputs, entry: deepFreeze(entry) });
    return entry;
  }
}

function sameInputs(a: readonly unknown[], b: readonly unknown[]): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (!Object.is(a[i], b[i])) return false;
  return true;
}

// What a layer entry reads of its plan decision: equal values give an equal entry, whether
// the plan was kept or made again (a warm service's static layers keep their entries while
// the query-dependent ones change the plan).
function decisionInputs(d: PlanDecision): unknown[] {
  return [
    d.name,
    d.priority,
    d.budgetPriority,
    d.required,
    d.status,
    d.reason,
    d.detail,
    d.renderedChars,
    d.renderedTokens,
    d.provenance,
  ];
}

// A segment's entry: made of values and copies only, so it can always be kept.
function keptSegmentLayer(
  d: PlanDecision,
  e: AssembleSegment,
  memo: ManifestMemo | undefined,
): LayerManifest {
  if (memo === undefined) return segmentLayer(d, e);
  const inputs = [
    ...decisionInputs(d),
    e.content,
    e.cacheTier,
    e.neverTruncate,
    ...(e.sourceRefs ?? []),
  ];
  return memo.layer(d.name, inputs, true, () => segmentLayer(d, e, memo.hashes));
}

// A slot's entry, kept when its decision list is a kept (frozen) one.
function keptSlotLayer(
  d: PlanDecision,
  l: FilledLayer,
  failed: FailedFill | null,
  memo: ManifestMemo | undefined,
): LayerManifest {
  if (memo === undefined) return slotLayer(d, l, failed);
  const filter = l.slot.filter;
  const inputs = [
    ...decisionInputs(d),
    l.packed,
    l.decisions,
    l.slot.neverTruncate,
    l.slot.cacheTier,
    filter?.charBudget,
    filter?.tokenBudget,
    l.fill.status,
    failed?.message,
    ...l.fill.sourceIds,
  ];
  const keep = Object.isFrozen(l.decisions);
  return memo.layer(d.name, inputs, keep, () => {
    const entry = slotLayer(d, l, failed, memo.hashes);
    // The fill's own list stays unfrozen: the entry gets a copy.
    return keep ? { ...entry, sources: [...entry.sources] } : entry;
  });
}

function segmentLayer(d: PlanDecision, e: AssembleSegment, hashes?: HashMemo): LayerManifest {
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
    versionId: versionId(e.content ?? "", hashes),
    sourceRefs: [...(e.sourceRefs ?? [])],
    sources: [d.provenance],
    error: null,
    items: [],
  };
}

// A slot whose source failed is reported skipped with the failure, whatever the planner said.
function slotLayer(
  d: PlanDecision,
  l: FilledLayer,
  failed: FailedFill | null,
  hashes?: HashMemo,
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
    versionId: versionId(content, hashes),
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
  hashes?: HashMemo,
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
    keys[tier] = holdsTier ? versionId(plan.prompt.slice(0, end), hashes) : null;
  }
  return keys;
}

/**
 * The manifest of an assembly: its layers in plan order, its failures, figures and logs.
 * With `memo` (a layer memo's), versions and cache keys are hashed through its hash memo
 * and a layer's entry made from the same inputs as last time is the one made then.
 */
export function buildManifest(
  layers: readonly FilledLayer[],
  extra: readonly AssembleSegment[],
  plan: PromptPlan,
  memoryPlan: MemoryPlan | null,
  meta: ManifestMeta,
  memo?: ManifestMemo,
): AssemblyManifest {
  const hashes = memo?.hashes;
  const byName = new Map(layers.map((l) => [l.slot.kind, l]));
  const failures: SourceFailure[] = [];
  const extraByName = new Map(extra.map((e) => [e.name, e]));
  const layerManifests: LayerManifest[] = plan.decisions.map((d) => {
    const e = extraByName.get(d.name);
    if (e !== undefined) return keptSegmentLayer(d, e, memo);
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
    return keptSlotLayer(d, l, failed, memo);
  });
  return {
    promptVersion: promptVersion(plan.prompt, hashes),
    cacheKeys:
      meta.layout === "priority"
        ? priorityCacheKeys(plan, layers, extra, hashes)
        : computeCacheKeys(plan, hashes),
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
    memoryDecisions: memoryPlan?.decisions ?? null,
    segmentDecisions: plan.decisions,
    instructions: meta.instructions,
    skills: meta.skills,
    timings: meta.timings,
  };
}
