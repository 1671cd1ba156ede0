/** What a store's batch write reports per record. */
import type { PreparedWrite } from "./write-gate.js";

/**
 * What writing one record did: the row of its (`userScope`, `memoryId`) was new, or
 * replaced. The same id in another scope is another memory: a write never learns whether
 * another scope holds its id.
 */
export type WriteOutcome = "inserted" | "updated";

/** Writes records (screened and measured) in one transaction: an outcome per record, in order. */
export type WriteBatch = (
  records: readonly PreparedWrite[],
) => WriteOutcome[] | Promise<WriteOutcome[]>;
