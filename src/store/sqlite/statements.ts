/**
 * The SQL of the SQLite store: its prepared statements (reading the row of columns.ts),
 * the write of one record (row and FTS terms), and how parameters are encoded
 * (scope-prefixed terms, JSON lists).
 */
import type Database from "better-sqlite3";
import { instantMillis } from "../../text/index.js";
import { rowToRecord } from "../row.js";
import { recordToJsonLine } from "../schema.js";
import { recordTerms } from "../terms.js";
import type { PreparedWrite, ScopeBudget } from "../write-gate.js";
import type { WriteOutcome } from "../write-outcome.js";
import { COLUMNS, type Row } from "./columns.js";
import { scopePrefix } from "./prefix.js";
import type { StatsDelta } from "./stats.js";

export { scopePrefix } from "./prefix.js";

/** A list parameter for `json_each` (null: no filter). */
export function jsonOrNull(list: readonly string[] | undefined): string | null {
  return list === undefined ? null : JSON.stringify(list);
}

/** The statements of one open database, by name; see {@link prepareStatements}. */
export type Statements = Record<
  | "findId"
  | "saveVersion"
  | "scopeUsage"
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
  | "byRowids",
  Database.Statement
>;

/** The FTS terms of a record: its index terms, each prefixed with the scope's hash. */
function ftsTerms(r: {
  userScope: string;
  content: string;
  summary: string;
  tags: readonly string[];
}) {
  const terms = recordTerms(r);
  const prefix = scopePrefix(r.userScope);
  return { terms, text: terms.map((t) => prefix + t).join(" ") };
}

/**
 * Upserts one record by (`userScope`, `memoryId`) (row and FTS terms): the same id in
 * another scope is another memory. A replaced row is kept as a version (memory_versions);
 * `invalidate` drops the vector of a record whose content or category changes (see
 * vectors.ts). Only active memories are in the FTS index and the recall statistics. Runs
 * inside the caller's transaction.
 */
export function writeRecord(
  s: Statements,
  w: PreparedWrite,
  delta: StatsDelta,
  budget: ScopeBudget,
  path: ReadonlyArray<string | number>,
  invalidate: (rowid: number) => void,
): WriteOutcome {
  const r = w.record;
  const existing = s.findId.get(r.userScope, r.memoryId) as
    | (Row & { stored_ms: number; bytes: number })
    | undefined;
  budget.add(r.userScope, w.bytes, existing === undefined, path);
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
    w.status,
    w.rule,
    instantMillis(r.storedAt),
    w.bytes,
  ];
  const next = ftsTerms(r);
  if (existing === undefined) {
    const info = s.insert.run(r.memoryId, ...values, 1);
    if (w.status === "active") {
      s.ftsInsert.run(info.lastInsertRowid, next.text);
      delta.add({ userScope: r.userScope, terms: next.terms }, 1);
    }
    return "inserted";
  }
  // A vector is of the content and filed under the category: either changed, it is stale.
  if (existing.content !== r.content || existing.category !== r.category) {
    invalidate(existing.rowid);
  }
  const old = rowToRecord(existing);
  s.saveVersion.run(
    existing.user_scope,
    existing.memory_id,
    existing.version,
    recordToJsonLine(old),
    existing.status,
    existing.gate_rule,
    existing.stored_ms,
    existing.bytes,
  );
  if (existing.status === "active") {
    delta.add({ userScope: r.userScope, terms: recordTerms(old) }, -1);
    s.ftsDelete.run(existing.rowid);
  }
  s.update.run(...values, existing.version + 1, existing.rowid);
  if (w.status === "active") {
    delta.add({ userScope: r.userScope, terms: next.terms }, 1);
    s.ftsInsert.run(existing.rowid, next.text);
  }
  return "updated";
}

/** Prepares every statement of the store once per open database. */
export function prepareStatements(db: Database.Database): Statements {
  const setCols = `user_scope = ?, kind = ?, category = ?, tags = ?, content = ?, summary = ?,
    importance = ?, conflict_key = ?, authority = ?, source_id = ?, source_type = ?,
    source_title = ?, captured_at = ?, captured_ms = ?, stored_at = ?, status = ?, gate_rule = ?,
    stored_ms = ?, bytes = ?, version = ?`;
  return {
    findId: db.prepare(
      `SELECT ${COLUMNS}, m.stored_ms, m.bytes FROM memories m WHERE m.user_scope = ? AND m.memory_id = ?`,
    ),
    saveVersion: db.prepare(`INSERT INTO memory_versions (user_scope, memory_id, version, record,
      status, gate_rule, stored_ms, bytes) VALUES (?, ?, ?, ?, ?, ?, ?, ?)`),
    scopeUsage: db.prepare(`SELECT
      (SELECT count(*) FROM memories WHERE user_scope = :scope) AS records,
      (SELECT coalesce(sum(bytes), 0) FROM memories WHERE user_scope = :scope)
        + (SELECT coalesce(sum(bytes), 0) FROM memory_versions WHERE user_scope = :scope) AS bytes`),
    insert: db.prepare(`INSERT INTO memories (memory_id, user_scope, kind, category, tags,
      content, summary, importance, conflict_key, authority, source_id, source_type,
      source_title, captured_at, captured_ms, stored_at, status, gate_rule, stored_ms, bytes,
      version)
      VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`),
    update: db.prepare(`UPDATE memories SET ${setCols} WHERE rowid = ?`),
    ftsInsert: db.prepare("INSERT INTO memory_fts (rowid, terms) VALUES (?, ?)"),
    ftsDelete: db.prepare("DELETE FROM memory_fts WHERE rowid = ?"),
    // BINARY collation compares UTF-8 bytes, which is code-point order for the
    // well-formed strings the schema admits.
    exportAll: db.prepare(`SELECT ${COLUMNS} FROM memories m ORDER BY m.user_scope, m.memory_id`),
    bumpCount: db.prepare("UPDATE store_stats SET memory_count = memory_count + ? WHERE id = 1"),
    countAll: db.prepare("SELECT memory_count AS n FROM store_stats WHERE id = 1"),
    countScope: db.prepare("SELECT count(*) AS n FROM memories WHERE user_scope = ?"),
    getOne: db.prepare(`SELECT ${COLUMNS} FROM memories m
      WHERE m.memory_id = :id AND (:scope IS NULL OR m.user_scope = :scope)
      ORDER BY m.user_scope LIMIT 1`),
    byRowids: db
      .prepare(`SELECT ${COLUMNS} FROM memories m
      WHERE m.rowid IN (SELECT value FROM json_each(:ids)) AND +m.user_scope = :scope
        AND m.status = 'active'`)
      .raw(),
    // list and listKinds read raw rows (see RawRow): a profile list runs per assembly.
    list: db
      .prepare(`SELECT ${COLUMNS} FROM memories m
      WHERE m.user_scope = :scope AND m.status = 'active'
        AND (:cats IS NULL OR m.category IN (SELECT value FROM json_each(:cats)))
      ORDER BY m.memory_id`)
      .raw(),
    // Separate statement pinned to the (user_scope, kind) index: a profile lookup in a
    // scope of 1M memories takes < 1 ms instead of scanning the scope in id order.
    listKinds: db
      .prepare(`SELECT ${COLUMNS} FROM memories m INDEXED BY memories_scope_kind
      WHERE m.user_scope = :scope
        AND m.kind IN (SELECT value FROM json_each(:kinds)) AND m.status = 'active'
        AND (:cats IS NULL OR m.category IN (SELECT value FROM json_each(:cats)))
      ORDER BY m.memory_id`)
      .raw(),
  };
}
