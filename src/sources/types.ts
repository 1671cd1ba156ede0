/**
 * The source contract of docs/assembler.md: a source has an id, says which slot kinds it
 * supports, and fetches items for a slot. Items are plain data validated at the edge.
 */
import { z } from "zod";
import { AUTHORITIES, MatchSchema, ProvenanceSchema } from "../memory/index.js";
import type { CacheTier } from "../plan/index.js";
import { isoTimestamp, nonBlankString, textString } from "../text/index.js";
import type { InstructionReport } from "./instructions/parts.js";
import type { SkillReport } from "./skills/model.js";

const nonBlank = nonBlankString;
const timestamp = isoTimestamp;

/** Fields that make an item a docs/memory-selection.md memory candidate (recall items carry them). */
export const MemoryFieldsSchema = z.object({
  userScope: nonBlank,
  sourceRank: z.number().int().min(1),
  provenance: ProvenanceSchema,
  conflictKey: nonBlank.nullable().optional(),
  authority: z.enum(AUTHORITIES).optional(),
  /** How a hybrid recall found it (docs/memory-selection.md); its decision carries it. */
  match: MatchSchema.optional(),
});
export type MemoryFields = z.input<typeof MemoryFieldsSchema>;

/**
 * The structured form of an item (docs/inline-assembly.md): what a renderer's locale table formats,
 * while `text` stays the item's plain (`en`) rendering. One variant per kind of line.
 */
export const ItemDataSchema = z.discriminatedUnion("type", [
  z.object({ type: z.literal("constraint"), level: textString, text: textString }),
  z.object({
    type: z.literal("task"),
    taskId: textString,
    status: textString,
    phase: textString,
    done: z.number().int().min(0),
    total: z.number().int().min(0),
  }),
  z.object({
    type: z.literal("next"),
    nextStep: textString.optional(),
    nextTool: textString.optional(),
  }),
  z.object({
    type: z.literal("tool"),
    name: textString,
    description: textString,
    requiredArgs: z.array(textString),
  }),
  z.object({ type: z.literal("call"), tool: textString, ok: z.boolean(), summary: textString }),
  z.object({ type: z.literal("profile"), key: textString, value: textString }),
]);
export type ItemData = z.infer<typeof ItemDataSchema>;

/** One item a source returns for a slot. Atomic: budgets drop whole items, never cut one. */
export const SourceItemSchema = z.object({
  id: nonBlank,
  text: nonBlank,
  category: textString.optional(),
  tags: z.array(textString).optional(),
  score: z.number().min(0).max(1).optional(),
  /** Shown next to recall lines (`importance=0.70`). */
  importance: z.number().min(0).max(1).optional(),
  createdAt: timestamp.optional(),
  pinned: z.boolean().optional(),
  /** Position the source gives the item (lower first); breaks ties after score and age. */
  rank: z.number().int().min(0).optional(),
  sourceRef: textString.optional(),
  /**
   * Budget cascade level (docs/sources.md KB tiers: golden 0, hybrid 1, correction 2). A slot whose
   * items all carry one is packed by the cascade instead of greedily: under budget, whole
   * levels ≥ 1 are skipped from the least valuable, then level 0 loses its lowest-ranked
   * items — first against the slot's own budget, then against the room the global plan
   * leaves the layer. `category` names the level in decision details.
   */
  cascadeLevel: z.number().int().min(0).optional(),
  memory: MemoryFieldsSchema.optional(),
  /** Structured form for the renderers' locale tables (`text` is the plain rendering). */
  data: ItemDataSchema.optional(),
});
export type SourceItem = z.input<typeof SourceItemSchema>;

/** What every source is asked with: the clock is a parameter, never read. */
export interface SourceQuery {
  /** The user's query text for this turn. */
  text: string;
  /** The trusted caller's user scope (memory of other scopes never passes). */
  userScope: string;
  /** The schema mode being assembled. */
  mode: string;
  /** ISO-8601 instant used for ages and recency. */
  now: string;
}

/** Declarative filter applied to what a source returns (docs/assembler.md). */
export const SlotFilterSchema = z.object({
  categories: z.array(textString).optional(),
  requireTags: z.array(textString).optional(),
  minScore: z.number().min(0).max(1).optional(),
  topK: z.number().int().min(0).optional(),
  maxAgeHours: z.number().min(0).optional(),
  tokenBudget: z.number().int().min(0).optional(),
  charBudget: z.number().int().min(0).optional(),
});
export type SlotFilter = z.infer<typeof SlotFilterSchema>;

/** One slot of a mode's schema. */
export interface SlotSpec {
  /** Cognitive role (`constraints`, `planner`, …) or a caller-defined kind (`kb`, `skills`). */
  kind: string;
  /** Heading override; renderers otherwise use their locale table, then the kind. */
  title?: string;
  /** `list` (default): one `- item` line each; `block`: items as paragraphs (documents). */
  itemStyle?: "list" | "block";
  required?: boolean;
  /** Global priority: lower is kept longer and shown earlier. */
  priority?: number;
  cacheTier?: CacheTier;
  filter?: SlotFilter;
  /** Per-slot fetch timeout in milliseconds. */
  timeoutMs?: number;
  /** Never a trimming candidate anywhere (red lines, identity). Default: true for constraints. */
  neverTruncate?: boolean;
}

/**
 * What a source decided for a slot beyond its items, for the manifest. Deterministic: a
 * function of the source's data, the slot and the query.
 */
export interface SourceReport {
  /** Instruction files skipped or cut, with the reason (the `instructions` sources). */
  instructions?: InstructionReport;
  /** Skills matched with their trigger reasons, or the selection abstained (`skills` sources). */
  skills?: SkillReport;
  /**
   * Why what the source returned may be empty or surprising, each with a stable code — the
   * hints a recall answer carries (e.g. `recall_full_text_only`: a PostgreSQL store without
   * pgvector recalls by words only).
   */
  hints?: readonly SourceHint[];
}

/** One hint of a source: a stable machine-readable code and a message for people. */
export interface SourceHint {
  code: string;
  message: string;
}

/**
 * A context source (docs/assembler.md). `fetch` may be sync or async; it receives an AbortSignal
 * that fires on timeout, and should stop work when it does.
 *
 * @example
 * const rules: ContextSource = {
 *   id: "rules", supports: (k) => k === "constraints",
 *   fetch: () => [{ id: "r1", text: "[forbid] no rm -rf", pinned: true }],
 * };
 */
export interface ContextSource {
  readonly id: string;
  supports(kind: string): boolean;
  fetch(
    slot: SlotSpec,
    query: SourceQuery,
    signal: AbortSignal,
  ): Promise<readonly SourceItem[]> | readonly SourceItem[];
  /**
   * Optional: the source's own decisions for `slot` and `query` (see {@link SourceReport}),
   * asked once per assembly, after the fetch, for each slot it filled successfully.
   */
  report?(slot: SlotSpec, query: SourceQuery): SourceReport | null;
}
