/** Contract, part 2: recall — scoring, ranking, budgets, terms, hostile queries, scopes. */
import fc from "fast-check";
import { beforeEach, describe, expect, it } from "vitest";
import { InvalidInputError } from "../../src/errors/index.js";
import { candidatesFromRecallHits, selectMemoryContext } from "../../src/memory/index.js";
import {
  adapterOptionsFromHits,
  DEFAULT_WEIGHTS,
  indexTerms,
  queryTerms,
  round6,
  scopePrefix,
} from "../../src/store/index.js";
import type { StoreBackend } from "./contract.js";
import { failure, useStores } from "./contract-helpers.js";
import { AS_OF, rec } from "./helpers.js";

type Ctx = ReturnType<typeof useStores>;

// Other scopes make the corpus realistic (bm25 IDF needs N > 2·df) without touching u1.
const filler = () =>
  Array.from({ length: 30 }, (_, i) =>
    rec(`f${i}`, `filler text number ${i}`, { userScope: "other" }),
  );

function scoring(ctx: Ctx): void {
  it("breakdown: weights sum to 1, components in [0,1], total = round6(weighted sum)", async () => {
    await ctx.store.add([
      ...filler(),
      rec("m1", "User prefers Python for automation", {
        importance: 0.9,
        capturedAt: "2026-08-01T00:00:00Z",
      }),
      rec("m2", "Python is installed", { importance: 0.3 }),
    ]);
    const hits = await ctx.store.recall("python automation", { userScope: "u1", asOf: AS_OF });
    expect(hits.map((h) => [h.memoryId, h.rank])).toEqual([
      ["m1", 1],
      ["m2", 2],
    ]);
    for (const h of hits) {
      const b = h.scoreBreakdown;
      expect(b.weights).toEqual(DEFAULT_WEIGHTS);
      for (const v of [b.lexical, b.recency, b.importance, b.total, b.coverage]) {
        expect(v).toBeGreaterThanOrEqual(0);
        expect(v).toBeLessThanOrEqual(1);
      }
      expect(b.total).toBe(
        round6(
          b.weights.lexical * b.lexical +
            b.weights.recency * b.recency +
            b.weights.importance * b.importance,
        ),
      );
      expect(h.score).toBe(b.total);
      expect(b.bm25).toBeLessThan(0);
    }
    expect(hits[0]?.scoreBreakdown).toMatchObject({ lexical: 1, coverage: 1, importance: 0.9 });
    expect(hits[1]?.scoreBreakdown.coverage).toBe(0.5);
  });

  it("lexical: more query terms matched → higher lexical and rank", async () => {
    await ctx.store.add([
      ...filler(),
      rec("one", "python only here"),
      rec("two", "python and bash here"),
    ]);
    const hits = await ctx.store.recall("python bash", { userScope: "u1", asOf: AS_OF });
    expect(hits.map((h) => h.memoryId)).toEqual(["two", "one"]);
    expect(hits[0]!.scoreBreakdown.lexical).toBe(1);
    expect(hits[1]!.scoreBreakdown.lexical).toBeLessThan(0.5);
  });

  it("recency: 30-day half-life against asOf; the future counts as age 0", async () => {
    await ctx.store.add([
      ...filler(),
      rec("now", "deploy notes", { capturedAt: AS_OF }),
      rec("d30", "deploy notes", { capturedAt: "2026-07-18T00:00:00Z" }),
      rec("d60", "deploy notes", { capturedAt: "2026-06-18T00:00:00Z" }),
      rec("future", "deploy notes", { capturedAt: "2026-09-01T00:00:00Z" }),
    ]);
    const hits = await ctx.store.recall("deploy", { userScope: "u1", asOf: AS_OF });
    const recency = Object.fromEntries(hits.map((h) => [h.memoryId, h.scoreBreakdown.recency]));
    expect(recency).toEqual({ now: 1, d30: 0.5, d60: 0.25, future: 1 });
    expect(hits.map((h) => h.memoryId)).toEqual(["future", "now", "d30", "d60"]);
  });

  it("asOf is the only clock: the same store gives other recency at another asOf", async () => {
    await ctx.store.add([
      ...filler(),
      rec("m", "deploy notes", { capturedAt: "2026-07-18T00:00:00Z" }),
    ]);
    const at = async (asOf: string) =>
      (await ctx.store.recall("deploy", { userScope: "u1", asOf }))[0]!.scoreBreakdown.recency;
    expect(await at("2026-07-18T00:00:00Z")).toBe(1);
    expect(await at(AS_OF)).toBe(0.5);
  });

  it("importance breaks an otherwise equal match", async () => {
    await ctx.store.add([
      ...filler(),
      rec("low", "backup schedule", { importance: 0.1 }),
      rec("high", "backup schedule", { importance: 0.8 }),
    ]);
    const hits = await ctx.store.recall("backup", { userScope: "u1", asOf: AS_OF });
    expect(hits.map((h) => [h.memoryId, h.scoreBreakdown.importance])).toEqual([
      ["high", 0.8],
      ["low", 0.1],
    ]);
    expect(hits[0]!.score - hits[1]!.score).toBeCloseTo(0.2 * 0.7, 6);
  });

  it("tie-break: total → lexical → capturedAt desc (instant, not text) → memoryId (code points)", async () => {
    const same = "alpha beta";
    await ctx.store.add([
      ...filler(),
      // 09:00+08:00 is 01:00Z: earlier than 02:00Z although it sorts later as text.
      rec("x-early", same, { capturedAt: "2026-08-17T09:00:00+08:00" }),
      rec("😀", same, { capturedAt: "2026-08-17T02:00:00Z" }),
      rec("\uffff", same, { capturedAt: "2026-08-17T02:00:00.000Z" }),
      rec("B", same, { capturedAt: "2026-08-17T04:00:00+02:00" }),
      rec("a", same, { capturedAt: "2026-08-17T02:00:00Z" }),
    ]);
    const hits = await ctx.store.recall("alpha beta", {
      userScope: "u1",
      asOf: AS_OF,
      weights: { lexical: 1, recency: 0, importance: 0 },
    });
    expect(new Set(hits.map((h) => h.score))).toEqual(new Set([1]));
    expect(hits.map((h) => h.memoryId)).toEqual(["B", "a", "\uffff", "😀", "x-early"]);
    expect(hits.map((h) => h.rank)).toEqual([1, 2, 3, 4, 5]);
  });

  it("limit, categories (inside the query, before the candidate pool), empty queries", async () => {
    const small = await ctx.open({ poolSize: 2 });
    await small.add([
      ...Array.from({ length: 6 }, (_, i) =>
        rec(`g${i}`, "python python python", { category: "general" }),
      ),
      rec("t1", "python once among many other words here", { category: "tool_failure" }),
    ]);
    // Had the category been a post-filter on the 2-row pool, t1 would be lost.
    const only = await small.recall("python", {
      userScope: "u1",
      asOf: AS_OF,
      categories: ["tool_failure"],
    });
    expect(only.map((h) => h.memoryId)).toEqual(["t1"]);
    expect(await small.recall("python", { userScope: "u1", asOf: AS_OF, limit: 3 })).toHaveLength(
      3,
    );
    await ctx.store.add([rec("m", "something")]);
    for (const q of ["", "   ", "!!! ???", "🙂🙂", "\ud800"]) {
      expect(await ctx.store.recall(q, { userScope: "u1", asOf: AS_OF })).toEqual([]);
    }
  });

  it("options are validated with paths; asOf is required", async () => {
    const bad: Array<[Record<string, unknown>, string]> = [
      [{ userScope: "u1" }, "options.asOf"],
      [{ userScope: "u1", asOf: "soon" }, "options.asOf"],
      [{ userScope: " ", asOf: AS_OF }, "options.userScope"],
      [{ userScope: "u\ud800", asOf: AS_OF }, "options.userScope"],
      [{ userScope: "u\u0000", asOf: AS_OF }, "options.userScope"],
      [{ userScope: "u1", asOf: AS_OF, categories: ["a\u0000"] }, "options.categories[0]"],
      [{ userScope: "u1", asOf: AS_OF, limit: 0 }, "options.limit"],
      [
        { userScope: "u1", asOf: AS_OF, weights: { lexical: 0.5, recency: 0.2, importance: 0.2 } },
        "options.weights",
      ],
      [
        { userScope: "u1", asOf: AS_OF, weights: { lexical: 1.2, recency: -0.2, importance: 0 } },
        "options.weights.recency",
      ],
    ];
    for (const [options, path] of bad) {
      const err = await failure(() => ctx.store.recall("x", options as never));
      expect(err).toBeInstanceOf(InvalidInputError);
      expect((err as InvalidInputError).path).toBe(path);
    }
  });

  it("hits feed spec 02 selection through the adapter (slots and authority from the records)", async () => {
    await ctx.store.add([
      ...filler(),
      rec("a", "Use Python for automation", {
        conflictKey: "preference:automation-language",
        authority: "workspace_override",
      }),
      rec("c", "Use Bash for automation", {
        conflictKey: "preference:automation-language",
        importance: 1,
      }),
    ]);
    const hits = await ctx.store.recall("automation python bash", {
      userScope: "u1",
      asOf: AS_OF,
    });
    const options = adapterOptionsFromHits(hits);
    expect(options).toEqual({
      conflictKeys: { a: "preference:automation-language", c: "preference:automation-language" },
      authorityByMemoryId: { a: "workspace_override" },
    });
    const candidates = candidatesFromRecallHits(hits, options);
    expect(candidates.map((c) => [c.memoryId, c.sourceRank, c.score])).toEqual(
      hits.map((h) => [h.memoryId, h.rank, h.score]),
    );
    const plan = selectMemoryContext({ userScope: "u1", candidates, policy: { minScore: 0 } });
    expect(plan.selectedMemoryIds).toEqual(["a"]);
    expect(plan.decisions.find((d) => d.memoryId === "c")?.reason).toBe("authority_loser");
  });
}

