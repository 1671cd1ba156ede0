/**
 * The assembly's OpenTelemetry spans (docs/traces.md): their names and the attributes of
 * each step, read from what the step produced. Pure reads: nothing here changes a
 * result, and every figure is computed only when the span records.
 */
import type { Attributes } from "@opentelemetry/api";
import type { MemoryPlan } from "../memory/index.js";
import type { PromptPlan } from "../plan/index.js";
import type { AssemblyManifest } from "../trace/index.js";
import {
  countAttributes,
  inStep,
  startTrace,
  type TraceOptions,
  type TraceStep,
} from "../trace/otel.js";
import { type FetchWatch, type FillPart, fetchFailure, type SlotFill } from "./fill.js";
import type { FilledLayer } from "./layers.js";
import { isMemorySlot } from "./memory-slot.js";
import type { ResolvedSlot } from "./schema.js";

/** Span names, one per step; attributes carry slot kinds and source ids. */
export const ASSEMBLE_SPANS = {
  assemble: "promptctx.assemble",
  fill: "promptctx.fill_sources",
  fetch: "promptctx.source.fetch",
  pack: "promptctx.pack_layers",
  packSlot: "promptctx.pack_slot",
  memory: "promptctx.memory_selection",
  plan: "promptctx.global_plan",
  manifest: "promptctx.manifest",
} as const;

/** `gen_ai.operation.name` of the root span (no predefined GenAI value fits). */
export const ASSEMBLE_OPERATION = "assemble_context";

const RETRIEVAL_OPERATION = "retrieval";

// Numbers only when set: OTel attributes cannot be null.
function figures(prefix: string, chars?: number | null, tokens?: number | null): Attributes {
  const out: Attributes = {};
  if (chars != null) out[`${prefix}.chars`] = chars;
  if (tokens != null) out[`${prefix}.tokens`] = tokens;
  return out;
}

/** The root span of one assembly. */
export function startAssemblySpan(options: TraceOptions | undefined): TraceStep {
  return startTrace(ASSEMBLE_SPANS.assemble, options, {
    "gen_ai.operation.name": ASSEMBLE_OPERATION,
    ...(options?.model !== undefined ? { "gen_ai.request.model": options.model } : {}),
  });
}

/** What the resolved input says: mode (and the unknown one it fell back from), renderer, tokenizer. */
export function runAttributes(run: {
  schema: { mode: string };
  fallbackFrom: string | null;
  renderer: { name: string };
  counter: { name: string };
}): Attributes {
  return {
    "promptctx.mode": run.schema.mode,
    ...(run.fallbackFrom !== null ? { "promptctx.mode.fallback_from": run.fallbackFrom } : {}),
    "promptctx.renderer": run.renderer.name,
    "promptctx.tokenizer": run.counter.name,
  };
}

/** A child of the fill step for one source's fetch of one slot (a GenAI retrieval). */
function startFetchSpan(
  fill: TraceStep,
  slot: string,
  sourceId: string,
  queryText: string,
): TraceStep {
  return fill.child(ASSEMBLE_SPANS.fetch, {
    "gen_ai.operation.name": RETRIEVAL_OPERATION,
    "gen_ai.data_source.id": sourceId,
    "promptctx.slot": slot,
    "promptctx.source.id": sourceId,
    ...(fill.includeContent ? { "gen_ai.retrieval.query.text": queryText } : {}),
  });
}

/**
 * The fill step's fetch watch: each fetch a child span of `fill` (ended with its item
 * count, failed with `source_timeout` or `source_failed`), run in that span's context so a
 * source's own spans nest under it; a fetch skipped for a kept part is a span ended at once.
 */
export class FetchSpans implements FetchWatch {
  constructor(
    private readonly fill: TraceStep,
    private readonly queryText: string,
  ) {}

  async fetch(slot: string, sourceId: string, run: () => Promise<FillPart>): Promise<FillPart> {
    const span = startFetchSpan(this.fill, slot, sourceId, this.queryText);
    try {
      const part = await inStep(span, run);
      span.end(() => ({ "promptctx.items.count": part.items.length }));
      return part;
    } catch (err) {
      span.fail(err, fetchFailure(err));
      throw err;
    }
  }

