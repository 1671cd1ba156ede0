/**
 * The request and response schemas of the memory management routes (list, read, history,
 * approve, forget): one source for validation and for the OpenAPI document.
 */
import { z } from "zod";
import { GATE_MODES, TAKEOVER_RULES } from "../memory/index.js";
import { storedNonBlank, storedText } from "../store/index.js";

const nonBlank = storedNonBlank;
const optionalScope = nonBlank
  .optional()
  .describe("The scope (the token's scope for a scoped token; required otherwise).");

/** A comma-separated query list (`a,b`), empty entries dropped. */
const csv = z
  .string()
  .transform((s) =>
    s
      .split(",")
      .map((x) => x.trim())
      .filter((x) => x !== ""),
  )
  .pipe(z.array(storedText));

/** `GET /v1/memories?userScope=&status=&limit=&after=&kinds=&categories=`. */
export const ListMemoriesQuerySchema = z.strictObject({
  userScope: optionalScope,
  status: z.enum(["active", "quarantined", "all"]).optional().describe("Default all."),
  limit: z
    .string()
    .regex(/^[0-9]{1,4}$/, "must be an integer in [1, 1000]")
    .transform(Number)
    .pipe(z.number().int().min(1).max(1000))
    .optional()
    .describe("Entries per page, 1..1000 (default 100)."),
  after: storedText.optional().describe("The previous page's `next`."),
  kinds: csv.optional().describe("Comma-separated kinds."),
  categories: csv.optional().describe("Comma-separated categories."),
});

/** `?userScope=` of the routes of one memory. */
export const MemoryQuerySchema = z.strictObject({ userScope: optionalScope });

/** `POST /v1/memories/{memoryId}/approve`. */
export const ApproveRequestSchema = z.strictObject({ userScope: optionalScope });

/** `POST /v1/memories/forget`: one memory, or every memory of the scope (`all: true`). */
export const ForgetRequestSchema = z.strictObject({
  userScope: optionalScope,
  memoryId: nonBlank.optional().describe("The memory to forget (or `all: true`)."),
  all: z
    .literal(true)
    .optional()
    .describe("Every memory of the scope (narrowed by kinds/categories)."),
  kinds: z.array(storedText).optional().describe("With all: only these kinds."),
  categories: z.array(storedText).optional().describe("With all: only these categories."),
});

const record = z.record(z.string(), z.unknown());

/** A memory with its status, the rule that holds it, and its version. */
export const MemoryEntrySchema = z
  .object({
    memoryId: z.string(),
    userScope: z.string(),
    status: z.enum(["active", "quarantined"]),
    rule: z.enum(TAKEOVER_RULES).nullable(),
    version: z.number().int(),
  })
  .catchall(z.unknown())
  .describe("The memory record (every field) plus status, rule and version.");

export const MemoryPageSchema = z.object({
  userScope: z.string(),
  entries: z.array(MemoryEntrySchema),
  next: z.string().nullable().describe("`after` of the next page; null on the last."),
});

export const MemoryHistorySchema = z.object({
  memoryId: z.string(),
  userScope: z.string(),
  versions: z
    .array(
      z.object({
        version: z.number().int(),
        storedAt: z.string(),
        status: z.enum(["active", "quarantined"]),
        rule: z.enum(TAKEOVER_RULES).nullable(),
        current: z.boolean(),
        record,
      }),
    )
    .describe("Oldest first; the last is the current version."),
});

export const ForgetResponseSchema = z.object({
  userScope: z.string(),
  memories: z.number().int().describe("Memories forgotten (0 for an id the scope does not hold)."),
  removed: z.number().int().describe("Records removed: every version of those memories."),
});

/** The gate modes a server may run with (`promptctx serve --memory-gate`). */
export const GateModeSchema = z.enum(GATE_MODES);
