/**
 * Schema migrations of the PostgreSQL store, ordered; the applied versions live in the
 * table `promptctx_schema_migrations`. At open, pending migrations run in one transaction
 * under an advisory lock, so two processes opening a new database do not both migrate it
 * and a failure leaves the previous version intact (PostgreSQL DDL is transactional). A
 * database with a newer version than the last migration here is refused.
 *
 * Never edit a released migration: append a new one.
 *
 * Layout (every name prefixed `promptctx_`, so the store can share a database):
 * - `memories`: one row per record (columns as in SQLite), plus `terms`, the distinct
 *   index keys of the row (to unindex it when it is replaced).
 * - `postings`: the full-text index, one row per (scope, term, memory) with the term's
 *   frequency and the memory's term count. A plain b-tree: text equality is leakproof,
 *   so PostgreSQL can use the index under row-level security (array and tsvector
 *   operators are not leakproof, and with RLS on, a GIN index on them is never used).
 * - `terms`: document frequency of each term in each scope (recall IDF).
 * - `scopes`: scope name ↔ small integer id (postings and terms are keyed by it), with
 *   the scope's memory and index-term counts (version 2).
 * - `stats`: store-wide counters in 16 slots (a writer bumps one: concurrent writers
 *   rarely wait on each other); readers sum them.
 *
 * Row-level security is enabled and FORCEd on every table: a query that forgets its scope
 * predicate still sees only its transaction's scope, and a transaction that declares none
 * sees nothing. Versions 1–2 keyed it on the plain setting `promptctx.scope` (which any
 * role could `SET`, and `promptctx.read_all`); version 3 binds the scope to the
 * transaction so that the connecting role cannot widen it (guard.ts).
 */
import { instantMillis } from "../../text/index.js";
import { type MemoryRow, rowToRecord } from "../row.js";
import { recordToJsonLine } from "../schema.js";
import { SCOPE_FN, SCOPE_GUARD_V3 } from "./guard.js";
import type { Tx } from "./tx.js";

export interface PgMigration {
  /** 1, 2, 3, … in order. */
  version: number;
  description: string;
  up(tx: Tx): Promise<void>;
}

const SCOPE = "current_setting('promptctx.scope', true)";
const READ_ALL = "current_setting('promptctx.read_all', true) = 'on'";
const SCOPE_ID = `(SELECT s.scope_id FROM promptctx_scopes s WHERE s.user_scope = ${SCOPE})`;

const TABLES_V1 = `
CREATE TABLE promptctx_scopes (
  scope_id   integer GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  user_scope text COLLATE "C" NOT NULL UNIQUE
);
CREATE TABLE promptctx_memories (
  id           bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  memory_id    text COLLATE "C" NOT NULL UNIQUE,
  user_scope   text COLLATE "C" NOT NULL,
  kind         text COLLATE "C" NOT NULL,
  category     text COLLATE "C" NOT NULL,
  tags         text NOT NULL,
  content      text NOT NULL,
  summary      text NOT NULL,
  importance   double precision NOT NULL CHECK (importance >= 0 AND importance <= 1),
  conflict_key text,
  authority    text CHECK (authority IN ('current_turn', 'workspace_override', 'user_default')),
  source_id    text NOT NULL,
  source_type  text NOT NULL,
  source_title text NOT NULL,
  captured_at  text NOT NULL,
  stored_at    text NOT NULL,
  terms        text NOT NULL
);
CREATE INDEX promptctx_memories_scope_id ON promptctx_memories (user_scope, memory_id);
CREATE INDEX promptctx_memories_scope_kind ON promptctx_memories (user_scope, kind);
CREATE TABLE promptctx_postings (
  scope_id integer NOT NULL,
  term     text COLLATE "C" NOT NULL,
  id       bigint NOT NULL,
  tf       integer NOT NULL,
  doc_len  integer NOT NULL,
  PRIMARY KEY (scope_id, term, id)
);
CREATE TABLE promptctx_terms (
  scope_id integer NOT NULL,
  term     text COLLATE "C" NOT NULL,
  df       integer NOT NULL,
  PRIMARY KEY (scope_id, term)
);
CREATE TABLE promptctx_stats (
  slot         smallint PRIMARY KEY,
  memory_count bigint NOT NULL DEFAULT 0,
  index_rows   bigint NOT NULL DEFAULT 0,
  index_tokens bigint NOT NULL DEFAULT 0
);
INSERT INTO promptctx_stats (slot) SELECT generate_series(0, 15);
`;

