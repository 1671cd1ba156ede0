/**
 * Recall quality rules (docs/sources.md, issue 13): stop words, IDF weighting, relevance as a
 * multiplier, and the per-scope statistics they rest on, on real SQLite files.
 */
import { join } from "node:path";
import Database from "better-sqlite3";
import fc from "fast-check";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import {
  CHINESE_STOP_CHARS,
  CHINESE_STOP_WORDS,
  ENGLISH_STOP_WORDS,
  indexTerms,
  JAPANESE_STOP_CHARS,
  JAPANESE_STOP_WORDS,
  type MemoryRecordInput,
  openStore,
  poolOf,
  queryTerms,
  recordTerms,
  round6,
  type SqliteMemoryStore,
  STORE_SCHEMA_VERSION,
  searchedTerms,
  termPresence,
} from "../../src/store/index.js";
import { normalizeKey } from "../../src/text/index.js";
import { AS_OF, rec, tempDir } from "./helpers.js";

let dir: string;
let cleanup: () => void;
let store: SqliteMemoryStore;

beforeEach(() => {
  ({ dir, cleanup } = tempDir());
  store = openStore(join(dir, "memory.db"));
});
afterEach(() => {
  store.close();
  cleanup();
});

const ids = (s: SqliteMemoryStore, q: string, extra: { limit?: number } = {}) =>
  s.recall(q, { userScope: "u1", asOf: AS_OF, ...extra }).map((h) => h.memoryId);

describe("stop words", () => {
  it("the issue's case: a weather question recalls nothing from two deployment memories", () => {
    store.add([
      rec("d1", "The deploy to the staging cluster runs every Friday after the review", {
        importance: 1,
      }),
      rec("d2", "Deploy the billing service with the blue-green script", { importance: 1 }),
    ]);
    expect(
      store.recall("what is the weather in Beijing", { userScope: "u1", asOf: AS_OF }),
    ).toEqual([]);
    expect(queryTerms("what is the weather in Beijing")).toEqual(["weather", "beijing"]);
    // A query of stop words only has nothing to search.
    expect(ids(store, "what is the")).toEqual([]);
    expect(ids(store, "when do we deploy").sort()).toEqual(["d1", "d2"]);
  });

  it("query terms: English stop words out, Chinese runs cut at stop words and grammar characters", () => {
    expect(queryTerms("Where's the Deploy CHECKLIST, please?")).toEqual(["deploy", "checklist"]);
    expect(queryTerms("北京的天气怎么样")).toEqual(["北京", "天气"]);
    expect(queryTerms("支付服务哪天发布？")).toEqual(["支付", "付服", "服务", "天发", "发布"]);
    // A one-character piece left by a cut is dropped; a lone character as the whole run stays.
    expect(queryTerms("我的猫")).toEqual([]);
    expect(queryTerms("雨")).toEqual(["雨"]);
    expect(queryTerms("的")).toEqual([]);
    expect(queryTerms("東京の天気はどうですか")).toEqual(["東京", "天気"]);
    // Every query bigram is a bigram of the text, so the index has it.
    const text = "这个月我们的支付服务什么时候发布";
    const all = new Set(indexTerms(text));
    for (const t of queryTerms(text)) expect(all.has(t)).toBe(true);
  });

  it("the lists are data in the form terms take", () => {
    for (const w of ENGLISH_STOP_WORDS) expect(indexTerms(w)).toEqual([normalizeKey(w)]);
    for (const w of ENGLISH_STOP_WORDS) expect(w).toBe(normalizeKey(w));
    const cjk = [
      ...CHINESE_STOP_CHARS,
      ...CHINESE_STOP_WORDS,
      ...JAPANESE_STOP_CHARS,
      ...JAPANESE_STOP_WORDS,
    ];
    for (const w of cjk) {
      expect(w).toBe(normalizeKey(w));
      expect(w).toMatch(/^[\p{scx=Han}\p{scx=Hiragana}\p{scx=Katakana}]+$/u);
    }
    expect(ENGLISH_STOP_WORDS).toContain("the");
    expect(CHINESE_STOP_WORDS).toContain("什么");
  });
});

