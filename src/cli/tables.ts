/**
 * The decision tables people read: why a memory was (not) used, why a section or a layer
 * was (not) shown, why a message was (not) sent; and the assembly report built from them.
 */
import type { ConversationDecision, ConversationPlan } from "../conversation/index.js";
import type { MemoryDecision, MemoryPlan } from "../memory/index.js";
import type { PlanDecision, PromptPlan } from "../plan/index.js";
import { formatScore } from "../text/index.js";
import type { AssemblyManifest, LayerManifest } from "../trace/index.js";
import { type Column, fitText, renderTable, type TableStyle, type Tone } from "./table.js";

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

type MessageRow = ConversationDecision & { role?: string | undefined };

const CONVERSATION_COLUMNS: Column<MessageRow>[] = [
  { header: "message", cell: (d) => d.messageId },
  { header: "turn", cell: (d) => d.turn, align: "right" },
  {
    header: "status",
    cell: (d) => d.status,
    tone: (d) => (d.status === "kept" ? "good" : "bad"),
    whole: true,
  },
  { header: "reason", cell: (d) => d.reason, whole: true },
  { header: "tokens", cell: (d) => d.tokens, align: "right" },
  {
    header: "transforms",
    cell: (d) => d.transforms.map((t) => t.kind).join(", "),
    elastic: true,
  },
  { header: "detail", cell: (d) => d.detail, elastic: true },
];

// The role column, shown after the message id when the caller knows every message's role.
const ROLE_COLUMN: Column<MessageRow> = { header: "role", cell: (d) => d.role ?? null };

/**
 * The conversation decision table, one row per input message in input order, under a head
 * with the budget, the tokens used and the first kept message; `roles` (message id → role)
 * adds a role column.
 *
 * @example console.log(conversationDecisionTable(plan, { color: false, width: 80 }));
 */
export function conversationDecisionTable(
  plan: Pick<ConversationPlan, "decisions" | "budgetTokens" | "usedTokens" | "firstKeptId">,
  style: TableStyle,
  roles?: ReadonlyMap<string, string>,
): string {
  const [first, ...rest] = CONVERSATION_COLUMNS as [Column<MessageRow>, ...Column<MessageRow>[]];
  const columns = roles === undefined ? CONVERSATION_COLUMNS : [first, ROLE_COLUMN, ...rest];
  const rows = plan.decisions.map((d) => ({ ...d, role: roles?.get(d.messageId) }));
  const head = `Conversation plan — budget ${plan.budgetTokens} tokens, used ${plan.usedTokens}, first kept ${plan.firstKeptId}`;
  return `${head}\n${renderTable(rows, columns, style)}`;
}

/**
 * A titled block of prose for people: the title, a rule as long as it, the text.
 *
 * @example titled("Prompt", "hello") // "Prompt\n======\nhello\n"
 */
export function titled(title: string, text: string): string {
  return `${title}\n${"=".repeat(title.length)}\n${text}\n`;
}

/** What an assembly report shows: the assembly's JSON view. */
export interface AssemblyParts {
  readonly prompt: string;
  readonly manifest: AssemblyManifest;
  readonly memoryPlan: MemoryPlan | null;
  readonly segmentPlan: PromptPlan;
}

/**
 * The people's view of an assembly: the layer table, the memory and segment decision
 * tables, the notes (the caller's, then source failures) and the prompt, fitted to the
 * style's width.
 *
 * @example process.stdout.write(assemblyReport(out, [], { color: false, width: 80 }));
 */
export function assemblyReport(
  out: AssemblyParts,
  notes: readonly string[],
  style: TableStyle,
): string {
  const parts = [layerTable(out.manifest, style)];
  if (out.memoryPlan !== null) parts.push(memoryDecisionTable(out.memoryPlan, style));
  parts.push(segmentDecisionTable(out.segmentPlan, style));
  const lines = [
    ...notes,
    ...out.manifest.failures.map(
      (f) => `source ${f.sourceId} (${f.slot}): ${f.reason}: ${f.message}`,
    ),
  ];
  if (lines.length > 0) parts.push(lines.join("\n"));
  parts.push(titled("Prompt", out.prompt));
  return fitText(parts.join("\n\n"), style);
}
