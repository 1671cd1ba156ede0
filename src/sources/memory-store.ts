/**
 * The memory store as a context source (docs/sources.md): `recall_memory` runs a scoped recall
 * for the turn's query; `profile` lists the scope's `profile` records. The scope and the
 * clock always come from the {@link SourceQuery} (never from the source's construction),
 * so one source serves every user of a shared store.
 */
import { InvalidInputError } from "../errors/index.js";
import type { MemoryRecord, MemoryStore, StoreRecallHit } from "../store/index.js";
import { compareCodePoints, compareInstants, isBlank, parseInstant } from "../text/index.js";
import type { ContextSource, SlotSpec, SourceItem, SourceQuery } from "./types.js";

export interface MemoryStoreSourceOptions {
  /** Hits per recall (1..1000). Default 20. */
  limit?: number;
  /** Recall only these categories (else the slot filter's `categories`, else all). */
  categories?: readonly string[];
}

/** A recall hit as a source item: docs/memory-selection.md memory fields + score, importance, category. */
export function recallHitToItem(hit: StoreRecallHit): SourceItem {
  const memory: NonNullable<SourceItem["memory"]> = {
    userScope: hit.userScope,
    sourceRank: hit.rank,
    provenance: { ...hit.provenance },
  };
  if (hit.conflictKey !== null) memory.conflictKey = hit.conflictKey;
  if (hit.authority !== null) memory.authority = hit.authority;
  if (hit.match !== undefined) memory.match = { ...hit.match };
  return {
    id: hit.memoryId,
    text: hit.snippet,
    category: hit.category,
    tags: [...hit.tags],
    score: hit.score,
    importance: hit.importance,
    createdAt: hit.provenance.capturedAt,
    rank: hit.rank - 1,
    sourceRef: `memory:${hit.memoryId}`,
    memory,
  };
}

// Profile order: importance desc → capturedAt desc (instant) → memoryId asc (code points).
function compareProfile(a: MemoryRecord, b: MemoryRecord): number {
  if (a.importance !== b.importance) return b.importance - a.importance;
  const t = compareInstants(
    parseInstant(b.source.capturedAt) as bigint,
    parseInstant(a.source.capturedAt) as bigint,
  );
  return t !== 0 ? t : compareCodePoints(a.memoryId, b.memoryId);
}

/** A `profile` record as a source item: text `summary || content`. */
export function profileRecordToItem(r: MemoryRecord, index: number): SourceItem {
  return {
    id: r.memoryId,
    text: isBlank(r.summary) ? r.content : r.summary,
    category: r.category,
    tags: [...r.tags],
    importance: r.importance,
    createdAt: r.source.capturedAt,
    rank: index,
    sourceRef: `memory:${r.memoryId}`,
  };
}

/**
 * A source over a {@link MemoryStore} serving `recall_memory` and `profile`.
 *
 * - `recall_memory`: `store.recall(query.text, {userScope: query.userScope, asOf:
 *   query.now, limit, categories})` → items in recall rank order with the docs/memory-selection.md
 *   `memory` fields, score (= breakdown total), importance, category, tags and
 *   sourceRef `memory:ID`. Its report carries the store's own hints (`store.hints()`:
 *   `recall_full_text_only` from a PostgreSQL store without pgvector), which the
 *   manifest lists under `hints`, as recall answers carry them.
 * - `profile`: records of kind `profile` in the query's scope (category as stored, e.g.
 *   `identity`/`preference`), ordered by importance desc → capturedAt desc → memoryId.
 *
 * @example
 * const source = memoryStoreSource(openStore(".promptctx/memory.db"), { limit: 10 });
 */
export function memoryStoreSource(
  store: MemoryStore,
  options: MemoryStoreSourceOptions = {},
  id = "memory-store",
): ContextSource {
  if (typeof id !== "string" || isBlank(id)) {
    throw new InvalidInputError("source id must not be blank", "id");
  }
  const limit = options.limit ?? 20;
  if (!Number.isInteger(limit) || limit < 1 || limit > 1000) {
    throw new InvalidInputError("limit must be an integer in [1, 1000]", "limit");
  }
  const fixedCategories = options.categories === undefined ? undefined : [...options.categories];
  return {
    id,
    supports: (kind) => kind === "recall_memory" || kind === "profile",
    fetch: async (slot: SlotSpec, query: SourceQuery): Promise<SourceItem[]> => {
      if (slot.kind === "recall_memory") {
        const categories = fixedCategories ?? slot.filter?.categories;
        const hits = await store.recall(query.text, {
          userScope: query.userScope,
          asOf: query.now,
          limit,
          ...(categories === undefined ? {} : { categories }),
        });
        return hits.map(recallHitToItem);
      }
      if (slot.kind === "profile") {
        const records = await store.list({ userScope: query.userScope, kinds: ["profile"] });
        return [...records].sort(compareProfile).map(profileRecordToItem);
      }
      return [];
    },
    // A method of the store, not an import: loading this source never loads the store's code.
    report: (slot: SlotSpec) => {
      if (slot.kind !== "recall_memory") return null;
      const hints = store.hints?.() ?? [];
      return hints.length === 0 ? null : { hints: hints.map((h) => ({ ...h })) };
    },
  };
}
