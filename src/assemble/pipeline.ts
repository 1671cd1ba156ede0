/**
 * The assembly as the pipeline it is (docs/assembler.md, "How an assembly flows"):
 * resolve the input → fill → pack → plan → manifest, each step called once, in order, each
 * wrapped in its trace span. The steps are pure functions; what may be kept between
 * assemblies (packed layers, plans, manifest entries, hashes) comes in as
 * {@link AssemblySteps}, pure by default ({@link PURE_STEPS}) — a layer memo (`memo/`) is
 * another implementation, and nothing here imports it.
 */
import { InvalidInputError } from "../errors/index.js";
import type { MemoryPlan } from "../memory/index.js";
import type { PromptPlan } from "../plan/index.js";
import { getRenderer } from "../render/builtin.js";
import type { SlotRenderer } from "../render/index.js";
import type { ContextSource, SourceQuery, SourceRegistry } from "../sources/index.js";
import { assertWellFormed, compareCodePoints, instantMillis, trimWs } from "../text/index.js";
import { resolveTokenCounter, type TokenCounter } from "../tokens/index.js";
import type { AssemblyManifest, TraceStep } from "../trace/index.js";
import {
  DEFAULT_TIMEOUT_MS,
  type FetchTiming,
  fillSlots,
  NO_PART_MEMO,
  type PartMemo,
  type SlotFill,
} from "./fill.js";
import {
  type AssembleSegment,
  type AssemblyLayout,
  type Planner,
  PURE_PLANNER,
  planLayers,
  resolveGlobalBudget,
} from "./global-plan.js";
import { checkAssembleInput } from "./input.js";
import { type FilledLayer, type LayerContext, toLayer } from "./layers.js";
import { buildManifest, type ManifestParts, PURE_MANIFEST_PARTS } from "./manifest.js";
import { hintsReport, instructionsReport, skillsReport } from "./reports.js";
import {
  createSchemaRegistry,
  type ModeSchema,
  type ResolvedSlot,
  resolveSlot,
  type SchemaRegistry,
} from "./schema.js";
import {
  ASSEMBLE_SPANS,
  FetchSpans,
  layerAttributes,
  packSlotSpan,
  planAttributes,
  planStartAttributes,
  runAttributes,
} from "./spans.js";

