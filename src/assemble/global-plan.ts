/**
 * The global layer of the two-layer budget (spec 04): the filled slots and the plain
 * segments become planner segments, planned together under the global budget by spec 03.
 */
import {
  type CacheTier,
  DEFAULT_CACHE_TIER,
  type PromptPlan,
  planPrompt,
  type SegmentInput,
} from "../plan/index.js";
import type { TokenCounter } from "../tokens/index.js";
import type { FilledLayer } from "./layers.js";
import { DEFAULT_GLOBAL_BUDGET_CHARS, type ModeSchema } from "./schema.js";

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

/** What the caller sets of the global plan; an unset budget falls back to the schema's. */
export interface GlobalBudget {
  budgetChars?: number | null;
  budgetTokens?: number | null;
  cacheBoundary?: string;
}

// Slots first, in schema order, then the plain segments.
function segmentInputs(
  layers: readonly FilledLayer[],
  extra: readonly AssembleSegment[],
): SegmentInput[] {
  const segments: SegmentInput[] = layers.map((l) => ({
    name: l.slot.kind,
    content: l.packed && l.packed.rendered !== "" ? l.packed.rendered : null,
    priority: l.slot.priority,
    budgetPriority: 100 - l.slot.priority,
    required: l.slot.required,
    cacheTier: l.slot.cacheTier,
    provenance: l.fill.sourceIds.length > 0 ? l.fill.sourceIds.join(",") : "none",
  }));
  for (const seg of extra) {
    segments.push({
      name: seg.name,
      content: seg.content,
      priority: seg.priority ?? 50,
      budgetPriority: seg.budgetPriority ?? 50,
      required: seg.required ?? false,
      cacheTier: seg.cacheTier ?? DEFAULT_CACHE_TIER,
      provenance: seg.provenance ?? "runtime",
    });
  }
  return segments;
}

/** The global budgets: the caller's, else the schema's, else the default char budget. */
export function resolveGlobalBudget(
  given: GlobalBudget,
  schema: ModeSchema,
): { budgetChars: number | null; budgetTokens: number | null } {
  return {
    budgetChars:
      given.budgetChars !== undefined
        ? given.budgetChars
        : schema.budgetChars !== undefined
          ? schema.budgetChars
          : DEFAULT_GLOBAL_BUDGET_CHARS,
    budgetTokens:
      given.budgetTokens !== undefined ? given.budgetTokens : (schema.budgetTokens ?? null),
  };
}

/**
 * Plans the layers and the plain segments under the global budget `given` (falling back
 * to `schema`'s): required segments are never dropped, and over budget it fails closed.
 */
export function planGlobal(
  layers: readonly FilledLayer[],
  extra: readonly AssembleSegment[],
  given: GlobalBudget,
  schema: ModeSchema,
  counter: TokenCounter,
): PromptPlan {
  return planPrompt(
    {
      ...resolveGlobalBudget(given, schema),
      segments: segmentInputs(layers, extra),
      ...(given.cacheBoundary !== undefined ? { cacheBoundary: given.cacheBoundary } : {}),
    },
    { tokenCounter: counter },
  );
}
