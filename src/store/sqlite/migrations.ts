/**
 * Schema migrations, ordered. The schema version lives in `PRAGMA user_version` (part of
 * the database header, so it changes inside the migration's transaction). At open,
 * every pending migration runs in one `BEGIN IMMEDIATE` transaction: a crash or a
 * failure leaves the previous version intact, and two processes opening the same new
 * file do not both migrate it. A database with a newer version than the last migration
 * here is refused ({@link StoreVersionError}).
 *
 * Never edit a released migration: append a new one.
 */
import type Database from "better-sqlite3";
import { instantMillis } from "../../text/index.js";
import { rowToRecord } from "../row.js";
import { recordToJsonLine } from "../schema.js";
import type { Row } from "./columns.js";
import { backfillStats } from "./stats.js";

export interface Migration {
  /** 1, 2, 3, … in order; becomes `user_version` once applied. */
  version: number;
  description: string;
  up(db: Database.Database): void;
}

// The FTS tokenizer only needs to split on spaces (terms are pre-computed, see terms.ts);
// letters, digits and marks are token characters, and no diacritics are removed, so a
// stored term is always exactly one token.
const TOKENIZE = `unicode61 remove_diacritics 0 categories 'L* N* Co M*'`;

export const MIGRATIONS: readonly Migration[] = [
  {
    version: 1,
    description: "memories, FTS5 index of scope-prefixed terms, record count",
    up(db) {
      db.exec(`
        CREATE TABLE memories (
          rowid        INTEGER PRIMARY KEY,
          memory_id    TEXT NOT NULL UNIQUE,
          user_scope   TEXT NOT NULL,
          kind         TEXT NOT NULL,
          category     TEXT NOT NULL,
          tags         TEXT NOT NULL,            -- JSON array of strings
          content      TEXT NOT NULL,
          summary      TEXT NOT NULL,
          importance   REAL NOT NULL CHECK (importance >= 0 AND importance <= 1),
          conflict_key TEXT,
          authority    TEXT CHECK (authority IN ('current_turn', 'workspace_override', 'user_default')),
          source_id    TEXT NOT NULL,
          source_type  TEXT NOT NULL,
          source_title TEXT NOT NULL,
          captured_at  TEXT NOT NULL,            -- as given (ISO-8601)
          captured_ms  INTEGER NOT NULL,         -- epoch ms of captured_at, for recency
          stored_at    TEXT NOT NULL
        );
        CREATE INDEX memories_scope_id ON memories (user_scope, memory_id);
        CREATE INDEX memories_scope_kind ON memories (user_scope, kind);

        -- Contentless: the text lives in memories; rowid = memories.rowid.
        -- terms: the normalized, CJK-bigram-expanded terms of content, summary and tags,
        -- each prefixed with the scope's hash (see scopePrefix), space-separated.
        CREATE VIRTUAL TABLE memory_fts USING fts5 (
          terms,
          content = '', contentless_delete = 1,
          tokenize = "${TOKENIZE}"
        );

        -- Maintained by the store in each write transaction (one UPDATE per batch: a
        -- per-row trigger cost a third of bulk-import time).
        CREATE TABLE store_stats (
          id           INTEGER PRIMARY KEY CHECK (id = 1),
          memory_count INTEGER NOT NULL
        );
        INSERT INTO store_stats (id, memory_count) VALUES (1, 0);
      `);
    },
  },
  {
    version: 2,
    description: "per-scope recall statistics: memory and term counts",
    up(db) {
      db.exec(`
        -- memory_count: memories of the scope; term_count: their index terms in all
        -- (see stats.ts).
        CREATE TABLE scope_stats (
          user_scope   TEXT PRIMARY KEY,
          memory_count INTEGER NOT NULL,
          term_count   INTEGER NOT NULL
        ) WITHOUT ROWID;
      `);
      backfillStats(db);
    },
  },
  {
    version: 3,
    description: "memoryId unique per scope (another scope's id is another memory)",
    up(db) {
      // SQLite cannot drop a UNIQUE constraint: the table is rebuilt from its own
      // definition without it, rowids kept (the FTS index refers to them).
      const { sql } = db
        .prepare("SELECT sql FROM sqlite_master WHERE type = 'table' AND name = 'memories'")
        .get() as { sql: string };
      // (A table renamed by an earlier rebuild is stored as "memories", quoted.)
      const rebuilt = sql
        .replace(/^CREATE TABLE\s+"?memories"?(?=\s*\()/, "CREATE TABLE memories_v3")
        .replace(/(memory_id\s+TEXT NOT NULL)\s+UNIQUE/, "$1");
      if (!rebuilt.startsWith("CREATE TABLE memories_v3")) {
        throw new Error("migration 3: unexpected definition of the memories table");
      }
      db.exec(rebuilt);
      db.exec(`
        INSERT INTO memories_v3 SELECT * FROM memories;
        DROP TABLE memories;
        ALTER TABLE memories_v3 RENAME TO memories;
        CREATE UNIQUE INDEX memories_scope_id ON memories (user_scope, memory_id);
        CREATE INDEX memories_scope_kind ON memories (user_scope, kind);
        CREATE INDEX memories_memory_id ON memories (memory_id);
      `);
    },
  },
  {
    version: 4,
    description: "status (quarantine), versions, write time and size of each memory",
    up(db) {
      // Re-runnable (a column or table already there is kept).
      const have = new Set(
        (db.prepare("PRAGMA table_info(memories)").all() as Array<{ name: string }>).map(
          (c) => c.name,
        ),
      );
      const columns: Array<[string, string]> = [
        ["status", "TEXT NOT NULL DEFAULT 'active' CHECK (status IN ('active', 'quarantined'))"],
        ["gate_rule", "TEXT"], // the takeover rule that holds it
        ["version", "INTEGER NOT NULL DEFAULT 1"],
        ["stored_ms", "INTEGER NOT NULL DEFAULT 0"], // epoch ms of stored_at
        ["bytes", "INTEGER NOT NULL DEFAULT 0"], // of its JSONL line
      ];
      for (const [name, type] of columns) {
        if (!have.has(name)) db.exec(`ALTER TABLE memories ADD COLUMN ${name} ${type}`);
      }
      db.exec(`
        -- Previous versions of a memory (the current one is its memories row), each the
        -- record's canonical JSONL line as it was stored.
        CREATE TABLE IF NOT EXISTS memory_versions (
          user_scope TEXT NOT NULL,
          memory_id  TEXT NOT NULL,
          version    INTEGER NOT NULL,
          record     TEXT NOT NULL,
          status     TEXT NOT NULL CHECK (status IN ('active', 'quarantined')),
          gate_rule  TEXT,
          stored_ms  INTEGER NOT NULL,
          bytes      INTEGER NOT NULL,
          PRIMARY KEY (user_scope, memory_id, version)
        ) WITHOUT ROWID;
        CREATE INDEX IF NOT EXISTS memories_scope_stored ON memories (user_scope, stored_ms);
      `);
      // Write times and sizes of the existing rows, computed as the store computes them.
      const rows = db.prepare("SELECT m.rowid, m.* FROM memories m").all() as Row[];
      const set = db.prepare("UPDATE memories SET stored_ms = ?, bytes = ? WHERE rowid = ?");
      for (const row of rows) {
        const line = recordToJsonLine(rowToRecord(row));
        set.run(instantMillis(row.stored_at) ?? 0, Buffer.byteLength(line, "utf8"), row.rowid);
      }
    },
  },
  {
    version: 5,
    description: "recall by meaning: the recorded embedder and each memory's vector state",
    up(db) {
      db.exec(`
        -- The one embedder whose vectors the store holds (see vectors.ts); the vec0
        -- table memory_vec is made with its dimensions when it is first recorded.
        CREATE TABLE IF NOT EXISTS embedder_meta (
          id         INTEGER PRIMARY KEY CHECK (id = 1),
          embedder   TEXT NOT NULL,
          dimensions INTEGER NOT NULL
        );
        -- embedded | uncovered; no row: pending (see vectors.ts).
        CREATE TABLE IF NOT EXISTS memory_vec_state (
          rowid INTEGER PRIMARY KEY,
          state TEXT NOT NULL CHECK (state IN ('embedded', 'uncovered'))
        );
      `);
    },
  },
  {
    version: 6,
    description: "an index on the partition (scope) of sqlite-vec's vector chunks",
    up(db) {
      // sqlite-vec finds a scope's chunks by its partition column, which it does not
      // index: every write and search read the whole chunk list (10,000 scopes: 49 s to
      // write 5,000 vectors, 7.4 ms a search, against 1.8 s and 0.56 ms with the index).
      const made = db
        .prepare("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'memory_vec_chunks'")
        .get();
      if (made !== undefined) db.exec(VEC_CHUNKS_INDEX);
    },
  },
];

/** The index of migration 6 (vectors.ts makes it with the table). */
export const VEC_CHUNKS_INDEX =
  "CREATE INDEX IF NOT EXISTS memory_vec_chunks_partition ON memory_vec_chunks (partition00, chunk_id)";

/** The schema version this build writes. */
export const STORE_SCHEMA_VERSION = MIGRATIONS[MIGRATIONS.length - 1]!.version;
