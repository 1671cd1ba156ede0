/**
 * The SQLite store's management of stored memories: entries (status, rule, version),
 * pages, history, approve, forget, and the versions a recall into the past reads. Each runs
 * in one transaction; forget and approve take the write lock first (`BEGIN IMMEDIATE`).
 *
 * Forgetting erases: the connection runs with `secure_delete` (freed pages and cells are
 * zeroed), the FTS index is optimized in the forget's own transaction (its segments are
 * rewritten without the forgotten rows, so no term of them stays in a page), and after the
 * commit the WAL is checkpointed and truncated (the frames that held the old pages are
 * gone). A crash before the commit leaves the old state; after it, the new one.
 */

import type Database from "better-sqlite3";
import type { TakeoverRule } from "../../memory/index.js";
import { instantMillis } from "../../text/index.js";
import type { EntryPageQuery } from "../options.js";
import { rowToRecord } from "../row.js";
import { parseRecord } from "../schema.js";
import type { StoredVersion } from "../snapshot.js";
import { recordTerms } from "../terms.js";
import type { EntryPage, ForgetResult, MemoryEntry, MemoryVersion } from "../types.js";
import type { MemoryStatus } from "../write-gate.js";
import { COLUMNS, type RawRow, type Row, rawToRow } from "./columns.js";
import { scopePrefix } from "./prefix.js";
import { applyStats, StatsDelta, type StatsStatements } from "./stats.js";

/** A memory_versions row. */
interface VersionRow {
  version: number;
  record: string;
  status: MemoryStatus;
  gate_rule: string | null;
  stored_ms: number;
}

/** The entry of a row. */
export function rowToEntry(row: Row): MemoryEntry {
  return {
    ...rowToRecord(row),
    status: row.status,
    rule: row.gate_rule as TakeoverRule | null,
    version: row.version,
  };
}

function versionRecord(v: VersionRow) {
  return parseRecord(JSON.parse(v.record), ["record"]);
}

/** The management operations of one open database. */
export interface Manage {
  page(o: EntryPageQuery): EntryPage;
  entry(memoryId: string, userScope: string): MemoryEntry | null;
  history(memoryId: string, userScope: string): MemoryVersion[];
  approve(memoryId: string, userScope: string): MemoryEntry | null;
  forget(
    userScope: string,
    which: { memoryId: string } | { kinds?: readonly string[]; categories?: readonly string[] },
  ): ForgetResult;
  /** The latest write time (epoch ms) of the scope's replacements (version > 1), or null. */
  latestWrite(userScope: string): number | null;
  /** Every version of every memory of the scope (for a recall into the past). */
  versions(userScope: string): StoredVersion[];
}

