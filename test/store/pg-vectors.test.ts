/**
 * Recall by meaning on PostgreSQL with the real pgvector extension (built from Debian
 * trixie's source package by .ci/pgvector.sh), in a throwaway cluster: the same hits as
 * SQLite for the same contents with the embedded encoder, no cross-scope hit ever, the
 * exact search against brute force, embedder_mismatch, pending vectors and reembed,
 * invalidation on change, the app role under row-level security, and a database without
 * the extension (recall by words, with the `recall_full_text_only` hint).
 */
import { join } from "node:path";
import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { cosine, createEmbedder, type Embedder, unitVector } from "../../src/embed/index.js";
import {
  hybridStore,
  openHybrid,
  openPostgresStore,
  openStore,
  recallHints,
} from "../../src/store/index.js";
import { AS_OF, meaningMemories, meaningQueries } from "../fixtures/recall-meaning/index.js";
import { rec, tempDir } from "./helpers.js";
import { PGVECTOR_TESTS, usePostgres } from "./pg-helpers.js";
import { trigramEmbedder } from "./trigram-embedder.js";

const NOW = "2026-08-17T00:00:00Z";

describe.skipIf(!PGVECTOR_TESTS)("PostgreSQL recall by meaning (pgvector)", () => {
  const pg = usePostgres();
  beforeAll(async () => {
    await pg.vector();
  });
  const hybrid = async (e: Embedder = trigramEmbedder()) => openHybrid(await pg.open(), e);

  describe("the same hits as SQLite, with the embedded encoder", () => {
    let embedder: Embedder;
    let cleanup: () => void;
    beforeAll(async () => {
      embedder = (await createEmbedder({ kind: "embedded" }))!;
    });
    afterAll(async () => {
      await embedder.close?.();
      cleanup?.();
    });

    it("answers every labelled question exactly as SQLite does (hits, matches, breakdowns)", async () => {
      let dir: string;
      ({ dir, cleanup } = tempDir());
      const lite = hybridStore(openStore(join(dir, "m.db")), embedder);
      const pgs = await openHybrid(await pg.open(), embedder);
      try {
        const a = await lite.add(meaningMemories());
        const b = await pgs.add(meaningMemories());
        expect(b).toMatchObject({ inserted: a.inserted, embedded: a.embedded, pending: 0 });
        expect(await pgs.pendingCount()).toBe(0);
        let compared = 0;
        for (const q of meaningQueries()) {
          const o = { userScope: q.userScope, asOf: AS_OF, limit: 10 };
          const want = await lite.recall(q.text, o);
          const got = await pgs.recall(q.text, o);
          // Byte-identical answers: ids, ranks, paths, similarities, scores, breakdowns.
          expect(got, q.queryId).toEqual(want);
          compared += got.filter((h) => h.match?.semanticRank != null).length;
        }
        expect(compared).toBeGreaterThan(50); // meaning did take part
      } finally {
        lite.close();
        await pgs.close();
      }
    });
  });

  it("never returns a hit of another scope, whatever the contents (property)", async () => {
    const store = await hybrid();
    try {
      const word = fc.constantFrom("dark", "theme", "review", "merge", "coffee", "tea", "editor");
      const text = fc.array(word, { minLength: 1, maxLength: 5 }).map((ws) => ws.join(" "));
      let n = 0;
      await fc.assert(
        fc.asyncProperty(
          fc.array(fc.tuple(fc.constantFrom("a", "b", "c"), text), { minLength: 1, maxLength: 12 }),
          text,
          async (rows, query) => {
            const tag = `p${++n}`;
            await store.add(
              rows.map(([s, t], i) => rec(`${tag}-${i}`, t, { userScope: `${tag}${s}` })),
              { now: NOW },
            );
            for (const s of ["a", "b", "c"]) {
              const scope = `${tag}${s}`;
              const hits = await store.recall(query, { userScope: scope, asOf: NOW, limit: 20 });
              for (const h of hits) expect(h.userScope).toBe(scope);
              const mine = rows.filter(([x]) => x === s).length;
              expect(hits.length).toBeLessThanOrEqual(mine);
              const [q] = await store.embedder.embed([query]);
              const near = await store.base.vectors.search(scope, q!, 50);
              expect(near.length).toBe(mine);
            }
          },
        ),
        { numRuns: 15 },
      );
    } finally {
      await store.close();
    }
  });

  it("searches exactly: the top 10 equals a brute-force cosine top 10 (random vectors)", async () => {
    const dims = 32;
    const store = await openHybrid(await pg.open(), trigramEmbedder("rand@1/32", dims));
    let run = 0;
    try {
      await fc.assert(
        fc.asyncProperty(
          fc.array(
            fc.array(fc.float({ min: -1, max: 1, noNaN: true }), {
              minLength: dims,
              maxLength: dims,
            }),
            {
              minLength: 1,
              maxLength: 40,
            },
          ),
          fc.array(fc.float({ min: -1, max: 1, noNaN: true }), {
            minLength: dims,
            maxLength: dims,
          }),
          async (raw, rawQuery) => {
            const vs = raw.map((r) => unitVector(r.map((x, i) => x + (i === 0 ? 1e-3 : 0))));
            const scope = `x${++run}`;
            await store.base.add(
              vs.map((_, i) => rec(`v${i}`, `text ${i}`, { userScope: scope })),
              { now: NOW },
            );
            const pending = await store.base.vectors.pendingOf(vs.map((_, i) => [scope, `v${i}`]));
            const byId = new Map(pending.map((p) => [p.content, p.rowid]));
            const writes = vs.map((v, i) => ({
              rowid: byId.get(`text ${i}`)!,
              userScope: scope,
              content: `text ${i}`,
              vector: v,
            }));
            expect(await store.base.vectors.put(writes)).toBe(vs.length);
            const q = unitVector(rawQuery.map((x, i) => x + (i === 0 ? 1e-3 : 0)));
            const got = await store.base.vectors.search(scope, q, 10);
            const brute = writes
              .map((w) => ({ rowid: w.rowid, sim: cosine(q, w.vector) }))
              .sort((a, b) => b.sim - a.sim || a.rowid - b.rowid)
              .slice(0, 10);
            expect(got.map((g) => g.similarity)).toEqual(
              brute.map((b) => expect.closeTo(b.sim, 5) as unknown as number),
            );
            // The same set, up to ties at 1e-6.
            const kth = brute[brute.length - 1]!.sim;
            for (const g of got) expect(g.similarity).toBeGreaterThan(kth - 1e-5);
          },
        ),
        { numRuns: 20 },
      );
    } finally {
      await store.close();
    }
  });

  it("refuses another embedder with embedder_mismatch, naming both and the command", async () => {
    const base = await pg.open();
    await openHybrid(base, trigramEmbedder());
    expect(base.vectors.recorded).toEqual({ embedder: "trigram@1/64", dimensions: 64 });
    const err = await openHybrid(base, trigramEmbedder("other@2/64")).catch((e: unknown) => e);
    expect(err).toMatchObject({ code: "embedder_mismatch" });
    expect((err as Error).message).toContain("trigram@1/64");
    expect((err as Error).message).toContain("other@2/64");
    expect((err as Error).message).toContain("promptctx memory reembed");
    // migrate: every vector dropped, the store records the new embedder
    const other = await openHybrid(base, trigramEmbedder("other@2/64"), { migrate: true });
    await other.add([rec("m1", "the user prefers a dark theme")], { now: NOW });
    expect(await other.reembed({ migrate: true })).toMatchObject({ pending: 0 });
    expect(base.vectors.recorded).toEqual({ embedder: "other@2/64", dimensions: 64 });
    await base.close();
  });

  it("keeps a write whose embedding fails as pending; reembed fills it (resumable)", async () => {
    const e = trigramEmbedder();
    const store = await hybrid(e);
    try {
      e.fail = true;
      const added = await store.add(
        [rec("m1", "the user prefers a dark theme"), rec("m2", "approving review before merge")],
        { now: NOW },
      );
      expect(added).toMatchObject({ inserted: 2, embedded: 0, pending: 2 });
      expect(added.embedError?.message).toContain("cannot reach the embedder");
      expect(await store.pendingCount()).toBe(2);
      e.fail = false;
      // Pending: found by words only, until reembed.
      const byWords = await store.recall("dark theme", { userScope: "u1", asOf: NOW });
      expect(byWords.map((h) => [h.memoryId, h.match?.path])).toEqual([["m1", "lexical"]]);
      const filled = await store.reembed();
      expect(filled).toMatchObject({ embedded: 2, pending: 0 });
      expect(await store.pendingCount()).toBe(0);
      const hits = await store.recall("the user prefers a dark theme", {
        userScope: "u1",
        asOf: NOW,
      });
      expect(hits[0]).toMatchObject({ memoryId: "m1", match: { path: "both", semanticRank: 1 } });
    } finally {
      await store.close();
    }
  });

  it("drops a vector when its memory's content changes, and with the memory when it is forgotten", async () => {
    const store = await hybrid();
    try {
      await store.add([rec("m1", "dark theme"), rec("m2", "light theme")], { now: NOW });
      expect(await store.pendingCount()).toBe(0);
      await store.base.add([rec("m1", "a new text entirely")], { now: NOW });
      expect(await store.pendingCount()).toBe(1);
      await store.reembed();
      await store.forget({ userScope: "u1", memoryId: "m2" });
      const [q] = await store.embedder.embed(["light theme"]);
      const near = await store.base.vectors.search("u1", q!, 10);
      expect(near).toHaveLength(1);
      expect(await store.pendingCount()).toBe(0);
    } finally {
      await store.close();
    }
  });

  it("works for the app role under row-level security; reembed needs the owner", async () => {
    const { appUrl, ownerUrl } = await pg.roles();
    const app = await openHybrid(await openPostgresStore(appUrl), trigramEmbedder());
    const owner = await openHybrid(await openPostgresStore(ownerUrl), trigramEmbedder());
    try {
      expect(app.base.vectors.searchable).toBe(true);
      const added = await app.add(
        [rec("m1", "dark theme"), rec("m2", "tea", { userScope: "u2" })],
        {
          now: NOW,
        },
      );
      expect(added).toMatchObject({ embedded: 2, pending: 0 });
      const hits = await app.recall("dark theme", { userScope: "u1", asOf: NOW });
      expect(hits.map((h) => [h.memoryId, h.match?.path])).toEqual([["m1", "both"]]);
      expect(await app.reembed().catch((e: { code: string }) => e.code)).toBe("invalid_input");
      // An import by the app role embeds what it imported (it cannot list every scope).
      const jsonl = [rec("j1", "green tea every morning", { userScope: "u3" }), { bad: 1 }]
        .map((r) => JSON.stringify(r))
        .join("\n");
      const imported = await app.importJsonl(jsonl, { now: NOW });
      expect(imported).toMatchObject({ imported: 1, embedded: 1, pending: 0 });
      expect(imported.errors).toHaveLength(1);
      expect(await owner.reembed()).toMatchObject({ embedded: 0, pending: 0 });
    } finally {
      await app.close();
      await owner.close();
    }
  });

  it("without the extension: recall by words, a recall_full_text_only hint, writes kept", async () => {
    const url = await pg.database("noext");
    const store = await openHybrid(
      await openPostgresStore(url, { maxConnections: 2 }),
      trigramEmbedder(),
    );
    try {
      expect(store.base.vectors.state).toBe("no_extension");
      const added = await store.add([rec("m1", "the user prefers a dark theme")], { now: NOW });
      expect(added).toMatchObject({ inserted: 1, embedded: 0 });
      const hits = await store.recall("dark theme", { userScope: "u1", asOf: NOW });
      expect(hits.map((h) => h.memoryId)).toEqual(["m1"]);
      expect(hits[0]!.match).toMatchObject({ path: "lexical", semanticRank: null });
      const hints = recallHints("dark theme", store);
      expect(hints.map((h) => h.code)).toEqual(["recall_full_text_only"]);
      expect(hints[0]!.message).toContain("pgvector");
      const err = await store.reembed().catch((e: unknown) => e);
      expect(err).toMatchObject({ code: "invalid_input" });
    } finally {
      await store.close();
    }
  });

  it("turns recall by meaning on once the extension is installed (the owner makes the table)", async () => {
    const url = await pg.database("later");
    const plain = await openPostgresStore(url, { maxConnections: 2 });
    await plain.add([rec("m1", "the user prefers a dark theme")], { now: NOW });
    expect(plain.vectors.state).toBe("no_extension");
    await plain.close();
    await pg.vector("later");
    const store = await openHybrid(await openPostgresStore(url), trigramEmbedder());
    try {
      expect(store.base.vectors.state).toBe("ready");
      expect(await store.reembed()).toMatchObject({ embedded: 1, pending: 0 });
      const hits = await store.recall("the user prefers a dark theme", {
        userScope: "u1",
        asOf: NOW,
      });
      expect(hits[0]?.match?.path).toBe("both");
    } finally {
      await store.close();
    }
  });
});
