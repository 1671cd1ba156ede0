/** Recall hits, and the glue from them to docs/memory-selection.md selection. */
import type { AdapterOptions, Authority } from "../memory/index.js";
import type { MemoryRecord } from "./schema.js";
import type { ScoreBreakdown } from "./score.js";
import type { StoreRecallHit } from "./types.js";

/** A recall hit from the stored record, its breakdown and its 1-based rank (any backend). */
export function recallHit(
  record: MemoryRecord,
  breakdown: ScoreBreakdown,
  rank: number,
): StoreRecallHit {
  return {
    memoryId: record.memoryId,
    snippet: record.content,
    userScope: record.userScope,
    score: breakdown.total,
    scoreBreakdown: breakdown,
    rank,
    provenance: { ...record.source },
    kind: record.kind,
    category: record.category,
    tags: record.tags,
    importance: record.importance,
    conflictKey: record.conflictKey,
    authority: record.authority,
  };
}

/**
 * The adapter maps (`conflictKeys`, `authorityByMemoryId`) built from the stored records
 * behind `hits`: slots and authority come from the trusted write path (whoever added the
 * record), never from the memory's prose.
 *
 * @example
 * const hits = store.recall("python", { userScope: "u1", asOf });
 * const candidates = candidatesFromRecallHits(hits, adapterOptionsFromHits(hits));
 */
export function adapterOptionsFromHits(hits: readonly StoreRecallHit[]): Required<AdapterOptions> {
  const conflictKeys: Record<string, string> = {};
  const authorityByMemoryId: Record<string, Authority> = {};
  for (const h of hits) {
    if (h.conflictKey !== null) {
      Object.defineProperty(conflictKeys, h.memoryId, {
        value: h.conflictKey,
        enumerable: true,
        writable: true,
        configurable: true,
      });
    }
    if (h.authority !== null) {
      Object.defineProperty(authorityByMemoryId, h.memoryId, {
        value: h.authority,
        enumerable: true,
        writable: true,
        configurable: true,
      });
    }
  }
  return { conflictKeys, authorityByMemoryId };
}
