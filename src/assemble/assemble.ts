/**
 * The assembler of docs/assembler.md: mode → schema → slots filled concurrently from sources →
 * per-slot filter and atomic packing → the docs/planner.md planner over the filled slots (cache
 * tiers, required never dropped, fail closed) → prompt + manifest.
 */
import { InvalidInputError } from "../errors/index.js";
import type { MemoryPlan } from "../memory/index.js";
import type { PromptPlan } from "../plan/index.js";
import { getRenderer } from "../render/builtin.js";
import type { SlotRenderer } from "../render/types.js";
import {
  type ContextSource,
  createSourceRegistry,
  type SourceQuery,
  type SourceRegistry,
} from "../sources/index.js";
import { assertWellFormed, instantMillis, trimWs } from "../text/index.js";
import { resolveTokenCounter, type TokenCounter } from "../tokens/index.js";
import type { AssemblyManifest, TraceOptions, TraceStep } from "../trace/index.js";
import { cascadeGlobally } from "./cascade.js";
import { Deadlines, type FetchTiming, fillSlot, type SlotFill } from "./fill.js";
import {
  type AssembleSegment,
  type AssemblyLayout,
  planGlobal,
  resolveGlobalBudget,
} from "./global-plan.js";
import { LayerMemo } from "./layer-memo.js";
import { type FilledLayer, type LayerContext, toLayer } from "./layers.js";
import { buildManifest } from "./manifest.js";
import { settleMemoryPlan } from "./memory-slot.js";
import type { PackedSlot } from "./pack.js";
import { instructionsReport, skillsReport } from "./reports.js";
import {
  createSchemaRegistry,
  type ModeSchema,
  type ResolvedSlot,
  resolveSlot,
  type SchemaRegistry,
} from "./schema.js";
import {
  ASSEMBLE_SPANS,
  assemblyAttributes,
  layerAttributes,
  packSlotSpan,
  planAttributes,
  planStartAttributes,
  runAttributes,
  startAssemblySpan,
} from "./spans.js";

export type { AssembleSegment, AssemblyLayout } from "./global-plan.js";

/** Default per-slot fetch timeout. */
export const DEFAULT_TIMEOUT_MS = 2000;

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
  /**
   * `cache` (default): tiers static → session → dynamic with boundary markers; `priority`
   * (spec 10): slots in priority order separated by one blank line, no marker in the text.
   */
  layout?: AssemblyLayout;
  /**
   * Packed layers kept across assemblies over the same sources (see {@link LayerMemo}): a
   * slot whose inputs are unchanged is reused, not repacked. Never changes the output.
   */
  layerMemo?: LayerMemo;
  /** Wall clock for `timings` only (default `performance.now`). */
  clock?: () => number;
  /**
   * OpenTelemetry (docs/traces.md): a tracer, content opt-in, the model's name. Without a
   * tracer here or a registered provider, the spans are no-ops. Never changes the output.
   */
  trace?: TraceOptions;
}

/** An assembly: the prompt, its manifest and both decision logs. */
export interface Assembly {
  prompt: string;
  manifest: AssemblyManifest;
  memoryPlan: MemoryPlan | null;
  segmentPlan: PromptPlan;
}

/** The input checked and resolved: what the steps of one assembly share. */
interface AssemblyRun extends LayerContext {
  registry: SourceRegistry;
  schema: ModeSchema;
  fallbackFrom: string | null;
  slots: ResolvedSlot[];
  query: SourceQuery;
}

function resolveRenderer(renderer: AssembleInput["renderer"]): SlotRenderer {
  if (renderer === undefined) return getRenderer("en");
  if (typeof renderer === "string") return getRenderer(renderer);
  return renderer;
}

// Checks `now` and the user scope, then resolves counter, renderer, sources and schema.
function prepareRun(input: AssembleInput): AssemblyRun {
  const nowMs = instantMillis(input.now);
  if (nowMs === null) throw new InvalidInputError("now must be an ISO-8601 timestamp", "now");
  assertWellFormed(input.query.text, ["query", "text"]);
  assertWellFormed(input.query.userScope, ["query", "userScope"]);
  const scope = trimWs(input.query.userScope);
  if (scope === "")
    throw new InvalidInputError("query.userScope must not be blank", "query.userScope");
  if (input.layerMemo !== undefined && !(input.layerMemo instanceof LayerMemo)) {
    throw new InvalidInputError("layerMemo must come from createLayerMemo()", "layerMemo");
  }
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
  return { nowMs, scope, counter, renderer, registry, schema, fallbackFrom, slots, query };
}

