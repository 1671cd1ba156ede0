/**
 * Opening the PostgreSQL store: the connection pool, the role check, the migrations.
 *
 * The role must be subject to row-level security: PostgreSQL skips RLS for superusers and
 * roles with BYPASSRLS (FORCE ROW LEVEL SECURITY does not change that), so such a role is
 * refused — the second line of the scope's defence would silently be gone.
 *
 * Two roles (roles.ts, `promptctx store init`): the owner owns the tables, runs the
 * migrations and is the one connection that reads every scope (export); the app role,
 * granted the tables, reads and writes one declared scope per transaction and cannot
 * migrate — a store whose schema is behind is refused with the command that upgrades it.
 * A role that owns the tables and serves requests too works, but then nothing in the
 * database stops it from widening its own scope (it may alter its tables).
 */
import { createRequire } from "node:module";
import type pg from "pg";
import { z } from "zod";
import { PromptctxError } from "../../errors/index.js";
import type { GateMode } from "../../memory/index.js";
import { StoreOpenError, StoreVersionError } from "../errors.js";
import { describeOpenError, MATCH_BUDGET, parseWith, recallSizes } from "../options.js";
import { type StoreLimits, writePolicy } from "../write-gate.js";
import { MIGRATION_LOCK, PG_MIGRATIONS, PG_SCHEMA_VERSION } from "./migrations.js";
import { PostgresMemoryStore } from "./store.js";
import { inTransaction } from "./tx.js";
import { PgVectorIndex } from "./vectors.js";

/** Options of {@link openPostgresStore}. */
export interface OpenPostgresOptions {
  /** Fail when the database holds no promptctx store instead of creating one. Default false. */
  mustExist?: boolean;
  /** Candidates fully scored per recall (≥ limit). Default 500. */
  poolSize?: number;
  /** Document frequencies searched per recall. Default {@link MATCH_BUDGET}. */
  matchBudget?: number;
  /** Connections of the pool. Default 10. */
  maxConnections?: number;
  /** What the takeover gate does with a caught write (memory/takeover.ts). Default `quarantine`. */
  gate?: GateMode;
  /** Per-record and per-scope limits (default: none). */
  limits?: StoreLimits;
}

/**
 * The URL with its password masked, for messages.
 *
 * @example redactUrl("postgres://app:secret@db/x") // "postgres://app:***@db/x"
 */
export function redactUrl(url: string): string {
  try {
    const u = new URL(url);
    if (u.password !== "") u.password = "***";
    return u.toString();
  } catch {
    return url.replace(/\/\/([^:/@]*):[^@]*@/, "//$1:***@");
  }
}

// The driver, loaded when a PostgreSQL store is first opened.
const requireCjs = createRequire(import.meta.url);

/**
 * Refuses a role that row-level security does not apply to (a superuser, or BYPASSRLS).
 *
 * @example await checkRole(pool, "postgres://app@db/x"); // throws StoreOpenError for postgres
 */
export async function checkRole(pool: pg.Pool, where: string): Promise<void> {
  const { rows } = await pool.query<{ name: string; bypass: boolean }>(
    `SELECT current_user AS name, rolsuper OR rolbypassrls AS bypass
     FROM pg_roles WHERE rolname = current_user`,
  );
  if (rows[0]?.bypass) {
    throw new StoreOpenError(
      `memory store ${where}: role ${JSON.stringify(rows[0].name)} is a superuser or has BYPASSRLS, so PostgreSQL would not apply row-level security; connect as an ordinary role`,
    );
  }
}

/** The applied schema version, or null when the database holds no promptctx store. */
async function appliedVersion(pool: pg.Pool): Promise<number | null> {
  const { rows } = await pool.query<{ present: boolean }>(
    "SELECT to_regclass('promptctx_schema_migrations') IS NOT NULL AS present",
  );
  if (!rows[0]?.present) return null;
  // The highest version applied — or, when a version below it is missing (a migration
  // rolled back by hand), the last version before the gap, so that it runs again (every
  // migration from 3 on is re-runnable).
  const v = await pool.query<{ v: number }>(
    "SELECT version AS v FROM promptctx_schema_migrations ORDER BY version",
  );
  return appliedThrough(v.rows.map((r) => r.v));
}

/**
 * The version a store is migrated through: the highest of `applied` with every version
 * below it applied too.
 *
 * @example appliedThrough([1, 2, 3, 5]) // 3
 */
export function appliedThrough(applied: readonly number[]): number {
  const set = new Set(applied);
  const max = Math.max(0, ...applied);
  if (max > PG_SCHEMA_VERSION) return max;
  let v = 0;
  while (set.has(v + 1)) v++;
  return v;
}

