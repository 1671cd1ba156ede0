/**
 * Assembly from inline data (docs/inline-assembly.md): the stateless contract a service in another
 * language uses. The request carries the mode, renderer, layout, budgets, the query with
 * its clock, and the slot data; in-memory sources are built from it and the same pipeline
 * as `assemble` runs (schemas, filters, both budget layers, renderers, manifest).
 */
import { z } from "zod";
import { InvalidInputError, invalidFromZod } from "../errors/index.js";
import { type CandidateInput, CandidateSchema } from "../memory/index.js";
import { RENDERER_NAMES } from "../render/index.js";
import {
  ConstraintRuleSchema,
  type ContextSource,
  constraintsSource,
  ObservationInputSchema,
  plannerSource,
  type RecallExtras,
  recallSource,
  type SourceItem,
  staticSource,
  TaskMemoryBuffer,
  TaskStateSchema,
  ToolCallSchema,
  ToolSpecSchema,
  ToolState,
  taskMemorySource,
  toolStateSource,
} from "../sources/index.js";
import { instantMillis, isoTimestamp, nonBlankString } from "../text/index.js";
import { TOKENIZER_NAMES, type TokenCounter } from "../tokens/index.js";
import { type Assembly, assemble } from "./assemble.js";

const nonBlank = nonBlankString;
const unit = z.number().min(0).max(1);
const budget = z.number().int().min(0).nullable();

const ProfileKeyValueSchema = z.strictObject({
  key: nonBlank,
  value: nonBlank,
  category: z.string().optional(),
  score: unit.optional(),
  updatedAt: isoTimestamp.optional(),
});
const ProfileTextSchema = z.strictObject({
  text: nonBlank,
  category: z.string().optional(),
  score: unit.optional(),
});

/** A recall candidate of docs/memory-selection.md plus what the recall line and the slot filter read. */
export const InlineRecallSchema = CandidateSchema.extend({
  importance: unit.optional().describe("Shown on the recall line (zh-CN: 0.50 when absent)."),
  category: z.string().optional(),
  tags: z.array(z.string()).optional(),
});

/** The slot data of an inline request (every slot optional; an absent one is empty). */
export const InlineSourcesSchema = z.strictObject({
  constraints: z.array(ConstraintRuleSchema).optional(),
  planner: TaskStateSchema.nullable().optional(),
  taskMemory: z.array(ObservationInputSchema).optional(),
  tools: z
    .strictObject({
      available: z.array(ToolSpecSchema),
      recentCalls: z.array(ToolCallSchema).optional(),
    })
    .optional(),
  profile: z.array(z.union([ProfileKeyValueSchema, ProfileTextSchema])).optional(),
  recall: z.array(InlineRecallSchema).optional(),
});
export type InlineSources = z.output<typeof InlineSourcesSchema>;

/**
 * `promptctx assemble-context` / `POST /v1/assemble-context` (docs/inline-assembly.md).
 *
 * @example AssembleContextRequestSchema.parse({ mode: "react", query: { text: "hi", userScope: "u1", now: "2026-11-30T09:00:00Z" } })
 */
export const AssembleContextRequestSchema = z.strictObject({
  mode: nonBlank.describe(
    "Schema mode: chat, tool, rag, react (an unknown mode falls back to chat).",
  ),
  renderer: z.enum(RENDERER_NAMES).default("en").describe("Slot renderer (default en)."),
  layout: z
    .enum(["cache", "priority"])
    .default("cache")
    .describe("cache: tiers with boundary markers; priority: slot order, blank-line separated."),
  tokenizer: z.enum(TOKENIZER_NAMES).optional().describe("Token counter (default estimate)."),
  budgetChars: budget
    .optional()
    .describe("Global char budget (default: the schema's, 2400); null = unbounded."),
  budgetTokens: budget.optional().describe("Global token budget (default none); null = unbounded."),
  query: z.strictObject({
    text: z.string(),
    userScope: nonBlank,
    now: isoTimestamp.describe("The clock for ages and recency (never read from the system)."),
  }),
  sources: InlineSourcesSchema.default({}),
});
/** An inline assembly request as the caller sends it. */
export type AssembleContextRequest = z.input<typeof AssembleContextRequestSchema>;

// Each id must be unique within its slot; a repeat is invalid input at its path.
function rejectRepeats(ids: ReadonlyArray<string | undefined>, path: Array<string | number>): void {
  const seen = new Set<string>();
  ids.forEach((id, i) => {
    if (id === undefined) return;
    if (seen.has(id)) throw new InvalidInputError(`duplicate id "${id}"`, [...path, i]);
    seen.add(id);
  });
}

const profileId = (entry: InlineProfileEntry, i: number): string =>
  "key" in entry ? entry.key : `profile-${i + 1}`;
type InlineProfileEntry = NonNullable<InlineSources["profile"]>[number];