describe("IDF weighting and the relevance multiplier", () => {
  it("a rare term outweighs a common one", () => {
    store.add([
      ...Array.from({ length: 10 }, (_, i) => rec(`p${i}`, `python note ${i}`)),
      rec("k", "kafka consumer lag alert"),
    ]);
    const hits = store.recall("python kafka", { userScope: "u1", asOf: AS_OF });
    expect(hits[0]?.memoryId).toBe("k");
    const byId = new Map(hits.map((h) => [h.memoryId, h.scoreBreakdown]));
    expect(byId.get("k")!.lexical).toBeGreaterThan(0.7);
    expect(byId.get("p0")!.lexical).toBeLessThan(0.3);
    // Unweighted coverage cannot tell them apart.
    expect(byId.get("k")!.coverage).toBe(byId.get("p0")!.coverage);
  });

  it("statistics are per scope: another scope's words do not change this scope's weights", () => {
    store.add([rec("a", "python kafka"), rec("b", "python only")]);
    const before = store.recall("kafka python", { userScope: "u1", asOf: AS_OF });
    store.add(Array.from({ length: 20 }, (_, i) => rec(`x${i}`, "kafka", { userScope: "u2" })));
    expect(store.recall("kafka python", { userScope: "u1", asOf: AS_OF })).toEqual(before);
  });

  it("recency and importance reorder relevant hits but never lift a weak match (property)", async () => {
    const VOCAB = ["alpha", "beta", "gamma", "delta", "epsilon", "天气", "预报"];
    let run = 0;
    await fc.assert(
      fc.asyncProperty(
        fc.array(
          fc.record({
            words: fc.subarray(VOCAB, { minLength: 1 }),
            importance: fc.double({ min: 0, max: 1, noNaN: true }),
            day: fc.integer({ min: 1, max: 28 }),
          }),
          { minLength: 1, maxLength: 20 },
        ),
        fc.subarray(VOCAB, { minLength: 1 }),
        async (mems, queryWords) => {
          run++;
          const write = (flip: boolean) => {
            const s = openStore(join(dir, `gate-${run}-${flip}.db`));
            s.add(
              mems.map((m, i) =>
                rec(`m${i}`, m.words.join(" "), {
                  importance: flip ? 1 - m.importance : m.importance,
                  capturedAt: `2026-0${flip ? 1 : 8}-${String(m.day).padStart(2, "0")}T00:00:00Z`,
                }),
              ),
            );
            const hits = s.recall(queryWords.join(" "), {
              userScope: "u1",
              asOf: AS_OF,
              limit: 100,
            });
            s.close();
            return hits;
          };
          const a = write(false);
          const b = write(true);
          for (const h of [...a, ...b]) {
            const x = h.scoreBreakdown;
            expect(x.total).toBe(round6(x.lexical * x.salience));
            expect(x.total).toBeLessThanOrEqual(x.lexical);
            expect(x.salience).toBeGreaterThanOrEqual(x.weights.lexical);
          }
          // Other recency and importance: same hits, same lexical scores.
          const lex = (hs: typeof a) =>
            Object.fromEntries(hs.map((h) => [h.memoryId, h.scoreBreakdown.lexical]));
          expect(lex(b)).toEqual(lex(a));
        },
      ),
      { numRuns: 40 },
    );
  });
});

describe("term presence (the scorer's shortcut) agrees with the index terms (property)", () => {
  const pieces = [
    "python",
    "Python3",
    "py",
    "天气",
    "天气预报",
    "预报",
    "雨",
    "iPhone手机",
    "手机",
    "ß",
    "SS",
    "ｐｙｔｈｏｎ",
    "é",
    "e\u0301",
    "、",
    "。",
    " ",
    "\n",
    "-",
    "_",
    "𠀀𠀁",
    "ｶﾀｶﾅ",
    "カタカナ",
    "한국어",
    "x",
    "1",
    "١٢",
    "\u0301",
  ];
  it("termPresence(text, terms)[i] === indexTerms(text).includes(terms[i])", () => {
    const text = fc.array(fc.constantFrom(...pieces), { maxLength: 12 }).map((a) => a.join(""));
    fc.assert(
      fc.property(text, text, (doc, other) => {
        const terms = [...new Set([...indexTerms(other), ...indexTerms(doc).slice(0, 3)])];
        const all = new Set(indexTerms(doc));
        expect(termPresence(doc, terms)).toEqual(terms.map((t) => all.has(t)));
      }),
      { numRuns: 2000 },
    );
  });
});

describe("index terms skip the whitespace pass of normalizeKey and still agree with it (property)", () => {
  const WORD_RUN = /[\p{L}\p{N}\p{M}]+/gu;
  const CJK = /([\p{scx=Han}\p{scx=Hiragana}\p{scx=Katakana}\p{scx=Hangul}]+)/u;
  // The definition of terms.ts over normalizeKey (whitespace collapsed and trimmed).
  const reference = (text: string) =>
    [...normalizeKey(text).matchAll(WORD_RUN)].flatMap((m) =>
      m[0].split(CJK).flatMap((part) => {
        if (part === "") return [];
        const chars = Array.from(part);
        if (!CJK.test(part) || chars.length === 1) return [part];
        return chars.slice(1).map((c, i) => chars[i]! + c);
      }),
    );
  it("indexTerms(text) equals the terms of normalizeKey(text)", () => {
    const pieces = [
      "A b",
      "\u3000",
      "\u00a0",
      "\u2028",
      "\u0085",
      "\t\n",
      "Ｘ",
      "ß",
      "天气",
      "ﬁ",
      "Σ",
      "ς",
      " ",
    ];
    fc.assert(
      fc.property(
        fc.oneof(
          fc.string(),
          fc.array(fc.constantFrom(...pieces)).map((a) => a.join("")),
        ),
        (text) => {
          expect(indexTerms(text)).toEqual(reference(text));
        },
      ),
      { numRuns: 1000 },
    );
  });
});