const POLICIES_V1 = `
ALTER TABLE promptctx_scopes ENABLE ROW LEVEL SECURITY;
ALTER TABLE promptctx_scopes FORCE ROW LEVEL SECURITY;
CREATE POLICY scope_rows ON promptctx_scopes
  USING (user_scope = ${SCOPE}) WITH CHECK (user_scope = ${SCOPE});

ALTER TABLE promptctx_memories ENABLE ROW LEVEL SECURITY;
ALTER TABLE promptctx_memories FORCE ROW LEVEL SECURITY;
CREATE POLICY scope_read ON promptctx_memories FOR SELECT
  USING (user_scope = ${SCOPE} OR ${READ_ALL});
CREATE POLICY scope_insert ON promptctx_memories FOR INSERT
  WITH CHECK (user_scope = ${SCOPE});
CREATE POLICY scope_update ON promptctx_memories FOR UPDATE
  USING (user_scope = ${SCOPE}) WITH CHECK (user_scope = ${SCOPE});

ALTER TABLE promptctx_postings ENABLE ROW LEVEL SECURITY;
ALTER TABLE promptctx_postings FORCE ROW LEVEL SECURITY;
CREATE POLICY scope_rows ON promptctx_postings
  USING (scope_id = ${SCOPE_ID}) WITH CHECK (scope_id = ${SCOPE_ID});

ALTER TABLE promptctx_terms ENABLE ROW LEVEL SECURITY;
ALTER TABLE promptctx_terms FORCE ROW LEVEL SECURITY;
CREATE POLICY scope_rows ON promptctx_terms
  USING (scope_id = ${SCOPE_ID}) WITH CHECK (scope_id = ${SCOPE_ID});
`;

/**
 * Version 2: each scope's memory and index-term counts, kept by every write, so recall
 * reads its BM25 statistics (N, average length) from one row instead of counting the
 * scope's memories and summing its postings on every query (linear in the scope's size).
 * The backfill must see every scope: row-level security is relaxed for the owner (that
 * runs the migration) inside the migration's transaction only, then forced again.
 */
const SCOPE_COUNTS_V2 = `
ALTER TABLE promptctx_scopes
  ADD COLUMN memory_count bigint NOT NULL DEFAULT 0,
  ADD COLUMN term_count bigint NOT NULL DEFAULT 0;
ALTER TABLE promptctx_scopes NO FORCE ROW LEVEL SECURITY;
ALTER TABLE promptctx_memories NO FORCE ROW LEVEL SECURITY;
ALTER TABLE promptctx_postings NO FORCE ROW LEVEL SECURITY;
UPDATE promptctx_scopes s SET memory_count = c.n
  FROM (SELECT user_scope, count(*) AS n FROM promptctx_memories GROUP BY user_scope) c
  WHERE s.user_scope = c.user_scope;
UPDATE promptctx_scopes s SET term_count = c.len
  FROM (SELECT d.scope_id, sum(d.doc_len) AS len FROM (
          SELECT DISTINCT ON (p.scope_id, p.id) p.scope_id, p.doc_len
          FROM promptctx_postings p ORDER BY p.scope_id, p.id) d
        GROUP BY d.scope_id) c
  WHERE s.scope_id = c.scope_id;
ALTER TABLE promptctx_scopes FORCE ROW LEVEL SECURITY;
ALTER TABLE promptctx_memories FORCE ROW LEVEL SECURITY;
ALTER TABLE promptctx_postings FORCE ROW LEVEL SECURITY;
`;

/**
 * Version 4: a memory is keyed by scope and id, so writing an id that another scope holds
 * creates this scope's own memory instead of failing — a write can no longer probe
 * whether another scope holds an id. Re-runnable.
 */
