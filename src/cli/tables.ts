/** The two decision tables people read: why a memory was (not) used, why a section was (not) shown. */
import type { MemoryDecision, MemoryPlan } from "../memory/index.js";
import type { PlanDecision, PromptPlan } from "../plan/index.js";
import { formatScore } from "../text/index.js";
import { type Column, renderTable, type Tone } from "./table.js";

const tone = (selected: boolean): Tone => (selected ? "good" : "bad");

const MEMORY_COLUMNS: Column<MemoryDecision & { rank: number }>[] = [
  { header: "#", cell: (d) => d.rank, align: "right" },
  { header: "memory", cell: (d) => d.memoryId },
  { header: "status", cell: (d) => d.status, tone: (d) => tone(d.status === "selected") },
  { header: "reason", cell: (d) => d.reason, tone: (d) => tone(d.status === "selected") },
  { header: "authority", cell: (d) => d.authority },
  { header: "score", cell: (d) => formatScore(d.score), align: "right" },
  { header: "chars", cell: (d) => d.candidateChars, align: "right" },
  { header: "tokens", cell: (d) => d.candidateTokens, align: "right" },
  { header: "related", cell: (d) => d.relatedMemoryId },
  { header: "detail", cell: (d) => d.detail, tone: () => "muted" },
];

/**
 * The memory decision table, one row per candidate in rank order.
 *
 * @example console.log(memoryDecisionTable(plan, false));
 */
export function memoryDecisionTable(plan: MemoryPlan, color: boolean): string {
  const rows = plan.decisions.map((d, i) => ({ ...d, rank: i + 1 }));
  const head = `Memory selection — scope ${JSON.stringify(plan.userScope)}, tokenizer ${plan.tokenizer}, ${plan.selectedMemoryIds.length}/${plan.candidateCount} selected, ${plan.usedChars} chars / ${plan.usedTokens} tokens`;
  return `${head}\n${renderTable(rows, MEMORY_COLUMNS, color)}`;
}

const SEGMENT_COLUMNS: Column<PlanDecision>[] = [
  { header: "segment", cell: (d) => d.name },
  { header: "prio", cell: (d) => d.priority, align: "right" },
  { header: "value", cell: (d) => d.budgetPriority, align: "right" },
  { header: "req", cell: (d) => (d.required ? "yes" : "") },
  {
    header: "status",
    cell: (d) => d.status,
    tone: (d) => (d.status === "included" ? "good" : d.status === "dropped" ? "bad" : "muted"),
  },
  { header: "reason", cell: (d) => d.reason },
  { header: "chars", cell: (d) => d.originalChars, align: "right" },
  { header: "tokens", cell: (d) => d.originalTokens ?? null, align: "right" },
  { header: "detail", cell: (d) => d.detail, tone: () => "muted" },
];

/**
 * The segment decision table, one row per segment in display order.
 *
 * @example console.log(segmentDecisionTable(plan, false));
 */
export function segmentDecisionTable(plan: PromptPlan, color: boolean): string {
  const budget = [
    plan.budgetChars === null ? "unbounded chars" : `${plan.budgetChars} chars`,
    plan.budgetTokens === null ? null : `${plan.budgetTokens} tokens`,
  ]
    .filter((x) => x !== null)
    .join(", ");
  const head = `Prompt plan — budget ${budget}, tokenizer ${plan.tokenizer}, used ${plan.usedChars} chars / ${plan.usedTokens} tokens`;
  return `${head}\n${renderTable(plan.decisions, SEGMENT_COLUMNS, color)}`;
}
