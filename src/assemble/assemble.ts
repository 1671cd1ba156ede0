/**
 * The assembler of docs/assembler.md: mode → schema → slots filled concurrently from sources →
 * per-slot filter and atomic packing → the docs/planner.md planner over the filled slots (cache
 * tiers, required never dropped, fail closed) → prompt + manifest.
 *
 * This file is the shell around the pipeline (`pipeline.ts`): it opens the assembly's root
 * span and chooses the steps' functions — a caller's layer memo, else the pure ones.
 */
import { InvalidInputError } from "../errors/index.js";
import type { ContextSource, SlotSpec, SourceQuery } from "../sources/index.js";
import type { TraceOptions, TraceStep } from "../trace/index.js";
import { type Deadlines, type FetchTiming, fillOneSlot, type SlotFill } from "./fill.js";
import { KEPT_PARTS } from "./memo/kept-parts.js";
import { LayerMemo } from "./memo/layer-memo.js";
import {
  type Assembly,
  type AssemblySteps,
  type PipelineInput,
  PURE_STEPS,
  runPipeline,
} from "./pipeline.js";
import { assemblyAttributes, FetchSpans, startAssemblySpan } from "./spans.js";

export { DEFAULT_TIMEOUT_MS } from "./fill.js";
export type { AssembleSegment, AssemblyLayout } from "./global-plan.js";
export type { Assembly } from "./pipeline.js";

/** What {@link assemble} needs. Clock, budgets and paths are parameters. */
export interface AssembleInput extends PipelineInput {
  /**
   * Packed layers kept across assemblies over the same sources (see {@link LayerMemo}): a
   * slot whose inputs are unchanged is reused, not repacked. Never changes the output.
   */
  layerMemo?: LayerMemo;
  /**
   * OpenTelemetry (docs/traces.md): a tracer, content opt-in, the model's name. Without a
   * tracer here or a registered provider, the spans are no-ops. Never changes the output.
   */
  trace?: TraceOptions;
}

/** The steps without a layer memo: pure, but for the process's kept parts of sources. */
const KEPT_FETCH_STEPS: AssemblySteps = { ...PURE_STEPS, parts: KEPT_PARTS };

// The steps of an assembly: the caller's layer memo (checked to be one), else the pure ones
// with the kept parts.
function stepsOf(layerMemo: unknown): AssemblySteps {
  if (layerMemo === undefined) return KEPT_FETCH_STEPS;
  if (!(layerMemo instanceof LayerMemo)) {
    throw new InvalidInputError("layerMemo must come from createLayerMemo()", "layerMemo");
  }
  return layerMemo;
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
    const assembly = await runPipeline(input, () => stepsOf(input.layerMemo), root);
    root.end(() => assemblyAttributes(assembly, root));
    return assembly;
  } catch (err) {
    root.fail(err);
    throw err;
  }
}

/**
 * Fills one slot from all its sources concurrently under `timeoutMs` (its deadline in
 * `deadlines`), reusing an unchanged source's kept part. On timeout the signal aborts and
 * the slot fails with `source_timeout`; item ids must be unique per slot. With `trace`,
 * each fetch is a child span of it (ended with the fetch, failed on its error).
 *
 * @example
 * const fill = await fillSlot(slot, sources, query, 2000, new Deadlines(), performance.now, []);
 */
export function fillSlot(
  slot: SlotSpec,
  sources: readonly ContextSource[],
  query: SourceQuery,
  timeoutMs: number,
  deadlines: Deadlines,
  clock: () => number,
  timings: FetchTiming[],
  trace?: TraceStep,
): Promise<SlotFill> {
  const watch = trace === undefined ? undefined : new FetchSpans(trace, query.text);
  const env = { deadlines, clock, timings, parts: KEPT_PARTS, watch };
  return fillOneSlot(slot, sources, query, timeoutMs, env);
}
