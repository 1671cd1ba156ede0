/**
 * The manifest step's memo: the manifest parts (`ManifestParts`) of a layer memo. It
 * hashes through a hash memo, and hands a layer's entry out again when it is made from the
 * same inputs as last time. The manifest step calls it exactly as it calls the pure parts.
 */
import {
  type CacheKeys,
  computeCacheKeys,
  HashMemo,
  promptVersion,
  versionId,
} from "../../cache/index.js";
import type { PlanDecision, PromptPlan } from "../../plan/index.js";
import { deepFreeze } from "../../text/index.js";
import type { LayerManifest } from "../../trace/index.js";
import type { AssembleSegment } from "../global-plan.js";
import type { FilledLayer } from "../layers.js";
import { type FailedFill, type ManifestParts, segmentLayer, slotLayer } from "../manifest.js";

/**
 * What the manifest step keeps from one assembly to the next (a `LayerMemo` holds one):
 * the hashes of lately versioned texts, and each layer's entry with what it was made from.
 * An entry made from the same inputs — equal plan decision values, the same kept packing
 * and decision list, equal slot settings and source ids — is the same, so the entry itself
 * is handed out again (deep-frozen): a warm service's answers share it, and its JSON (see
 * the server's encoder) is written once.
 *
 * @example
 * const memo = new ManifestMemo();
 * buildManifest(layers, segments, plan, memoryPlan, meta, memo); // makes every entry
 * buildManifest(layers, segments, plan, memoryPlan, meta, memo); // hands the same ones out
 */
export class ManifestMemo implements ManifestParts {
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

  /** A segment's entry: made of values and copies only, so it can always be kept. */
  segmentEntry(d: PlanDecision, e: AssembleSegment): LayerManifest {
    const inputs = [
      ...decisionInputs(d),
      e.content,
      e.cacheTier,
      e.neverTruncate,
      ...(e.sourceRefs ?? []),
    ];
    return this.layer(d.name, inputs, true, () => segmentLayer(d, e, this));
  }

  /** A slot's entry, kept when its decision list is a kept (frozen) one. */
  slotEntry(d: PlanDecision, l: FilledLayer, failed: FailedFill | null): LayerManifest {
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
    return this.layer(d.name, inputs, keep, () => {
      const entry = slotLayer(d, l, failed, this);
      // The fill's own list stays unfrozen: the entry gets a copy.
      return keep ? { ...entry, sources: [...entry.sources] } : entry;
    });
  }

  versionId(text: string): string {
    return versionId(text, this.hashes);
  }

  promptVersion(prompt: string): string {
    return promptVersion(prompt, this.hashes);
  }

  cacheKeys(plan: PromptPlan): CacheKeys {
    return computeCacheKeys(plan, this.hashes);
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
