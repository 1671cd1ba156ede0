/**
 * The SQL of the SQLite store: its prepared statements, the row they read and the record
 * it maps to, the write of one record (row and FTS terms), and how parameters are encoded
 * (scope-prefixed terms, JSON lists).
 */
import { createHash } from "node:crypto";
import type Database from "better-sqlite3";
import type { Authority } from "../memory/index.js";
import { instantMillis } from "../text/index.js";
import type { MemoryRecord } from "./schema.js";
import { ftsQuote, indexTerms } from "./terms.js";
import type { WriteOutcome } from "./write-outcome.js";

/** A `memories` row as {@link COLUMNS} reads it. */
export interface Row {
  rowid: number;
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

const COLUMNS = `m.rowid, m.memory_id, m.user_scope, m.kind, m.category, m.tags, m.content,
  m.summary, m.importance, m.conflict_key, m.authority, m.source_id, m.source_type,
  m.source_title, m.captured_at, m.stored_at`;

/**
 * The prefix of every indexed term of a scope: 16 hex digits of SHA-256 of the scope.
 * Terms are stored as `PREFIX + term` (e.g. `3f2a…9cpython`), so each scope has its own
 * postings: a recall can only reach its own scope's terms, bm25 document frequencies
 * are per scope (FTS5's total row count and average length stay store-wide, so another
 * scope's size still nudges bm25 — the lexical ratio in score.ts mostly cancels that),
 * and a search costs what the scope holds, not what the store holds. The exact `user_scope = ?`
 * comparison in the same SQL statement guards against hash collisions.
 */
export function scopePrefix(userScope: string): string {
  return createHash("sha256").update(userScope, "utf8").digest("hex").slice(0, 16);
}

/** The record a row holds. */
export function rowToRecord(r: Row): MemoryRecord {
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

/** `"PREFIXt1" OR "PREFIXt2" …` — every term quoted (a phrase, never an operator). */
export function matchExpression(prefix: string, terms: readonly string[]): string {
  return terms.map((t) => ftsQuote(prefix + t)).join(" OR ");
}

/** A list parameter for `json_each` (null: no filter). */
export function jsonOrNull(list: readonly string[] | undefined): string | null {
  return list === undefined ? null : JSON.stringify(list);
}

/** The statements of one open database, by name; see {@link prepareStatements}. */
export type Statements = Record<
  | "findId"
  | "insert"
  | "update"
  | "ftsInsert"
  | "ftsDelete"
  | "exportAll"
  | "bumpCount"
  | "countAll"
  | "countScope"
  | "getOne"
  | "list"
  | "listKinds"
  | "countMatches"
  | "recall",
  Database.Statement
>;

/**
 * Upserts one record by `memoryId` (row and FTS terms); a `memoryId` owned by another scope
 * is left as it is and reported as a conflict. Runs inside the caller's transaction.
 */
export function writeRecord(s: Statements, r: MemoryRecord): WriteOutcome {
  const existing = s.findId.get(r.memoryId) as { rowid: number; user_scope: string } | undefined;
  const values = [
    r.userScope,
    r.kind,
    r.category,
    JSON.stringify(r.tags),
    r.content,
    r.summary,
    r.importance,
    r.conflictKey,
    r.authority,
    r.source.sourceId,
    r.source.sourceType,
    r.source.title,
    r.source.capturedAt,
    instantMillis(r.source.capturedAt),
    r.storedAt,
  ];
  const prefix = scopePrefix(r.userScope);
  const terms = indexTerms([r.content, r.summary, ...r.tags].join("\n"))
    .map((t) => prefix + t)
    .join(" ");
  if (existing === undefined) {
    const info = s.insert.run(r.memoryId, ...values);
    s.ftsInsert.run(info.lastInsertRowid, terms);
    return "inserted";
  }
  if (existing.user_scope !== r.userScope) return "conflict";
  s.update.run(...values, existing.rowid);
  s.ftsDelete.run(existing.rowid);
  s.ftsInsert.run(existing.rowid, terms);
  return "updated";
}

/** Prepares every statement of the store once per open database. */
export function prepareStatements(db: Database.Database): Statements {
  const setCols = `user_scope = ?, kind = ?, category = ?, tags = ?, content = ?, summary = ?,
    importance = ?, conflict_key = ?, authority = ?, source_id = ?, source_type = ?,
    source_title = ?, captured_at = ?, captured_ms = ?, stored_at = ?`;
  return {
    findId: db.prepare("SELECT rowid, user_scope FROM memories WHERE memory_id = ?"),
    insert: db.prepare(`INSERT INTO memories (memory_id, user_scope, kind, category, tags,
      content, summary, importance, conflict_key, authority, source_id, source_type,
      source_title, captured_at, captured_ms, stored_at)
      VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`),
    update: db.prepare(`UPDATE memories SET ${setCols} WHERE rowid = ?`),
    ftsInsert: db.prepare("INSERT INTO memory_fts (rowid, terms) VALUES (?, ?)"),
    ftsDelete: db.prepare("DELETE FROM memory_fts WHERE rowid = ?"),
    // BINARY collation compares UTF-8 bytes, which is code-point order for the
    // well-formed strings the schema admits.
    exportAll: db.prepare(`SELECT ${COLUMNS} FROM memories m ORDER BY m.user_scope, m.memory_id`),
    bumpCount: db.prepare("UPDATE store_stats SET memory_count = memory_count + ? WHERE id = 1"),
    countAll: db.prepare("SELECT memory_count AS n FROM store_stats WHERE id = 1"),
    countScope: db.prepare("SELECT count(*) AS n FROM memories WHERE user_scope = ?"),
    getOne: db.prepare(`SELECT ${COLUMNS} FROM memories m WHERE m.memory_id = ?`),
    list: db.prepare(`SELECT ${COLUMNS} FROM memories m
      WHERE m.user_scope = :scope
        AND (:cats IS NULL OR m.category IN (SELECT value FROM json_each(:cats)))
      ORDER BY m.memory_id`),
    // Separate statement pinned to the (user_scope, kind) index: a profile lookup in a
    // scope of 1M memories takes < 1 ms instead of scanning the scope in id order.
    listKinds: db.prepare(`SELECT ${COLUMNS} FROM memories m INDEXED BY memories_scope_kind
      WHERE m.user_scope = :scope
        AND m.kind IN (SELECT value FROM json_each(:kinds))
        AND (:cats IS NULL OR m.category IN (SELECT value FROM json_each(:cats)))
      ORDER BY m.memory_id`),
    countMatches: db.prepare(
      "SELECT count(*) AS n FROM (SELECT 1 FROM memory_fts WHERE memory_fts MATCH ? LIMIT ?)",
    ),
    // The scope is in the WHERE clause twice: inside :match (every term carries the
    // scope prefix, so the index search itself stays in the scope) and as the exact
    // column comparison.
    // The inner query walks matches newest-first (rowid desc) and stops after :budget
    // rows, so bm25 is computed for a bounded number of rows; the outer query keeps the
    // best :pool by bm25 (ties by memory_id, so the pool never depends on row order).
    recall: db.prepare(`SELECT * FROM (
        SELECT ${COLUMNS}, bm25(memory_fts) AS bm25
        FROM memory_fts JOIN memories m ON m.rowid = memory_fts.rowid
        WHERE memory_fts MATCH :match
          AND m.user_scope = :scope
          AND (:cats IS NULL OR m.category IN (SELECT value FROM json_each(:cats)))
        ORDER BY memory_fts.rowid DESC
        LIMIT :budget
      )
      ORDER BY bm25, memory_id
      LIMIT :pool`),
  };
}
