/** The two decision tables people read: why a memory was (not) used, why a section was (not) shown. */
import type { MemoryDecision, MemoryPlan } from "../memory/index.js";
import type { PlanDecision, PromptPlan } from "../plan/index.js";
import { formatScore } from "../text/index.js";
import type { AssemblyManifest, LayerManifest } from "../trace/index.js";
import { type Column, renderTable, type TableStyle, type Tone } from "./table.js";

const tone = (selected: boolean): Tone => (selected ? "good" : "bad");

const MEMORY_COLUMNS: Column<MemoryDecision & { rank: number }>[] = [
  { header: "#", cell: (d) => d.rank, align: "right" },
  { header: "memory", cell: (d) => d.memoryId, whole: true },
  {
    header: "status",
    cell: (d) => d.status,
    tone: (d) => tone(d.status === "selected"),
    whole: true,
  },
  {
    header: "reason",
    cell: (d) => d.reason,
    tone: (d) => tone(d.status === "selected"),
    whole: true,
  },
  { header: "authority", cell: (d) => d.authority },
  { header: "score", cell: (d) => formatScore(d.score), align: "right" },
  { header: "chars", cell: (d) => d.candidateChars, align: "right" },
  { header: "tokens", cell: (d) => d.candidateTokens ?? null, align: "right" },
  { header: "related", cell: (d) => d.relatedMemoryId, elastic: true },
  { header: "detail", cell: (d) => d.detail, tone: () => "muted", elastic: true },
];

/**
 * The memory decision table, one row per candidate in rank order.
 *
 * @example console.log(memoryDecisionTable(plan, { color: false, width: 100 }));
 */
export function memoryDecisionTable(plan: MemoryPlan, style: TableStyle): string {
  const rows = plan.decisions.map((d, i) => ({ ...d, rank: i + 1 }));
  const head = `Memory selection — scope ${JSON.stringify(plan.userScope)}, tokenizer ${plan.tokenizer}, ${plan.selectedMemoryIds.length}/${plan.candidateCount} selected, ${plan.usedChars} chars / ${plan.usedTokens} tokens`;
  return `${head}\n${renderTable(rows, MEMORY_COLUMNS, style)}`;
}

const SEGMENT_COLUMNS: Column<PlanDecision>[] = [
  { header: "segment", cell: (d) => d.name },
  { header: "prio", cell: (d) => d.priority, align: "right" },
  { header: "value", cell: (d) => d.budgetPriority, align: "right" },
  { header: "req", cell: (d) => (d.required ? "yes" : "") },
  {
    header: "status",
    cell: (d) => d.status,
    whole: true,
    tone: (d) => (d.status === "included" ? "good" : d.status === "dropped" ? "bad" : "muted"),
  },
  { header: "reason", cell: (d) => d.reason, whole: true },
  { header: "chars", cell: (d) => d.originalChars, align: "right" },
  { header: "tokens", cell: (d) => d.originalTokens ?? null, align: "right" },
  { header: "detail", cell: (d) => d.detail, tone: () => "muted", elastic: true },
];

/**
 * The segment decision table, one row per segment in display order.
 *
 * @example console.log(segmentDecisionTable(plan, { color: false, width: 100 }));
 */
export function segmentDecisionTable(plan: PromptPlan, style: TableStyle): string {
  const budget = [
    plan.budgetChars === null ? "unbounded chars" : `${plan.budgetChars} chars`,
    plan.budgetTokens === null ? null : `${plan.budgetTokens} tokens`,
  ]
    .filter((x) => x !== null)
    .join(", ");
  const head = `Prompt plan — budget ${budget}, tokenizer ${plan.tokenizer}, used ${plan.usedChars} chars / ${plan.usedTokens} tokens`;
  return `${head}\n${renderTable(plan.decisions, SEGMENT_COLUMNS, style)}`;
}

const LAYER_COLUMNS: Column<LayerManifest>[] = [
  { header: "layer", cell: (l) => l.id },
  { header: "tier", cell: (l) => l.cacheTier },
  { header: "req", cell: (l) => (l.required ? "yes" : "") },
  {
    header: "status",
    cell: (l) => l.status,
    whole: true,
    tone: (l): Tone =>
      l.status === "included" ? "good" : l.status === "dropped" ? "bad" : "muted",
  },
  { header: "reason", cell: (l) => l.reason, whole: true },
  { header: "chars", cell: (l) => (l.status === "included" ? l.used.chars : null), align: "right" },
  {
    header: "tokens",
    cell: (l) => (l.status === "included" ? l.used.tokens : null),
    align: "right",
  },
  { header: "version", cell: (l) => l.versionId, elastic: true },
  {
    header: "refs",
    cell: (l) => (l.sourceRefs.length > 0 ? l.sourceRefs.join(" ") : null),
    elastic: true,
  },
  { header: "detail", cell: (l) => l.detail || null, tone: () => "muted", elastic: true },
];

/**
 * The manifest's layers as a table, in prompt order.
 *
 * @example console.log(layerTable(assembly.manifest, { color: false, width: 100 }));
 */
export function layerTable(manifest: AssemblyManifest, style: TableStyle): string {
  const budget = [
    manifest.budget.chars === null ? "unbounded chars" : `${manifest.budget.chars} chars`,
    manifest.budget.tokens === null ? null : `${manifest.budget.tokens} tokens`,
  ]
    .filter((x) => x !== null)
    .join(", ");
  const schema =
    manifest.fallbackFrom === null
      ? manifest.mode
      : `${manifest.mode} (fallback from ${JSON.stringify(manifest.fallbackFrom)})`;
  const head = `Layers — schema ${schema}, renderer ${manifest.renderer}, tokenizer ${manifest.tokenizer}, budget ${budget}, used ${manifest.used.chars} chars / ${manifest.used.tokens} tokens`;
  return `${head}\n${renderTable(manifest.layers, LAYER_COLUMNS, style)}`;
}
