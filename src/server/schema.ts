/**
 * The HTTP-only request and response schemas (docs/surfaces.md). `select-memory` and `plan-prompt`
 * reuse the JSON contracts of their stages as they are; `assemble` is the workspace job's
 * request with the clock made a required field (the service never reads it for results).
 */
import { z } from "zod";
import { isoTimestamp, nonBlankString, textString } from "../text/index.js";
import { TOKENIZER_NAMES } from "../tokens/index.js";

const nonBlank = nonBlankString;
const budget = z.number().int().min(0).nullable();

/** Slot renderers a request may name. */
export const RENDERERS = ["en", "zh-CN", "tagged"] as const;

/**
 * `POST /v1/assemble`: the main job over a workspace directory.
 *
 * @example AssembleRequestSchema.parse({ query: "add an index", now: "2026-11-30T09:00:00Z" })
 */
export const AssembleRequestSchema = z.object({
  workspace: nonBlank
    .optional()
    .describe(
      "Workspace directory, resolved inside the server's workspace root (default: the root itself).",
    ),
  query: textString.describe("The user's query for this turn."),
  mode: nonBlank
    .optional()
    .describe("Schema mode: chat, tool, rag, react (default: the config's, else react)."),
  user: nonBlank.optional().describe("User scope (default: the config's `user`)."),
  tokenizer: z.enum(TOKENIZER_NAMES).optional().describe("Token counter; excludes `model`."),
  model: nonBlank
    .optional()
    .describe(
      "Pick the tokenizer from a model name (gpt-4o, gpt-4, claude-…); excludes `tokenizer`.",
    ),
  budgetChars: budget
    .optional()
    .describe("Global char budget (default: the config's, else 12000); null = unbounded."),
  budgetTokens: budget
    .optional()
    .describe("Global token budget (default: the config's, else none); null = unbounded."),
  now: isoTimestamp.describe(
    "The clock for recency and age filters (required: the service never reads its own).",
  ),
  renderer: z
    .enum(RENDERERS)
    .optional()
    .describe("Slot renderer (default: the config's, else en)."),
});
/** The `POST /v1/assemble` request. */
export type AssembleRequest = z.input<typeof AssembleRequestSchema>;

/** The error object of every non-2xx response. */
export const ErrorObjectSchema = z.object({
  error: z.object({
    code: z
      .string()
      .describe("Stable machine-readable code (invalid_input, prompt_budget_exceeded, …)."),
    message: z.string(),
    path: z.string().nullable().describe("The offending field, e.g. candidates[3].score."),
    details: z
      .object({
        need: z.number().int().describe("Tokens the request needs at least."),
        budget: z.number().int().describe("Tokens it has (the context window, or the room)."),
        over: z.number().int().describe("need − budget."),
        parts: z
          .array(z.object({ part: z.string(), tokens: z.number().int() }))
          .describe("Tokens by part: system, tools, reserves, ask, latest_round, …"),
        fix: z.string().describe("What would make it fit."),
      })
      .optional()
      .describe("prompt_budget_exceeded only: the numbers behind the refusal."),
  }),
});

/** `GET /healthz`. */
export const HealthSchema = z.object({
  status: z.literal("ok"),
  store: z.boolean().describe("True when a shared memory store is open."),
});

/**
 * `POST /v1/assemble` and `/v1/assemble-context` success: the same object as `promptctx
 * assemble --format json` and `promptctx assemble-context`.
 */
export const AssembleResponseSchema = z.object({
  prompt: z.string(),
  manifest: z
    .record(z.string(), z.unknown())
    .describe(
      "The layer manifest: layers with item decisions (KB chunks: selected, level_skipped, char/token_budget_exceeded with the cascade step), layout, cache keys, both decision logs, and `skills` (matched skills with trigger reasons, cap, capped, ties, overlaps, invalid skills with reasons, abstained) or null.",
    ),
  memoryPlan: z.record(z.string(), z.unknown()).nullable(),
  segmentPlan: z.record(z.string(), z.unknown()),
});

/** Records one `POST /v1/memories` may carry (one transaction). */
export const MAX_MEMORIES_PER_REQUEST = 10_000;

/**
 * `POST /v1/memories`: a batch of records (docs/sources.md records, as in the JSONL; `storedAt`
 * optional, default `source.capturedAt`). Each record is validated by the store's own
 * schema (`MemoryRecordSchema`), so errors name `records[i].field`.
 */
export const MemoriesRequestSchema = z.strictObject({
  records: z
    .array(z.unknown())
    .min(1)
    .max(MAX_MEMORIES_PER_REQUEST)
    .describe(
      "Memory records; written in one transaction (all or nothing), upserted by memoryId within their scope.",
    ),
});

/** `POST /v1/memories` success. */
export const MemoriesResponseSchema = z.object({
  written: z.number().int().describe("Records written (inserted or replaced)."),
  memoryIds: z.array(z.string()).describe("The ids written, in request order, each once."),
  quarantined: z
    .array(z.object({ memoryId: z.string(), userScope: z.string(), rule: z.string() }))
    .optional()
    .describe(
      "Records the takeover gate held (stored with status quarantined, never recalled until approved); absent when none.",
    ),
});

/** `POST /v1/recall`: recall in one scope, by words and (with an embedder) by meaning (the CLI's `memory recall`). */
export const RecallRequestSchema = z.strictObject({
  userScope: nonBlank.describe(
    "The only scope searched (replaced by the token's scope for a scoped token).",
  ),
  query: z.string().describe("Query text."),
  limit: z.number().int().min(1).max(1000).optional().describe("Hits to return (default 20)."),
  categories: z.array(nonBlank).optional().describe("Only memories of these categories."),
  asOf: isoTimestamp
    .optional()
    .describe(
      "The instant recalled at: ages are measured against it and each memory is seen as it was stored then (its last version written at or before it); default: the server's clock (echoed in the answer: pin it to replay).",
    ),
});
/** The `POST /v1/recall` request. */
export type RecallRequest = z.input<typeof RecallRequestSchema>;

/** `POST /v1/recall` success: what `promptctx memory recall --json` prints. */
export const RecallResponseSchema = z.object({
  userScope: z.string(),
  query: z.string(),
  asOf: z.string(),
  hits: z
    .array(z.record(z.string(), z.unknown()))
    .describe(
      "Ranked hits with their score breakdowns; with an embedder each hit also has `match`: {path: lexical|semantic|both, lexicalRank, semanticRank, similarity, semantic, fused, rrf}.",
    ),
  hints: z
    .array(z.object({ code: z.string(), message: z.string() }))
    .describe(
      "Why the answer may be empty or surprising (`query_only_stop_words`; `recall_full_text_only`: a PostgreSQL store without pgvector recalls by words only); empty when nothing needs saying.",
    ),
});
