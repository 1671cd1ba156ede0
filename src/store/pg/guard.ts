/**
 * The scope guard of the PostgreSQL store (schema version 3): row-level security that the
 * connecting role cannot widen.
 *
 * Versions 1–2 keyed the policies on the setting `promptctx.scope`, which any role may
 * `SET` — so a role with SQL access chose its own scope, and `promptctx.read_all` opened
 * every scope. From version 3 the policies read {@link SCOPE_FN} instead, which trusts the
 * settings only when they carry a MAC that `promptctx_begin` computed for this very
 * transaction (backend pid and transaction start), with a key only the owner can read:
 *
 * - `promptctx_begin(scopes text[])` (SECURITY DEFINER) declares the scopes of the
 *   transaction, once: it takes a transaction-level advisory lock, which nothing releases
 *   before the transaction ends, and refuses to run again while the lock is held. The
 *   current scope starts as the first one; the store switches between the declared ones
 *   (`set_config('promptctx.scope', …, true)`), and the policies see nothing else.
 * - A `SET`, `SET LOCAL`, `set_config` or `RESET` of any of the settings either leaves a
 *   declared scope or breaks the MAC, and then every policy sees nothing. There is no
 *   `read_all` any more: cross-scope reads (export, a store-wide count, `get` without a
 *   scope) are policies for the owner role only (`TO` the role that ran the migration).
 * - Every table is under row-level security, forced. `promptctx_stats` (store-wide
 *   counters) and `promptctx_scope_key` are the owner's only; writers add to the counters
 *   through `promptctx_add_stats` (SECURITY DEFINER), which needs a declared scope.
 *   `promptctx_schema_migrations` is readable by all (the version is not scope data),
 *   writable by the owner.
 * - The definer functions run with `search_path = pg_catalog, <schema>, pg_temp`, so a
 *   temporary table or function of the caller cannot stand in for the store's own.
 *
 * Idempotent (every statement re-runnable), so a test can roll a store back and re-apply it.
 */

/** The advisory lock (two int4 keys) held by a transaction whose scopes were declared. */
export const SCOPE_LOCK: readonly [number, number] = [0x70637478, 0x73636f70]; // "pctx" "scop"

/** The policies' scope: the current scope if the transaction declared it, else null. */
export const SCOPE_FN = "(SELECT promptctx_scope())";

const SCOPE_ID = `(SELECT s.scope_id FROM promptctx_scopes s WHERE s.user_scope = ${SCOPE_FN})`;

/** The definer functions the app role is granted (roles.ts). */
export const APP_FUNCTIONS = [
  "promptctx_begin(text[])",
  "promptctx_scope()",
  "promptctx_add_stats(bigint, bigint, bigint)",
];

/** The definer functions: executable by nobody but the owner until granted. */
const GUARD_FUNCTIONS = ["promptctx_scopes_mac(text)", ...APP_FUNCTIONS];