/** What the pipeline reads of an assembly's input. Clock, budgets and paths are parameters. */
export interface PipelineInput {
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

/**
 * The functions of the steps that may keep their results between assemblies: reusing a
 * source's fetch, packing one slot, planning one request, making the manifest's entries
 * and hashes. Each must give what the pure one ({@link PURE_STEPS}) would; a `LayerMemo`
 * is the kept implementation (`memo/`).
 */
export interface AssemblySteps extends Planner {
  /** What the fill step may reuse of a source's last fetch. */
  readonly parts: PartMemo;
  /** One slot's layer from its fill (pure: `toLayer`). */
  packSlot(slot: ResolvedSlot, fill: SlotFill, ctx: LayerContext): FilledLayer;
  /** How the manifest's entries are made and its texts hashed. */
  readonly manifest: ManifestParts;
}

/** The steps with nothing kept: every source asked, slot packed, plan made, text hashed. */
export const PURE_STEPS: AssemblySteps = {
  parts: NO_PART_MEMO,
  packSlot: toLayer,
  plan: PURE_PLANNER.plan,
  manifest: PURE_MANIFEST_PARTS,
};

/** The input checked and resolved: what the steps of one assembly share. */
interface AssemblyRun extends LayerContext {
  registry: SourceRegistry;
  schema: ModeSchema;
  fallbackFrom: string | null;
  slots: ResolvedSlot[];
  query: SourceQuery;
  steps: AssemblySteps;
}

function resolveRenderer(renderer: PipelineInput["renderer"]): SlotRenderer {
  if (renderer === undefined) return getRenderer("en");
  if (typeof renderer === "string") return getRenderer(renderer);
  return renderer;
}

// Checks `now` and the user scope, takes the steps (`stepsOf` checks what it was given),
// then resolves counter, renderer, sources and schema.
function prepareRun(input: PipelineInput, stepsOf: () => AssemblySteps): AssemblyRun {
  const registry = checkAssembleInput(input);
  const nowMs = instantMillis(input.now);
  if (nowMs === null) throw new InvalidInputError("now must be an ISO-8601 timestamp", "now");
  assertWellFormed(input.query.text, ["query", "text"]);
  assertWellFormed(input.query.userScope, ["query", "userScope"]);
  const scope = trimWs(input.query.userScope);
  if (scope === "")
    throw new InvalidInputError("query.userScope must not be blank", "query.userScope");
  const steps = stepsOf();
  const counter = input.tokenCounter ?? resolveTokenCounter(input.tokenizer);
  const renderer = resolveRenderer(input.renderer);
  const { schema, fallbackFrom } = (input.schemas ?? createSchemaRegistry()).resolve(input.mode);
  const slots = schema.slots.map(resolveSlot);
  const query: SourceQuery = {
    text: input.query.text,
    userScope: scope,
    mode: schema.mode,
    now: input.now,
  };
  return { nowMs, scope, counter, renderer, registry, schema, fallbackFrom, slots, query, steps };
}

/**
 * Fetch timings in a stable order, whatever order the fetches ended in: by slot, then by
 * source id (code point order), each compared on its own — not their joined text.
 *
 * @example sortedTimings([{ slot: "ab", sourceId: "a", ms: 1 }, { slot: "a", sourceId: "z", ms: 2 }]) // slot "a" first
 */
export function sortedTimings(fetchTimings: readonly FetchTiming[]): FetchTiming[] {
  return fetchTimings
    .map((t) => ({ slot: t.slot, sourceId: t.sourceId, ms: t.ms }))
    .sort((a, b) => compareCodePoints(a.slot, b.slot) || compareCodePoints(a.sourceId, b.sourceId));
}

/**
 * Runs one assembly through its steps, in order, each a child span of `root` (no-ops
 * without a provider): resolve the input, fill every slot, pack each slot into its layer,
 * plan the layers and segments under the global budget, build the manifest. `stepsOf` is
 * called once the query is checked and gives the steps' functions.
 *
 * @example
 * const assembly = await runPipeline(input, () => PURE_STEPS, startAssemblySpan(undefined));
 */
export async function runPipeline(
  input: PipelineInput,
  stepsOf: () => AssemblySteps,
  root: TraceStep,
): Promise<Assembly> {
  const clock = input.clock ?? (() => performance.now());
  const started = clock();
  const run = prepareRun(input, stepsOf);
  root.set(() => runAttributes(run));
  const fetchTimings: FetchTiming[] = [];
  const fills = await root.withinAsync(ASSEMBLE_SPANS.fill, (step) =>
    fillSlots(run.slots, run.registry, run.query, input.timeoutMs ?? DEFAULT_TIMEOUT_MS, {
      clock,
      timings: fetchTimings,
      parts: run.steps.parts,
      watch: new FetchSpans(step, run.query.text),
    }),
  );
  const filled = root.within(ASSEMBLE_SPANS.pack, (step) =>
    run.slots.map((slot, i) => {
      const fill = fills[i] as SlotFill;
      const [name, attributes] = packSlotSpan(slot, fill);
      const pack = () => run.steps.packSlot(slot, fill, run);
      return step.within(name, pack, layerAttributes, attributes);
    }),
  );
  const extra = input.segments ?? [];
  const {
    layers,
    plan: segmentPlan,
    memoryPlan,
  } = root.within(
    ASSEMBLE_SPANS.plan,
    () => planLayers(filled, extra, input, run.schema, run.counter, run.steps),
    (planned) => planAttributes(planned.plan),
    planStartAttributes(resolveGlobalBudget(input, run.schema)),
  );
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
        hints: hintsReport(layers, run.registry, run.query),
        timings: { totalMs: clock() - started, fetch: sortedTimings(fetchTimings) },
      },
      run.steps.manifest,
    ),
  );
  return { prompt: segmentPlan.prompt, manifest, memoryPlan, segmentPlan };
}
