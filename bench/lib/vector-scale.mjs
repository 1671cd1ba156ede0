/**
 * Vector search at scale for the `recall-meaning` section, with **random unit vectors** of
 * 512 dimensions (not the encoder's): a store with one large scope (the in-memory
 * candidate index of src/store/scope-index.ts) and a store of many small scopes
 * (each read exactly from its sqlite-vec partition's chunks). Returns p50s, the index build time and recall@10
 * against a brute-force cosine top 10 over the same vectors.
 */
import path from "node:path";
import { performance } from "node:perf_hooks";
import { median, round3 } from "./measure.mjs";

const DIMS = 512;
const FILL_BATCH = 5_000;

/** A memory record of the bench (the scale sections of SQLite and PostgreSQL share it). */
export function record(i, scope, content = `memory ${i}`) {
  return {
    memoryId: `m${i}`,
    userScope: scope,
    content,
    source: {
      sourceId: "bench",
      sourceType: "chat",
      title: "bench",
      capturedAt: "2026-06-01T00:00:00Z",
    },
  };
}

/** A random unit vector (Gaussian-ish components from the seeded generator). */
export function randomUnit(r, unitVector) {
  const v = new Float32Array(DIMS);
  for (let i = 0; i < DIMS; i++) v[i] = r.float() + r.float() + r.float() - 1.5;
  return unitVector(v);
}

/** Writes `n` memories spread over `scopes` scopes, each with a random vector; keeps them when `keep`. */
function fill(base, r, unitVector, n, scopes, keep) {
  const kept = [];
  for (let start = 0; start < n; start += FILL_BATCH) {
    const recs = [];
    for (let i = start; i < Math.min(n, start + FILL_BATCH); i++)
      recs.push(record(i, `s${i % scopes}`));
    base.add(recs);
    const byScope = new Map();
    for (const x of recs) byScope.set(x.userScope, [...(byScope.get(x.userScope) ?? []), x]);
    const writes = [];
    for (const [scope, xs] of byScope) {
      const ids = base.rowidsOf(
        scope,
        xs.map((x) => x.memoryId),
      );
      for (const x of xs) {
        const vector = randomUnit(r, unitVector);
        writes.push({ rowid: ids.get(x.memoryId), content: x.content, vector });
        if (keep) kept.push({ rowid: ids.get(x.memoryId), vector });
      }
    }
    base.vectors.put(writes);
  }
  return kept;
}

function bruteTop(q, kept, k) {
  const sims = kept.map((d) => {
    let s = 0;
    for (let i = 0; i < DIMS; i++) s += q[i] * d.vector[i];
    return [d.rowid, s];
  });
  sims.sort((a, b) => b[1] - a[1] || a[0] - b[0]);
  return sims.slice(0, k).map((x) => x[0]);
}

/** One scope of `n` vectors: build, p50 (k 50 and 10), recall@10, with the query's embedding. */
export async function oneScope({ dir, openStore, unitVector, embedder, r, sentence, n }) {
  const base = openStore(path.join(dir, "one-scope.db"));
  try {
    base.vectors.bind({ id: "random@bench/512", dimensions: DIMS });
    let t = performance.now();
    const kept = fill(base, r, unitVector, n, 1, true);
    const fillS = round3((performance.now() - t) / 1000);
    t = performance.now();
    base.vectors.search("s0", randomUnit(r, unitVector), 50); // sqlite-vec's exact scan
    const firstMs = round3(performance.now() - t);
    t = performance.now();
    base.vectors.search("s0", randomUnit(r, unitVector), 50); // builds the index
    const buildMs = round3(performance.now() - t);
    const k50 = [];
    const k10 = [];
    let found = 0;
    const QUERIES = 25;
    for (let i = 0; i < QUERIES; i++) {
      const q = randomUnit(r, unitVector);
      let t2 = performance.now();
      const hits = base.vectors.search("s0", q, 50);
      k50.push(performance.now() - t2);
      t2 = performance.now();
      base.vectors.search("s0", q, 10);
      k10.push(performance.now() - t2);
      const want = new Set(bruteTop(q, kept, 10));
      found += hits.slice(0, 10).filter((h) => want.has(h.rowid)).length;
    }
    const withEmbed = [];
    for (let i = 0; i < 15; i++) {
      const t2 = performance.now();
      const [q] = await embedder.embed([sentence(r)]);
      base.vectors.search("s0", q, 50);
      withEmbed.push(performance.now() - t2);
    }
    return {
      n,
      vectors: "random unit vectors, 512 dimensions",
      fillS,
      firstSearchMs: firstMs,
      indexBuildMs: buildMs,
      searchP50Ms: round3(median(k50)),
      searchK10P50Ms: round3(median(k10)),
      recallAt10: round3(found / (10 * QUERIES)),
      searchWithEmbeddingP50Ms: round3(median(withEmbed.slice(3))),
    };
  } finally {
    base.close();
  }
}

/** `n` vectors over `scopes` scopes: p50 of a search in a random scope (k 50). */
export function manyScopes({ dir, openStore, unitVector, r, n, scopes }) {
  const base = openStore(path.join(dir, "many-scopes.db"));
  try {
    base.vectors.bind({ id: "random@bench/512", dimensions: DIMS });
    const t = performance.now();
    fill(base, r, unitVector, n, scopes, false);
    const fillS = round3((performance.now() - t) / 1000);
    const times = [];
    for (let i = 0; i < 60; i++) {
      const scope = `s${r.int(0, scopes - 1)}`;
      const q = randomUnit(r, unitVector);
      const t2 = performance.now();
      base.vectors.search(scope, q, 50);
      times.push(performance.now() - t2);
    }
    return {
      n,
      scopes,
      vectors: "random unit vectors, 512 dimensions",
      fillS,
      searchP50Ms: round3(median(times.slice(10))),
    };
  } finally {
    base.close();
  }
}
