/**
 * The two roles of a PostgreSQL store (`promptctx store init`), tried as an attacker with
 * the app role's SQL access: settings, role switches, functions, temporary tables, DDL
 * and the store-wide counters must not widen the scope the store declared, and nothing
 * tells another scope's id from a missing one.
 */
import fc from "fast-check";
import type pg from "pg";
import { describe, expect, it } from "vitest";
import { startServer } from "../../src/server/index.js";
import {
  initPostgresStore,
  openPostgresStore,
  PG_SCHEMA_VERSION,
  StoreOpenError,
  StorePrivilegeError,
} from "../../src/store/index.js";
import { WORKSPACE } from "../server/helpers.js";
import { exportText, failure } from "./contract-helpers.js";
import { AS_OF, rec } from "./helpers.js";
import { PG_TESTS, usePostgres } from "./pg-helpers.js";

const SCOPE_DATA = [
  "promptctx_memories",
  "promptctx_postings",
  "promptctx_terms",
  "promptctx_scopes",
] as const;
type Counts = Record<(typeof SCOPE_DATA)[number], number>;

describe.runIf(PG_TESTS)("PostgreSQL roles: the app role cannot bypass its scope", () => {
  const pg = usePostgres();

  /** A store with scopes A and B written through the app role; an app-role client. */
  async function seeded() {
    const urls = await pg.roles();
    const store = await openPostgresStore(urls.appUrl);
    await store.add([
      rec("a1", "alpha secret of A", { userScope: "A" }),
      rec("b1", "alpha secret of B", { userScope: "B" }),
      rec("b2", "beta of B", { userScope: "B" }),
    ]);
    await store.close();
    return { ...urls, app: await pg.client(urls.appUrl) };
  }

  /** Every scope-data row the client sees now (memory ids, scope names, scope ids). */
  async function visible(c: pg.Client): Promise<Counts> {
    const out = {} as Counts;
    for (const t of SCOPE_DATA) {
      const { rows } = await c.query(`SELECT count(*)::int AS n FROM ${t}`);
      out[t] = rows[0].n;
    }
    return out;
  }
  const NOTHING = Object.fromEntries(SCOPE_DATA.map((t) => [t, 0]));

  /** The SQLSTATE `sql` fails with (inside a savepoint when in a transaction). */
  async function refused(c: pg.Client, sql: string, inTx = false): Promise<string> {
    if (inTx) await c.query("SAVEPOINT probe");
    const err = (await failure(() => c.query(sql))) as { code?: string };
    if (inTx) await c.query("ROLLBACK TO SAVEPOINT probe");
    return err.code ?? "none";
  }

  it("init creates both roles, migrates as the owner, and is harmless to run again", async () => {
    const { adminUrl, appUrl, ownerUrl, name } = await pg.roles();
    const again = await initPostgresStore(adminUrl);
    expect(again).toEqual({
      schema: name,
      ownerRole: "promptctx_owner",
      appRole: "promptctx_app",
      createdRoles: [],
      version: PG_SCHEMA_VERSION,
    });
    const c = await pg.client(adminUrl);
    const { rows } = await c.query(
      `SELECT rolname, rolsuper, rolbypassrls, rolcreaterole, rolcreatedb, rolinherit
       FROM pg_roles WHERE rolname LIKE 'promptctx\\_%' ORDER BY rolname`,
    );
    expect(rows).toEqual(
      ["promptctx_app", "promptctx_owner"].map((rolname) => ({
        rolname,
        rolsuper: false,
        rolbypassrls: false,
        rolcreaterole: false,
        rolcreatedb: false,
        rolinherit: false,
      })),
    );
    const owners = await c.query(
      `SELECT DISTINCT pg_get_userbyid(relowner) AS owner FROM pg_class
       WHERE relnamespace = $1::regnamespace AND relname LIKE 'promptctx\\_%'`,
      [name],
    );
    expect(owners.rows).toEqual([{ owner: "promptctx_owner" }]);
    const app = await openPostgresStore(appUrl, { mustExist: true });
    const owner = await openPostgresStore(ownerUrl, { mustExist: true });
    expect([app.privileged, owner.privileged]).toEqual([false, true]);
    await app.close();
    await owner.close();
  });

  it("every table is under row-level security, FORCEd where the owner could be used", async () => {
    const { adminUrl, name } = await pg.roles();
    const c = await pg.client(adminUrl);
    const { rows } = await c.query(
      `SELECT relname, relrowsecurity AS rls, relforcerowsecurity AS forced,
         (SELECT count(*)::int FROM pg_policy p WHERE p.polrelid = c.oid) AS policies
       FROM pg_class c WHERE relnamespace = $1::regnamespace AND relkind = 'r' ORDER BY relname`,
      [name],
    );
    for (const r of rows) {
      expect(r.rls, r.relname).toBe(true);
      expect(r.forced, r.relname).toBe(true);
      expect(r.policies, r.relname).toBeGreaterThan(0);
    }
    // The vector table exists when the database has pgvector (store init creates it).
    const ext = await c.query("SELECT 1 FROM pg_extension WHERE extname = 'vector'");
    expect(rows.map((r) => r.relname)).toEqual(
      [
        "embedder",
        "memories",
        "memory_versions",
        "postings",
        "schema_migrations",
        "scope_key",
        "scopes",
        "stats",
        "terms",
        "vec_state",
        ...(ext.rows.length > 0 ? ["vectors"] : []),
      ].map((t) => `promptctx_${t}`),
    );
  });

  it("the app store works in its scopes; cross-scope reads are the owner's only", async () => {
    const { appUrl, ownerUrl } = await seeded();
    const app = await openPostgresStore(appUrl);
    const owner = await openPostgresStore(ownerUrl);
    try {
      const hits = await app.recall("alpha", { userScope: "B", asOf: AS_OF });
      expect(hits.map((h) => h.memoryId)).toEqual(["b1"]);
      expect((await app.list({ userScope: "A" })).map((r) => r.memoryId)).toEqual(["a1"]);
      expect(await app.count({ userScope: "B" })).toBe(2);
      expect((await app.get("b1", { userScope: "B" }))?.content).toBe("alpha secret of B");
      const line = JSON.stringify(rec("c1", "gamma of C", { userScope: "C" }));
      expect(await app.importJsonl(line)).toEqual({ imported: 1, skipped: 0, errors: [] });
      for (const f of [() => app.exportJsonl(() => {}), () => app.count(), () => app.get("b1")]) {
        expect(await failure(f)).toBeInstanceOf(StorePrivilegeError);
      }
      // The refusal is the same whatever the id: it tells nothing.
      const [e1, e2] = [await failure(() => app.get("b1")), await failure(() => app.get("zz"))];
      expect((e1 as Error).message).toBe((e2 as Error).message);
      expect(await owner.count()).toBe(4);
      expect((await exportText(owner)).split("\n").filter(Boolean)).toHaveLength(4);
      expect((await owner.get("b2"))?.userScope).toBe("B");
    } finally {
      await app.close();
      await owner.close();
    }
  });

  it("another scope's id answers exactly as a missing one, through the store API", async () => {
    const { appUrl } = await seeded();
    const app = await openPostgresStore(appUrl);
    try {
      const foreign = await app.get("b1", { userScope: "A" });
      const missing = await app.get("no-such-id", { userScope: "A" });
      expect(foreign).toBeNull();
      expect(JSON.stringify(foreign)).toBe(JSON.stringify(missing));
      const wrote = await app.add([rec("b2", "mine", { userScope: "A" })]);
      const fresh = await app.add([rec("no-such-id", "mine", { userScope: "A" })]);
      expect(JSON.stringify(wrote)).toBe(JSON.stringify(fresh));
      expect((await app.get("b2", { userScope: "B" }))?.content).toBe("beta of B");
    } finally {
      await app.close();
    }
  });

  it("through the HTTP memory routes too: the same requests, byte for byte, whether or not B holds the id", async () => {
    const alice = "alice-token-0123456789";
    const answers: string[][] = [];
    for (const seeded of [true, false]) {
      const { appUrl } = await pg.roles();
      if (seeded) {
        const s = await openPostgresStore(appUrl);
        await s.add([rec("b1", "alpha secret of B", { userScope: "B" })]);
        await s.close();
      }
      const server = await startServer({
        port: 0,
        workspace: WORKSPACE,
        store: appUrl,
        auth: { tokens: [{ token: alice, scope: "A" }] },
      });
      const out: string[] = [];
      try {
        for (const [route, body] of [
          ["/v1/memories", { records: [rec("b1", "probe")] }],
          ["/v1/memories", { records: [rec("b1", "probe"), rec("b1", "again")] }],
          ["/v1/memories", { records: [rec("b1", "bad", { importance: 7 })] }],
          ["/v1/recall", { query: "alpha probe", asOf: AS_OF }],
        ] as const) {
          const res = await fetch(`${server.url}${route}`, {
            method: "POST",
            headers: { "content-type": "application/json", authorization: `Bearer ${alice}` },
            body: JSON.stringify(body),
          });
          out.push(`${res.status} ${await res.text()}`);
        }
      } finally {
        await server.close();
      }
      answers.push(out);
    }
    expect(answers[0]).toEqual(answers[1]);
    expect(answers[0]![0]).toBe('200 {"written":1,"memoryIds":["b1"]}');
  });

  it("any scope name is declared exactly: quotes, backslashes, braces, commas (property)", async () => {
    const { appUrl } = await pg.roles();
    const app = await openPostgresStore(appUrl);
    const piece = fc.constantFrom('"', "\\", "{", "}", ",", " ", "'", "NULL", "a", "é", "😀", "$$");
    const scope = fc.array(piece, { minLength: 1, maxLength: 6 }).map((p) => `s${p.join("")}`);
    let n = 0;
    try {
      await fc.assert(
        fc.asyncProperty(fc.uniqueArray(scope, { minLength: 1, maxLength: 3 }), async (scopes) => {
          const id = `p${++n}`;
          await app.add(scopes.map((userScope) => rec(id, `probe ${userScope}`, { userScope })));
          for (const userScope of scopes) {
            const got = await app.list({ userScope });
            expect(got.filter((r) => r.memoryId === id).map((r) => r.userScope)).toEqual([
              userScope,
            ]);
          }
          expect(await app.get(id, { userScope: `${scopes[0]}x` })).toBeNull();
        }),
        { numRuns: 25 },
      );
    } finally {
      await app.close();
    }
  });

  it("outside a declared transaction the app role sees nothing, whatever it sets", async () => {
    const { app } = await seeded();
    expect(await visible(app)).toEqual(NOTHING);
    await app.query("SET promptctx.read_all = 'on'");
    expect(await visible(app)).toEqual(NOTHING);
    await app.query("SET promptctx.scope = 'B'");
    expect(await visible(app)).toEqual(NOTHING);
    // Forged declarations: any MAC the role can compute is wrong.
    await app.query("SET promptctx.scopes = '{B}'");
    await app.query("SET promptctx.scopes_mac = 'x'");
    expect(await visible(app)).toEqual(NOTHING);
    await app.query("BEGIN");
    await app.query("SET LOCAL promptctx.scope = 'B'");
    await app.query("SELECT set_config('promptctx.read_all', 'on', true)");
    expect(await visible(app)).toEqual(NOTHING);
    await app.query("COMMIT");
    await app.query("RESET ALL");
    expect(await visible(app)).toEqual(NOTHING);
  });

  it("inside a transaction that declared A, no setting, function or savepoint reaches B", async () => {
    const { app } = await seeded();
    await app.query("BEGIN");
    await app.query("SELECT promptctx_begin(ARRAY['A'])");
    const a = await visible(app);
    expect(a.promptctx_memories).toBe(1);
    expect(a.promptctx_scopes).toBe(1);
    const names = await app.query("SELECT user_scope FROM promptctx_scopes");
    expect(names.rows).toEqual([{ user_scope: "A" }]);
    // Switching to an undeclared scope shows nothing (not B).
    await app.query("SELECT set_config('promptctx.scope', 'B', true)");
    expect(await visible(app)).toEqual(NOTHING);
    await app.query("SET LOCAL promptctx.scope = 'A'");
    expect(await visible(app)).toEqual(a);
    // Declaring again is refused, in a savepoint too.
    expect(await refused(app, "SELECT promptctx_begin(ARRAY['B'])", true)).toBe("42501");
    await app.query("SAVEPOINT s");
    expect(await refused(app, "SELECT promptctx_begin(ARRAY['A', 'B'])", true)).toBe("42501");
    await app.query("ROLLBACK TO SAVEPOINT s");
    // Writes cannot leave A either: moving a row, renaming the scope, indexing into another.
    for (const sql of [
      "UPDATE promptctx_memories SET user_scope = 'B'",
      "UPDATE promptctx_scopes SET user_scope = 'B'",
      "INSERT INTO promptctx_scopes (user_scope) VALUES ('B2')",
      "INSERT INTO promptctx_postings (scope_id, term, id, tf, doc_len) VALUES (-1, 'x', 1, 1, 1)",
      "INSERT INTO promptctx_terms (scope_id, term, df) VALUES (-1, 'x', 1)",
    ]) {
      expect(await refused(app, sql, true), sql).toBe("42501");
    }
    // Widening the declared list breaks its MAC: nothing at all.
    await app.query("SELECT set_config('promptctx.scopes', '{A,B}', true)");
    await app.query("SELECT set_config('promptctx.scope', 'B', true)");
    expect(await visible(app)).toEqual(NOTHING);
    await app.query("ROLLBACK");
  });

  /** Sets the declaration of `{B}` with a MAC made by SQL from `key` (a literal). */
  const forge = (key: string) =>
    `SELECT set_config('promptctx.scopes', '{B}', true), set_config('promptctx.scope', 'B', true),
      set_config('promptctx.scopes_mac', encode(sha256(convert_to('${key}' || encode(sha256(convert_to(
        '${key}:' || pg_backend_pid() || ':' || (extract(epoch FROM transaction_timestamp()) * 1000000)::bigint
        || ':{B}', 'UTF8')), 'hex'), 'UTF8')), 'hex'), true)`;

  it("the MAC is what guards: with the owner's key it opens B (the control of the next test)", async () => {
    const { app, adminUrl } = await seeded();
    const admin = await pg.client(adminUrl);
    const { rows } = await admin.query("SELECT key FROM promptctx_scope_key");
    await app.query("BEGIN");
    await app.query(forge(rows[0].key));
    expect((await visible(app)).promptctx_memories).toBe(2);
    await app.query("ROLLBACK");
  });

  it("a MAC from another transaction, or one made with a planted key, opens nothing", async () => {
    const { app } = await seeded();
    await app.query("BEGIN");
    await app.query("SELECT promptctx_begin(ARRAY['B'])");
    const stolen = await app.query(
      "SELECT current_setting('promptctx.scopes') AS s, current_setting('promptctx.scopes_mac') AS m",
    );
    await app.query("COMMIT");
    const { s, m } = stolen.rows[0];
    await app.query("BEGIN");
    await app.query("SELECT promptctx_begin(ARRAY['A'])");
    await app.query("SELECT set_config('promptctx.scopes', $1, true)", [s]);
    await app.query("SELECT set_config('promptctx.scopes_mac', $1, true)", [m]);
    await app.query("SELECT set_config('promptctx.scope', 'B', true)");
    expect(await visible(app)).toEqual(NOTHING);
    await app.query("ROLLBACK");
    // A temporary table named like the key table: the store's functions never read it.
    await app.query("CREATE TEMP TABLE promptctx_scope_key (id boolean, key text)");
    await app.query("INSERT INTO promptctx_scope_key VALUES (true, 'k')");
    await app.query("BEGIN");
    await app.query(forge("k"));
    expect(await visible(app)).toEqual(NOTHING);
    await app.query("ROLLBACK");
  });

  it("no role switch, no owner function, no counters, no key", async () => {
    const { app, adminUrl } = await seeded();
    expect(await refused(app, "SET ROLE promptctx_owner")).toBe("42501");
    expect(await refused(app, "SET ROLE postgres")).toBe("42501");
    expect(await refused(app, "SET SESSION AUTHORIZATION promptctx_owner")).toBe("42501");
    expect(await refused(app, "SELECT promptctx_scopes_mac('{B}')")).toBe("42501");
    expect(await refused(app, "SELECT * FROM promptctx_stats")).toBe("42501");
    expect(await refused(app, "SELECT * FROM promptctx_scope_key")).toBe("42501");
    expect(await refused(app, "UPDATE promptctx_stats SET memory_count = 0")).toBe("42501");
    expect(await refused(app, "SELECT promptctx_add_stats(1, 1, 1)")).toBe("42501");
    // PostgreSQL's column statistics (most common values…) stay hidden under RLS.
    const admin = await pg.client(adminUrl);
    await admin.query("ANALYZE promptctx_memories");
    const columnStats = "SELECT attname FROM pg_stats WHERE tablename = 'promptctx_memories'";
    expect((await admin.query(columnStats)).rows.length).toBeGreaterThan(0);
    expect((await app.query(columnStats)).rows).toEqual([]);
    // Inside a declared transaction: the other scope's statistics stay out of sight.
    await app.query("BEGIN");
    await app.query("SELECT promptctx_begin(ARRAY['A'])");
    const stats = await app.query(
      "SELECT user_scope, memory_count::int AS n FROM promptctx_scopes",
    );
    expect(stats.rows).toEqual([{ user_scope: "A", n: 1 }]);
    const terms = await app.query("SELECT DISTINCT scope_id FROM promptctx_terms");
    expect(terms.rows).toHaveLength(1);
    expect(await refused(app, "SELECT * FROM promptctx_stats", true)).toBe("42501");
    await app.query("ROLLBACK");
  });

  it("DDL is refused: policies, row-level security, tables, functions", async () => {
    const { app } = await seeded();
    for (const sql of [
      "ALTER TABLE promptctx_memories DISABLE ROW LEVEL SECURITY",
      "ALTER TABLE promptctx_memories NO FORCE ROW LEVEL SECURITY",
      "CREATE POLICY open ON promptctx_memories USING (true)",
      "DROP POLICY scope_read ON promptctx_memories",
      "ALTER POLICY scope_read ON promptctx_memories USING (true)",
      "DROP TABLE promptctx_memories",
      "TRUNCATE promptctx_memories",
      "DELETE FROM promptctx_memories",
      "CREATE TABLE promptctx_extra (x int)",
      "CREATE OR REPLACE FUNCTION promptctx_scope() RETURNS text LANGUAGE sql AS $$ SELECT 'B' $$",
      "ALTER FUNCTION promptctx_scope() OWNER TO promptctx_app",
      "GRANT promptctx_owner TO promptctx_app",
    ]) {
      expect(await refused(app, sql), sql).toBe("42501");
    }
  });

  it("an app role cannot create or upgrade a store; init names the fix", async () => {
    const { appUrl, adminUrl } = await pg.roles();
    const c = await pg.client(adminUrl);
    await c.query("DELETE FROM promptctx_schema_migrations WHERE version = $1", [
      PG_SCHEMA_VERSION,
    ]);
    const err = await failure(() => openPostgresStore(appUrl));
    expect(err).toBeInstanceOf(StoreOpenError);
    expect((err as Error).message).toMatch(/promptctx store init/);
    await initPostgresStore(adminUrl);
    await (await openPostgresStore(appUrl, { mustExist: true })).close();
  });

  it("a store one role owned and served is split by init --owner THAT_ROLE", async () => {
    const { url, adminUrl, name } = await pg.schema();
    const single = await openPostgresStore(url); // the role `promptctx` owns and serves
    await single.add([rec("a1", "alpha of A", { userScope: "A" })]);
    await single.close();
    const done = await initPostgresStore(adminUrl, { ownerRole: "promptctx" });
    expect(done.createdRoles).not.toContain("promptctx");
    const appUrl = url.replace("//promptctx@", "//promptctx_app@");
    expect(appUrl).toContain(name);
    const app = await openPostgresStore(appUrl, { mustExist: true });
    try {
      expect(app.privileged).toBe(false);
      expect((await app.list({ userScope: "A" })).map((r) => r.memoryId)).toEqual(["a1"]);
      expect(await failure(() => app.exportJsonl(() => {}))).toBeInstanceOf(StorePrivilegeError);
    } finally {
      await app.close();
    }
  });

  it("init refuses an app role that is a member of the owner, and equal roles", async () => {
    const { adminUrl } = await pg.roles();
    const c = await pg.client(adminUrl);
    await c.query("CREATE ROLE promptctx_member LOGIN IN ROLE promptctx_owner");
    const err = await failure(() => initPostgresStore(adminUrl, { appRole: "promptctx_member" }));
    expect((err as Error).message).toMatch(/member of the owner role/);
    const same = { ownerRole: "promptctx_owner", appRole: "promptctx_owner" };
    expect(await failure(() => initPostgresStore(adminUrl, same))).toBeInstanceOf(StoreOpenError);
  });
});