function checkUnique(s: InlineSources): void {
  rejectRepeats(
    (s.constraints ?? []).map((c) => c.id),
    ["sources", "constraints"],
  );
  rejectRepeats(
    (s.taskMemory ?? []).map((o) => o.id),
    ["sources", "taskMemory"],
  );
  rejectRepeats(
    (s.tools?.available ?? []).map((t) => t.name),
    ["sources", "tools", "available"],
  );
  rejectRepeats((s.profile ?? []).map(profileId), ["sources", "profile"]);
  rejectRepeats(
    (s.recall ?? []).map((c) => c.memoryId),
    ["sources", "recall"],
  );
}

// Profile entries in the given order: `key: value` (structured) or free text.
function profileItems(entries: readonly InlineProfileEntry[]): SourceItem[] {
  return entries.map((e, rank) => {
    const item: SourceItem =
      "key" in e
        ? {
            id: e.key,
            text: `${e.key}: ${e.value}`,
            data: { type: "profile", key: e.key, value: e.value },
          }
        : { id: profileId(e, rank), text: e.text };
    item.rank = rank;
    if (e.category !== undefined) item.category = e.category;
    if (e.score !== undefined) item.score = e.score;
    if ("updatedAt" in e && e.updatedAt !== undefined) item.createdAt = e.updatedAt;
    return item;
  });
}

// Tool registry plus its recent calls, recorded oldest first so the slot shows them newest first.
function toolState(tools: InlineSources["tools"]): ToolState {
  const calls = [...(tools?.recentCalls ?? [])]
    .map((c, i) => ({ c, i, at: instantMillis(c.at) as number }))
    .sort((a, b) => a.at - b.at || a.i - b.i);
  const state = new ToolState(tools?.available ?? [], { maxCalls: calls.length });
  for (const { c } of calls) state.recordCall(c);
  return state;
}

function recall(entries: NonNullable<InlineSources["recall"]>): ContextSource {
  const candidates: CandidateInput[] = [];
  // Null-prototype maps: a memory id such as "__proto__" is only a key.
  const extras = {
    importance: Object.create(null) as Record<string, number>,
    categories: Object.create(null) as Record<string, string>,
    tags: Object.create(null) as Record<string, string[]>,
  } satisfies RecallExtras;
  for (const { importance, category, tags, ...candidate } of entries) {
    candidates.push(candidate);
    if (importance !== undefined) extras.importance[candidate.memoryId] = importance;
    if (category !== undefined) extras.categories[candidate.memoryId] = category;
    if (tags !== undefined) extras.tags[candidate.memoryId] = tags;
  }
  return recallSource(() => candidates, extras);
}

/** The in-memory sources of an inline request: one per slot kind, empty when absent. */
export function inlineSources(s: InlineSources): ContextSource[] {
  checkUnique(s);
  const buffer = new TaskMemoryBuffer(Math.max(1, s.taskMemory?.length ?? 0));
  for (const o of s.taskMemory ?? []) buffer.add(o);
  return [
    constraintsSource({ rules: s.constraints ?? [] }),
    plannerSource(() => s.planner ?? null),
    taskMemorySource(buffer),
    toolStateSource(toolState(s.tools)),
    staticSource("profile", ["profile"], profileItems(s.profile ?? [])),
    recall(s.recall ?? []),
  ];
}

/**
 * Assembles from inline slot data (docs/inline-assembly.md): `{prompt, manifest, memoryPlan, segmentPlan}`
 * as `assemble` returns them. Invalid input throws `InvalidInputError` with the field path;
 * required content over budget throws `PromptBudgetError`.
 *
 * @example
 * const out = await assembleContext({
 *   mode: "react", renderer: "zh-CN", layout: "priority",
 *   query: { text: "天气", userScope: "u1", now: "2026-11-30T09:00:00Z" },
 *   sources: { constraints: [{ id: "c1", level: "forbid", text: "不允许执行 rm -rf" }] },
 * });
 */
export async function assembleContext(
  request: unknown,
  options: { tokenCounter?: TokenCounter } = {},
): Promise<Assembly> {
  const parsed = AssembleContextRequestSchema.safeParse(request);
  if (!parsed.success) throw invalidFromZod(parsed.error);
  const r = parsed.data;
  return assemble({
    mode: r.mode,
    query: { text: r.query.text, userScope: r.query.userScope },
    now: r.query.now,
    sources: inlineSources(r.sources),
    renderer: r.renderer,
    layout: r.layout,
    ...(options.tokenCounter !== undefined
      ? { tokenCounter: options.tokenCounter }
      : r.tokenizer !== undefined
        ? { tokenizer: r.tokenizer }
        : {}),
    ...(r.budgetChars !== undefined ? { budgetChars: r.budgetChars } : {}),
    ...(r.budgetTokens !== undefined ? { budgetTokens: r.budgetTokens } : {}),
  });
}
