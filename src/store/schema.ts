/**
 * The memory record (docs/sources.md "Memory store") as a zod schema: the single source of both
 * validation and the record types. camelCase in the API and in JSONL.
 */
import { createHash } from "node:crypto";
import { z } from "zod";
import { invalidFromZod } from "../errors/index.js";
import { AUTHORITIES, type Authority, type Provenance, provenanceFields } from "../memory/index.js";
import { isBlank, isoTimestamp, strictSchema, textString } from "../text/index.js";

// The stores keep UTF-8: a lone surrogate cannot round-trip, so it is rejected up front
// (the package-wide rule, `textString`). PostgreSQL text cannot hold U+0000, so no record
// holds it on any backend (JSONL moves between them).
/** Text a store keeps: well-formed Unicode without U+0000 (record fields, scopes, filters). */
export const storedText = textString.refine((s) => !s.includes("\u0000"), {
  message: "must not contain U+0000 (NUL)",
});
const text = storedText;
/** Non-blank {@link storedText} (ids, scopes, kinds, categories, tags). */
export const storedNonBlank = text.refine((s) => !isBlank(s), { message: "must not be blank" });
const nonBlank = storedNonBlank;
const timestamp = isoTimestamp;

/** Record kinds the package knows; any other non-blank kind is accepted as given. */
export const KNOWN_KINDS = ["profile", "conversation", "fact", "episodic"] as const;
export type MemoryKind = (typeof KNOWN_KINDS)[number] | (string & {});

/** A record's provenance: the memory stage's provenance fields, well-formed, unknown keys rejected. */
export const MemorySourceSchema = z.strictObject(provenanceFields(nonBlank));
/** The provenance of a stored record: the same type as selection's {@link Provenance}. */
export type MemorySource = Provenance;

/**
 * One memory record as callers and JSONL lines give it. Defaults: `kind` "fact",
 * `category` "general", `tags` [], `summary` "", `importance` 0.5. `storedAt` is optional
 * on input (see {@link MemoryStore.add}); unknown fields are rejected (fail closed: a
 * misspelt field must not vanish silently on import).
 */
export const MemoryRecordSchema = z.strictObject({
  memoryId: nonBlank,
  /** Compared exactly (no trim, no case fold), like docs/memory-selection.md scopes. */
  userScope: nonBlank,
  kind: nonBlank.default("fact"),
  category: nonBlank.default("general"),
  tags: z.array(nonBlank).default([]),
  content: nonBlank,
  summary: text.default(""),
  importance: z.number().min(0).max(1).default(0.5),
  conflictKey: nonBlank.nullable().optional(),
  authority: z.enum(AUTHORITIES).nullable().optional(),
  source: MemorySourceSchema,
  storedAt: timestamp.optional(),
});
/** A stored memory's status: recalled (`active`), or held by the takeover gate (`quarantined`). */
export type MemoryStatus = "active" | "quarantined";
export const MEMORY_STATUSES = ["active", "quarantined"] as const;

/** A record as the caller passes it (defaults not yet applied). */
export type MemoryRecordInput = z.input<typeof MemoryRecordSchema>;

/** A stored record: every field present; absent slot/authority are `null`. */
export interface MemoryRecord {
  memoryId: string;
  userScope: string;
  kind: MemoryKind;
  category: string;
  tags: string[];
  content: string;
  summary: string;
  importance: number;
  conflictKey: string | null;
  authority: Authority | null;
  source: MemorySource;
  storedAt: string;
}

/**
 * Validates one record; the first problem becomes an `InvalidInputError` whose path
 * starts with `prefix` (e.g. `records[3].source.capturedAt`). `storedAt` falls back to
 * `now`, then to `source.capturedAt` — the store never reads a clock.
 */
export function parseRecord(
  value: unknown,
  prefix: ReadonlyArray<string | number>,
  now?: string,
): MemoryRecord {
  const r = strictSchema(MemoryRecordSchema).safeParse(value);
  if (!r.success) {
    throw invalidFromZod(r.error, prefix);
  }
  const d = r.data;
  return {
    memoryId: d.memoryId,
    userScope: d.userScope,
    kind: d.kind,
    category: d.category,
    tags: [...d.tags],
    content: d.content,
    summary: d.summary,
    importance: d.importance,
    conflictKey: d.conflictKey ?? null,
    authority: d.authority ?? null,
    source: { ...d.source },
    storedAt: d.storedAt ?? now ?? d.source.capturedAt,
  };
}

/**
 * The canonical JSONL line of a record (no newline): fixed key order, `conflictKey` and
 * `authority` only when set. Export writes exactly this, so export → import → export is
 * byte-identical.
 */
export function recordToJsonLine(r: MemoryRecord): string {
  const out: Record<string, unknown> = {
    memoryId: r.memoryId,
    userScope: r.userScope,
    kind: r.kind,
    category: r.category,
    tags: r.tags,
    content: r.content,
    summary: r.summary,
    importance: r.importance,
  };
  if (r.conflictKey !== null) out.conflictKey = r.conflictKey;
  if (r.authority !== null) out.authority = r.authority;
  out.source = {
    sourceId: r.source.sourceId,
    sourceType: r.source.sourceType,
    title: r.source.title,
    capturedAt: r.source.capturedAt,
  };
  out.storedAt = r.storedAt;
  return JSON.stringify(out);
}

/**
 * The id of a memory written without one (`memory add`, the MCP `remember` tool): `mem-`
 * and 16 hex digits of the SHA-256 of its scope, content and capture time, so the same
 * write made twice is the same memory and any other write is a new one.
 *
 * @example derivedMemoryId("u1", "Prefers tabs", "2026-11-30T09:00:00Z") // "mem-…" (20 chars)
 */
export function derivedMemoryId(userScope: string, content: string, now: string): string {
  const digest = createHash("sha256")
    .update(`${userScope}\u0000${content}\u0000${now}`, "utf8")
    .digest("hex");
  return `mem-${digest.slice(0, 16)}`;
}