function budget(ctx: Ctx): void {
  it("over budget, the rarest terms are searched first; coverage still counts every term", async () => {
    const s = await ctx.open({ matchBudget: 5 });
    await s.add([
      ...Array.from({ length: 10 }, (_, i) => rec(`c${i}`, "common words everywhere")),
      rec("r", "common and rare"),
    ]);
    const hits = await s.recall("common rare", { userScope: "u1", asOf: AS_OF });
    expect(hits.map((h) => h.memoryId)).toEqual(["r"]);
    expect(hits[0]?.scoreBreakdown.coverage).toBe(1);
  });

  it("a single term over budget scores only its most recently written matches", async () => {
    const s = await ctx.open({ matchBudget: 3, poolSize: 1 });
    await s.add(Array.from({ length: 8 }, (_, i) => rec(`c${i}`, "common")));
    const hits = await s.recall("common", { userScope: "u1", asOf: AS_OF, limit: 3 });
    expect(hits.map((h) => h.memoryId).sort()).toEqual(["c5", "c6", "c7"]);
  });
}

function textRules(ctx: Ctx): void {
  it("terms: NFKC, case folding, word runs and CJK bigrams", () => {
    expect(indexTerms("Ｐｙｔｈｏｎ STRASSE Straße 天气预报 iPhone手机 雨")).toEqual([
      "python",
      "strasse",
      "strasse",
      "天气",
      "气预",
      "预报",
      "iphone",
      "手机",
      "雨",
    ]);
    expect(queryTerms("a b a")).toEqual(["a", "b"]);
    expect(queryTerms(Array.from({ length: 500 }, (_, i) => `w${i}`).join(" "))).toHaveLength(64);
  });

  it("天气预报 matches 天气 (and the other way round); CJK inside Latin text", async () => {
    await ctx.store.add([
      rec("forecast", "明天的天气预报说有雨"),
      rec("short", "天气"),
      rec("phone", "我的iPhone手机坏了"),
      rec("rain", "雨"),
    ]);
    const ids = async (q: string) =>
      (await ctx.store.recall(q, { userScope: "u1", asOf: AS_OF })).map((h) => h.memoryId).sort();
    expect(await ids("天气")).toEqual(["forecast", "short"]);
    expect(await ids("天气预报")).toEqual(["forecast", "short"]);
    expect(await ids("手机")).toEqual(["phone"]);
    expect(await ids("IPHONE")).toEqual(["phone"]);
    // A lone character is its own term: it matches a lone character, not inside a bigram.
    expect(await ids("雨")).toEqual(["rain"]);
  });

  it("full-width and case variants match; a very long word is a term like any other", async () => {
    const long = `${"x".repeat(3000)}é`;
    await ctx.store.add([rec("m", "Straße to the PYTHON meetup"), rec("long", `see ${long}`)]);
    const hits = await ctx.store.recall("ｐｙｔｈｏｎ strasse", { userScope: "u1", asOf: AS_OF });
    expect(hits).toHaveLength(1);
    const found = await ctx.store.recall(long.toUpperCase(), { userScope: "u1", asOf: AS_OF });
    expect(found.map((h) => h.memoryId)).toEqual(["long"]);
    expect(await ctx.store.recall("x".repeat(3000), { userScope: "u1", asOf: AS_OF })).toEqual([]);
  });
}

