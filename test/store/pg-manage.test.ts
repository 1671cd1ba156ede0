/**
 * Forget, versions, pages, the takeover gate and limits on the PostgreSQL store against a
 * real, throwaway cluster: the management contract the SQLite store runs, then the app
 * role of `store init` under row-level security (forget works, cannot reach another scope)
 * and parity of a recall into the past with SQLite.
 */
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { openPostgresStore, openStore } from "../../src/store/index.js";
import { rec, tempDir } from "./helpers.js";
import { manageContract } from "./manage-contract.js";
import { PG_TESTS, usePostgres } from "./pg-helpers.js";

describe.runIf(PG_TESTS)("PostgreSQL store: memory management", () => {
  const pg = usePostgres();

  manageContract("PostgreSQL", (options) => pg.open(options));

  it("the app role forgets its scope's memories, every version, and nothing of another scope", async () => {
    const { appUrl, adminUrl } = await pg.roles();
    const store = await openPostgresStore(appUrl);
    try {
      await store.add([rec("m", "alpha walrus"), rec("m", "beta walrus", { userScope: "B" })], {
        now: "2026-08-01T00:00:00Z",
      });
      await store.add([rec("m", "alpha walrus v2 quokkaword")], { now: "2026-08-02T00:00:00Z" });
      expect(await store.forget({ userScope: "C", memoryId: "m" })).toEqual({
        memories: 0,
        removed: 0,
      });
      expect(await store.forget({ userScope: "u1", memoryId: "m" })).toEqual({
        memories: 1,
        removed: 2,
      });
      expect(await store.getEntry("m", { userScope: "B" })).not.toBeNull();
      expect(
        await store.recall("walrus", { userScope: "u1", asOf: "2026-09-01T00:00:00Z" }),
      ).toEqual([]);
      expect(
        (await store.recall("walrus", { userScope: "B", asOf: "2026-09-01T00:00:00Z" })).length,
      ).toBe(1);
      const c = await pg.client(appUrl);
      // Without a declared scope, the app role sees no row of any table (versions included).
      const rows = await c.query("SELECT count(*)::int AS n FROM promptctx_memory_versions");
      expect(rows.rows[0].n).toBe(0);
      // The index keeps no term of the forgotten memory (read as the administrator).
      const admin = await pg.client(adminUrl);
      const terms = await admin.query(
        "SELECT count(*)::int AS n FROM promptctx_terms WHERE term LIKE '%quokka%'",
      );
      expect(terms.rows[0].n).toBe(0);
      const left = await admin.query(
        "SELECT count(*)::int AS n FROM promptctx_memory_versions WHERE record LIKE '%walrus%'",
      );
      expect(left.rows[0].n).toBe(0);
    } finally {
      await store.close();
    }
  });

  it("a recall into the past answers as SQLite does", async () => {
    const { dir, cleanup } = tempDir();
    const lite = openStore(join(dir, "m.db"));
    const pgs = await pg.open();
    try {
      for (const s of [lite, pgs]) {
        await s.add([rec("a", "python tips"), rec("b", "python packaging"), rec("c", "rust")], {
          now: "2026-08-01T00:00:00Z",
        });
        await s.add([rec("a", "rust tips"), rec("d", "python web")], {
          now: "2026-08-05T00:00:00Z",
        });
      }
      const q = { userScope: "u1", asOf: "2026-08-03T00:00:00Z" };
      expect(await pgs.recall("python tips", q)).toEqual(lite.recall("python tips", q));
      const now = { userScope: "u1", asOf: "2026-08-09T00:00:00Z" };
      expect(await pgs.recall("python tips", now)).toEqual(lite.recall("python tips", now));
      expect(await pgs.history("a", { userScope: "u1" })).toEqual(
        lite.history("a", { userScope: "u1" }),
      );
    } finally {
      lite.close();
      await pgs.close();
      cleanup();
    }
  });
});