/** The statements of this module, prepared once per connection. */
function prepareStatements(db: Database.Database) {
  const filters = `AND (:kinds IS NULL OR m.kind IN (SELECT value FROM json_each(:kinds)))
        AND (:cats IS NULL OR m.category IN (SELECT value FROM json_each(:cats)))`;
  return {
    one: db.prepare(
      `SELECT ${COLUMNS} FROM memories m WHERE m.user_scope = :scope AND m.memory_id = :id`,
    ),
    page: db
      .prepare(`SELECT ${COLUMNS} FROM memories m
      WHERE m.user_scope = :scope AND (:status IS NULL OR m.status = :status)
        AND (:after IS NULL OR m.memory_id > :after) ${filters}
      ORDER BY m.memory_id LIMIT :limit`)
      .raw(),
    versionsOf: db.prepare(`SELECT version, record, status, gate_rule, stored_ms
      FROM memory_versions WHERE user_scope = ? AND memory_id = ? ORDER BY version`),
    scopeVersions: db.prepare(`SELECT memory_id, version, record, status, gate_rule, stored_ms
      FROM memory_versions WHERE user_scope = ?`),
    scopeRows: db.prepare(`SELECT ${COLUMNS}, m.stored_ms FROM memories m WHERE m.user_scope = ?`),
    latest: db
      .prepare("SELECT max(stored_ms) FROM memories WHERE user_scope = ? AND version > 1")
      .pluck(),
    setActive: db.prepare(
      "UPDATE memories SET status = 'active', gate_rule = NULL WHERE rowid = ?",
    ),
    ftsInsert: db.prepare("INSERT INTO memory_fts (rowid, terms) VALUES (?, ?)"),
    ftsDelete: db.prepare("DELETE FROM memory_fts WHERE rowid = ?"),
    forgetRows: db
      .prepare(`SELECT ${COLUMNS} FROM memories m
      WHERE m.user_scope = :scope AND (:id IS NULL OR m.memory_id = :id) ${filters}`)
      .raw(),
    deleteVersions: db.prepare(
      "DELETE FROM memory_versions WHERE user_scope = ? AND memory_id = ?",
    ),
    deleteRow: db.prepare("DELETE FROM memories WHERE rowid = ?"),
    bumpCount: db.prepare("UPDATE store_stats SET memory_count = memory_count + ? WHERE id = 1"),
    optimize: db.prepare("INSERT INTO memory_fts (memory_fts) VALUES ('optimize')"),
  };
}
type ManageStatements = ReturnType<typeof prepareStatements>;

/** The one row of `memoryId` in the scope, or undefined. */
function rowOf(st: ManageStatements, memoryId: string, userScope: string): Row | undefined {
  return st.one.get({ scope: userScope, id: memoryId }) as Row | undefined;
}

/** Approve: a quarantined row becomes active, indexed and counted. */
function approver(db: Database.Database, st: ManageStatements, stats: StatsStatements) {
  return db.transaction((memoryId: string, userScope: string): MemoryEntry | null => {
    const row = rowOf(st, memoryId, userScope);
    if (row === undefined) return null;
    if (row.status === "quarantined") {
      st.setActive.run(row.rowid);
      const terms = recordTerms(rowToRecord(row));
      const prefix = scopePrefix(userScope);
      st.ftsInsert.run(row.rowid, terms.map((t) => prefix + t).join(" "));
      const delta = new StatsDelta();
      delta.add({ userScope, terms }, 1);
      applyStats(stats, delta);
    }
    const after = rowOf(st, memoryId, userScope);
    return after === undefined ? null : rowToEntry(after);
  });
}

type ForgetWhich =
  | { memoryId: string }
  | { kinds?: readonly string[]; categories?: readonly string[] };

/** Forget's transaction: rows, versions, index entries and counts, then the index optimized. */
function forgetter(
  db: Database.Database,
  st: ManageStatements,
  stats: StatsStatements,
  dropVector: (rowid: number) => void,
) {
  return db.transaction((userScope: string, which: ForgetWhich): ForgetResult => {
    const byId = "memoryId" in which;
    const rows = (
      st.forgetRows.all({
        scope: userScope,
        id: byId ? which.memoryId : null,
        kinds: !byId && which.kinds !== undefined ? JSON.stringify(which.kinds) : null,
        cats: !byId && which.categories !== undefined ? JSON.stringify(which.categories) : null,
      }) as RawRow[]
    ).map(rawToRow);
    if (rows.length === 0) return { memories: 0, removed: 0 };
    const delta = new StatsDelta();
    let removed = 0;
    for (const row of rows) {
      if (row.status === "active") {
        delta.add({ userScope, terms: recordTerms(rowToRecord(row)) }, -1);
        st.ftsDelete.run(row.rowid);
      }
      removed += 1 + st.deleteVersions.run(userScope, row.memory_id).changes;
      // Its vector and vector state go with it (a vector is of the forgotten text).
      dropVector(row.rowid);
      st.deleteRow.run(row.rowid);
    }
    st.bumpCount.run(-rows.length);
    applyStats(stats, delta);
    // Rewrites the index without the deleted rows (secure_delete zeroes the old pages).
    st.optimize.run();
    return { memories: rows.length, removed };
  });
}