const SCOPED_IDS_V4 = `
ALTER TABLE promptctx_memories DROP CONSTRAINT IF EXISTS promptctx_memories_memory_id_key;
DROP INDEX IF EXISTS promptctx_memories_scope_id;
CREATE UNIQUE INDEX IF NOT EXISTS promptctx_memories_scope_memory
  ON promptctx_memories (user_scope, memory_id);
CREATE INDEX IF NOT EXISTS promptctx_memories_memory_id ON promptctx_memories (memory_id);
`;

/**
 * Version 5: a memory's status (the takeover gate's quarantine) and rule, its version, the
 * epoch ms of its write and its size; the previous versions of replaced memories; forget's
 * deletes of memory rows and spent index terms through a definer function bound to the
 * declared scope; the app roles already granted the store get what forget and versions
 * need. Re-runnable.
 */
const MANAGE_V5 = `
ALTER TABLE promptctx_memories
  ADD COLUMN IF NOT EXISTS status text NOT NULL DEFAULT 'active'
    CHECK (status IN ('active', 'quarantined')),
  ADD COLUMN IF NOT EXISTS gate_rule text,
  ADD COLUMN IF NOT EXISTS version integer NOT NULL DEFAULT 1,
  ADD COLUMN IF NOT EXISTS stored_ms bigint NOT NULL DEFAULT 0,
  ADD COLUMN IF NOT EXISTS bytes integer NOT NULL DEFAULT 0;
CREATE INDEX IF NOT EXISTS promptctx_memories_scope_stored
  ON promptctx_memories (user_scope, stored_ms);
CREATE TABLE IF NOT EXISTS promptctx_memory_versions (
  user_scope text COLLATE "C" NOT NULL,
  memory_id  text COLLATE "C" NOT NULL,
  version    integer NOT NULL,
  record     text NOT NULL,
  status     text NOT NULL CHECK (status IN ('active', 'quarantined')),
  gate_rule  text,
  stored_ms  bigint NOT NULL,
  bytes      integer NOT NULL,
  PRIMARY KEY (user_scope, memory_id, version)
);
ALTER TABLE promptctx_memory_versions ENABLE ROW LEVEL SECURITY;
ALTER TABLE promptctx_memory_versions FORCE ROW LEVEL SECURITY;
DROP POLICY IF EXISTS scope_rows ON promptctx_memory_versions;
CREATE POLICY scope_rows ON promptctx_memory_versions
  USING (user_scope = ${SCOPE_FN}) WITH CHECK (user_scope = ${SCOPE_FN});
DROP POLICY IF EXISTS owner_read ON promptctx_memory_versions;
CREATE POLICY owner_read ON promptctx_memory_versions FOR SELECT TO CURRENT_USER USING (true);
DROP POLICY IF EXISTS scope_delete ON promptctx_memories;
CREATE POLICY scope_delete ON promptctx_memories FOR DELETE USING (user_scope = ${SCOPE_FN});

-- Forget deletes memory rows and spent index terms through this function only: the app
-- role has no DELETE on those tables (a stray DELETE is refused), and the function deletes
-- in the transaction's declared scope and nowhere else.
CREATE OR REPLACE FUNCTION promptctx_delete_memories(ids bigint[], spent text[]) RETURNS bigint
LANGUAGE plpgsql VOLATILE SECURITY DEFINER AS $$
DECLARE
  s text := promptctx_scope();
  n bigint;
BEGIN
  IF s IS NULL THEN
    RAISE EXCEPTION 'promptctx_delete_memories: no declared scope' USING ERRCODE = '42501';
  END IF;
  DELETE FROM promptctx_memories WHERE user_scope = s AND id = ANY (ids);
  GET DIAGNOSTICS n = ROW_COUNT;
  DELETE FROM promptctx_terms
    WHERE scope_id = (SELECT x.scope_id FROM promptctx_scopes x WHERE x.user_scope = s)
      AND term = ANY (spent) AND df <= 0;
  RETURN n;
END $$;
REVOKE ALL ON FUNCTION promptctx_delete_memories(bigint[], text[]) FROM PUBLIC;
DO $$
DECLARE r record;
BEGIN
  EXECUTE format('ALTER FUNCTION promptctx_delete_memories(bigint[], text[]) SET search_path = %s',
    format('pg_catalog, %I, pg_temp', current_schema()));
  FOR r IN SELECT DISTINCT g.grantee FROM information_schema.role_table_grants g
           WHERE g.table_schema = current_schema() AND g.table_name = 'promptctx_memories'
             AND g.privilege_type = 'INSERT' AND g.grantee <> current_user LOOP
    EXECUTE format('GRANT SELECT, INSERT, DELETE ON promptctx_memory_versions TO %I', r.grantee);
    EXECUTE format('GRANT EXECUTE ON FUNCTION promptctx_delete_memories(bigint[], text[]) TO %I', r.grantee);
  END LOOP;
END $$;
`;

