/**
 * Opening the embedded memory store: one SQLite file (better-sqlite3) with an FTS5 index,
 * its options, pragmas and migrations, and the errors of a file that cannot be a store.
 *
 * Durability: `journal_mode=WAL` + `synchronous=NORMAL`. A transaction is committed once
 * its frames are in the WAL file; the WAL is fsynced only at checkpoints. So a committed
 * transaction survives a crash of the process (kill -9), but the last transactions before
 * an OS crash or power loss may be rolled back — never half-applied, never corrupting the
 * file. The trade: one fsync per checkpoint instead of one per commit (`FULL`).
 * `foreign_keys=ON` is set for future migrations.
 */
import { createRequire } from "node:module";
import type Database from "better-sqlite3";
import { InvalidInputError, PromptctxError } from "../../errors/index.js";
import type { GateMode } from "../../memory/index.js";
import { isBlank } from "../../text/index.js";
import { StoreOpenError, StoreVersionError } from "../errors.js";
import { describeOpenError, recallSizes } from "../options.js";
import { type StoreLimits, writePolicy } from "../write-gate.js";
import { MIGRATIONS, STORE_SCHEMA_VERSION } from "./migrations.js";
import { SqliteMemoryStore } from "./store.js";

/** `PRAGMA application_id` of promptctx memory stores ("pctx"). */
export const STORE_APPLICATION_ID = 0x70637478;

/** Options of {@link openStore}. */
export interface OpenStoreOptions {
  /** Fail when the file does not exist instead of creating it. Default false. */
  mustExist?: boolean;
  /** Candidates fully scored per recall (≥ limit). Default 500. */
  poolSize?: number;
  /** Document frequencies searched per recall ({@link MATCH_BUDGET}). */
  matchBudget?: number;
  /** How long to wait for another process's write lock, in ms. Default 5000. */
  busyTimeoutMs?: number;
  /** What the takeover gate does with a caught write (memory/takeover.ts). Default `quarantine`. */
  gate?: GateMode;
  /** Per-record and per-scope limits (default: none). */
  limits?: StoreLimits;
}

// The native module, loaded when a store is first opened: verbs that never open one
// (and `--help`) do not pay for it.
const requireCjs = createRequire(import.meta.url);
let sqlite: typeof Database | null = null;
function nativeSqlite(): typeof Database {
  sqlite ??= requireCjs("better-sqlite3") as typeof Database;
  return sqlite;
}

// sqlite-vec's loadable extension (vectors.ts), loaded into every connection: the vec0
// table of a store that has one cannot even be written without it. A few ms.
let vecPath: string | null = null;
function loadVec(db: Database.Database): void {
  vecPath ??= (requireCjs("sqlite-vec") as { getLoadablePath(): string }).getLoadablePath();
  db.loadExtension(vecPath);
}

/**
 * Refuses a file that is another application's or a newer promptctx's, then runs the
 * pending migrations in one immediate transaction (see migrations.ts).
 */
function migrate(db: Database.Database, path: string): void {
  const version = () => db.pragma("user_version", { simple: true }) as number;
  const appId = db.pragma("application_id", { simple: true }) as number;
  if (appId !== 0 && appId !== STORE_APPLICATION_ID) {
    throw new StoreOpenError(`${path} is an SQLite file but not a promptctx memory store`);
  }
  if (version() > STORE_SCHEMA_VERSION) {
    throw new StoreVersionError(path, version(), STORE_SCHEMA_VERSION);
  }
  if (version() === STORE_SCHEMA_VERSION) return;
  db.transaction(() => {
    const from = version(); // re-read under the write lock
    if (from > STORE_SCHEMA_VERSION) throw new StoreVersionError(path, from, STORE_SCHEMA_VERSION);
    for (const m of MIGRATIONS) {
      if (m.version <= from) continue;
      m.up(db);
      db.pragma(`user_version = ${m.version}`);
    }
    db.pragma(`application_id = ${STORE_APPLICATION_ID}`);
  }).immediate();
}

/**
 * Opens (creating and migrating if needed) the SQLite memory store at `path`.
 *
 * @example
 * const store = openStore(".promptctx/memory.db");
 * store.add([{ memoryId: "m1", userScope: "u1", content: "Prefers Python", source }]);
 * store.recall("python", { userScope: "u1", asOf: "2026-08-17T09:00:00Z" });
 * store.close();
 */
export function openStore(path: string, options: OpenStoreOptions = {}): SqliteMemoryStore {
  if (typeof path !== "string" || isBlank(path)) {
    throw new InvalidInputError("store path must not be blank", "store");
  }
  const { poolSize, matchBudget } = recallSizes(options);
  const policy = writePolicy(options);
  let db: Database.Database;
  try {
    db = new (nativeSqlite())(path, {
      fileMustExist: options.mustExist ?? false,
      timeout: options.busyTimeoutMs ?? 5000,
    });
  } catch (err) {
    throw new StoreOpenError(`cannot open memory store ${path}: ${describeOpenError(err)}`);
  }
  try {
    db.pragma("journal_mode = WAL");
    db.pragma("synchronous = NORMAL");
    db.pragma("foreign_keys = ON");
    db.pragma("cache_size = -65536"); // 64 MiB page cache: FTS merges and bulk imports
    // Deleted and overwritten content is zeroed on its page: a forgotten memory leaves no
    // bytes behind (see manage.ts).
    db.pragma("secure_delete = ON");
    loadVec(db);
    migrate(db, path);
    return new SqliteMemoryStore(path, db, poolSize, matchBudget, policy);
  } catch (err) {
    db.close();
    if (err instanceof PromptctxError) throw err;
    throw new StoreOpenError(`cannot open memory store ${path}: ${describeOpenError(err)}`);
  }
}