const HOSTILE = [
  '"',
  '""',
  "*",
  "pyth*",
  "NEAR(",
  "NEAR(python java, 2)",
  "OR",
  "python OR",
  "AND",
  "NOT",
  "python NOT java",
  "-",
  "python -java",
  ":",
  "terms:python",
  "{terms}: python",
  "^python",
  "(",
  ")",
  'a" OR "b',
  "'; DROP TABLE memories; --",
  "'; DROP TABLE promptctx_memories; --",
  "\u0000",
  "python\u0000java",
  "+",
  "python + java",
  "x".repeat(10_000),
  Array.from({ length: 2000 }, (_, i) => `NEAR(w${i}`).join(" OR "),
];

function hostile(ctx: Ctx): void {
  beforeEach(async () => {
    await ctx.store.add([
      rec("pj", "python java"),
      rec("p", "python"),
      rec("other", "python java secret", { userScope: "u2" }),
    ]);
  });

  it("never throw and never leave the scope", async () => {
    for (const q of HOSTILE) {
      const hits = await ctx.store.recall(q, { userScope: "u1", asOf: AS_OF });
      for (const h of hits) expect(h.userScope).toBe("u1");
    }
    expect(await ctx.store.count()).toBe(3);
  });

  it("operators are plain words: NOT, -, * and NEAR do not change the match set", async () => {
    const ids = async (q: string) =>
      (await ctx.store.recall(q, { userScope: "u1", asOf: AS_OF })).map((h) => h.memoryId).sort();
    expect(await ids("python NOT java")).toEqual(["p", "pj"]);
    expect(await ids("python -java")).toEqual(["p", "pj"]);
    expect(await ids("NEAR(python java, 2)")).toEqual(["p", "pj"]);
    expect(await ids("pyth*")).toEqual([]);
    expect(await ids("NOT")).toEqual([]);
    expect(await ids('"python"')).toEqual(["p", "pj"]);
  });

  it("another scope's index prefix in the query reaches nothing", async () => {
    const q = `${scopePrefix("u2")}secret ${scopePrefix("u2")}python`;
    expect(await ctx.store.recall(q, { userScope: "u1", asOf: AS_OF })).toEqual([]);
    expect(await ctx.store.recall("secret", { userScope: "u1", asOf: AS_OF })).toEqual([]);
  });
}

