/**
 * Validation of the stores' arguments (SQLite and PostgreSQL alike): option schemas, zod →
 * InvalidInputError. Scopes and filters follow the record rules (schema.ts): a scope that
 * no record can have is an error, not a silent miss — and never a neighbour's scope (a lone
 * surrogate would reach the database as U+FFFD).
 */
import { z } from "zod";
import { invalidFromZod } from "../errors/index.js";
import { isBlank, isoTimestamp, isWellFormedText, parseInstantParts } from "../text/index.js";
import { storedNonBlank, storedText } from "./schema.js";
import type { ListOptions, RecallOptions } from "./types.js";

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

/** {@link ListOptions} as list validates them. */
export type ParsedListOptions = z.output<typeof ListOptionsSchema>;
/** {@link RecallOptions} as recall validates them. */
export type ParsedRecallOptions = z.output<typeof RecallOptionsSchema>;

/** {@link ListOptionsSchema}'s answer (an InvalidInputError under "options" when invalid). */
export function parseListOptions(value: unknown): ParsedListOptions {
  return plainListOptions(value) ?? parseWith(ListOptionsSchema, value, "options");
}

/** {@link RecallOptionsSchema}'s answer (an InvalidInputError under "options" when invalid). */
export function parseRecallOptions(value: unknown): ParsedRecallOptions {
  return plainRecallOptions(value) ?? parseWith(RecallOptionsSchema, value, "options");
}

// The usual options checked without zod (a request lists and recalls once each; zod costs
// more than the checks): the schemas' own predicates on a plain object of known keys.
// Anything else (null: not checked here) goes to the schema, which has the last word and
// the error messages. test/store/options.test.ts holds the two to the same answers.

const LIST_KEYS: ReadonlySet<string> = new Set(["userScope", "kinds", "categories"]);
const RECALL_KEYS: ReadonlySet<string> = new Set(["userScope", "limit", "categories", "asOf"]);

/** What {@link storedText} accepts. */
function isStoredText(v: unknown): v is string {
  return typeof v === "string" && isWellFormedText(v) && !v.includes("\u0000");
}

/** A list of {@link storedText} strings, copied (null: not one). */
function storedList(v: unknown): string[] | null {
  if (!Array.isArray(v)) return null;
  const out: string[] = [];
  for (let i = 0; i < v.length; i++) {
    const s: unknown = v[i];
    if (!isStoredText(s)) return null;
    out.push(s);
  }
  return out;
}

/** `v` as a record when it is a plain object whose own keys are all in `keys`. */
function plainRecord(v: unknown, keys: ReadonlySet<string>): Record<string, unknown> | null {
  if (typeof v !== "object" || v === null || Object.getPrototypeOf(v) !== Object.prototype) {
    return null;
  }
  for (const k of Reflect.ownKeys(v)) if (typeof k !== "string" || !keys.has(k)) return null;
  return v as Record<string, unknown>;
}

/** What {@link parseListOptions} answers for the plain case, or null. */
export function plainListOptions(value: unknown): ParsedListOptions | null {
  const o = plainRecord(value, LIST_KEYS);
  if (o === null) return null;
  const { userScope, kinds, categories } = o;
  if (!isStoredText(userScope) || isBlank(userScope)) return null;
  const k = kinds === undefined ? undefined : storedList(kinds);
  const c = categories === undefined ? undefined : storedList(categories);
  if (k === null || c === null) return null;
  // A key given as undefined is kept, as the schema keeps it.
  return {
    userScope,
    ...("kinds" in o ? { kinds: k } : {}),
    ...("categories" in o ? { categories: c } : {}),
  };
}

/** What {@link parseRecallOptions} answers for the plain case (no weights), or null. */
export function plainRecallOptions(value: unknown): ParsedRecallOptions | null {
  const o = plainRecord(value, RECALL_KEYS);
  if (o === null) return null;
  const { userScope, limit, categories, asOf } = o;
  if (!isStoredText(userScope) || isBlank(userScope)) return null;
  const count = limit === undefined ? 20 : limit;
  if (typeof count !== "number" || !Number.isInteger(count) || count < 1 || count > 1000) {
    return null;
  }
  const c = categories === undefined ? undefined : storedList(categories);
  if (c === null) return null;
  const instant = typeof asOf === "string" && isWellFormedText(asOf);
  if (!instant || parseInstantParts(asOf) === null) return null;
  return {
    userScope,
    limit: count,
    ...("categories" in o ? { categories: c } : {}),
    asOf,
  };
}