// Every slot's sources are asked at once (sharing a deadline per timeout value); the
// fills come back in schema order.
async function fillAll(
  run: AssemblyRun,
  timeoutMs: number | undefined,
  clock: () => number,
  fetchTimings: FetchTiming[],
  step: TraceStep,
): Promise<SlotFill[]> {
  const deadlines = new Deadlines();
  try {
    return await Promise.all(
      run.slots.map((slot) =>
        fillSlot(
          slot,
          run.registry.sourcesFor(slot.kind),
          run.query,
          slot.timeoutMs ?? timeoutMs ?? DEFAULT_TIMEOUT_MS,
          deadlines,
          clock,
          fetchTimings,
          step,
        ),
      ),
    );
  } finally {
    deadlines.clear();
  }
}

// Each slot's fill packed into its layer, in schema order (a required slot's failure throws).
function packLayers(
  run: AssemblyRun,
  fills: readonly SlotFill[],
  step: TraceStep,
  memo: LayerMemo | undefined,
): FilledLayer[] {
  return run.slots.map((slot, i) => {
    const fill = fills[i] as SlotFill;
    const [name, attributes] = packSlotSpan(slot, fill);
    return step.within(name, () => toLayer(slot, fill, run, memo), layerAttributes, attributes);
  });
}

/**
 * The global plan of the layers and segments; a cascade layer (KB tiers) the plan dropped
 * is cascaded again into the room the plan leaves it (see {@link cascadeGlobally}), so
 * the layers come back with their final packing and item decisions.
 */
function planLayers(
  run: AssemblyRun,
  filled: readonly FilledLayer[],
  extra: readonly AssembleSegment[],
  input: AssembleInput,
): { layers: FilledLayer[]; plan: PromptPlan } {
  const planOf = (ls: readonly FilledLayer[]) =>
    planGlobal(ls, extra, input, run.schema, run.counter, input.layerMemo);
  const layers = [...filled];
  let plan = planOf(layers);
  for (let i = 0; i < layers.length; i++) {
    const l = layers[i] as FilledLayer;
    if (l.cascade === undefined || l.packed === null) continue;
    const replan = (packed: PackedSlot) =>
      planOf(layers.map((x, j) => (j === i ? { ...x, packed } : x)));
    const out = cascadeGlobally(
      { kind: l.slot.kind, packed: l.packed, decisions: l.decisions, render: l.cascade },
      plan,
      replan,
      run.counter,
    );
    if (out === null) continue;
    layers[i] = { ...l, packed: out.packed, decisions: out.decisions };
    plan = out.plan;
  }
  return { layers, plan };
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

// Fetch timings in a stable order (slot, then source), whatever order the fetches ended in.
function sortedTimings(fetchTimings: readonly FetchTiming[]): FetchTiming[] {
  return fetchTimings
    .map((t) => ({ slot: t.slot, sourceId: t.sourceId, ms: t.ms }))
    .sort((a, b) => (a.slot + a.sourceId < b.slot + b.sourceId ? -1 : 1));
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
  const root = startAssemblySpan(input.trace);
  try {
    const assembly = await assembleSteps(input, root);
    root.end(() => assemblyAttributes(assembly, root));
    return assembly;
  } catch (err) {
    root.fail(err);
    throw err;
  }
}

// The steps of one assembly, each a child span of `root` (no-ops without a provider).
async function assembleSteps(input: AssembleInput, root: TraceStep): Promise<Assembly> {
  const clock = input.clock ?? (() => performance.now());
  const started = clock();
  const run = prepareRun(input);
  root.set(() => runAttributes(run));
  const fetchTimings: FetchTiming[] = [];
  const fills = await root.withinAsync(ASSEMBLE_SPANS.fill, (step) =>
    fillAll(run, input.timeoutMs, clock, fetchTimings, step),
  );
  const filled = root.within(ASSEMBLE_SPANS.pack, (step) =>
    packLayers(run, fills, step, input.layerMemo),
  );
  const extra = input.segments ?? [];
  const { layers, plan: segmentPlan } = root.within(
    ASSEMBLE_SPANS.plan,
    () => planLayers(run, filled, extra, input),
    (planned) => planAttributes(planned.plan),
    planStartAttributes(resolveGlobalBudget(input, run.schema)),
  );
  const memoryPlan = settledMemoryPlan(layers, segmentPlan, run.counter);
  const manifest = root.within(ASSEMBLE_SPANS.manifest, () =>
    buildManifest(
      layers,
      extra,
      segmentPlan,
      memoryPlan,
      {
        layout: input.layout ?? "cache",
        mode: run.schema.mode,
        fallbackFrom: run.fallbackFrom,
        renderer: run.renderer.name,
        now: input.now,
        tokenizer: run.counter.name,
        instructions: instructionsReport(layers, run.registry, run.query),
        skills: skillsReport(layers, run.registry, run.query),
        timings: { totalMs: clock() - started, fetch: sortedTimings(fetchTimings) },
      },
      input.layerMemo?.manifest,
    ),
  );
  return { prompt: segmentPlan.prompt, manifest, memoryPlan, segmentPlan };
}
