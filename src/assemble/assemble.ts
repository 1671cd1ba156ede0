/**
 * The assembler of spec 04: mode → schema → slots filled concurrently from sources →
 * per-slot filter and atomic packing → the spec 03 planner over the filled slots (cache
 * tiers, required never dropped, fail closed) → prompt + manifest.
 */
import { computeCacheKeys, promptVersion, versionId } from "../cache/index.js";
import { InvalidInputError, SourceError } from "../errors/index.js";
import {
  type CandidateInput,
  type MemoryDecision,
  type MemoryPlan,
  renderMemoryBlock,
  renderMemoryHit,
  selectMemoryContext,
} from "../memory/index.js";
import {
  type CacheTier,
  type PlanDecision,
  type PromptPlan,
  planPrompt,
  type SegmentInput,
} from "../plan/index.js";
import { getRenderer, type SlotRenderer } from "../render/index.js";
import {
  type ContextSource,
  createSourceRegistry,
  type SlotFilter,
  type SourceQuery,
  type SourceRegistry,
} from "../sources/index.js";
import { cpLength, instantMillis, trimWs } from "../text/index.js";
import { resolveTokenCounter, type TokenCounter } from "../tokens/index.js";
import type { AssemblyManifest, LayerManifest, SourceFailure } from "../trace/index.js";
import { type FetchTiming, fillSlot, type SlotFill } from "./fill.js";
import {
  applyFilter,
  compareItems,
  type ItemDecision,
  type PackedSlot,
  packItems,
  type SourcedItem,
} from "./pack.js";
import {
  createSchemaRegistry,
  DEFAULT_GLOBAL_BUDGET_CHARS,
  type ResolvedSlot,
  resolveSlot,
  type SchemaRegistry,
} from "./schema.js";

/** Default per-slot fetch timeout. */
export const DEFAULT_TIMEOUT_MS = 2000;
/** minScore of the recall slot when its filter names none (spec 02 default). */
const DEFAULT_MEMORY_MIN_SCORE = 0.35;

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

/** What {@link assemble} needs. Clock, budgets and paths are parameters. */
export interface AssembleInput {
  /** Schema mode; an unknown mode falls back to `chat` (manifest `fallbackFrom`). */
  mode: string;
  /** Query text and the trusted user scope. */
  query: { text: string; userScope: string };
  /** ISO-8601 instant used for ages and recency (never read from the system clock). */
  now: string;
  sources: SourceRegistry | readonly ContextSource[];
  /** Segments planned alongside the schema's slots (names must differ from slot kinds). */
  segments?: readonly AssembleSegment[];
  schemas?: SchemaRegistry;
  /** `en` (default), `zh-CN`, `tagged`, or a custom renderer. */
  renderer?: SlotRenderer | string;
  tokenizer?: string;
  tokenCounter?: TokenCounter;
  /** Overrides the schema's global budget (default 2400 chars). */
  budgetChars?: number | null;
  budgetTokens?: number | null;
  timeoutMs?: number;
  cacheBoundary?: string;
  /** Wall clock for `timings` only (default `performance.now`). */
  clock?: () => number;
}

/** An assembly: the prompt, its manifest and both decision logs. */
export interface Assembly {
  prompt: string;
  manifest: AssemblyManifest;
  memoryPlan: MemoryPlan | null;
  segmentPlan: PromptPlan;
}

interface FilledLayer {
  slot: ResolvedSlot;
  fill: SlotFill;
  packed: PackedSlot | null;
  decisions: ItemDecision[];
  memoryPlan: MemoryPlan | null;
}

const isCandidate = (s: SourcedItem) => s.item.memory !== undefined && s.item.score !== undefined;

const isMemorySlot = (slot: ResolvedSlot, items: readonly SourcedItem[]) =>
  slot.kind === "recall_memory" || (items.length > 0 && items.every(isCandidate));

/**
 * Items of the recall slot must be spec 02 candidates (memory fields and a score). One
 * that is not is an invalid item: the slot fails like any other invalid item (skipped
 * when optional, fail closed when required) instead of crashing the assembly.
 */
