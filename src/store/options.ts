/**
 * Validation of the stores' arguments (SQLite and PostgreSQL alike): option schemas, zod →
 * InvalidInputError, the recall sizes both take when opened, and the detail of an open
 * error. Scopes and filters follow the record rules (schema.ts): a scope that
 * no record can have is an error, not a silent miss — and never a neighbour's scope (a lone
 * surrogate would reach the database as U+FFFD).
 */
import { z } from "zod";
import { invalidFromZod, nodeErrorCode } from "../errors/index.js";
import { isoTimestamp } from "../text/index.js";
import { storedNonBlank, storedText } from "./schema.js";
import type { GetOptions, ListOptions, RecallOptions } from "./types.js";

/** Default number of candidates scored in full per recall. */
export const DEFAULT_POOL_SIZE = 500;

/**
 * Work budget of one recall: the searched terms' document frequencies in the scope sum to
 * at most this. When the query's terms exceed it, the most common are left out of the
 * search (rarest kept first; they carry the most IDF weight; the left-out terms still
 * count in every candidate's score), and if the rarest term alone exceeds it, only its
 * most recently written matches are candidates. Small and specific searches are never
 * affected.
 */
export const MATCH_BUDGET = 10_000;

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

/**
 * An error's message, led by its code (an SQLite, PostgreSQL or Node error code) when it has
 * one: the detail of a {@link StoreOpenError} from either backend.
 *
 * @example
 * ```ts
 * describeOpenError(Object.assign(new Error("no such file"), { code: "ENOENT" }));
 * // "ENOENT: no such file"
 * ```
 */
export function describeOpenError(err: unknown): string {
  if (!(err instanceof Error)) return String(err);
  const code = nodeErrorCode(err);
  return code === undefined ? err.message : `${code}: ${err.message}`;
}

/**
 * The recall sizes both backends take from their open options, validated alike: `poolSize`
 * (1 to 100 000, default {@link DEFAULT_POOL_SIZE}) and `matchBudget` (≥ 1, default
 * {@link MATCH_BUDGET}); an out-of-range value is an InvalidInputError naming the option.
 *
 * @example
 * ```ts
 * recallSizes({ poolSize: 200 }); // { poolSize: 200, matchBudget: 10000 }
 * ```
 */
export function recallSizes(options: { poolSize?: number; matchBudget?: number }): {
  poolSize: number;
  matchBudget: number;
} {
  const poolSize = parseWith(
    z.number().int().min(1).max(100_000),
    options.poolSize ?? DEFAULT_POOL_SIZE,
    "poolSize",
  );
  const matchBudget = parseWith(
    z.number().int().min(1),
    options.matchBudget ?? MATCH_BUDGET,
    "matchBudget",
  );
  return { poolSize, matchBudget };
}

/** {@link ListEntriesOptions} as listEntries validates them. */
export const ListEntriesOptionsSchema = z.strictObject({
  userScope: nonBlank,
  status: z.enum(["active", "quarantined", "all"]).default("all"),
  kinds: z.array(storedText).optional(),
  categories: z.array(storedText).optional(),
  limit: z.number().int().min(1).max(1000).default(100),
  after: storedText.optional(),
});

/** One page of a scope's entries, as both dialects read it. */
export interface EntryPageQuery {
  userScope: string;
  status: "active" | "quarantined" | "all";
  kinds?: readonly string[];
  categories?: readonly string[];
  limit: number;
  after?: string;
}

/**
 * listEntries' options validated, defaults applied and absent fields left out.
 *
 * @example entryPageQuery({ userScope: "u1" }) // { userScope: "u1", status: "all", limit: 100 }
 */
export function entryPageQuery(options: unknown): EntryPageQuery {
  const o = parseWith(ListEntriesOptionsSchema, options, "options");
  return {
    userScope: o.userScope,
    status: o.status,
    limit: o.limit,
    ...(o.after === undefined ? {} : { after: o.after }),
    ...(o.kinds === undefined ? {} : { kinds: o.kinds }),
    ...(o.categories === undefined ? {} : { categories: o.categories }),
  };
}

/** The options of getEntry, history and approve: the scope the id is looked up in. */
export const ScopeOptionsSchema = z.strictObject({ userScope: nonBlank });

/** A memoryId argument: a stored id's rules (any other value can match no memory). */
export const MemoryIdSchema = nonBlank;

/** {@link ForgetTarget} as forget validates it (exactly one of memoryId and `all: true`). */
export const ForgetTargetSchema = z.union([
  z.strictObject({ userScope: nonBlank, memoryId: nonBlank }),
  z.strictObject({
    userScope: nonBlank,
    all: z.literal(true),
    kinds: z.array(storedText).optional(),
    categories: z.array(storedText).optional(),
  }),
]);
