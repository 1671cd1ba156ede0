/**
 * A large scope (≥ LARGE_SCOPE vectors) is searched through its in-memory candidate index
 * (src/store/scope-index.ts) from its second search on, the candidates ranked by
 * exact cosine: recall@10
 * against a brute-force cosine top 10 on random unit vectors, the category filter, and
 * the index following this connection's writes and another connection's.
 */
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { cosine } from "../../src/embed/index.js";
import { openStore, type SqliteMemoryStore } from "../../src/store/index.js";
import { LARGE_SCOPE } from "../../src/store/sqlite/vectors.js";
import { rec, seededUnitVectors, tempDir } from "./helpers.js";

const DIMS = 64;
const N = LARGE_SCOPE * 3;

/** The same seeded unit vectors in both dialects' large-scope tests. */
const vectors = (seed: number) => seededUnitVectors(seed, DIMS);

let dir: string;
let cleanup: () => void;
let base: SqliteMemoryStore;
let data: { rowid: number; vector: Float32Array; category: string }[];
const next = vectors(32);

beforeEach(() => {
  ({ dir, cleanup } = tempDir());
  base = openStore(join(dir, "memory.db"));
  base.vectors.bind({ id: "random@test/64", dimensions: DIMS });
  const cats = ["fact", "preference", "episodic"];
  const records = Array.from({ length: N }, (_, i) =>
    rec(`m${i}`, `memory ${i}`, { category: cats[i % 3]! }),
  );
  base.add(records);
  const ids = base.rowidsOf(
    "u1",
    records.map((r) => r.memoryId),
  );
  data = records.map((r, i) => ({
    rowid: ids.get(r.memoryId)!,
    vector: next(),
    category: cats[i % 3]!,
  }));
  base.vectors.put(
    data.map((d, i) => ({
      rowid: d.rowid,
      userScope: "u1",
      content: `memory ${i}`,
      vector: d.vector,
    })),
  );
  // A small scope beside it: never in the large scope's hits.
  base.add([rec("x1", "other scope", { userScope: "u2" })]);
  const [x1] = base.rowidsOf("u2", ["x1"]).values();
  base.vectors.put([{ rowid: x1!, userScope: "u2", content: "other scope", vector: next() }]);
});
afterEach(() => {
  base.close();
  cleanup();
});

function brute(q: Float32Array, rows: typeof data, k: number) {
  return rows
    .map((d) => ({ rowid: d.rowid, sim: cosine(q, d.vector) }))
    .sort((a, b) => b.sim - a.sim || a.rowid - b.rowid)
    .slice(0, k);
}

describe("a large scope's candidate index", () => {
  it("finds the brute-force top 10 (recall@10 ≥ 0.95; similarities within int8 rounding, best first)", () => {
    let found = 0;
    const queries = 30;
    for (let i = 0; i < queries; i++) {
      const q = next();
      const got = base.vectors.search("u1", q, 10);
      const want = brute(q, data, 10);
      expect(got).toHaveLength(10);
      for (let j = 1; j < got.length; j++)
        expect(got[j - 1]!.similarity).toBeGreaterThanOrEqual(got[j]!.similarity);
      const ids = new Set(want.map((w) => w.rowid));
      found += got.filter((h) => ids.has(h.rowid)).length;
      const byId = new Map(data.map((d) => [d.rowid, d.vector]));
      // The cosine up to the stored vector's int8 rounding (first search: sqlite-vec, exact).
      for (const h of got)
        expect(Math.abs(h.similarity - cosine(q, byId.get(h.rowid)!))).toBeLessThan(0.005);
    }
    const recall = found / (10 * queries);
    console.log(
      `large-scope recall@10 on ${N} random unit vectors of ${DIMS} dimensions: ${recall}`,
    );
    expect(recall).toBeGreaterThanOrEqual(0.95);
  });

  it("filters by category inside the search", () => {
    const q = next();
    const want = brute(
      q,
      data.filter((d) => d.category === "preference"),
      10,
    );
    // The first search scans with sqlite-vec, the second goes through the index.
    for (let i = 0; i < 2; i++) {
      const got = base.vectors.search("u1", q, 10, ["preference"]);
      const cats = new Map(data.map((d) => [d.rowid, d.category]));
      for (const h of got) expect(cats.get(h.rowid)).toBe("preference");
      const wanted = new Set(want.map((w) => w.rowid));
      // The index's order of near ties follows int8 rounding: the members are compared.
      expect(got.filter((h) => wanted.has(h.rowid)).length).toBeGreaterThanOrEqual(9);
    }
  });

  it("follows this connection's writes: a new vector is found, a changed memory's old vector is not", () => {
    const q = next();
    base.vectors.search("u1", q, 10); // the first search scans (sqlite-vec)
    base.vectors.search("u1", q, 10); // the second builds the index
    base.add([rec("new", "a new memory")]);
    const [rowid] = base.rowidsOf("u1", ["new"]).values();
    base.vectors.put([{ rowid: rowid!, userScope: "u1", content: "a new memory", vector: q }]);
    expect(base.vectors.search("u1", q, 1)[0]).toMatchObject({ rowid });
    // Replacing the content drops the vector (pending again): it is no hit any more.
    base.add([rec("new", "a changed memory")]);
    expect(base.vectors.search("u1", q, 10).map((h) => h.rowid)).not.toContain(rowid);
  });

  it("follows another connection's writes", () => {
    const q = next();
    base.vectors.search("u1", q, 10);
    base.vectors.search("u1", q, 10); // the index is built
    const other = openStore(join(dir, "memory.db"));
    try {
      other.add([rec("far", "written elsewhere")]);
      const [rowid] = other.rowidsOf("u1", ["far"]).values();
      other.vectors.put([
        { rowid: rowid!, userScope: "u1", content: "written elsewhere", vector: q },
      ]);
      expect(base.vectors.search("u1", q, 1)[0]).toMatchObject({ rowid });
      other.forget({ userScope: "u1", memoryId: "far" });
      expect(base.vectors.search("u1", q, 10).map((h) => h.rowid)).not.toContain(rowid);
    } finally {
      other.close();
    }
  });
});
