/**
 * A large PostgreSQL scope (≥ LARGE_SCOPE memories) is searched through an in-memory
 * candidate index (src/store/pg/vector-cache.ts) from its second search in a process on,
 * the candidates re-ranked by exact cosine on their stored vectors: the brute-force top
 * 10, the category filter, no other scope's rows, and the index following this store's
 * writes and another process's (another pool: the scope's `vector_gen`).
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { cosine } from "../../src/embed/index.js";
import type { PostgresMemoryStore } from "../../src/store/index.js";
import { LARGE_SCOPE } from "../../src/store/scope-index.js";
import { rec, seededUnitVectors } from "./helpers.js";
import { PGVECTOR_TESTS, usePostgres } from "./pg-helpers.js";

const DIMS = 64;
const N = LARGE_SCOPE * 2 + 100;
const NOW = "2026-08-17T00:00:00Z";
const CATS = ["fact", "preference", "episodic"];

/** The same seeded unit vectors in both dialects' large-scope tests. */
const vectors = (seed: number) => seededUnitVectors(seed, DIMS);

interface Row {
  rowid: number;
  vector: Float32Array;
  category: string;
}

/** Writes memories `prefix0…` of `scope` with a vector each; returns them. */
async function fill(
  store: PostgresMemoryStore,
  scope: string,
  n: number,
  next: () => Float32Array,
): Promise<Row[]> {
  const out: Row[] = [];
  for (let start = 0; start < n; start += 1000) {
    const recs = [];
    for (let i = start; i < Math.min(n, start + 1000); i++)
      recs.push(rec(`m${i}`, `memory ${i}`, { userScope: scope, category: CATS[i % 3]! }));
    await store.add(recs, { now: NOW });
    const pending = await store.vectors.pendingOf(recs.map((r) => [scope, r.memoryId]));
    const writes = pending.map((p) => ({ ...p, vector: next() }));
    await store.vectors.put(writes);
    for (const w of writes)
      out.push({
        rowid: w.rowid,
        vector: w.vector,
        category: CATS[Number(w.content.slice(7)) % 3]!,
      });
  }
  return out;
}

function brute(q: Float32Array, rows: readonly Row[], k: number) {
  return rows
    .map((d) => ({ rowid: d.rowid, sim: cosine(q, d.vector) }))
    .sort((a, b) => b.sim - a.sim || a.rowid - b.rowid)
    .slice(0, k);
}