const VOCAB = ["alpha", "beta", "gamma", "delta", "天气", "预报", "python", "ß", "OR", "NOT"];
// Scopes are exact: "A", "a", "A " and "A\u200b" are all different scopes.
const SCOPES = ["A", "B", "a", "A ", "A\u200b"] as const;

function isolation(ctx: Ctx, runs: number): void {
  it("recall for A returns exactly A's records that share a term with the query", async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.tuple(fc.constantFrom(...SCOPES), fc.subarray(VOCAB, { minLength: 1 })), {
          minLength: 1,
          maxLength: 25,
        }),
        fc.oneof(
          fc.subarray(VOCAB).map((ws) => ws.join(" ")),
          fc.string(),
          fc.string({ unit: "binary" }),
          fc.constantFrom('" OR *', "NEAR(alpha beta)", `${scopePrefix("B")}alpha`, "alpha:beta"),
        ),
        async (records, query) => {
          const s = await ctx.open();
          await s.add(
            records.map(([scope, words], i) =>
              rec(`m${i}`, words.join(" "), {
                userScope: scope,
                capturedAt: `2026-08-${String((i % 28) + 1).padStart(2, "0")}T00:00:00Z`,
              }),
            ),
          );
          const hits = await s.recall(query, { userScope: "A", asOf: AS_OF, limit: 1000 });
          await s.close();
          const q = new Set(queryTerms(query));
          const expected = records
            .map(([scope, words], i) => ({
              scope,
              id: `m${i}`,
              terms: indexTerms(words.join(" ")),
            }))
            .filter((r) => r.scope === "A" && r.terms.some((t) => q.has(t)))
            .map((r) => r.id)
            .sort();
          for (const h of hits) expect(h.userScope).toBe("A");
          expect(hits.map((h) => h.memoryId).sort()).toEqual(expected);
        },
      ),
      { numRuns: runs },
    );
  });
}

/** Registers part 2 of the contract. */
export function recallContract(backend: StoreBackend, propertyRuns = 60): void {
  const ctx = useStores(backend);
  describe("recall: scoring and ranking", () => scoring(ctx));
  describe("recall: bounded work (match budget)", () => budget(ctx));
  describe("recall: text normalization and CJK", () => textRules(ctx));
  describe("recall: hostile queries", () => hostile(ctx));
  describe("recall: scope isolation at the store (property)", () => isolation(ctx, propertyRuns));
}
