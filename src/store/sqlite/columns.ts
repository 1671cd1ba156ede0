/**
 * The row the SQLite store's statements read: its columns, in order, and the raw array a
 * statement returns for them (mapped to a record by ../row.ts).
 */
import type { MemoryRow } from "../row.js";

/** A `memories` row as {@link COLUMNS} reads it. */
export interface Row extends MemoryRow {
  rowid: number;
  status: "active" | "quarantined";
  gate_rule: string | null;
  version: number;
}

export const COLUMNS = `m.rowid, m.memory_id, m.user_scope, m.kind, m.category, m.tags, m.content,
  m.summary, m.importance, m.conflict_key, m.authority, m.source_id, m.source_type,
  m.source_title, m.captured_at, m.stored_at, m.status, m.gate_rule, m.version`;

/** A `memories` row as a raw statement reads {@link COLUMNS}: the values in that order. */
export type RawRow = [
  rowid: number,
  memoryId: string,
  userScope: string,
  kind: string,
  category: string,
  tags: string,
  content: string,
  summary: string,
  importance: number,
  conflictKey: string | null,
  authority: string | null,
  sourceId: string,
  sourceType: string,
  sourceTitle: string,
  capturedAt: string,
  storedAt: string,
  status: "active" | "quarantined",
  gateRule: string | null,
  version: number,
];

/** The {@link Row} of a raw row (one record mapping for every read: row.ts). */
export function rawToRow(r: RawRow): Row {
  return {
    rowid: r[0],
    memory_id: r[1],
    user_scope: r[2],
    kind: r[3],
    category: r[4],
    tags: r[5],
    content: r[6],
    summary: r[7],
    importance: r[8],
    conflict_key: r[9],
    authority: r[10],
    source_id: r[11],
    source_type: r[12],
    source_title: r[13],
    captured_at: r[14],
    stored_at: r[15],
    status: r[16],
    gate_rule: r[17],
    version: r[18],
  };
}
