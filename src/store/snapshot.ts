/**
 * Recall at an instant (`asOf` earlier than a replacement in the scope): each memory as it
 * was stored then — its last version (in write order) whose write time is at or before
 * `asOf`; a memory with no version that old is seen as its first version (a record whose
 * `storedAt` is after `asOf` was always recalled, its age counted as 0: that contract
 * stays) — when that version was active, ranked by rank.ts exactly as a live recall ranks
 * (same terms, IDF over the snapshot, same order). Both backends use it; the live index
 * only holds current versions, so a replay reads the scope's versions instead (its cost is
 * the scope's size, paid only by recalls from before a replacement).
 */
import { instantMillis } from "../text/index.js";
import { recallHit } from "./hits.js";
import { countsBm25, rankCandidates, termCounts } from "./rank.js";
import type { MemoryRecord } from "./schema.js";
import { queryWeights, type ScoreWeights } from "./score.js";
import { termPresence } from "./terms.js";
import type { StoreRecallHit } from "./types.js";
import type { MemoryStatus } from "./write-gate.js";

/** One stored version of a memory (the current one included). */
export interface StoredVersion {
  /** 1, 2, … in write order. */
  version: number;
  /** The store's time of the write (`storedAt`), in epoch ms. */
  storedMs: number;
  status: MemoryStatus;
  record: MemoryRecord;
}

/** Whether `v` is a better version than `b` at `asOfMs` (see the module notes). */
function better(v: StoredVersion, b: StoredVersion, asOfMs: number): boolean {
  const vIn = v.storedMs <= asOfMs;
  const bIn = b.storedMs <= asOfMs;
  if (vIn !== bIn) return vIn;
  return vIn ? v.version > b.version : v.version < b.version;
}

/**
 * The records visible at `asOfMs`: per memory of one scope, the highest version written
 * at or before it (else its first version), when active; ordered by memoryId.
 *
 * @example visibleAt([{ version: 1, storedMs: 0, status: "active", record }], 5).length // 1
 */
export function visibleAt(versions: readonly StoredVersion[], asOfMs: number): MemoryRecord[] {
  const best = new Map<string, StoredVersion>();
  for (const v of versions) {
    const key = v.record.memoryId;
    const b = best.get(key);
    if (b === undefined || better(v, b, asOfMs)) best.set(key, v);
  }
  return [...best.values()]
    .filter((v) => v.status === "active")
    .map((v) => v.record)
    .sort((a, b) => (a.memoryId < b.memoryId ? -1 : a.memoryId > b.memoryId ? 1 : 0));
}

/**
 * Ranks `records` (one scope's snapshot) for the query `terms` as a live recall would.
 *
 * @example rankSnapshot(records, ["python"], { asOf, weights: DEFAULT_WEIGHTS, limit: 20 })
 */
export function rankSnapshot(
  records: readonly MemoryRecord[],
  terms: readonly string[],
  options: { asOf: string; weights: ScoreWeights; limit: number; categories?: readonly string[] },
): StoreRecallHit[] {
  const cats = options.categories;
  const inScope = cats === undefined ? records : records.filter((r) => cats.includes(r.category));
  const counted = records.map((r) => termCounts(r));
  const n = records.length;
  const avgLength = n === 0 ? 0 : counted.reduce((a, c) => a + c.length, 0) / n;
  // Document frequencies over the whole scope (as the live statistics count them).
  const df = terms.map((t) => counted.filter((c) => c.tf.has(t)).length);
  const query = queryWeights(terms, n, df);
  const candidates = inScope
    .map((record) => {
      const has = termPresence([record.content, record.summary, ...record.tags].join("\n"), terms);
      return {
        memoryId: record.memoryId,
        importance: record.importance,
        capturedAt: record.source.capturedAt,
        has,
        record,
      };
    })
    .filter((c) => c.has.some((h) => h));
  const ranked = rankCandidates(candidates, query, options);
  return ranked.map((r, i) =>
    recallHit(
      r.candidate.record,
      { ...r.breakdown, bm25: countsBm25(query, termCounts(r.candidate.record), avgLength) },
      i + 1,
    ),
  );
}

/** Epoch ms of a stored record's write time. */
export function storedMillis(r: MemoryRecord): number {
  return instantMillis(r.storedAt) as number;
}
