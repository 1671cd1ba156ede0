/**
 * Validation of the stores' arguments (SQLite and PostgreSQL alike): option schemas, zod →
 * InvalidInputError. Scopes and filters follow the record rules (schema.ts): a scope that
 * no record can have is an error, not a silent miss — and never a neighbour's scope (a lone
 * surrogate would reach the database as U+FFFD).
 */
import { z } from "zod";
import { invalidFromZod } from "../errors/index.js";
import { isoTimestamp } from "../text/index.js";
import { storedNonBlank, storedText } from "./schema.js";
import type { GetOptions, ListOptions, RecallOptions } from "./types.js";

const nonBlank = storedNonBlank;
const timestamp = isoTimestamp;

/** {@link RecallOptions} as recall validates them (limit defaults to 20). */
export const RecallOptionsSchema = z.object({
  userScope: nonBlank,
  limit: z.number().int().min(1).max(1000).default(20),
  categories: z.array(storedText).optional(),
  asOf: timestamp,
  weights: z
    .object({ lexical: z.number(), recency: z.number(), importance: z.number() })
    .optional(),
});

/** {@link ListOptions} as list validates them. */
export const ListOptionsSchema = z.object({
  userScope: nonBlank,
  kinds: z.array(storedText).optional(),
  categories: z.array(storedText).optional(),
});

/** {@link GetOptions} as get validates them. */
export const GetOptionsSchema = z.object({ userScope: nonBlank.optional() });

/** `value` parsed by `schema`; the first problem is an InvalidInputError under `prefix`. */
export function parseWith<T>(schema: z.ZodType<T>, value: unknown, prefix: string): T {
  const r = schema.safeParse(value);
  if (!r.success) throw invalidFromZod(r.error, [prefix]);
  return r.data;
}

/** The `now` option of add and import: an ISO-8601 timestamp, or absent. */
export function parseNow(now: string | undefined): string | undefined {
  return now === undefined ? undefined : parseWith(timestamp, now, "now");
}
