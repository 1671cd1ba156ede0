/**
 * `promptctx store init` for PostgreSQL: the two roles of a shared store, its schema, its
 * migrations and the app role's grants, from an administrator's connection.
 *
 * - The **owner** role owns the schema's `promptctx_*` tables and functions, runs the
 *   migrations, and is the only connection that reads every scope (export, store-wide
 *   count). It should not serve requests.
 * - The **app** role owns nothing: it may read and write the tables under row-level
 *   security, one declared scope per transaction (guard.ts), call the store's three
 *   functions, and read the schema version. It cannot create objects in the schema,
 *   alter or drop the tables or their policies, read the store-wide counters, or become
 *   the owner (it must not be a member of it).
 *
 * Roles are created `LOGIN NOSUPERUSER NOBYPASSRLS NOCREATEDB NOCREATEROLE NOINHERIT`,
 * without a password (set one, or use certificate or peer authentication). An existing
 * role is reused if it is not a superuser and cannot bypass row-level security. Running
 * init again is harmless: it migrates a store that is behind and grants again.
 */
import { createRequire } from "node:module";
import type pg from "pg";
import { z } from "zod";
import { PromptctxError } from "../../errors/index.js";
import { StoreOpenError } from "../errors.js";
import { describeOpenError, parseWith } from "../options.js";
import { APP_FUNCTIONS } from "./guard.js";
import { PG_SCHEMA_VERSION } from "./migrations.js";
import { checkRole, migrate, redactUrl } from "./open.js";

/** Options of {@link initPostgresStore}. */
export interface InitPostgresOptions {
  /** The owner role. Default `promptctx_owner`. */
  ownerRole?: string;
  /** The app role (what `serve --store` connects as). Default `promptctx_app`. */
  appRole?: string;
  /** The schema of the store. Default: the administrator connection's current schema. */
  schema?: string;
}

/** What {@link initPostgresStore} did. */
export interface InitPostgresResult {
  schema: string;
  ownerRole: string;
  appRole: string;
  /** Roles this run created (the others existed). */
  createdRoles: string[];
  /** The store's schema version after the run. */
  version: number;
}

const identifier = z
  .string()
  .regex(/^[a-z_][a-z0-9_]{0,62}$/, "must be a lower-case SQL identifier (a-z, 0-9, _)");

const InitOptionsSchema = z.object({
  ownerRole: identifier.default("promptctx_owner"),
  appRole: identifier.default("promptctx_app"),
  schema: identifier.optional(),
});

const requireCjs = createRequire(import.meta.url);

/** The app role's privileges: no more than the store's statements need. */
const APP_GRANTS = [
  "GRANT SELECT ON promptctx_schema_migrations TO %s",
  "GRANT SELECT, INSERT, UPDATE ON promptctx_memories, promptctx_scopes, promptctx_terms TO %s",
  "GRANT EXECUTE ON FUNCTION promptctx_delete_memories(bigint[], text[]) TO %s",
  "GRANT SELECT, INSERT, DELETE ON promptctx_postings, promptctx_memory_versions TO %s",
  "GRANT SELECT, INSERT ON promptctx_embedder TO %s",
  "GRANT SELECT, INSERT, UPDATE, DELETE ON promptctx_vec_state TO %s",
  `GRANT EXECUTE ON FUNCTION ${APP_FUNCTIONS.join(", ")} TO %s`,
];

const STORE_TABLES = [
  "promptctx_schema_migrations",
  "promptctx_memories",
  "promptctx_postings",
  "promptctx_terms",
  "promptctx_scopes",
  "promptctx_memory_versions",
  "promptctx_stats",
  "promptctx_scope_key",
  "promptctx_embedder",
  "promptctx_vec_state",
];

/** Creates `name` unless it exists; refuses an existing role that escapes row-level security. */
async function ensureRole(c: pg.Client, name: string): Promise<boolean> {
  const { rows } = await c.query<{ bypass: boolean }>(
    "SELECT rolsuper OR rolbypassrls AS bypass FROM pg_roles WHERE rolname = $1",
    [name],
  );
  if (rows[0] === undefined) {
    await c.query(
      `CREATE ROLE ${c.escapeIdentifier(name)} LOGIN NOSUPERUSER NOBYPASSRLS NOCREATEDB NOCREATEROLE NOINHERIT`,
    );
    return true;
  }
  if (rows[0].bypass) {
    throw new StoreOpenError(
      `role ${JSON.stringify(name)} is a superuser or has BYPASSRLS: row-level security would not apply to it; choose another role`,
    );
  }
  return false;
}

/**
 * Creates the `pgvector` extension (schema `public`, which every role may use) when the
 * server has it and the database does not yet: recall by meaning (pg/vectors.ts). Without
 * it, recall stays full-text and says so; installing it later and running `promptctx store
 * init` again turns recall by meaning on.
 */
async function createVectorExtension(c: pg.Client): Promise<void> {
  const { rows } = await c.query<{ available: boolean; installed: boolean }>(
    `SELECT EXISTS (SELECT 1 FROM pg_available_extensions WHERE name = 'vector') AS available,
            EXISTS (SELECT 1 FROM pg_extension WHERE extname = 'vector') AS installed`,
  );
  if (!rows[0]?.available || rows[0].installed) return;
  await c.query("CREATE EXTENSION IF NOT EXISTS vector SCHEMA public");
}

