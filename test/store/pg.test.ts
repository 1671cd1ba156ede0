/**
 * The PostgreSQL store against a real, throwaway cluster: the shared contract suite (the
 * very tests the SQLite store runs), then what is PostgreSQL's own — row-level security
 * behind the predicates, the role check, migrations, and parity with SQLite (same hits,
 * same bm25 to the last bit, byte-identical exports).
 */
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import {
  type MemoryRecordInput,
  type MemoryStore,
  openPostgresStore,
  openStore,
  openStoreUrl,
  PG_MIGRATIONS,
  PG_SCHEMA_VERSION,
  StoreOpenError,
  StoreVersionError,
} from "../../src/store/index.js";
import { storeContract } from "./contract.js";
import { exportText, failure } from "./contract-helpers.js";
import { exportFixture } from "./contract-records.js";
import { AS_OF, rec, tempDir } from "./helpers.js";
import { PG_TESTS, usePostgres } from "./pg-helpers.js";

describe.runIf(PG_TESTS)("PostgreSQL store", () => {
  const pg = usePostgres();

  storeContract({ name: "PostgreSQL", open: (options) => pg.open(options) });

  describe("row-level security: the scope is enforced without the predicate", () => {
    /** Written through the app role of `store init`; an app-role client. */
    async function seeded() {
      const { appUrl: url } = await pg.roles();
      const store = await openPostgresStore(url);
      await store.add([
        rec("a1", "alpha secret of A"),
        rec("a2", "alpha again", { userScope: "A" }),
        rec("b1", "alpha secret of B", { userScope: "B" }),
        rec("b2", "beta of B", { userScope: "B" }),
      ]);
      await store.close();
      return pg.client(url);
    }
    const TABLES = ["memories", "postings", "terms", "scopes"].map((t) => `promptctx_${t}`);

    it("a query without any scope predicate reads only the transaction's scope", async () => {
      const c = await seeded();
      await c.query("BEGIN");
      await c.query("SELECT promptctx_begin(ARRAY['B'])");
      const rows = await c.query("SELECT memory_id, user_scope FROM promptctx_memories");
      expect(rows.rows.map((r) => r.memory_id).sort()).toEqual(["b1", "b2"]);
      const hits = await c.query(
        "SELECT DISTINCT m.memory_id FROM promptctx_postings p JOIN promptctx_memories m USING (id) WHERE p.term = 'alpha'",
      );
      expect(hits.rows.map((r) => r.memory_id)).toEqual(["b1"]);
      const scopes = await c.query("SELECT user_scope FROM promptctx_scopes");
      expect(scopes.rows).toEqual([{ user_scope: "B" }]);
      const postings = await c.query("SELECT DISTINCT scope_id FROM promptctx_postings");
      const terms = await c.query("SELECT DISTINCT scope_id FROM promptctx_terms");
      expect(postings.rows).toHaveLength(1);
      expect(terms.rows).toEqual(postings.rows);
      await c.query("COMMIT");
    });

    it("a transaction that declares no scope reads nothing at all", async () => {
      const c = await seeded();
      for (const t of TABLES) {
        const { rows } = await c.query(`SELECT count(*)::int AS n FROM ${t}`);
        expect(rows[0].n, t).toBe(0);
      }
    });

    it("writes cannot leave the scope either: insert, update, delete", async () => {
      const c = await seeded();
      await c.query("BEGIN");
      await c.query("SELECT promptctx_begin(ARRAY['A'])");
      const updated = await c.query("UPDATE promptctx_memories SET content = 'overwritten'");
      expect(updated.rowCount).toBe(1);
      await c.query("SAVEPOINT s");
      // The app role may not delete at all (the store never deletes a memory).
      expect(await failure(() => c.query("DELETE FROM promptctx_memories"))).toMatchObject({
        code: "42501",
      });
      await c.query("ROLLBACK TO SAVEPOINT s");
      const err = await failure(() =>
        c.query(
          `INSERT INTO promptctx_memories (memory_id, user_scope, kind, category, tags, content,
             summary, importance, source_id, source_type, source_title, captured_at, stored_at,
             terms)
           VALUES ('x', 'B', 'fact', 'general', '[]', 'x', '', 0.5, 's', 't', 'T', $1, $1, '')`,
          [AS_OF],
        ),
      );
      expect(err).toMatchObject({ code: "42501" });
      await c.query("ROLLBACK TO SAVEPOINT s");
      await c.query("COMMIT");
      await c.query("BEGIN");
      await c.query("SELECT promptctx_begin(ARRAY['B'])");
      const b = await c.query("SELECT content FROM promptctx_memories ORDER BY memory_id");
      expect(b.rows.map((r) => r.content)).toEqual(["alpha secret of B", "beta of B"]);
      await c.query("ROLLBACK");
    });

    it("a role that bypasses row-level security is refused", async () => {
      const { adminUrl } = await pg.schema();
      const err = await failure(() => openPostgresStore(adminUrl));
      expect(err).toBeInstanceOf(StoreOpenError);
      expect((err as Error).message).toMatch(/superuser or has BYPASSRLS/);
    });
  });

  describe("migrations, opening, errors", () => {
    it("a version table; reopening does not migrate again; concurrent first opens agree", async () => {
      const { url } = await pg.schema();
      const stores = await Promise.all([1, 2, 3].map(() => openPostgresStore(url)));
      await stores[0]!.add([rec("m1", "hello")]);
      for (const s of stores) await s.close();
      const again = await openPostgresStore(url, { mustExist: true });
      expect(await again.count()).toBe(1);
      await again.close();
      const c = await pg.client(url);
      const { rows } = await c.query(
        "SELECT version FROM promptctx_schema_migrations ORDER BY version",
      );
      expect(rows).toEqual(PG_MIGRATIONS.map((m) => ({ version: m.version })));
      expect(rows.at(-1)).toEqual({ version: PG_SCHEMA_VERSION });
    });

    it("a version-1 store is migrated: each scope's counts filled from its rows, recall unchanged", async () => {
      const { url } = await pg.schema();
      const store = await openPostgresStore(url);
      const scopes = ["u1", "u2", "empty-after-update"];
      await store.add([
        rec("a", "deploy the python service", { userScope: "u1" }),
        rec("b", "deploy again deploy", { userScope: "u1" }),
        rec("c", "天气预报 部署", { userScope: "u2" }),
        rec("d", "x", { userScope: "empty-after-update" }),
      ]);
      // Updates change lengths (and one row to no index terms at all).
      await store.add([
        rec("b", "deploy", { userScope: "u1" }),
        rec("d", "!!!", { userScope: "empty-after-update" }),
      ]);
      const query = { asOf: AS_OF, limit: 10 };
      const before = await store.recall("deploy python", { ...query, userScope: "u1" });
      await store.close();
      const c = await pg.client(url);
      const counts = async () => {
        const out: unknown[] = [];
        for (const scope of scopes) {
          await c.query("BEGIN");
          await c.query("SELECT promptctx_begin(ARRAY[$1])", [scope]);
          const { rows } = await c.query(
            "SELECT memory_count::int AS n, term_count::int AS terms FROM promptctx_scopes",
          );
          await c.query("COMMIT");
          out.push(rows);
        }
        return out;
      };
      const kept = await counts();
      // u1: a (4 terms) + b (now 1); u2: one record; the third: one record without terms.
      expect(kept).toEqual([
        [{ n: 2, terms: 5 }],
        [{ n: 1, terms: expect.any(Number) }],
        [{ n: 1, terms: 0 }],
      ]);
      // Back to version 1: the columns of migration 2 gone.
      await c.query(
        "ALTER TABLE promptctx_scopes DROP COLUMN memory_count, DROP COLUMN term_count",
      );
      // Versions 2 and 3 applied again (3 is re-runnable).
      await c.query("DELETE FROM promptctx_schema_migrations WHERE version >= 2");
      const again = await openPostgresStore(url);
      try {
        expect(await counts()).toEqual(kept);
        expect(await again.recall("deploy python", { ...query, userScope: "u1" })).toEqual(before);
      } finally {
        await again.close();
      }
    });

    it("a version-3 store (ids unique store-wide) is migrated: the same id may live in two scopes", async () => {
      const { url } = await pg.schema();
      const store = await openPostgresStore(url);
      await store.add([rec("x", "held by u1")]);
      await store.close();
      const c = await pg.client(url);
      await c.query(`ALTER TABLE promptctx_memories
        ADD CONSTRAINT promptctx_memories_memory_id_key UNIQUE (memory_id)`);
      await c.query("DROP INDEX promptctx_memories_scope_memory");
      await c.query("DELETE FROM promptctx_schema_migrations WHERE version = 4");
      const again = await openPostgresStore(url);
      try {
        expect(await again.add([rec("x", "u2's own", { userScope: "u2" })])).toEqual({
          inserted: 1,
          updated: 0,
        });
        expect((await again.get("x", { userScope: "u1" }))?.content).toBe("held by u1");
        expect((await again.get("x", { userScope: "u2" }))?.content).toBe("u2's own");
      } finally {
        await again.close();
      }
    });

    it("a database from a newer promptctx fails with StoreVersionError and is left untouched", async () => {
      const { url } = await pg.schema();
      await (await openPostgresStore(url)).close();
      const c = await pg.client(url);
      await c.query("INSERT INTO promptctx_schema_migrations VALUES ($1, 'future')", [
        PG_SCHEMA_VERSION + 1,
      ]);
      const err = await failure(() => openPostgresStore(url));
      expect(err).toBeInstanceOf(StoreVersionError);
      expect(err).toMatchObject({ found: PG_SCHEMA_VERSION + 1, supported: PG_SCHEMA_VERSION });
      const { rows } = await c.query("SELECT count(*)::int AS n FROM promptctx_schema_migrations");
      expect(rows[0].n).toBe(PG_MIGRATIONS.length + 1);
    });

    it("mustExist refuses a database without a store; a bad URL names no password", async () => {
      const { url } = await pg.schema();
      expect(await failure(() => openPostgresStore(url, { mustExist: true }))).toBeInstanceOf(
        StoreOpenError,
      );
      const bad = `postgres://promptctx:s3cret@127.0.0.1:${pg.cluster.port}/no_such_db`;
      const err = await failure(() => openStoreUrl(bad));
      expect(err).toBeInstanceOf(StoreOpenError);
      expect((err as Error).message).not.toContain("s3cret");
      expect((err as Error).message).toContain("promptctx:***@");
    });
  });

  describe("parity with the SQLite store", () => {
    /** A deterministic corpus: several scopes, English and CJK, repeats, long texts. */
    function corpus(): MemoryRecordInput[] {
      const words = ["deploy", "python", "invoice", "index", "cache", "天气", "预报", "部署"];
      let seed = 7;
      const next = () => {
        seed = (seed * 1103515245 + 12345) % 2147483648;
        return seed;
      };
      return Array.from({ length: 240 }, (_, i) => {
        const n = 2 + (next() % 12);
        const text = Array.from({ length: n }, () => words[next() % words.length]).join(" ");
        return rec(`m${i % 200}`, `${text} note ${i % 17}`, {
          userScope: ["u1", "u2", "team"][(i % 200) % 3]!,
          importance: (next() % 100) / 100,
          capturedAt: `2026-0${1 + (next() % 8)}-1${next() % 10}T00:00:00Z`,
          tags: i % 5 === 0 ? ["ops"] : [],
          category: i % 4 === 0 ? "tool_failure" : "general",
        });
      });
    }

    it("same hits, same bm25 bits, same exports, budgets and updates included", async () => {
      const tmp = tempDir();
      const opts = { matchBudget: 40, poolSize: 8 };
      const sqlite = openStore(join(tmp.dir, "parity.db"), opts);
      const pgStore = await pg.open(opts);
      try {
        const records = corpus();
        for (const s of [sqlite, pgStore] as MemoryStore[]) {
          // In batches, with the 40 repeated ids updating earlier records.
          for (let i = 0; i < records.length; i += 50) await s.add(records.slice(i, i + 50));
          await s.importJsonl(
            exportFixture()
              .map((r) => JSON.stringify(r))
              .join("\n"),
          );
        }
        for (const q of [
          "deploy",
          "python cache",
          "天气预报",
          "invoice note 3",
          "部署 index ops",
        ]) {
          for (const userScope of ["u1", "team", "nobody"]) {
            for (const categories of [undefined, ["tool_failure"]]) {
              const o = {
                userScope,
                asOf: AS_OF,
                limit: 10,
                ...(categories ? { categories } : {}),
              };
              expect(await pgStore.recall(q, o), `${q} in ${userScope}`).toEqual(
                sqlite.recall(q, o),
              );
            }
          }
        }
        expect(await exportText(pgStore)).toBe(await exportText(sqlite));
        expect(await pgStore.count()).toBe(sqlite.count());
      } finally {
        sqlite.close();
        await pgStore.close();
        tmp.cleanup();
      }
    });
  });
});
