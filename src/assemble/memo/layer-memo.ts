/**
 * Packed layers kept from one assembly to the next (a session's turns, a warm service's
 * requests). Packing a slot is a pure function of what its sources returned, the slot's
 * spec, the user scope, the renderer, the token counter and — for an age filter only —
 * the clock. When all of those are the same as last time, the slot's layer is the same,
 * so it is taken from the memo instead of being ranked, filtered, rendered and counted
 * again. "What the sources returned is the same" is decided without reading any item:
 * a source of this package gives a version token with its items (a new token whenever
 * its data changes), and for any other source the validation memo hands back the very
 * item objects it validated last time when they are unchanged, so reference equality
 * suffices. A memoized layer's decision lists and a memoized plan are frozen: assemblies
 * that share them cannot alter each other's manifests.
 *
 * The memo sits around the pipeline's steps (`AssemblySteps`), never inside them: the
 * pack step is called only for a slot the memo does not hold, the planner only for a
 * request it has not planned, and the manifest step reads entries and hashes through it.
 */
import type { PlanPromptRequest, PromptPlan } from "../../plan/index.js";
import type { SlotRenderer } from "../../render/index.js";
import { deepFreeze } from "../../text/index.js";
import type { TokenCounter } from "../../tokens/index.js";
import type { FillPart, PartMemo, SlotFill } from "../fill.js";
import { PURE_PLANNER } from "../global-plan.js";
import { type FilledLayer, type LayerContext, toLayer } from "../layers.js";
import type { AssemblySteps } from "../pipeline.js";
import type { ResolvedSlot } from "../schema.js";
import { sameJson } from "../validate-items.js";
import { KEPT_PARTS } from "./kept-parts.js";
import { ManifestMemo } from "./manifest-memo.js";

/** What a layer was packed from, besides the items: the pack step's context. */
export type LayerInputs = LayerContext;

interface Entry {
  slot: ResolvedSlot;
  scope: string;
  /** The clock, when the slot's age filter reads it; null otherwise. */
  clock: number | null;
  renderer: SlotRenderer;
  counter: TokenCounter;
  parts: readonly FillPart[];
  layer: FilledLayer;
}

type OkFill = Extract<SlotFill, { status: "ok" }>;

/**
 * The last layer of each slot kind, with what it was packed from. Pass one to
 * {@link assemble} as `layerMemo` across assemblies over the same sources; `Session`
 * keeps one per session. Holds one layer per slot kind (bounded).
 *
 * @example
 * const layerMemo = createLayerMemo();
 * await assemble({ ...input, layerMemo }); // packs every slot
 * await assemble({ ...input, layerMemo }); // reuses the slots whose sources are unchanged
 */
export class LayerMemo implements AssemblySteps {
  readonly #bySlot = new Map<string, Entry>();
  /** The fill step's memo: the process's kept parts (shared by every assembly). */
  readonly parts: PartMemo = KEPT_PARTS;
  /**
   * What the manifest keeps: hashes of lately versioned texts and the entries of layers
   * made from the same inputs — an unchanged assembly's manifest is mostly looked up.
   */
  readonly manifest = new ManifestMemo();
  /** The last global plans (a cascade slot replans), most recent last. */
  #plans: Array<{ request: PlanPromptRequest; counter: TokenCounter; plan: PromptPlan }> = [];

  /**
   * The pack step through the memo: the layer kept for `slot` when its inputs are
   * unchanged, else `toLayer`'s, kept for next time (an unfilled slot is never kept).
   */
  packSlot(slot: ResolvedSlot, fill: SlotFill, ctx: LayerContext): FilledLayer {
    if (fill.status !== "ok") return toLayer(slot, fill, ctx);
    const known = this.get(slot, fill, ctx);
    if (known !== null) return known;
    return this.set(slot, fill, ctx, toLayer(slot, fill, ctx));
  }

  /** The memoized layer of `slot` when it was packed from the same inputs, else null. */
  get(slot: ResolvedSlot, fill: OkFill, inputs: LayerInputs): FilledLayer | null {
    const e = this.#bySlot.get(slot.kind);
    if (
      e === undefined ||
      e.renderer !== inputs.renderer ||
      e.counter !== inputs.counter ||
      e.scope !== inputs.scope ||
      !Object.is(e.clock, clockOf(slot, inputs)) ||
      (e.slot !== slot && !sameJson(e.slot, slot)) ||
      !sameParts(e.parts, fill.parts)
    ) {
      return null;
    }
    return { ...e.layer, fill };
  }

  /**
   * The global plan of `request`: the one planned before for an equal request (every
   * field, compared by `Object.is`) with the same counter, else `make()`'s (by default the
   * planner's), remembered. Planning is a pure function of those (the request is plain
   * data, never mutated).
   */
  plan(
    request: PlanPromptRequest,
    counter: TokenCounter,
    make: () => PromptPlan = () => PURE_PLANNER.plan(request, counter),
  ): PromptPlan {
    const known = this.#plans.find((p) => p.counter === counter && sameJson(p.request, request));
    if (known !== undefined) return known.plan;
    // Shared by every assembly that plans the same: frozen all the way down.
    const plan = deepFreeze(make());
    this.#plans = [...this.#plans.slice(-(MAX_PLANS - 1)), { request, counter, plan }];
    return plan;
  }

  /**
   * Remembers `layer` as the slot's layer for these inputs (replacing the last one), its
   * decision lists frozen; returns it marked `kept`.
   */
  set(slot: ResolvedSlot, fill: OkFill, inputs: LayerInputs, packed: FilledLayer): FilledLayer {
    freezeDecisions(packed);
    const layer: FilledLayer = { ...packed, kept: true };
    this.#bySlot.set(slot.kind, {
      slot,
      scope: inputs.scope,
      clock: clockOf(slot, inputs),
      renderer: inputs.renderer,
      counter: inputs.counter,
      parts: fill.parts,
      layer,
    });
    return layer;
  }
}

/** A new, empty {@link LayerMemo}. */
export function createLayerMemo(): LayerMemo {
  return new LayerMemo();
}

/** Plans kept: the assembly's plan and a cascade slot's replans. */
const MAX_PLANS = 4;

// The clock when an age filter reads it: the one input of packing a slot only sometimes has.
function clockOf(slot: ResolvedSlot, inputs: LayerInputs): number | null {
  const age = slot.filter?.maxAgeHours;
  return age !== undefined && age > 0 ? inputs.nowMs : null;
}

function sameParts(a: readonly FillPart[], b: readonly FillPart[]): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) {
    const x = a[i] as FillPart;
    const y = b[i] as FillPart;
    if (x.sourceId !== y.sourceId) return false;
    if (x.version !== null || y.version !== null) {
      if (x.version !== y.version) return false;
      continue;
    }
    if (x.items.length !== y.items.length) return false;
    for (let j = 0; j < x.items.length; j++) {
      if ((x.items[j] as FillPart["items"][number]).item !== y.items[j]?.item) return false;
    }
  }
  return true;
}

// Every list of decisions the manifest and the memory plan expose, and their entries.
function freezeDecisions(layer: FilledLayer): void {
  const lists: Array<readonly object[]> = [layer.decisions];
  if (layer.packed !== null) lists.push(layer.packed.decisions);
  if (layer.memoryPlan !== null) {
    lists.push(layer.memoryPlan.decisions);
  }
  for (const list of lists) {
    for (const d of list) Object.freeze(d);
    Object.freeze(list);
  }
}