/** Version 5's backfill: each row's write time (epoch ms) and size, as the store computes them. */
async function backfillV5(tx: Tx): Promise<void> {
  await tx.query("ALTER TABLE promptctx_memories NO FORCE ROW LEVEL SECURITY");
  const rows = await tx.query<MemoryRow & { id: string }>(
    `SELECT id, memory_id, user_scope, kind, category, tags, content, summary, importance,
       conflict_key, authority, source_id, source_type, source_title, captured_at, stored_at
     FROM promptctx_memories WHERE bytes = 0`,
  );
  for (let i = 0; i < rows.length; i += 1000) {
    const part = rows.slice(i, i + 1000);
    await tx.query(
      `UPDATE promptctx_memories m SET stored_ms = u.ms, bytes = u.bytes
       FROM unnest($1::int8[], $2::int8[], $3::int4[]) AS u(id, ms, bytes) WHERE m.id = u.id`,
      [
        part.map((r) => r.id),
        part.map((r) => instantMillis(r.stored_at) ?? 0),
        part.map((r) => Buffer.byteLength(recordToJsonLine(rowToRecord(r)), "utf8")),
      ],
    );
  }
  await tx.query("ALTER TABLE promptctx_memories FORCE ROW LEVEL SECURITY");
}

/**
 * Version 6: recall by meaning (pg/vectors.ts). `embedder` records the one embedder whose
 * vectors the store holds (store-wide, no scope data); `vec_state` is each memory's vector
 * state (`embedded`, `uncovered`; no row: pending), under the scope policy, deleted with
 * its memory and — by a trigger — when the memory's content or category changes. The
 * vectors themselves need the `pgvector` extension: when the database has it (an
 * administrator creates it: `promptctx store init` does), {@link vectorTableDdl} makes
 * `promptctx_vectors`, else recall stays full-text until it is installed. Re-runnable.
 */
const VECTORS_V6 = `
CREATE TABLE IF NOT EXISTS promptctx_embedder (
  id         smallint PRIMARY KEY CHECK (id = 1),
  embedder   text NOT NULL,
  dimensions integer NOT NULL CHECK (dimensions BETWEEN 1 AND 16000)
);
-- Store-wide (no scope data), under a policy as every table is; every role reads it.
ALTER TABLE promptctx_embedder ENABLE ROW LEVEL SECURITY;
ALTER TABLE promptctx_embedder FORCE ROW LEVEL SECURITY;
DROP POLICY IF EXISTS store_wide ON promptctx_embedder;
CREATE POLICY store_wide ON promptctx_embedder USING (true) WITH CHECK (id = 1);
CREATE TABLE IF NOT EXISTS promptctx_vec_state (
  id         bigint PRIMARY KEY REFERENCES promptctx_memories (id) ON DELETE CASCADE,
  user_scope text COLLATE "C" NOT NULL,
  state      text NOT NULL CHECK (state IN ('embedded', 'uncovered'))
);
CREATE INDEX IF NOT EXISTS promptctx_vec_state_scope ON promptctx_vec_state (user_scope);
ALTER TABLE promptctx_vec_state ENABLE ROW LEVEL SECURITY;
ALTER TABLE promptctx_vec_state FORCE ROW LEVEL SECURITY;
DROP POLICY IF EXISTS scope_rows ON promptctx_vec_state;
CREATE POLICY scope_rows ON promptctx_vec_state
  USING (user_scope = ${SCOPE_FN}) WITH CHECK (user_scope = ${SCOPE_FN});
DROP POLICY IF EXISTS owner_read ON promptctx_vec_state;
CREATE POLICY owner_read ON promptctx_vec_state FOR SELECT TO CURRENT_USER USING (true);

-- A vector is of the content, filed under the category: either changed, it is stale.
CREATE OR REPLACE FUNCTION promptctx_vec_stale() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF NEW.content IS DISTINCT FROM OLD.content OR NEW.category IS DISTINCT FROM OLD.category THEN
    DELETE FROM promptctx_vec_state WHERE id = OLD.id;
  END IF;
  RETURN NEW;
END $$;
DROP TRIGGER IF EXISTS promptctx_vec_stale ON promptctx_memories;
CREATE TRIGGER promptctx_vec_stale AFTER UPDATE OF content, category ON promptctx_memories
  FOR EACH ROW EXECUTE FUNCTION promptctx_vec_stale();
DO $$
BEGIN
  EXECUTE format('ALTER FUNCTION promptctx_vec_stale() SET search_path = %s',
    format('pg_catalog, %I, pg_temp', current_schema()));
END $$;
${grantToApps("GRANT SELECT, INSERT ON promptctx_embedder TO %I; GRANT SELECT, INSERT, UPDATE, DELETE ON promptctx_vec_state TO %I")}
`;

