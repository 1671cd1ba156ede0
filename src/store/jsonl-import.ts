/**
 * JSONL import, for every backend (SQLite and PostgreSQL alike): lines → parsed records →
 * batches, each written in one transaction by the store's batch writer; bad lines are
 * skipped with their line number and reason.
 */
import { z } from "zod";
import { PromptctxError } from "../errors/index.js";
import { isBlank } from "../text/index.js";
import { readLines } from "./jsonl.js";
import { parseNow, parseWith } from "./options.js";
import { parseRecord } from "./schema.js";
import type { ImportLineError, ImportOptions, ImportResult, JsonlInput } from "./types.js";
import { type PreparedWrite, prepareWrite, type WritePolicy } from "./write-gate.js";
import type { WriteBatch } from "./write-outcome.js";

export type { WriteBatch } from "./write-outcome.js";

/**
 * {@link MemoryStore.importJsonl} over a store's batch writer: each batch of
 * `options.batchSize` valid lines is one `writeBatch` call, reported to `onProgress` once
 * written.
 */
export async function importJsonlBatches(
  input: JsonlInput,
  options: ImportOptions,
  policy: WritePolicy,
  writeBatch: WriteBatch,
): Promise<ImportResult> {
  const batchSize = parseWith(z.number().int().min(1), options.batchSize ?? 1000, "batchSize");
  const maxErrors = parseWith(z.number().int().min(0), options.maxErrors ?? 1000, "maxErrors");
  const now = parseNow(options.now);
  const result: ImportResult = { imported: 0, skipped: 0, errors: [] };
  const skip = (e: ImportLineError) => {
    result.skipped++;
    if (result.errors.length < maxErrors) result.errors.push(e);
  };
  let pending: Array<{ line: number; write: PreparedWrite }> = [];
  let batch = 0;
  let lines = 0;
  const commit = async () => {
    result.imported += (await writeBatch(pending.map((p) => p.write))).length;
    for (const { write: w } of pending) {
      if (w.rule !== null) {
        const { memoryId, userScope } = w.record;
        result.quarantined = [...(result.quarantined ?? []), { memoryId, userScope, rule: w.rule }];
      }
    }
    pending = [];
    batch++;
    options.onProgress?.({
      batch,
      lines,
      imported: result.imported,
      skipped: result.skipped,
    });
  };
  for await (const { line, text } of readLines(input)) {
    lines = line;
    if (isBlank(text)) continue;
    let value: unknown;
    try {
      value = JSON.parse(text);
    } catch (err) {
      const why = err instanceof Error ? err.message : "invalid JSON";
      skip({ line, path: null, message: `not valid JSON: ${why}` });
      continue;
    }
    try {
      pending.push({ line, write: prepareWrite(parseRecord(value, [], now), policy, []) });
    } catch (err) {
      if (!(err instanceof PromptctxError)) throw err;
      skip({ line, path: err.path, message: err.message });
      continue;
    }
    if (pending.length >= batchSize) await commit();
  }
  if (pending.length > 0) await commit();
  return result;
}
