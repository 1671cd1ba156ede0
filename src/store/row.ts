/**
 * The memory row both backends read (SQLite `memories`, PostgreSQL `promptctx_memories`:
 * the same column names) and the record it maps to. One mapping, so a record reads back
 * alike from either store (byte-identical exports).
 */
import type { Authority } from "../memory/index.js";
import type { MemoryRecord } from "./schema.js";

/** The record columns of a memory row; each backend adds its own row key. */
export interface MemoryRow {
  memory_id: string;
  user_scope: string;
  kind: string;
  category: string;
  tags: string;
  content: string;
  summary: string;
  importance: number;
  conflict_key: string | null;
  authority: string | null;
  source_id: string;
  source_type: string;
  source_title: string;
  captured_at: string;
  stored_at: string;
}

/**
 * The record a memory row holds: snake_case columns to the camelCase record, `tags` parsed
 * from its JSON list, the provenance columns gathered into `source`. The row is trusted
 * (it was validated on write), so nothing is re-checked here.
 *
 * @example
 * ```ts
 * const rows = db.prepare(`SELECT ${COLUMNS} FROM memories m`).all() as Row[];
 * const records = rows.map(rowToRecord);
 * ```
 */
export function rowToRecord(r: MemoryRow): MemoryRecord {
  return {
    memoryId: r.memory_id,
    userScope: r.user_scope,
    kind: r.kind,
    category: r.category,
    tags: JSON.parse(r.tags) as string[],
    content: r.content,
    summary: r.summary,
    importance: r.importance,
    conflictKey: r.conflict_key,
    // The schema admits only AUTHORITIES (or null) on write.
    authority: r.authority as Authority | null,
    source: {
      sourceId: r.source_id,
      sourceType: r.source_type,
      title: r.source_title,
      capturedAt: r.captured_at,
    },
    storedAt: r.stored_at,
  };
}