/**
 * A `DO` block that runs `grants` (each `%I` the role) for every app role already granted
 * the store (those that may insert memories, the owner aside).
 */
function grantToApps(grants: string): string {
  const each = grants
    .split(";")
    .map((g) => `EXECUTE format('${g.trim()}', r.grantee);`)
    .join("\n    ");
  return `DO $$
DECLARE r record;
BEGIN
  FOR r IN SELECT DISTINCT g.grantee FROM information_schema.role_table_grants g
           WHERE g.table_schema = current_schema() AND g.table_name = 'promptctx_memories'
             AND g.privilege_type = 'INSERT' AND g.grantee <> current_user LOOP
    ${each}
  END LOOP;
END $$;`;
}

/**
 * The vector table over `pgvector` installed in schema `ext` (quoted): one row per
 * embedded memory, keyed by its state row (deleted with it), with its scope and category
 * (b-tree `(user_scope, category)`: a search reads its own scope's rows only — exact, and
 * row-level security never filters an index scan's output afterwards). Vectors are kept
 * in the row (`STORAGE PLAIN`: no TOAST lookup per row of a scan). Re-runnable.
 */
export function vectorTableDdl(ext: string): string {
  return `
CREATE TABLE IF NOT EXISTS promptctx_vectors (
  id         bigint PRIMARY KEY REFERENCES promptctx_vec_state (id) ON DELETE CASCADE,
  user_scope text COLLATE "C" NOT NULL,
  category   text COLLATE "C" NOT NULL,
  embedding  ${ext}.vector NOT NULL
);
ALTER TABLE promptctx_vectors ALTER COLUMN embedding SET STORAGE PLAIN;
CREATE INDEX IF NOT EXISTS promptctx_vectors_scope ON promptctx_vectors (user_scope, category);
ALTER TABLE promptctx_vectors ENABLE ROW LEVEL SECURITY;
ALTER TABLE promptctx_vectors FORCE ROW LEVEL SECURITY;
DROP POLICY IF EXISTS scope_rows ON promptctx_vectors;
CREATE POLICY scope_rows ON promptctx_vectors
  USING (user_scope = ${SCOPE_FN}) WITH CHECK (user_scope = ${SCOPE_FN});
${grantToApps("GRANT SELECT, INSERT, DELETE ON promptctx_vectors TO %I")}
${VECTOR_GEN_TRIGGERS}
`;
}

/**
 * Every statement that inserts or deletes vectors (a write, a forget's or a changed
 * memory's cascade) bumps the `vector_gen` of each scope it touched (version 7), in its
 * own transaction: a process that keeps a scope's vectors in memory (pg/vector-cache.ts)
 * compares it with one cheap read per search. Under the scope's row-level security, as
 * the statement's role (a write changes its declared scope only).
 */
