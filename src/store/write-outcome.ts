/** What a store's batch write reports per record, and the error of a cross-scope id. */
import { InvalidInputError } from "../errors/index.js";
import type { MemoryRecord } from "./schema.js";

/**
 * What writing one record did: the row was new, replaced (same scope), or left alone
 * because its `memoryId` belongs to another scope.
 */
export type WriteOutcome = "inserted" | "updated" | "conflict";

/** Writes records in one transaction: an outcome per record, in order. */
export type WriteBatch = (
  records: readonly MemoryRecord[],
) => WriteOutcome[] | Promise<WriteOutcome[]>;

/**
 * The error of a record whose `memoryId` another scope owns, at `path`. It does not name
 * that scope: a writer learns nothing about scopes other than its own.
 */
export function scopeConflict(r: MemoryRecord, path: Array<string | number>): InvalidInputError {
  return new InvalidInputError(
    `memoryId ${JSON.stringify(r.memoryId)} already exists in another scope; a memory never moves between scopes`,
    path,
  );
}
