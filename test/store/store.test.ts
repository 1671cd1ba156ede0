/**
 * The SQLite store: the shared contract suite (contract.ts, the same tests the PostgreSQL
 * store runs), then what is SQLite's own — the file, its header and its migrations.
 */
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import Database from "better-sqlite3";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import {
  openStore,
  openStoreUrl,
  type SqliteMemoryStore,
  STORE_APPLICATION_ID,
  STORE_SCHEMA_VERSION,
  StoreOpenError,
  StoreVersionError,
} from "../../src/store/index.js";
import { storeContract } from "./contract.js";
import { rec, tempDir } from "./helpers.js";

// The contract's stores: one fresh file each, in a directory removed after the file.
let contractDir: { dir: string; cleanup: () => void };
let contractFiles = 0;
beforeAll(() => {
  contractDir = tempDir();
});
afterAll(() => contractDir.cleanup());

storeContract({
  name: "SQLite",
  open: async (options = {}) => openStore(join(contractDir.dir, `c${++contractFiles}.db`), options),
});

let dir: string;
let cleanup: () => void;
let store: SqliteMemoryStore;

beforeEach(() => {
  ({ dir, cleanup } = tempDir());
  store = openStore(join(dir, "memory.db"));
});
afterEach(() => {
  store.close();
  cleanup();
});

function caught(f: () => unknown): unknown {
  try {
    f();
  } catch (err) {
    return err;
  }
  throw new Error("expected an error");
}

describe("schema version and migrations", () => {
  it("a new store is at the current version, in WAL mode, marked as a promptctx store", () => {
    store.close();
    const db = new Database(join(dir, "memory.db"));
    expect(db.pragma("user_version", { simple: true })).toBe(STORE_SCHEMA_VERSION);
    expect(db.pragma("application_id", { simple: true })).toBe(STORE_APPLICATION_ID);
    expect(db.pragma("journal_mode", { simple: true })).toBe("wal");
    db.close();
    store = openStore(join(dir, "memory.db"));
  });

  it("reopening keeps records and does not re-run migrations", () => {
    store.add([rec("m1", "hello world")]);
    store.close();
    store = openStore(join(dir, "memory.db"));
    expect(store.count()).toBe(1);
    expect(store.get("m1")?.content).toBe("hello world");
  });

  it("a version-2 store (ids unique store-wide) is migrated: rows, rowids and index kept", () => {
    store.add([
      rec("a", "python deploys", { tags: ["ops"] }),
      rec("b", "天气预报 python", { userScope: "u2" }),
    ]);
    const query = { userScope: "u1", asOf: "2026-08-17T00:00:00Z" };
    const before = store.recall("python ops", query);
    store.close();
    // Back to version 2: the table as migration 1 made it (memory_id UNIQUE), same rowids.
    const db = new Database(join(dir, "memory.db"));
    const rowids = db.prepare("SELECT rowid, memory_id FROM memories ORDER BY rowid").all();
    db.exec(`
      CREATE TABLE old AS SELECT rowid AS r, * FROM memories;
      DROP TABLE memories;
      CREATE TABLE memories (rowid INTEGER PRIMARY KEY, memory_id TEXT NOT NULL UNIQUE,
        user_scope TEXT NOT NULL, kind TEXT NOT NULL, category TEXT NOT NULL, tags TEXT NOT NULL,
        content TEXT NOT NULL, summary TEXT NOT NULL, importance REAL NOT NULL,
        conflict_key TEXT, authority TEXT, source_id TEXT NOT NULL, source_type TEXT NOT NULL,
        source_title TEXT NOT NULL, captured_at TEXT NOT NULL, captured_ms INTEGER NOT NULL,
        stored_at TEXT NOT NULL);
      INSERT INTO memories SELECT r, memory_id, user_scope, kind, category, tags, content,
        summary, importance, conflict_key, authority, source_id, source_type, source_title,
        captured_at, captured_ms, stored_at FROM old;
      DROP TABLE old;
      CREATE INDEX memories_scope_id ON memories (user_scope, memory_id);
      CREATE INDEX memories_scope_kind ON memories (user_scope, kind);
    `);
    db.pragma("user_version = 2");
    db.close();
    store = openStore(join(dir, "memory.db"));
    const check = new Database(join(dir, "memory.db"), { readonly: true });
    expect(check.pragma("user_version", { simple: true })).toBe(STORE_SCHEMA_VERSION);
    expect(check.prepare("SELECT rowid, memory_id FROM memories ORDER BY rowid").all()).toEqual(
      rowids,
    );
    check.close();
    expect(store.recall("python ops", query)).toEqual(before);
    expect(store.add([rec("b", "u1's own b")])).toEqual({ inserted: 1, updated: 0 });
    expect(store.get("b", { userScope: "u2" })?.content).toBe("天气预报 python");
  });

  it("a database from a newer promptctx fails with StoreVersionError and is left untouched", () => {
    const path = join(dir, "newer.db");
    const db = new Database(path);
    db.pragma(`application_id = ${STORE_APPLICATION_ID}`);
    db.pragma(`user_version = ${STORE_SCHEMA_VERSION + 1}`);
    db.close();
    const err = caught(() => openStore(path));
    expect(err).toBeInstanceOf(StoreVersionError);
    expect(err).toMatchObject({
      code: "invalid_input",
      found: STORE_SCHEMA_VERSION + 1,
      supported: STORE_SCHEMA_VERSION,
    });
    expect((err as Error).message).toContain(
      `schema version ${STORE_SCHEMA_VERSION + 1}; this promptctx supports up to ${STORE_SCHEMA_VERSION}`,
    );
    const again = new Database(path);
    expect(again.pragma("user_version", { simple: true })).toBe(STORE_SCHEMA_VERSION + 1);
    again.close();
  });

  it("another application's SQLite file and a non-database file are refused", () => {
    const foreign = join(dir, "foreign.db");
    const db = new Database(foreign);
    db.pragma("application_id = 42");
    db.close();
    expect(caught(() => openStore(foreign))).toBeInstanceOf(StoreOpenError);
    const text = join(dir, "notes.txt");
    writeFileSync(text, "this is not a database, it is a text file with enough bytes".repeat(20));
    const err = caught(() => openStore(text));
    expect(err).toBeInstanceOf(StoreOpenError);
    expect(err).toMatchObject({ code: "invalid_input", path: "store" });
  });

  it("mustExist refuses a missing file instead of creating it", () => {
    expect(caught(() => openStore(join(dir, "missing.db"), { mustExist: true }))).toBeInstanceOf(
      StoreOpenError,
    );
  });
});

describe("openStoreUrl", () => {
  it("a path opens the SQLite store", async () => {
    store.close();
    const s = await openStoreUrl(join(dir, "memory.db"));
    try {
      expect(s.path).toBe(join(dir, "memory.db"));
      expect(await s.count()).toBe(0);
    } finally {
      await s.close();
    }
    store = openStore(join(dir, "memory.db"));
  });
});