describe("searched terms and the pool (pure)", () => {
  it("all terms within budget; else rarest first while they fit, at least the rarest", () => {
    expect(searchedTerms(["a", "b", "c"], [2, 3, 0], 10)).toEqual([0, 1]);
    expect(searchedTerms(["a", "b", "c"], [8, 3, 5], 10)).toEqual([1, 2]);
    expect(searchedTerms(["a", "b"], [50, 20], 10)).toEqual([1]);
    expect(searchedTerms(["b", "a"], [20, 20], 10)).toEqual([1]);
    expect(searchedTerms(["a"], [0], 10)).toEqual([]);
  });

  it("pool: heaviest first, newest first among equals", () => {
    expect(
      poolOf(
        new Map([
          [1, 2],
          [5, 1],
          [3, 2],
          [9, 0.5],
        ]),
        3,
      ),
    ).toEqual([3, 1, 5]);
  });
});

/** The statistics table, read with a second connection. */
function statsOf(path: string) {
  const db = new Database(path, { readonly: true });
  try {
    return db
      .prepare("SELECT user_scope, memory_count, term_count FROM scope_stats ORDER BY user_scope")
      .all();
  } finally {
    db.close();
  }
}

/** The statistics recomputed from the stored records. */
function expectedStats(s: SqliteMemoryStore) {
  const scopes = new Map<string, { memory_count: number; term_count: number }>();
  let text = "";
  s.exportJsonl((chunk) => {
    text += chunk;
  });
  for (const line of text.trimEnd().split("\n").filter(Boolean)) {
    const r = JSON.parse(line) as {
      userScope: string;
      content: string;
      summary: string;
      tags: string[];
    };
    const sc = scopes.get(r.userScope) ?? { memory_count: 0, term_count: 0 };
    sc.memory_count++;
    sc.term_count += recordTerms(r).length;
    scopes.set(r.userScope, sc);
  }
  return [...scopes]
    .sort(([a], [b]) => (a < b ? -1 : 1))
    .map(([user_scope, v]) => ({ user_scope, ...v }));
}

describe("per-scope statistics (migration 2)", () => {
  it("stay equal to a recount after any sequence of adds, upserts and imports (property)", async () => {
    const WORDS = ["alpha", "beta", "gamma", "天气预报", "alpha alpha"];
    let run = 0;
    await fc.assert(
      fc.asyncProperty(
        fc.array(
          fc.array(
            fc.record({
              id: fc.integer({ min: 0, max: 6 }),
              scope: fc.constantFrom("u1", "u2"),
              words: fc.subarray(WORDS, { minLength: 1 }),
              tag: fc.option(fc.constantFrom("gamma", "deploy"), { nil: undefined }),
            }),
            { minLength: 1, maxLength: 5 },
          ),
          { minLength: 1, maxLength: 5 },
        ),
        async (batches) => {
          run++;
          const path = join(dir, `stats-${run}.db`);
          const s = openStore(path);
          try {
            for (const [b, batch] of batches.entries()) {
              const records: MemoryRecordInput[] = batch.map((r) =>
                rec(`m${r.id}`, r.words.join(" "), {
                  userScope: r.scope,
                  ...(r.tag === undefined ? {} : { tags: [r.tag] }),
                }),
              );
              // Odd batches through JSONL import, even ones through add (the same id in
              // several scopes: several memories).
              if (b % 2 === 1) {
                await s.importJsonl(records.map((r) => JSON.stringify(r)).join("\n"));
              } else {
                try {
                  s.add(records);
                } catch {
                  // rolled back
                }
              }
            }
            expect(statsOf(path)).toEqual(expectedStats(s));
          } finally {
            s.close();
          }
        },
      ),
      { numRuns: 40 },
    );
  });

  it("a version-1 store is migrated: statistics filled from the stored data", () => {
    // (The scope sizes and term totals; document frequencies are counted at recall.)
    store.add([
      rec("a", "python kafka", { tags: ["ops"] }),
      rec("b", "天气预报 python", { summary: "weather" }),
      rec("c", "python", { userScope: "u2" }),
    ]);
    store.add([rec("a", "python only now")]);
    const path = join(dir, "memory.db");
    const before = statsOf(path);
    const hits = store.recall("python kafka 天气", { userScope: "u1", asOf: AS_OF });
    store.close();
    // Back to version 1: the table of migration 2 gone.
    const db = new Database(path);
    db.exec("DROP TABLE scope_stats");
    db.pragma("user_version = 1");
    db.close();
    store = openStore(path);
    expect(statsOf(path)).toEqual(before);
    const check = new Database(path, { readonly: true });
    expect(check.pragma("user_version", { simple: true })).toBe(STORE_SCHEMA_VERSION);
    check.close();
    expect(store.recall("python kafka 天气", { userScope: "u1", asOf: AS_OF })).toEqual(hits);
  });
});