function checkRecallItems(slot: ResolvedSlot, fill: SlotFill): SlotFill {
  if (fill.status !== "ok" || slot.kind !== "recall_memory") return fill;
  const bad = [...fill.items].sort(compareItems).find((s) => !isCandidate(s));
  if (bad === undefined) return fill;
  return {
    status: "source_failed",
    sourceId: bad.sourceId,
    message: `${bad.sourceId}: item ${bad.item.id} of memory slot ${slot.kind} lacks memory fields or a score`,
    sourceIds: fill.sourceIds,
  };
}

/**
 * When the global planner drops the memory slot, none of its memories reaches the
 * prompt: the memory plan's `selected` decisions become rejections with the slot's
 * reason, so `selectedMemoryIds` and `context` always match what was rendered.
 */
function settleMemoryPlan(
  layer: FilledLayer,
  plan: MemoryPlan,
  segmentPlan: PromptPlan,
  counter: TokenCounter,
): MemoryPlan {
  const d = segmentPlan.decisions.find((x) => x.name === layer.slot.kind);
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

function toCandidate(s: SourcedItem, slot: string): CandidateInput {
  const m = s.item.memory;
  if (m === undefined || s.item.score === undefined) {
    throw new SourceError(
      "source_failed",
      `${s.sourceId}: item ${s.item.id} of memory slot ${slot} lacks memory fields or a score`,
      slot,
      s.sourceId,
    );
  }
  return {
    memoryId: s.item.id,
    text: s.item.text,
    userScope: m.userScope,
    score: s.item.score,
    sourceRank: m.sourceRank,
    provenance: m.provenance,
    conflictKey: m.conflictKey ?? null,
    authority: m.authority,
  };
}

/**
 * The recall slot: the spec 02 gates (scope, confidence, dedupe, conflict slots) run on
 * the filtered items, then the slot packer applies topK and the budgets to the slot as
 * rendered; the memory plan is patched so every candidate keeps exactly one decision.
 */
function packMemorySlot(
  slot: ResolvedSlot,
  kept: SourcedItem[],
  filter: SlotFilter,
  scope: string,
  render: (items: readonly SourcedItem[]) => string,
  counter: TokenCounter,
): { packed: PackedSlot; plan: MemoryPlan } {
  const byId = new Map(kept.map((s) => [s.item.id, s]));
  const gates = selectMemoryContext(
    {
      userScope: scope,
      policy: {
        minScore: filter.minScore ?? DEFAULT_MEMORY_MIN_SCORE,
        topK: Number.MAX_SAFE_INTEGER,
        maxChars: null,
        maxTokens: null,
      },
      candidates: kept.map((s) => toCandidate(s, slot.kind)),
    },
    { tokenCounter: counter },
  );
  const survivors = gates.selectedMemoryIds.map((id) => byId.get(id) as SourcedItem);
  const packed = packItems(
    survivors,
    { ...filter, minScore: undefined },
    render,
    counter,
    slot.kind,
  );
  const outcome = new Map(packed.decisions.map((d) => [d.id, d]));
  const decisions: MemoryDecision[] = gates.decisions.map((d) => {
    const p = outcome.get(d.memoryId);
    if (d.status !== "selected" || p === undefined || p.status === "selected") return d;
    return {
      ...d,
      status: "rejected",
      reason: p.reason,
      relatedMemoryId: null,
      detail: p.detail,
    } as MemoryDecision;
  });
  const selected = packed.selected.map((s) => s.item.id);
  const lines = packed.selected.map((s) =>
    renderMemoryHit(toCandidate(s, slot.kind) as Parameters<typeof renderMemoryHit>[0]),
  );
  const context = renderMemoryBlock(gates.userScope, lines);
  const plan: MemoryPlan = {
    ...gates,
    policy: {
      minScore: gates.policy.minScore,
      topK: filter.topK !== undefined && filter.topK > 0 ? filter.topK : Number.MAX_SAFE_INTEGER,
      maxChars: filter.charBudget ?? null,
      maxTokens: filter.tokenBudget ?? null,
    },
    context,
    usedChars: cpLength(context),
    usedTokens: counter.count(context),
    selectedMemoryIds: selected,
    rejectedMemoryIds: decisions.filter((d) => d.status === "rejected").map((d) => d.memoryId),
    decisions,
  };
  return { packed, plan };
}

function resolveRenderer(renderer: AssembleInput["renderer"]): SlotRenderer {
  if (renderer === undefined) return getRenderer("en");
  if (typeof renderer === "string") return getRenderer(renderer);
  return renderer;
}

/**
 * Assembles the context prefix of a mode. Optional slots whose source fails are skipped
 * (`source_failed` / `source_timeout`); a required slot's failure, pinned items over a
 * slot budget, or required slots over the global budget fail closed.
 *
 * @example
 * const { prompt, manifest } = await assemble({
 *   mode: "react", query: { text: "fix the build", userScope: "u1" }, now: "2026-11-30T09:00:00Z",
 *   sources: [constraintsSource({ rules: [{ id: "r1", level: "forbid", text: "no rm -rf" }] })],
 * });
 */
export async function assemble(input: AssembleInput): Promise<Assembly> {
  const clock = input.clock ?? (() => performance.now());
  const started = clock();
  const nowMs = instantMillis(input.now);
  if (nowMs === null) throw new InvalidInputError("now must be an ISO-8601 timestamp", "now");
  const scope = trimWs(input.query.userScope);
  if (scope === "")
    throw new InvalidInputError("query.userScope must not be blank", "query.userScope");
  const counter = input.tokenCounter ?? resolveTokenCounter(input.tokenizer);
  const renderer = resolveRenderer(input.renderer);
  const registry = Array.isArray(input.sources)
    ? createSourceRegistry(input.sources as readonly ContextSource[])
    : (input.sources as SourceRegistry);
  const { schema, fallbackFrom } = (input.schemas ?? createSchemaRegistry()).resolve(input.mode);
  const slots = schema.slots.map(resolveSlot);
  const query: SourceQuery = {
    text: input.query.text,
    userScope: scope,
    mode: schema.mode,
    now: input.now,
  };

  const fetchTimings: FetchTiming[] = [];
  const fills = await Promise.all(
    slots.map((slot) =>
      fillSlot(
        slot,
        registry.sourcesFor(slot.kind),
        query,
        slot.timeoutMs ?? input.timeoutMs ?? DEFAULT_TIMEOUT_MS,
        clock,
        fetchTimings,
      ),
    ),
  );

  const layers: FilledLayer[] = slots.map((slot, i) => {
    const fill = checkRecallItems(slot, fills[i] as SlotFill);
    if (fill.status === "no_source") {
      if (slot.required) {
        throw new SourceError(
          "source_failed",
          `no source serves required slot ${slot.kind}`,
          slot.kind,
          "none",
        );
      }
      return { slot, fill, packed: null, decisions: [], memoryPlan: null };
    }
    if (fill.status !== "ok") {
      if (slot.required) {
        throw new SourceError(
          fill.status,
          `required slot ${slot.kind}: ${fill.message}`,
          slot.kind,
          fill.sourceId,
        );
      }
      return { slot, fill, packed: null, decisions: [], memoryPlan: null };
    }
    const ranked = [...fill.items].sort(compareItems);
    const filter = slot.filter ?? {};
    const render = (items: readonly SourcedItem[]) =>
      renderer.renderSlot(
        slot,
        items.map((s) => s.item),
        { userScope: scope },
      );
    if (isMemorySlot(slot, ranked)) {
      const { kept, decisions: filtered } = applyFilter(
        ranked,
        { ...filter, minScore: undefined },
        nowMs,
      );
      const { packed, plan } = packMemorySlot(slot, kept, filter, scope, render, counter);
      // Lookups by id: a recall slot may hold a thousand candidates.
      const packedIds = new Set(packed.decisions.map((p) => p.id));
      const sourceOf = new Map(kept.map((s) => [s.item.id, s.sourceId]));
      const gateDecisions: ItemDecision[] = plan.decisions
        .filter((d) => !packedIds.has(d.memoryId))
        .map((d) => ({
          id: d.memoryId,
          sourceId: sourceOf.get(d.memoryId) as string,
          status: "rejected",
          reason: d.reason,
          score: d.score,
          detail: d.detail,
        }));
      return {
        slot,
        fill,
        packed,
        decisions: orderDecisions(ranked, [...filtered, ...gateDecisions, ...packed.decisions]),
        memoryPlan: plan,
      };
    }
    const { kept, decisions: filtered } = applyFilter(ranked, filter, nowMs);
    const packed = packItems(kept, filter, render, counter, slot.kind);
    return {
      slot,
      fill,
      packed,
      decisions: orderDecisions(ranked, [...filtered, ...packed.decisions]),
      memoryPlan: null,
    };
  });

  const segments: SegmentInput[] = layers.map((l) => ({
    name: l.slot.kind,
    content: l.packed && l.packed.rendered !== "" ? l.packed.rendered : null,
    priority: l.slot.priority,
    budgetPriority: 100 - l.slot.priority,
    required: l.slot.required,
    cacheTier: l.slot.cacheTier,
    provenance: l.fill.sourceIds.length > 0 ? l.fill.sourceIds.join(",") : "none",
  }));
  const extra = input.segments ?? [];
  for (const seg of extra) {
    segments.push({
      name: seg.name,
      content: seg.content,
      priority: seg.priority ?? 50,
      budgetPriority: seg.budgetPriority ?? 50,
      required: seg.required ?? false,
      cacheTier: seg.cacheTier ?? "session",
      provenance: seg.provenance ?? "runtime",
    });
  }
  const segmentPlan = planPrompt(
    {
      budgetChars:
        input.budgetChars !== undefined
          ? input.budgetChars
          : schema.budgetChars !== undefined
            ? schema.budgetChars
            : DEFAULT_GLOBAL_BUDGET_CHARS,
      budgetTokens:
        input.budgetTokens !== undefined ? input.budgetTokens : (schema.budgetTokens ?? null),
      segments,
      ...(input.cacheBoundary !== undefined ? { cacheBoundary: input.cacheBoundary } : {}),
    },
    { tokenCounter: counter },
  );

  const memoryLayer = layers.findLast((l) => l.memoryPlan !== null);
  const memoryPlan =
    memoryLayer?.memoryPlan != null
      ? settleMemoryPlan(memoryLayer, memoryLayer.memoryPlan, segmentPlan, counter)
      : null;
  const manifest = buildManifest(layers, extra, segmentPlan, memoryPlan, {
    mode: schema.mode,
    fallbackFrom,
    renderer: renderer.name,
    now: input.now,
    tokenizer: counter.name,
    timings: {
      totalMs: clock() - started,
      fetch: fetchTimings
        .map((t) => ({ slot: t.slot, sourceId: t.sourceId, ms: t.ms }))
        .sort((a, b) => (a.slot + a.sourceId < b.slot + b.sourceId ? -1 : 1)),
    },
  });
  return { prompt: segmentPlan.prompt, manifest, memoryPlan, segmentPlan };
}

function segmentLayer(d: PlanDecision, e: AssembleSegment): LayerManifest {
  const included = d.status === "included";
  return {
    id: d.name,
    priority: d.priority,
    budgetPriority: d.budgetPriority,
    required: d.required,
    neverTruncate: e.neverTruncate ?? false,
    cacheTier: d.cacheTier ?? "session",
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

// Item decisions in the slot's rank order, whatever stage produced them.
function orderDecisions(ranked: readonly SourcedItem[], decisions: ItemDecision[]): ItemDecision[] {
  const byKey = new Map(decisions.map((d) => [`${d.sourceId}\u0000${d.id}`, d]));
  return ranked.map((s) => byKey.get(`${s.sourceId}\u0000${s.item.id}`) as ItemDecision);
}

function buildManifest(
  layers: FilledLayer[],
  extra: readonly AssembleSegment[],
  plan: PromptPlan,
  memoryPlan: MemoryPlan | null,
  meta: Pick<
    AssemblyManifest,
    "mode" | "fallbackFrom" | "renderer" | "now" | "tokenizer" | "timings"
  >,
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
    timings: meta.timings,
  };
}
