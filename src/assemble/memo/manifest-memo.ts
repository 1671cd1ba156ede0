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
    return this.layer(d.name, inputsOf(SEGMENT_ENTRY_INPUTS, { d, e }), true, () =>
      segmentLayer(d, e, this),
    );
  }

  /** A slot's entry, kept when its layer is a kept one (`FilledLayer.kept`). */
  slotEntry(d: PlanDecision, l: FilledLayer, failed: FailedFill | null): LayerManifest {
    const inputs = inputsOf(SLOT_ENTRY_INPUTS, { d, l, failed });
    return this.layer(d.name, inputs, l.kept, () => {
      const entry = slotLayer(d, l, failed, this);
      // The fill's own list stays unfrozen: the entry gets a copy.
      return l.kept ? { ...entry, sources: [...entry.sources] } : entry;
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

/** What one field of a layer entry is made from, as values compared with `Object.is`. */
type FieldInputs<A> = (args: A) => readonly unknown[];

// A list of any length, prefixed with its length: two lists in a row never read as one.
const list = (xs: readonly unknown[]): unknown[] => [xs.length, ...xs];

// What a decision's `used` reads: the figures count only for an included segment.
const usedOf = (d: PlanDecision): unknown[] => [d.status, d.renderedChars, d.renderedTokens];

/**
 * Every field of a segment's entry (`segmentLayer`), and what it is made from. Keyed by
 * `LayerManifest`'s own fields and checked against them: a new field does not compile
 * until it says what invalidates it, so no input is ever left out of the memo's key.
 */
const SEGMENT_ENTRY_INPUTS = {
  id: ({ d }) => [d.name],
  priority: ({ d }) => [d.priority],
  budgetPriority: ({ d }) => [d.budgetPriority],
  required: ({ d }) => [d.required],
  neverTruncate: ({ e }) => [e.neverTruncate],
  cacheTier: ({ e }) => [e.cacheTier],
  budget: () => [],
  used: ({ d }) => usedOf(d),
  status: ({ d }) => [d.status],
  reason: ({ d }) => [d.reason],
  detail: ({ d }) => [d.detail],
  versionId: ({ e }) => [e.content],
  sourceRefs: ({ e }) => list(e.sourceRefs ?? []),
  sources: ({ d }) => [d.provenance],
  error: () => [],
  items: () => [],
} as const satisfies Record<
  keyof LayerManifest,
  FieldInputs<{ d: PlanDecision; e: AssembleSegment }>
>;

/** Every field of a slot's entry (`slotLayer`), and what it is made from (as above). */
const SLOT_ENTRY_INPUTS = {
  id: ({ d }) => [d.name],
  priority: ({ d }) => [d.priority],
  budgetPriority: ({ d }) => [d.budgetPriority],
  required: ({ d }) => [d.required],
  neverTruncate: ({ l }) => [l.slot.neverTruncate],
  cacheTier: ({ l }) => [l.slot.cacheTier],
  budget: ({ l }) => [l.slot.filter?.charBudget, l.slot.filter?.tokenBudget],
  used: ({ d }) => usedOf(d),
  status: ({ d, failed }) => [d.status, failed?.status],
  reason: ({ d, failed }) => [d.reason, failed?.status],
  detail: ({ d, l, failed }) => [d.detail, l.fill.status, failed?.message],
  // The rendered content and the selected items' refs are the packing's.
  versionId: ({ l }) => [l.packed],
  sourceRefs: ({ l }) => [l.packed],
  sources: ({ l }) => list(l.fill.sourceIds),
  error: ({ failed }) => [failed?.message],
  items: ({ l }) => [l.decisions],
} as const satisfies Record<
  keyof LayerManifest,
  FieldInputs<{ d: PlanDecision; l: FilledLayer; failed: FailedFill | null }>
>;

/** The memo key of one entry: every field's inputs, in the table's (fixed) field order. */
function inputsOf<A>(table: Readonly<Record<keyof LayerManifest, FieldInputs<A>>>, args: A) {
  const out: unknown[] = [];
  for (const field of Object.keys(table) as (keyof LayerManifest)[]) {
    out.push(...table[field](args));
  }
  return out;
}
