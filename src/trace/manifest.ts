/**
 * The layer manifest of docs/manifest-wire-guard.md: what every assembly returns so a person (or a replay)
 * can see each layer's budget, use, status, reason, version and sources. Everything
 * except `timings` is deterministic.
 */
import type { MemoryDecision } from "../memory/index.js";
import type { CacheTier, PlanDecision } from "../plan/index.js";
import type { InstructionReport, SkillReport } from "../sources/index.js";

/** Layer status: the planner's three, plus `skipped` when a source failed. */
export type LayerStatus = "included" | "dropped" | "inactive" | "skipped";

/** Layer reason codes: the planner's, plus source failures. */
export type LayerReason =
  | "required"
  | "never_truncate"
  | "fits_budget"
  | "char_budget_exceeded"
  | "token_budget_exceeded"
  | "inactive"
  | "source_failed"
  | "source_timeout";

/** One decision per item a slot's sources returned (see the assembler's packer). */
export interface LayerItemDecision {
  id: string;
  sourceId: string;
  status: "selected" | "rejected";
  reason: string;
  score: number | null;
  detail: string;
}

/** One layer (slot or segment) of an assembly. */
export interface LayerManifest {
  id: string;
  priority: number;
  budgetPriority: number;
  required: boolean;
  neverTruncate: boolean;
  cacheTier: CacheTier;
  budget: { chars?: number; tokens?: number };
  used: { chars: number; tokens: number };
  status: LayerStatus;
  reason: LayerReason;
  detail: string;
  /** First 16 hex of sha256 of the layer's rendered content. */
  versionId: string;
  /** Memory ids, KB chunk ids, file paths + hashes, skill ids + versions, item refs. */
  sourceRefs: string[];
  /** Source ids that served the layer. */
  sources: string[];
  /** The error message when a source failed. */
  error: string | null;
  items: LayerItemDecision[];
}

/** A source failure, deterministic (its timing lives under `timings`). */
export interface SourceFailure {
  slot: string;
  sourceId: string;
  reason: "source_failed" | "source_timeout";
  message: string;
}

/**
 * A hint a source gave about what it returned for a slot (e.g. `recall_full_text_only`:
 * the memory store recalls by words only), as recall answers carry it.
 */
export interface ManifestHint {
  slot: string;
  sourceId: string;
  code: string;
  message: string;
}

/** Wall-clock figures: the only part of a manifest allowed to differ between runs. */
export interface Timings {
  totalMs: number;
  fetch: Array<{ slot: string; sourceId: string; ms: number }>;
}

/** The assembly-level manifest. */
export interface AssemblyManifest {
  /** sha256 (hex) of the whole prompt. */
  promptVersion: string;
  cacheKeys: { static: string | null; session: string | null; dynamic: string | null };
  tokenizer: string;
  /**
   * How the prompt is laid out: `cache` (by cache tier, with boundary markers) or
   * `priority` (slot priority order, blank-line separated; each layer keeps its
   * `cacheTier`, and `cacheKeys` hash the longest prefix stable at each tier).
   */
  layout: "cache" | "priority";
  mode: string;
  fallbackFrom: string | null;
  renderer: string;
  now: string;
  budget: { chars: number | null; tokens: number | null };
  used: { chars: number; tokens: number };
  layers: LayerManifest[];
  failures: SourceFailure[];
  /**
   * Hints of the sources of the slots filled successfully (in schema order, then source
   * id), e.g. `recall_full_text_only`; present only when there is one, so a manifest
   * without hints is the same as before the field existed.
   */
  hints?: ManifestHint[];
  memoryDecisions: MemoryDecision[] | null;
  segmentDecisions: PlanDecision[];
  /**
   * Instruction files (docs/sources.md) skipped or cut — outside the allowed roots, unreadable,
   * over a cap, cycles — with the reason; null when no source of the schema's slots
   * reports a chain.
   */
  instructions: InstructionReport | null;
  /**
   * Skill selection (docs/sources.md): matched skills with their trigger reasons, ties, overlaps,
   * the cap, invalid skills with their reason, and `abstained`; null when no source of the
   * schema's slots reports one.
   */
  skills: SkillReport | null;
  timings: Timings;
}

/**
 * The manifest without `timings`: what must be byte-identical for the same inputs.
 *
 * @example JSON.stringify(deterministicView(a.manifest)) === JSON.stringify(deterministicView(b.manifest))
 */
export function deterministicView(manifest: AssemblyManifest): Omit<AssemblyManifest, "timings"> {
  const { timings: _timings, ...rest } = manifest;
  return rest;
}
