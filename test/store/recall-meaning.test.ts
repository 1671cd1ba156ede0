/**
 * The recall-by-meaning labelled set (test/fixtures/recall-meaning/) on a real SQLite
 * store with the embedded encoder (USE lite): targets of issue 32 — paraphrase targets in
 * the top 3 ≥ 70 %, keyword questions no worse than full-text alone, unrelated questions
 * abstain (no hit ≥ the default minScore) ≥ 90 % in each language, no hit from another
 * scope. `npm run bench` (section recall-meaning) prints the figures.
 */
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createEmbedder, type Embedder } from "../../src/embed/index.js";
import { DEFAULT_POLICY } from "../../src/memory/index.js";
import {
  type HybridMemoryStore,
  hybridStore,
  openStore,
  type SqliteMemoryStore,
  type StoreRecallHit,
} from "../../src/store/index.js";
import {
  AS_OF,
  type MeaningQuery,
  meaningMemories,
  meaningQueries,
} from "../fixtures/recall-meaning/index.js";
import { tempDir } from "./helpers.js";

let cleanup: () => void;
let embedder: Embedder;
let plain: SqliteMemoryStore;
let hybrid: HybridMemoryStore;
const queries = meaningQueries();
const results = new Map<string, { hybrid: StoreRecallHit[]; lexical: StoreRecallHit[] }>();

beforeAll(async () => {
  let dir: string;
  ({ dir, cleanup } = tempDir());
  embedder = (await createEmbedder({ kind: "embedded" }))!;
  plain = openStore(join(dir, "lexical.db"));
  plain.add(meaningMemories());
  hybrid = hybridStore(openStore(join(dir, "hybrid.db")), embedder);
  const added = await hybrid.add(meaningMemories());
  expect(added).toMatchObject({ inserted: 105, embedded: 80, pending: 0 }); // the 25 Chinese memories are left to full-text
  expect(hybrid.pendingCount()).toBe(0);
  for (const q of queries) {
    const o = { userScope: q.userScope, asOf: AS_OF, limit: 10 };
    results.set(q.queryId, {
      hybrid: await hybrid.recall(q.text, o),
      lexical: plain.recall(q.text, o),
    });
  }
});
afterAll(async () => {
  plain.close();
  hybrid.close();
  await embedder.close?.();
  cleanup();
});

const minScore = DEFAULT_POLICY.minScore;
const inTop = (hits: StoreRecallHit[], q: MeaningQuery, k: number) =>
  hits.slice(0, k).some((h) => q.relevant.includes(h.memoryId));
const share = (qs: MeaningQuery[], ok: (q: MeaningQuery) => boolean) =>
  qs.filter(ok).length / qs.length;
const of = (kind: MeaningQuery["kind"], lang?: string) =>
  queries.filter((q) => q.kind === kind && (lang === undefined || q.lang === lang));

describe("recall by meaning: the labelled set", () => {
  it("puts paraphrase targets in the top 3 for at least 70 % of questions (full-text: almost none)", () => {
    const hybridTop3 = share(of("paraphrase"), (q) => inTop(results.get(q.queryId)!.hybrid, q, 3));
    const lexicalTop3 = share(of("paraphrase"), (q) =>
      inTop(results.get(q.queryId)!.lexical, q, 3),
    );
    // The same candidates ordered by reciprocal rank fusion instead (fuse.ts), for the record.
    const byRrf = (hits: StoreRecallHit[]) =>
      [...hits].sort((a, b) => b.match!.rrf - a.match!.rrf || a.rank - b.rank);
    const rrfTop3 = share(of("paraphrase"), (q) =>
      inTop(byRrf(results.get(q.queryId)!.hybrid), q, 3),
    );
    const answered = share(of("paraphrase"), (q) =>
      results
        .get(q.queryId)!
        .hybrid.slice(0, 3)
        .some((h) => q.relevant.includes(h.memoryId) && h.score >= minScore),
    );
    console.log(
      `paraphrase top-3: hybrid ${hybridTop3} (rrf order ${rrfTop3}), full-text ${lexicalTop3}; answered (≥ minScore) ${answered}`,
    );
    expect(hybridTop3).toBeGreaterThanOrEqual(0.7);
    // The calibration (hybrid.ts) lets half the paraphrase targets clear the default gate
    // while every unrelated question still abstains (measured: 0.5; 0.325 before).
    expect(answered).toBeGreaterThanOrEqual(0.45);
    expect(lexicalTop3).toBeLessThan(0.3);
  });

  it("answers keyword questions at least as well as full-text alone, in both languages", () => {
    for (const lang of ["en", "zh"]) {
      const h = share(of("keyword", lang), (q) => inTop(results.get(q.queryId)!.hybrid, q, 3));
      const l = share(of("keyword", lang), (q) => inTop(results.get(q.queryId)!.lexical, q, 3));
      console.log(`keyword ${lang} top-3: hybrid ${h}, full-text ${l}`);
      expect(h, lang).toBeGreaterThanOrEqual(l);
    }
  });

  it("abstains on unrelated questions (no hit ≥ minScore) at least 90 % in each language", () => {
    for (const lang of ["en", "zh"]) {
      const abstain = share(of("unrelated", lang), (q) =>
        results.get(q.queryId)!.hybrid.every((h) => h.score < minScore),
      );
      console.log(`unrelated ${lang} abstain: ${abstain}`);
      expect(abstain, lang).toBeGreaterThanOrEqual(0.9);
    }
  });

  it("never returns a hit of another scope", () => {
    for (const q of queries) {
      for (const h of results.get(q.queryId)!.hybrid) expect(h.userScope).toBe(q.userScope);
    }
  });

  it("leaves Chinese to full-text: no Chinese hit is found by meaning", () => {
    for (const q of of("keyword", "zh").concat(of("unrelated", "zh"))) {
      for (const h of results.get(q.queryId)!.hybrid) expect(h.match?.path).toBe("lexical");
    }
  });
});

describe("the figures `npm run bench` reports (section recall-meaning)", () => {
  it("are printed as one JSON line", () => {
    const top3 = (
      kind: MeaningQuery["kind"],
      lang: string | undefined,
      path: "hybrid" | "lexical",
    ) => share(of(kind, lang), (q) => inTop(results.get(q.queryId)![path], q, 3));
    const abstain = (lang: string) =>
      share(of("unrelated", lang), (q) =>
        results.get(q.queryId)!.hybrid.every((h) => h.score < minScore),
      );
    const figures = {
      memories: meaningMemories().length,
      questions: queries.length,
      paraphraseTop3: top3("paraphrase", undefined, "hybrid"),
      lexicalParaphraseTop3: top3("paraphrase", undefined, "lexical"),
      paraphraseAnswered: share(of("paraphrase"), (q) =>
        results
          .get(q.queryId)!
          .hybrid.slice(0, 3)
          .some((h) => q.relevant.includes(h.memoryId) && h.score >= minScore),
      ),
      keywordTop3: { en: top3("keyword", "en", "hybrid"), zh: top3("keyword", "zh", "hybrid") },
      lexicalKeywordTop3: {
        en: top3("keyword", "en", "lexical"),
        zh: top3("keyword", "zh", "lexical"),
      },
      unrelatedAbstain: { en: abstain("en"), zh: abstain("zh") },
      crossScopeHits: queries.reduce(
        (n, q) =>
          n + results.get(q.queryId)!.hybrid.filter((h) => h.userScope !== q.userScope).length,
        0,
      ),
    };
    console.log(`recall-meaning figures: ${JSON.stringify(figures)}`);
    expect(figures.crossScopeHits).toBe(0);
  });
});