  kept(slot: string, sourceId: string, count: number): void {
    startFetchSpan(this.fill, slot, sourceId, this.queryText).end(() => ({
      "promptctx.items.count": count,
    }));
  }
}

/** The span packing one slot: `memory_selection` for a slot served by the memory gates. */
export function packSlotSpan(slot: ResolvedSlot, fill: SlotFill): [string, Attributes] {
  const memory = fill.status === "ok" && isMemorySlot(slot, fill.items);
  const filter = slot.filter ?? {};
  return [
    memory ? ASSEMBLE_SPANS.memory : ASSEMBLE_SPANS.packSlot,
    {
      "promptctx.slot": slot.kind,
      "promptctx.slot.required": slot.required,
      ...figures("promptctx.slot.budget", filter.charBudget, filter.tokenBudget),
    },
  ];
}

function memoryAttributes(plan: MemoryPlan, content: boolean): Attributes {
  return {
    "promptctx.memory.candidates": plan.candidateCount,
    "promptctx.memory.selected": plan.selectedMemoryIds.length,
    ...figures("promptctx.memory.used", plan.usedChars, plan.usedTokens),
    ...countAttributes(
      "promptctx.decisions.memory",
      plan.decisions.map((d) => d.reason),
    ),
    ...(content ? { "promptctx.memory.context": plan.context } : {}),
  };
}

/** What packing one slot decided: fill outcome, items, use, decisions by reason. */
export function layerAttributes(layer: FilledLayer, step: TraceStep): Attributes {
  const packed = layer.packed;
  return {
    "promptctx.fill.status": layer.fill.status,
    "promptctx.items.count": layer.decisions.length,
    "promptctx.items.selected": packed?.selected.length ?? 0,
    ...(packed !== null ? figures("promptctx.slot.used", packed.chars, packed.tokens) : {}),
    ...countAttributes(
      "promptctx.decisions.item",
      layer.decisions.map((d) => d.reason),
    ),
    ...(layer.memoryPlan !== null ? memoryAttributes(layer.memoryPlan, step.includeContent) : {}),
  };
}

/** The global plan's start attributes: the budgets it plans under. */
export function planStartAttributes(budget: {
  budgetChars: number | null;
  budgetTokens: number | null;
}): Attributes {
  return figures("promptctx.budget", budget.budgetChars, budget.budgetTokens);
}

/** What the global plan decided. */
export function planAttributes(plan: PromptPlan): Attributes {
  return {
    ...figures("promptctx.used", plan.usedChars, plan.usedTokens),
    "promptctx.segments.included": plan.includedNames.length,
    "promptctx.segments.dropped": plan.droppedNames.length,
    ...countAttributes(
      "promptctx.decisions.segment",
      plan.decisions.map((d) => d.reason),
    ),
  };
}

/**
 * The assembly's summary on the root span: budgets, use, cache keys, version, and the
 * manifest's decisions counted by reason; the prompt itself only with `includeContent`.
 */
export function assemblyAttributes(
  assembly: { prompt: string; manifest: AssemblyManifest },
  step: TraceStep,
): Attributes {
  const m = assembly.manifest;
  const out: Attributes = {
    ...figures("promptctx.budget", m.budget.chars, m.budget.tokens),
    ...figures("promptctx.used", m.used.chars, m.used.tokens),
    "promptctx.prompt_version": m.promptVersion,
    "promptctx.layers.count": m.layers.length,
    "promptctx.failures.count": m.failures.length,
    ...countAttributes(
      "promptctx.decisions.layer",
      m.layers.map((l) => l.reason),
    ),
    ...countAttributes(
      "promptctx.decisions.item",
      m.layers.flatMap((l) => l.items.map((d) => d.reason)),
    ),
    ...countAttributes(
      "promptctx.decisions.segment",
      m.segmentDecisions.map((d) => d.reason),
    ),
    ...countAttributes(
      "promptctx.decisions.memory",
      (m.memoryDecisions ?? []).map((d) => d.reason),
    ),
  };
  for (const [tier, key] of Object.entries(m.cacheKeys)) {
    if (key !== null) out[`promptctx.cache_key.${tier}`] = key;
  }
  if (step.includeContent) out["promptctx.prompt"] = assembly.prompt;
  return out;
}