const VECTOR_GEN_TRIGGERS = `
CREATE OR REPLACE FUNCTION promptctx_vector_gen() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  UPDATE promptctx_scopes SET vector_gen = vector_gen + 1
    WHERE user_scope IN (SELECT DISTINCT c.user_scope FROM changed c);
  RETURN NULL;
END $$;
DO $$
BEGIN
  EXECUTE format('ALTER FUNCTION promptctx_vector_gen() SET search_path = %s',
    format('pg_catalog, %I, pg_temp', current_schema()));
END $$;
DROP TRIGGER IF EXISTS promptctx_vectors_gen_insert ON promptctx_vectors;
CREATE TRIGGER promptctx_vectors_gen_insert AFTER INSERT ON promptctx_vectors
  REFERENCING NEW TABLE AS changed FOR EACH STATEMENT EXECUTE FUNCTION promptctx_vector_gen();
DROP TRIGGER IF EXISTS promptctx_vectors_gen_delete ON promptctx_vectors;
CREATE TRIGGER promptctx_vectors_gen_delete AFTER DELETE ON promptctx_vectors
  REFERENCING OLD TABLE AS changed FOR EACH STATEMENT EXECUTE FUNCTION promptctx_vector_gen();
`;

/** Version 7: each scope's vector generation, and the vector table's triggers that bump it. */
async function upV7(tx: Tx): Promise<void> {
  await tx.query(
    "ALTER TABLE promptctx_scopes ADD COLUMN IF NOT EXISTS vector_gen bigint NOT NULL DEFAULT 0",
  );
  const ext = await vectorExtension(tx);
  const table = await tx.query<{ t: string | null }>(
    "SELECT to_regclass('promptctx_vectors')::text AS t",
  );
  if (ext !== null && table[0]?.t != null) await tx.query(vectorTableDdl(ext));
}

/** The quoted schema of the `vector` extension, or null when it is not installed. */
export async function vectorExtension(tx: Pick<Tx, "query">): Promise<string | null> {
  const rows = await tx.query<{ s: string }>(
    `SELECT quote_ident(n.nspname) AS s FROM pg_extension e
     JOIN pg_namespace n ON n.oid = e.extnamespace WHERE e.extname = 'vector'`,
  );
  return rows[0]?.s ?? null;
}

/** Version 6's tables, and the vector table when the extension is there. */
async function upV6(tx: Tx): Promise<void> {
  await tx.query(VECTORS_V6);
  const ext = await vectorExtension(tx);
  if (ext !== null) await tx.query(vectorTableDdl(ext));
}

export const PG_MIGRATIONS: readonly PgMigration[] = [
  {
    version: 1,
    description: "memories, postings, term frequencies, scopes, stats; row-level security",
    async up(tx) {
      await tx.query(TABLES_V1);
      await tx.query(POLICIES_V1);
    },
  },
  {
    version: 2,
    description: "per-scope memory and index-term counts (recall statistics in one row)",
    async up(tx) {
      await tx.query(SCOPE_COUNTS_V2);
    },
  },
  {
    version: 3,
    description:
      "scope bound to the transaction (promptctx_begin); owner-only cross-scope reads; stats under a policy",
    async up(tx) {
      await tx.query(SCOPE_GUARD_V3);
    },
  },
  {
    version: 4,
    description: "memoryId unique per scope (another scope's id is another memory)",
    async up(tx) {
      await tx.query(SCOPED_IDS_V4);
    },
  },
  {
    version: 5,
    description:
      "status (quarantine), versions, write time and size; forget under row-level security",
    async up(tx) {
      await tx.query(MANAGE_V5);
      await backfillV5(tx);
    },
  },
  {
    version: 6,
    description:
      "recall by meaning: the recorded embedder, vector states, pgvector vectors by scope",
    up: upV6,
  },
  {
    version: 7,
    description: "each scope's vector generation (a process's in-memory index of a large scope)",
    up: upV7,
  },
];

/** The schema version this build writes. */
export const PG_SCHEMA_VERSION = PG_MIGRATIONS[PG_MIGRATIONS.length - 1]!.version;

/** The advisory lock key migrations take ("pctx" in ASCII). */
export const MIGRATION_LOCK = 0x70637478;