describe.skipIf(!PGVECTOR_TESTS)("a large PostgreSQL scope's candidate index", () => {
  const pg = usePostgres();
  let url: string;
  let base: PostgresMemoryStore;
  let data: Row[];
  let other: Row[];
  const next = vectors(32);

  beforeAll(async () => {
    await pg.vector();
    const { openPostgresStore } = await import("../../src/store/index.js");
    url = (await pg.schema()).url;
    base = await openPostgresStore(url);
    await base.vectors.bind({ id: "random@test/64", dimensions: DIMS });
    data = await fill(base, "u1", N, next);
    // Another large scope beside it: never in u1's hits.
    other = await fill(base, "u2", LARGE_SCOPE + 10, next);
  }, 120_000);
  afterAll(async () => {
    await base?.close();
  });

  it("finds the brute-force top 10 with exact similarities, search after search", async () => {
    let found = 0;
    const queries = 12;
    const mine = new Set(data.map((d) => d.rowid));
    for (let i = 0; i < queries; i++) {
      const q = next();
      // The first search is exact (pgvector); the second builds the index, later ones use it.
      for (let j = 0; j < 2; j++) {
        const got = await base.vectors.search("u1", q, 10);
        const want = brute(q, data, 10);
        expect(got).toHaveLength(10);
        for (const h of got) expect(mine.has(h.rowid)).toBe(true);
        expect(got.map((g) => g.similarity)).toEqual(
          want.map((w) => expect.closeTo(w.sim, 5) as unknown as number),
        );
        const ids = new Set(want.map((w) => w.rowid));
        found += got.filter((h) => ids.has(h.rowid)).length;
      }
    }
    expect(found / (10 * queries * 2)).toBeGreaterThanOrEqual(0.95);
  });

  it("filters by category inside the search", async () => {
    const q = next();
    const want = brute(
      q,
      data.filter((d) => d.category === "preference"),
      10,
    );
    for (let i = 0; i < 3; i++) {
      const got = await base.vectors.search("u1", q, 10, ["preference"]);
      const cats = new Map(data.map((d) => [d.rowid, d.category]));
      for (const h of got) expect(cats.get(h.rowid)).toBe("preference");
      expect(got.map((g) => g.rowid)).toEqual(want.map((w) => w.rowid));
    }
  });

  it("never yields another scope's rows, for the app role under row-level security too", async () => {
    const { appUrl } = await pg.roles();
    const { openPostgresStore } = await import("../../src/store/index.js");
    // A store of its own, written and searched by the app role.
    const app = await openPostgresStore(appUrl);
    try {
      await app.vectors.bind({ id: "random@test/64", dimensions: DIMS });
      const a = await fill(app, "a", LARGE_SCOPE + 50, next);
      const b = await fill(app, "b", 40, next);
      const inA = new Set(a.map((d) => d.rowid));
      for (let i = 0; i < 3; i++) {
        // A query equal to one of b's vectors: the nearest of the table is b's.
        const q = b[i]!.vector;
        for (let j = 0; j < 2; j++) {
          const got = await app.vectors.search("a", q, 10);
          expect(got).toHaveLength(10);
          for (const h of got) expect(inA.has(h.rowid)).toBe(true);
          expect(got.map((g) => g.rowid)).toEqual(brute(q, a, 10).map((w) => w.rowid));
        }
      }
      // Another app-role process writes and forgets in the scope: the index follows both.
      const app2 = await openPostgresStore(appUrl);
      try {
        const q = next();
        await app.vectors.search("a", q, 10); // kept index, current
        await app2.add([rec("near", "written elsewhere", { userScope: "a" })], { now: NOW });
        const [p] = await app2.vectors.pendingOf([["a", "near"]]);
        await app2.vectors.put([{ ...p!, vector: q }]);
        expect((await app.vectors.search("a", q, 1))[0]).toMatchObject({ rowid: p!.rowid });
        await app2.forget({ userScope: "a", memoryId: "near" });
        const after = await app.vectors.search("a", q, 10);
        expect(after.map((h) => h.rowid)).toEqual(brute(q, a, 10).map((w) => w.rowid));
      } finally {
        await app2.close();
      }
      expect(
        new Set((await app.vectors.search("u2", other[0]!.vector, 10)).map((h) => h.rowid)),
      ).toEqual(new Set());
    } finally {
      await app.close();
    }
  });

  it("follows this store's writes: a new vector is found, a changed memory's is not", async () => {
    const q = next();
    await base.vectors.search("u1", q, 10);
    await base.vectors.search("u1", q, 10); // the index is built (or kept)
    await base.add([rec("new", "a new memory", { userScope: "u1" })], { now: NOW });
    const [p] = await base.vectors.pendingOf([["u1", "new"]]);
    await base.vectors.put([{ ...p!, vector: q }]);
    expect((await base.vectors.search("u1", q, 1))[0]).toMatchObject({ rowid: p!.rowid });
    await base.add([rec("new", "a changed memory", { userScope: "u1" })], { now: NOW });
    expect((await base.vectors.search("u1", q, 10)).map((h) => h.rowid)).not.toContain(p!.rowid);
  });

  it("follows another process's writes and forgets (the scope's vector generation)", async () => {
    const { openPostgresStore } = await import("../../src/store/index.js");
    const q = next();
    await base.vectors.search("u1", q, 10);
    await base.vectors.search("u1", q, 10); // the index is built (or kept)
    const elsewhere = await openPostgresStore(url);
    try {
      await elsewhere.add([rec("far", "written elsewhere", { userScope: "u1" })], { now: NOW });
      const [p] = await elsewhere.vectors.pendingOf([["u1", "far"]]);
      await elsewhere.vectors.put([{ ...p!, vector: q }]);
      expect((await base.vectors.search("u1", q, 1))[0]).toMatchObject({ rowid: p!.rowid });
      await elsewhere.forget({ userScope: "u1", memoryId: "far" });
      const after = await base.vectors.search("u1", q, 10);
      expect(after.map((h) => h.rowid)).not.toContain(p!.rowid);
      expect(after.map((h) => h.rowid)).toEqual(brute(q, data, 10).map((w) => w.rowid));
    } finally {
      await elsewhere.close();
    }
  });
});