/** Roles and the schema, as the administrator; returns the roles created. */
async function prepareRoles(
  c: pg.Client,
  o: { ownerRole: string; appRole: string },
  schema: string,
): Promise<string[]> {
  const created: string[] = [];
  for (const role of [o.ownerRole, o.appRole]) if (await ensureRole(c, role)) created.push(role);
  const { rows } = await c.query<{ member: boolean }>(
    "SELECT pg_has_role($1, $2, 'MEMBER') AS member",
    [o.appRole, o.ownerRole],
  );
  if (rows[0]?.member) {
    throw new StoreOpenError(
      `role ${JSON.stringify(o.appRole)} is a member of the owner role ${JSON.stringify(o.ownerRole)}: it could act as the owner; revoke the membership`,
    );
  }
  const [s, owner, app] = [schema, o.ownerRole, o.appRole].map((n) => c.escapeIdentifier(n));
  await c.query(`CREATE SCHEMA IF NOT EXISTS ${s} AUTHORIZATION ${owner}`);
  await c.query(`GRANT USAGE, CREATE ON SCHEMA ${s} TO ${owner}`);
  await c.query(`GRANT USAGE ON SCHEMA ${s} TO ${app}`);
  await createVectorExtension(c);
  const owned = await c.query<{ table: string; owner: string }>(
    `SELECT c.relname AS table, pg_get_userbyid(c.relowner) AS owner FROM pg_class c
     WHERE c.relnamespace = $1::regnamespace AND c.relname = ANY($2::text[])
       AND pg_get_userbyid(c.relowner) <> $3`,
    [schema, STORE_TABLES, o.ownerRole],
  );
  const other = owned.rows[0];
  if (other !== undefined) {
    throw new StoreOpenError(
      `table ${schema}.${other.table} is owned by ${JSON.stringify(other.owner)}, not the owner role ${JSON.stringify(o.ownerRole)}: pass that role as the owner, or transfer the tables (ALTER TABLE … OWNER TO)`,
    );
  }
  return created;
}

/**
 * Migrates and grants as the owner: a one-connection pool whose connection becomes the
 * owner role first (checked before anything runs: never migrate as the administrator).
 */
async function migrateAsOwner(
  adminUrl: string,
  o: { ownerRole: string; appRole: string },
  schema: string,
): Promise<void> {
  const { Pool } = requireCjs("pg") as typeof pg;
  const pool = new Pool({
    connectionString: adminUrl,
    max: 1,
    idleTimeoutMillis: 0,
    application_name: "promptctx",
  });
  pool.on("error", () => {});
  try {
    // The pool's one connection (never closed while idle) becomes the owner.
    const c = await pool.connect();
    try {
      await c.query(
        `SET ROLE ${c.escapeIdentifier(o.ownerRole)}; SET search_path = ${c.escapeIdentifier(schema)}`,
      );
    } finally {
      c.release();
    }
    const who = await pool.query<{ ok: boolean }>(
      "SELECT current_user = $1 AND current_schema() = $2 AS ok",
      [o.ownerRole, schema],
    );
    if (!who.rows[0]?.ok) {
      throw new StoreOpenError(
        `cannot act as the owner role ${JSON.stringify(o.ownerRole)} in schema ${JSON.stringify(schema)}: the administrator must be a superuser or a member of it`,
      );
    }
    const where = redactUrl(adminUrl);
    await checkRole(pool, where);
    await migrate(pool, where, false);
    const app = `"${o.appRole}"`; // a validated lower-case identifier
    await pool.query(`REVOKE ALL ON ${STORE_TABLES.join(", ")} FROM ${app}`);
    for (const grant of APP_GRANTS) await pool.query(grant.replace("%s", app));
    // The vector table exists when the database has pgvector (see prepareRoles).
    const vectors = await pool.query<{ t: string | null }>(
      "SELECT to_regclass('promptctx_vectors')::text AS t",
    );
    if (vectors.rows[0]?.t != null) {
      await pool.query(`REVOKE ALL ON promptctx_vectors FROM ${app}`);
      await pool.query(`GRANT SELECT, INSERT, DELETE ON promptctx_vectors TO ${app}`);
    }
  } finally {
    await pool.end();
  }
}

/**
 * Creates (or checks) the owner and app roles, the schema, migrates the store as the
 * owner and grants the app role what it needs — as an administrator (a superuser, or a
 * role that may create roles and become the owner).
 *
 * @example
 * const done = await initPostgresStore("postgres://postgres@127.0.0.1/promptctx");
 * // serve as the app role:  postgres://promptctx_app@127.0.0.1/promptctx
 * // export as the owner:    postgres://promptctx_owner@127.0.0.1/promptctx
 * console.log(done.version);
 */
export async function initPostgresStore(
  adminUrl: string,
  options: InitPostgresOptions = {},
): Promise<InitPostgresResult> {
  const o = parseWith(InitOptionsSchema, options, "options");
  if (o.ownerRole === o.appRole) {
    throw new StoreOpenError("the owner and app roles must differ");
  }
  const { Client } = requireCjs("pg") as typeof pg;
  const admin = new Client({ connectionString: adminUrl, application_name: "promptctx" });
  const where = redactUrl(adminUrl);
  try {
    await admin.connect();
    const current = await admin.query<{ s: string | null }>("SELECT current_schema() AS s");
    const schema = o.schema ?? current.rows[0]?.s ?? "public";
    await admin.query("BEGIN");
    const createdRoles = await prepareRoles(admin, o, schema);
    await admin.query("COMMIT");
    await migrateAsOwner(adminUrl, o, schema);
    return {
      schema,
      ownerRole: o.ownerRole,
      appRole: o.appRole,
      createdRoles,
      version: PG_SCHEMA_VERSION,
    };
  } catch (err) {
    if (err instanceof PromptctxError) throw err;
    throw new StoreOpenError(`cannot initialize memory store ${where}: ${describeOpenError(err)}`);
  } finally {
    await admin.end().catch(() => {});
  }
}