const KEY_AND_FUNCTIONS = `
CREATE TABLE IF NOT EXISTS promptctx_scope_key (
  id  boolean PRIMARY KEY DEFAULT true CHECK (id),
  key text NOT NULL
);
INSERT INTO promptctx_scope_key (key)
  VALUES (replace(gen_random_uuid()::text || gen_random_uuid()::text, '-', ''))
  ON CONFLICT (id) DO NOTHING;
REVOKE ALL ON promptctx_scope_key FROM PUBLIC;

-- MAC of the declared scopes, bound to this backend and this transaction's start.
CREATE OR REPLACE FUNCTION promptctx_scopes_mac(declared text) RETURNS text
LANGUAGE sql STABLE SECURITY DEFINER AS $$
  SELECT encode(sha256(convert_to(k.key || encode(sha256(convert_to(
    k.key || ':' || pg_backend_pid()::text || ':'
      || (extract(epoch FROM transaction_timestamp()) * 1000000)::bigint::text
      || ':' || declared, 'UTF8')), 'hex'), 'UTF8')), 'hex')
  FROM promptctx_scope_key k
$$;

CREATE OR REPLACE FUNCTION promptctx_begin(scopes text[]) RETURNS void
LANGUAGE plpgsql VOLATILE SECURITY DEFINER AS $$
BEGIN
  IF scopes IS NULL OR cardinality(scopes) = 0 OR array_position(scopes, NULL) IS NOT NULL
     OR '' = ANY (scopes) THEN
    RAISE EXCEPTION 'promptctx_begin: the scopes must be non-empty strings'
      USING ERRCODE = '22023';
  END IF;
  IF EXISTS (SELECT 1 FROM pg_locks l WHERE l.locktype = 'advisory'
             AND l.pid = pg_backend_pid() AND l.classid = ${SCOPE_LOCK[0]}
             AND l.objid = ${SCOPE_LOCK[1]} AND l.objsubid = 2) THEN
    RAISE EXCEPTION 'promptctx_begin: the scopes of a transaction are declared once'
      USING ERRCODE = '42501';
  END IF;
  PERFORM pg_advisory_xact_lock_shared(${SCOPE_LOCK[0]}, ${SCOPE_LOCK[1]});
  PERFORM set_config('promptctx.scopes', scopes::text, true);
  PERFORM set_config('promptctx.scopes_mac', promptctx_scopes_mac(scopes::text), true);
  PERFORM set_config('promptctx.scope', scopes[1], true);
END $$;

CREATE OR REPLACE FUNCTION promptctx_scope() RETURNS text
LANGUAGE plpgsql STABLE SECURITY DEFINER AS $$
DECLARE
  declared text := current_setting('promptctx.scopes', true);
  cur      text := current_setting('promptctx.scope', true);
BEGIN
  IF declared IS NULL OR cur IS NULL
     OR current_setting('promptctx.scopes_mac', true) IS DISTINCT FROM promptctx_scopes_mac(declared) THEN
    RETURN NULL;
  END IF;
  IF cur = ANY (declared::text[]) THEN RETURN cur; END IF;
  RETURN NULL;
END $$;

CREATE OR REPLACE FUNCTION promptctx_add_stats(memories bigint, index_rows bigint, index_tokens bigint)
RETURNS void LANGUAGE plpgsql VOLATILE SECURITY DEFINER AS $$
BEGIN
  IF promptctx_scope() IS NULL THEN
    RAISE EXCEPTION 'promptctx_add_stats: no declared scope' USING ERRCODE = '42501';
  END IF;
  UPDATE promptctx_stats s SET memory_count = s.memory_count + memories,
    index_rows = s.index_rows + promptctx_add_stats.index_rows,
    index_tokens = s.index_tokens + promptctx_add_stats.index_tokens
  WHERE s.slot = pg_backend_pid() % 16;
END $$;

${GUARD_FUNCTIONS.map((f) => `REVOKE ALL ON FUNCTION ${f} FROM PUBLIC;`).join("\n")}
DO $$
DECLARE path text := format('pg_catalog, %I, pg_temp', current_schema());
BEGIN
${GUARD_FUNCTIONS.map((f) => `  EXECUTE format('ALTER FUNCTION ${f} SET search_path = %s', path);`).join("\n")}
END $$;
`;

/** `table`'s one policy for every command: rows where `column = value`. */
const rowsWhere = (table: string, column: string, value: string) => `
DROP POLICY IF EXISTS scope_rows ON ${table};
CREATE POLICY scope_rows ON ${table}
  USING (${column} = ${value}) WITH CHECK (${column} = ${value});`;

/** RLS on and forced on `table`, with one policy giving its owner every row. */
const ownerRows = (table: string) => `
ALTER TABLE ${table} ENABLE ROW LEVEL SECURITY;
ALTER TABLE ${table} FORCE ROW LEVEL SECURITY;
DROP POLICY IF EXISTS owner_rows ON ${table};
CREATE POLICY owner_rows ON ${table} TO CURRENT_USER USING (true) WITH CHECK (true);`;

const POLICIES = `
${rowsWhere("promptctx_scopes", "user_scope", SCOPE_FN)}
${rowsWhere("promptctx_postings", "scope_id", SCOPE_ID)}
${rowsWhere("promptctx_terms", "scope_id", SCOPE_ID)}

DROP POLICY IF EXISTS scope_read ON promptctx_memories;
DROP POLICY IF EXISTS scope_insert ON promptctx_memories;
DROP POLICY IF EXISTS scope_update ON promptctx_memories;
DROP POLICY IF EXISTS owner_read ON promptctx_memories;
CREATE POLICY scope_read ON promptctx_memories FOR SELECT USING (user_scope = ${SCOPE_FN});
CREATE POLICY scope_insert ON promptctx_memories FOR INSERT WITH CHECK (user_scope = ${SCOPE_FN});
CREATE POLICY scope_update ON promptctx_memories FOR UPDATE
  USING (user_scope = ${SCOPE_FN}) WITH CHECK (user_scope = ${SCOPE_FN});
CREATE POLICY owner_read ON promptctx_memories FOR SELECT TO CURRENT_USER USING (true);

${ownerRows("promptctx_stats")}
${ownerRows("promptctx_scope_key")}
${ownerRows("promptctx_schema_migrations")}
DROP POLICY IF EXISTS read_version ON promptctx_schema_migrations;
CREATE POLICY read_version ON promptctx_schema_migrations FOR SELECT USING (true);
`;

/** The SQL of migration 3 (see the module doc). */
export const SCOPE_GUARD_V3 = KEY_AND_FUNCTIONS + POLICIES;