/** Whether the connection's role owns the store's tables (or may create them: no store). */
async function ownsStore(pool: pg.Pool): Promise<boolean> {
  const { rows } = await pool.query<{ owns: boolean }>(
    `SELECT CASE WHEN to_regclass('promptctx_memories') IS NULL
       THEN coalesce(has_schema_privilege(current_schema(), 'CREATE'), false)
       ELSE (SELECT pg_has_role(current_user, c.relowner, 'USAGE') FROM pg_class c
             WHERE c.oid = to_regclass('promptctx_memories')) END AS owns`,
  );
  return rows[0]?.owns ?? false;
}

/** The error of a store the connecting role cannot create or upgrade. */
function cannotMigrate(where: string, found: number | null): StoreOpenError {
  const what =
    found === null
      ? "holds no promptctx memory store"
      : `has schema version ${found}; this promptctx needs ${PG_SCHEMA_VERSION}`;
  return new StoreOpenError(
    `memory store ${where} ${what}, and this role cannot create or upgrade it: run \`promptctx store init\` with an administrator's URL (it migrates as the owner role)`,
  );
}

/**
 * Runs the pending migrations in one transaction under the migration lock. Returns
 * whether the connection's role owns the store; a role that does not and finds the
 * schema behind (or absent) gets a StoreOpenError naming `promptctx store init`.
 *
 * @example const privileged = await migrate(pool, "postgres://owner@db/x", false);
 */
export async function migrate(pool: pg.Pool, where: string, mustExist: boolean): Promise<boolean> {
  const found = await appliedVersion(pool);
  if (found === null && mustExist) {
    throw new StoreOpenError(`no promptctx memory store in ${where}`);
  }
  if (found !== null && found > PG_SCHEMA_VERSION) {
    throw new StoreVersionError(where, found, PG_SCHEMA_VERSION);
  }
  const owner = await ownsStore(pool);
  if (found === PG_SCHEMA_VERSION) return owner;
  if (!owner) throw cannotMigrate(where, found);
  await inTransaction(pool, {}, async (tx) => {
    await tx.query("SELECT pg_advisory_xact_lock($1)", [MIGRATION_LOCK]);
    await tx.query(`CREATE TABLE IF NOT EXISTS promptctx_schema_migrations (
      version integer PRIMARY KEY, description text NOT NULL)`);
    const rows = await tx.query<{ v: number }>(
      "SELECT version AS v FROM promptctx_schema_migrations ORDER BY version",
    );
    const from = appliedThrough(rows.map((r) => r.v)); // re-read under the lock
    if (from > PG_SCHEMA_VERSION) throw new StoreVersionError(where, from, PG_SCHEMA_VERSION);
    for (const m of PG_MIGRATIONS) {
      if (m.version <= from) continue;
      await m.up(tx);
      await tx.query(
        `INSERT INTO promptctx_schema_migrations (version, description) VALUES ($1, $2)
         ON CONFLICT (version) DO NOTHING`,
        [m.version, m.description],
      );
    }
  });
  return true;
}

/**
 * Opens (creating and migrating if needed) the PostgreSQL memory store at `url`.
 *
 * @example
 * const store = await openPostgresStore("postgres://promptctx@127.0.0.1/promptctx");
 * await store.add([{ memoryId: "m1", userScope: "u1", content: "Prefers Python", source }]);
 * await store.recall("python", { userScope: "u1", asOf: "2026-08-17T09:00:00Z" });
 * await store.close();
 */
export async function openPostgresStore(
  url: string,
  options: OpenPostgresOptions = {},
): Promise<PostgresMemoryStore> {
  const where = redactUrl(url);
  const { poolSize, matchBudget } = recallSizes(options);
  const policy = writePolicy(options);
  const max = parseWith(
    z.number().int().min(1).max(1000),
    options.maxConnections ?? 10,
    "maxConnections",
  );
  const { Pool } = requireCjs("pg") as typeof pg;
  const pool = new Pool({ connectionString: url, max, application_name: "promptctx" });
  // An idle connection that the server drops must not crash the process.
  pool.on("error", () => {});
  try {
    await checkRole(pool, where);
    const owner = await migrate(pool, where, options.mustExist ?? false);
    const vectors = await PgVectorIndex.load(pool, owner, where);
    return new PostgresMemoryStore(where, pool, { poolSize, matchBudget }, owner, vectors, policy);
  } catch (err) {
    await pool.end();
    if (err instanceof PromptctxError) throw err;
    throw new StoreOpenError(`cannot open memory store ${where}: ${describeOpenError(err)}`);
  }
}
