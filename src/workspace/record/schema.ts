/**
 * The recording format (docs/inspector.md) as zod schemas: one JSON line per assembly,
 * `{recordVersion, at, kind, request, response}`. The envelope and the response are read
 * here; each kind's request is read by its replay runner (runners.ts). Unknown fields of
 * a response are kept (loose objects), so a replay compares everything that was recorded.
 */
import { z } from "zod";
import { CACHE_TIERS } from "../../plan/index.js";
import { ToolCallSchema } from "../../sources/index.js";
import { isoTimestamp, nonBlankString } from "../../text/index.js";
import { TOKENIZER_NAMES } from "../../tokens/index.js";

/** The version of the line format this build writes and reads. */
export const RECORD_VERSION = 1;

const budget = z.number().int().min(0).nullable();
const count = z.number().int().min(0);
const tier = z.enum(CACHE_TIERS);

/**
 * The memory store of a recorded request: a store file (`path`), or a store created from
 * JSONL for the length of the run (`seed`, what `demo` records), so the line carries its
 * own memories.
 */
export const StoreSpecSchema = z.union([
  z.strictObject({ path: nonBlankString }),
  z.strictObject({ seed: z.strictObject({ jsonl: z.string(), now: isoTimestamp }) }),
]);
export type StoreSpec = z.output<typeof StoreSpecSchema>;

/**
 * The request of an `assemble` line (CLI `assemble`, `demo`, `serve`'s `/v1/assemble`):
 * the workspace job's options. Relative paths resolve against the recording's directory.
 */
export const AssembleRecordRequestSchema = z.strictObject({
  workspace: nonBlankString,
  query: z.string(),
  now: isoTimestamp,
  mode: nonBlankString.optional(),
  user: nonBlankString.optional(),
  tokenizer: z.enum(TOKENIZER_NAMES).optional(),
  model: nonBlankString.optional(),
  budgetChars: budget.optional(),
  budgetTokens: budget.optional(),
  /** Absent: the workspace's own `.promptctx/memory.db`, if it exists. */
  store: StoreSpecSchema.optional(),
  cwd: nonBlankString.optional(),
  renderer: z.enum(["en", "zh-CN", "tagged"]).optional(),
  userFiles: z.array(nonBlankString).optional(),
  home: nonBlankString.optional(),
});
export type AssembleRecordRequest = z.output<typeof AssembleRecordRequestSchema>;

/**
 * The request of a `chat` line: one user turn. `toolCalls` are every call the chat made
 * before this turn, oldest first (the tool-state layer is rebuilt from them).
 */
export const ChatRecordRequestSchema = AssembleRecordRequestSchema.extend({
  turn: z.number().int().min(1),
  toolCalls: z.array(ToolCallSchema),
});
export type ChatRecordRequest = z.output<typeof ChatRecordRequestSchema>;

const ItemDecisionSchema = z.looseObject({
  id: z.string(),
  sourceId: z.string(),
  status: z.string(),
  reason: z.string(),
  score: z.number().nullable(),
  detail: z.string(),
});

const LayerSchema = z.looseObject({
  id: z.string(),
  required: z.boolean(),
  cacheTier: tier,
  budget: z.object({ chars: count.optional(), tokens: count.optional() }),
  used: z.object({ chars: count, tokens: count }),
  status: z.enum(["included", "dropped", "inactive", "skipped"]),
  reason: z.string(),
  detail: z.string(),
  versionId: z.string(),
  sourceRefs: z.array(z.string()),
  sources: z.array(z.string()),
  items: z.array(ItemDecisionSchema),
});

const MemoryDecisionSchema = z.looseObject({
  memoryId: z.string(),
  status: z.string(),
  reason: z.string(),
  score: z.number(),
  detail: z.string(),
});

const CacheKeysSchema = z.object({
  static: z.string().nullable(),
  session: z.string().nullable(),
  dynamic: z.string().nullable(),
});

const ManifestSchema = z.looseObject({
  promptVersion: z.string(),
  cacheKeys: CacheKeysSchema,
  tokenizer: z.string(),
  mode: z.string(),
  now: z.string(),
  budget: z.object({ chars: budget, tokens: budget }),
  used: z.object({ chars: count, tokens: count }),
  layers: z.array(LayerSchema),
  memoryDecisions: z.array(MemoryDecisionSchema).nullable(),
});

const PlanTierSchema = z.looseObject({
  tier,
  names: z.array(z.string()),
  chars: count,
  tokens: count,
  start: count,
  end: count,
});

const SegmentPlanSchema = z.looseObject({
  prompt: z.string(),
  tiers: z.array(PlanTierSchema),
  decisions: z.array(z.looseObject({ name: z.string(), status: z.string(), reason: z.string() })),
});

const ConversationPlanSchema = z.looseObject({
  messages: z.array(
    z.looseObject({
      id: z.string(),
      role: z.string(),
      content: z.array(z.looseObject({ type: z.string() })),
    }),
  ),
  decisions: z.array(
    z.looseObject({
      messageId: z.string(),
      status: z.string(),
      reason: z.string(),
      detail: z.string(),
      tokens: count,
      turn: count,
    }),
  ),
  usedTokens: count,
  budgetTokens: count,
});

/** A recorded assembly: the prompt, the manifest without `timings`, the decision logs. */
export const AssemblyResponseSchema = z.looseObject({
  prompt: z.string(),
  manifest: ManifestSchema,
  memoryPlan: z.looseObject({ decisions: z.array(MemoryDecisionSchema) }).nullable(),
  segmentPlan: SegmentPlanSchema,
  /** The conversation's plan (docs/conversation.md), for kinds that plan the whole request. */
  conversationPlan: ConversationPlanSchema.optional(),
});
export type AssemblyResponse = z.output<typeof AssemblyResponseSchema>;

/** A recorded failure: the error object the surface answered with. */
export const ErrorResponseSchema = z.strictObject({
  error: z.strictObject({ code: z.string(), message: z.string(), path: z.string().nullable() }),
});
export type ErrorResponse = z.output<typeof ErrorResponseSchema>;

/** What a line's `response` holds. */
export type RecordResponse = AssemblyResponse | ErrorResponse;

/** The envelope of one line; `request` is checked by the kind's runner, `response` by {@link responseSchemaOf}. */
export const RecordLineSchema = z.strictObject({
  recordVersion: z.literal(RECORD_VERSION),
  at: isoTimestamp,
  kind: nonBlankString,
  request: z.record(z.string(), z.unknown()),
  response: z.record(z.string(), z.unknown()),
});

/** One line, read and checked. */
export interface RecordLine {
  recordVersion: typeof RECORD_VERSION;
  at: string;
  kind: string;
  request: Record<string, unknown>;
  response: RecordResponse;
}

/** The schema a response is read with: the error object when it has `error`, else an assembly. */
export function responseSchemaOf(
  response: Record<string, unknown>,
): typeof ErrorResponseSchema | typeof AssemblyResponseSchema {
  return "error" in response ? ErrorResponseSchema : AssemblyResponseSchema;
}

/** True when a recorded response is a failure. */
export function isErrorResponse(response: RecordResponse): response is ErrorResponse {
  return "error" in response;
}
