/**
 * PostgreSQL for the tests: one throwaway cluster per test file (scripts/pg-cluster.mjs),
 * and a fresh schema per store, so every store starts empty without a new database.
 *
 * Without the binaries the PostgreSQL tests are skipped — except under CI (`CI=true`),
 * where they run and fail: CI installs Debian's `postgresql` package.
 */
import pg from "pg";
import { afterAll, beforeAll } from "vitest";
import { findPgBin, hasPgvector, type PgCluster, startCluster } from "../../scripts/pg-cluster.mjs";
import {
  initPostgresStore,
  type OpenPostgresOptions,
  openPostgresStore,
} from "../../src/store/index.js";

/** Whether the PostgreSQL tests run here (see the module doc). */
export const PG_TESTS = findPgBin() !== null || process.env.CI === "true";

/**
 * Whether the pgvector tests run here: the extension is installed (.ci/pgvector.sh) — and
 * always under CI, which builds it (they fail there if it is missing).
 */
export const PGVECTOR_TESTS = (PG_TESTS && hasPgvector()) || process.env.CI === "true";

/** `url` with its search_path set to `schema` (the store's tables live there). */
export function withSchema(url: string, schema: string): string {
  return `${url}?options=${encodeURIComponent(`-c search_path=${schema}`)}`;
}

export interface PgFixture {
  readonly cluster: PgCluster;
  /** A new empty schema; its URL for the app role (or the superuser). */
  schema(name?: string): Promise<{ url: string; adminUrl: string; name: string }>;
  /**
   * A new schema initialized as `promptctx store init` does (owner and app roles); the
   * URLs of both roles and of the administrator, with the schema as search_path.
   */
  roles(): Promise<{ appUrl: string; ownerUrl: string; adminUrl: string; name: string }>;
  /** A fresh store in a new schema. */
  open(options?: OpenPostgresOptions): ReturnType<typeof openPostgresStore>;
  /** An app-role client on `url` (closed after the file). */
  client(url: string): Promise<pg.Client>;
  /** As the superuser: creates database `name` owned by the app role; its app-role URL. */
  database(name: string): Promise<string>;
  /** As the superuser: the pgvector extension in schema `public` of database `db`. */
  vector(db?: string): Promise<void>;
}

/** Starts a cluster before the file's tests and stops it after; call inside a describe. */
export function usePostgres(): PgFixture {
  let cluster: PgCluster | null = null;
  let ddl: pg.Client | null = null;
  let n = 0;
  const clients: pg.Client[] = [];
  beforeAll(async () => {
    cluster = await startCluster({ settings: { fsync: "off", synchronous_commit: "off" } });
  });
  afterAll(async () => {
    for (const c of clients.splice(0)) await c.end();
    cluster?.stop();
  });
  const fixture: PgFixture = {
    get cluster() {
      if (cluster === null) throw new Error("the cluster is not started");
      return cluster;
    },
    async client(url) {
      const c = new pg.Client({ connectionString: url });
      await c.connect();
      clients.push(c);
      return c;
    },
    async database(name) {
      const admin = await fixture.client(fixture.cluster.adminUrl);
      await admin.query(`CREATE DATABASE ${name} OWNER promptctx`);
      return fixture.cluster.url.replace(/\/promptctx$/, `/${name}`);
    },
    async vector(db = "promptctx") {
      const c = await fixture.client(fixture.cluster.adminUrl.replace(/\/postgres$/, `/${db}`));
      await c.query("CREATE EXTENSION IF NOT EXISTS vector SCHEMA public");
    },
    async schema(name = `s${++n}`) {
      ddl ??= await fixture.client(fixture.cluster.url);
      await ddl.query(`CREATE SCHEMA ${name}`);
      return {
        name,
        url: withSchema(fixture.cluster.url, name),
        adminUrl: withSchema(fixture.cluster.adminUrl.replace(/\/postgres$/, "/promptctx"), name),
      };
    },
    async roles() {
      const { adminUrl, name } = await fixture.schema();
      await initPostgresStore(adminUrl);
      const as = (role: string) =>
        withSchema(`postgres://${role}@127.0.0.1:${fixture.cluster.port}/promptctx`, name);
      return { appUrl: as("promptctx_app"), ownerUrl: as("promptctx_owner"), adminUrl, name };
    },
    async open(options = {}) {
      const { url } = await fixture.schema();
      return openPostgresStore(url, { maxConnections: 4, ...options });
    },
  };
  return fixture;
}