/** A version row as a {@link MemoryVersion}. */
function olderVersion(v: VersionRow): MemoryVersion {
  const record = versionRecord(v);
  const rule = v.gate_rule as TakeoverRule | null;
  return {
    version: v.version,
    storedAt: record.storedAt,
    status: v.status,
    rule,
    current: false,
    record,
  };
}

/** History: the versions of a memory, oldest first, the current one last. */
function historian(db: Database.Database, st: ManageStatements) {
  return db.transaction((memoryId: string, userScope: string): MemoryVersion[] => {
    const row = rowOf(st, memoryId, userScope);
    if (row === undefined) return [];
    const old = (st.versionsOf.all(userScope, memoryId) as VersionRow[]).map(olderVersion);
    const record = rowToRecord(row);
    const rule = row.gate_rule as TakeoverRule | null;
    const current = { version: row.version, storedAt: record.storedAt, status: row.status };
    return [...old, { ...current, rule, current: true, record }];
  });
}

/** Every version of every memory of a scope, in one read transaction. */
function versionReader(db: Database.Database, st: ManageStatements) {
  return db.transaction((userScope: string): StoredVersion[] => {
    const rows = st.scopeRows.all(userScope) as Array<Row & { stored_ms: number }>;
    const old = st.scopeVersions.all(userScope) as VersionRow[];
    return [
      ...rows.map((row) => ({
        version: row.version,
        storedMs: row.stored_ms,
        status: row.status,
        record: rowToRecord(row),
      })),
      ...old.map((v) => ({
        version: v.version,
        storedMs: v.stored_ms,
        status: v.status,
        record: versionRecord(v),
      })),
    ];
  });
}

/**
 * Prepares the management statements and transactions of `db`; `dropVector` removes a
 * memory's vector and vector state (see vectors.ts) inside a forget's transaction.
 */
export function prepareManage(
  db: Database.Database,
  stats: StatsStatements,
  dropVector: (rowid: number) => void,
): Manage {
  const st = prepareStatements(db);
  const approveTx = approver(db, st, stats);
  const forgetTx = forgetter(db, st, stats, dropVector);
  return {
    page(o) {
      const rows = (
        st.page.all({
          scope: o.userScope,
          status: o.status === "all" ? null : o.status,
          after: o.after ?? null,
          kinds: o.kinds === undefined ? null : JSON.stringify(o.kinds),
          cats: o.categories === undefined ? null : JSON.stringify(o.categories),
          limit: o.limit + 1,
        }) as RawRow[]
      ).map((r) => rowToEntry(rawToRow(r)));
      const more = rows.length > o.limit;
      const entries = more ? rows.slice(0, o.limit) : rows;
      return { entries, next: more ? entries[entries.length - 1]!.memoryId : null };
    },
    entry(memoryId, userScope) {
      const row = rowOf(st, memoryId, userScope);
      return row === undefined ? null : rowToEntry(row);
    },
    history: historian(db, st),
    approve: (memoryId, userScope) => approveTx.immediate(memoryId, userScope),
    forget(userScope, which) {
      const result = forgetTx.immediate(userScope, which);
      if (result.memories > 0) {
        // The WAL still holds the frames of the pages as they were: copy them back and
        // truncate it. A reader of another connection can keep it from completing; the
        // next checkpoint then finishes the job (the rows are gone either way).
        db.pragma("wal_checkpoint(TRUNCATE)");
      }
      return result;
    },
    latestWrite: (userScope) => (st.latest.get(userScope) as number | null) ?? null,
    versions: versionReader(db, st),
  };
}

/** Epoch ms of an ISO instant (validated before). */
export function asOfMillis(asOf: string): number {
  return instantMillis(asOf) as number;
}
