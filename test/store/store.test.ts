import { writeFileSync } from "node:fs";
import { join } from "node:path";
import Database from "better-sqlite3";
import fc from "fast-check";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { InvalidInputError } from "../../src/errors/index.js";
import { candidatesFromRecallHits, selectMemoryContext } from "../../src/memory/index.js";
import {
  adapterOptionsFromHits,
  DEFAULT_WEIGHTS,
  indexTerms,
  type MemoryRecordInput,
  openStore,
  queryTerms,
  round6,
  type SqliteMemoryStore,
  STORE_APPLICATION_ID,
  STORE_SCHEMA_VERSION,
  StoreOpenError,
  StoreVersionError,
  scopePrefix,
} from "../../src/store/index.js";
import { compareCodePoints } from "../../src/text/index.js";
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

function caught(f: () => unknown): unknown {
  try {
    f();
  } catch (err) {
    return err;
  }
  throw new Error("expected an error");
}

function exportText(s: SqliteMemoryStore): string {
  let out = "";
  s.exportJsonl((chunk) => {
    out += chunk;
  });
  return out;
}

describe("schema version and migrations", () => {
  it("a new store is at the current version, in WAL mode, marked as a promptctx store", () => {
    store.close();
    const db = new Database(join(dir, "memory.db"));
    expect(db.pragma("user_version", { simple: true })).toBe(STORE_SCHEMA_VERSION);
    expect(db.pragma("application_id", { simple: true })).toBe(STORE_APPLICATION_ID);
    expect(db.pragma("journal_mode", { simple: true })).toBe("wal");
    db.close();
    store = openStore(join(dir, "memory.db"));
  });

  it("reopening keeps records and does not re-run migrations", () => {
    store.add([rec("m1", "hello world")]);
    store.close();
    store = openStore(join(dir, "memory.db"));
    expect(store.count()).toBe(1);
    expect(store.get("m1")?.content).toBe("hello world");
  });

  it("a database from a newer promptctx fails with StoreVersionError and is left untouched", () => {
    const path = join(dir, "newer.db");
    const db = new Database(path);
    db.pragma(`application_id = ${STORE_APPLICATION_ID}`);
    db.pragma(`user_version = ${STORE_SCHEMA_VERSION + 1}`);
    db.close();
    const err = caught(() => openStore(path));
    expect(err).toBeInstanceOf(StoreVersionError);
    expect(err).toMatchObject({
      code: "invalid_input",
      found: STORE_SCHEMA_VERSION + 1,
      supported: STORE_SCHEMA_VERSION,
    });
    expect((err as Error).message).toContain(
      `schema version ${STORE_SCHEMA_VERSION + 1}; this promptctx supports up to ${STORE_SCHEMA_VERSION}`,
    );
    const again = new Database(path);
    expect(again.pragma("user_version", { simple: true })).toBe(STORE_SCHEMA_VERSION + 1);
    again.close();
  });

  it("another application's SQLite file and a non-database file are refused", () => {
    const foreign = join(dir, "foreign.db");
    const db = new Database(foreign);
    db.pragma("application_id = 42");
    db.close();
    expect(caught(() => openStore(foreign))).toBeInstanceOf(StoreOpenError);
    const text = join(dir, "notes.txt");
    writeFileSync(text, "this is not a database, it is a text file with enough bytes".repeat(20));
    const err = caught(() => openStore(text));
    expect(err).toBeInstanceOf(StoreOpenError);
    expect(err).toMatchObject({ code: "invalid_input", path: "store" });
  });

  it("mustExist refuses a missing file instead of creating it", () => {
    expect(caught(() => openStore(join(dir, "missing.db"), { mustExist: true }))).toBeInstanceOf(
      StoreOpenError,
    );
  });
});

describe("validation (zod schema, paths name the field)", () => {
  const cases: Array<[string, MemoryRecordInput | Record<string, unknown>, string]> = [
    ["missing content", { ...rec("m", "x"), content: undefined }, "records[0].content"],
    ["blank content", rec("m", " \n "), "records[0].content"],
    ["blank scope", rec("m", "x", { userScope: "\u3000" }), "records[0].userScope"],
    ["importance > 1", rec("m", "x", { importance: 1.5 }), "records[0].importance"],
    ["bad timestamp", rec("m", "x", { capturedAt: "yesterday" }), "records[0].source.capturedAt"],
    [
      "unknown authority",
      rec("m", "x", { authority: "system_override" as never }),
      "records[0].authority",
    ],
    ["blank tag", rec("m", "x", { tags: ["ok", " "] }), "records[0].tags[1]"],
    ["lone surrogate", rec("m", "a\ud800b"), "records[0].content"],
    ["unknown field", { ...rec("m", "x"), colour: "red" }, "records[0].colour"],
    [
      "unknown source field",
      { ...rec("m", "x"), source: { ...rec("m", "x").source, url: "u" } },
      "records[0].source.url",
    ],
  ];
  for (const [name, record, path] of cases) {
    it(`${name} → ${path}`, () => {
      const err = caught(() => store.add([record as MemoryRecordInput]));
      expect(err).toBeInstanceOf(InvalidInputError);
      expect((err as InvalidInputError).path).toBe(path);
      expect(store.count()).toBe(0);
    });
  }

  it("a bad record anywhere means nothing of the call is written", () => {
    expect(() => store.add([rec("a", "fine"), rec("b", "x", { importance: -1 })])).toThrow(
      InvalidInputError,
    );
    expect(store.count()).toBe(0);
  });

  it("defaults: kind fact, category general, tags [], summary '', importance 0.5, storedAt", () => {
    store.add([rec("m1", "x")]);
    store.add([rec("m2", "y")], { now: "2026-09-01T00:00:00Z" });
    expect(store.get("m1")).toEqual({
      memoryId: "m1",
      userScope: "u1",
      kind: "fact",
      category: "general",
      tags: [],
      content: "x",
      summary: "",
      importance: 0.5,
      conflictKey: null,
      authority: null,
      source: {
        sourceId: "chat-1",
        sourceType: "chat",
        title: "Chat",
        capturedAt: "2026-08-17T00:00:00Z",
      },
      storedAt: "2026-08-17T00:00:00Z",
    });
    expect(store.get("m2")?.storedAt).toBe("2026-09-01T00:00:00Z");
  });
});

describe("add: upsert within a scope, never across scopes", () => {
  it("same id, same scope → replaced (and re-indexed)", () => {
    expect(store.add([rec("m1", "likes tea")])).toEqual({ inserted: 1, updated: 0 });
    expect(store.add([rec("m1", "likes coffee", { importance: 0.9 })])).toEqual({
      inserted: 0,
      updated: 1,
    });
    expect(store.count()).toBe(1);
    expect(store.get("m1")).toMatchObject({ content: "likes coffee", importance: 0.9 });
    expect(store.recall("tea", { userScope: "u1", asOf: AS_OF })).toEqual([]);
    expect(store.recall("coffee", { userScope: "u1", asOf: AS_OF }).map((h) => h.memoryId)).toEqual(
      ["m1"],
    );
  });

  it("same id in another scope → invalid input at userScope; the whole call rolls back", () => {
    store.add([rec("m1", "u1 secret")]);
    const err = caught(() =>
      store.add([rec("m2", "new one"), rec("m1", "hijack", { userScope: "u2" })]),
    );
    expect(err).toBeInstanceOf(InvalidInputError);
    expect((err as InvalidInputError).path).toBe("records[1].userScope");
    expect(store.get("m1")).toMatchObject({ userScope: "u1", content: "u1 secret" });
    expect(store.get("m2")).toBeNull();
    expect(store.count()).toBe(1);
  });

  it("count per scope and in total", () => {
    store.add([
      rec("a", "x"),
      rec("b", "y", { userScope: "u2" }),
      rec("c", "z", { userScope: "u2" }),
    ]);
    expect(store.count()).toBe(3);
    expect(store.count({ userScope: "u2" })).toBe(2);
    expect(store.count({ userScope: "U2" })).toBe(0);
  });

  it("list: one scope, filtered by kind and category, ordered by id", () => {
    store.add([
      rec("p2", "Name: Ada", { kind: "profile", category: "identity" }),
      rec("p1", "Prefers tea", { kind: "profile", category: "preference" }),
      rec("f1", "a fact"),
      rec("p3", "other user", { kind: "profile", userScope: "u2" }),
    ]);
    expect(store.list({ userScope: "u1", kinds: ["profile"] }).map((r) => r.memoryId)).toEqual([
      "p1",
      "p2",
    ]);
    expect(
      store
        .list({ userScope: "u1", kinds: ["profile"], categories: ["identity"] })
        .map((r) => r.memoryId),
    ).toEqual(["p2"]);
  });
});

describe("JSONL import and export", () => {
  const good = (id: string, scope = "u1", extra: Record<string, unknown> = {}) =>
    JSON.stringify({ ...rec(id, `content of ${id}`, { userScope: scope }), ...extra });

  it("bad lines are reported with their line number and skipped; the rest import", async () => {
    const text = [
      good("a"),
      good("b"),
      "{not json",
      good("c", "u1", { importance: 7 }),
      "",
      good("d"),
      JSON.stringify({ ...JSON.parse(good("e")), extra: 1 }),
    ].join("\n");
    const r = await store.importJsonl(text);
    expect(r.imported).toBe(3);
    expect(r.skipped).toBe(3);
    expect(r.errors.map((e) => [e.line, e.path])).toEqual([
      [3, null],
      [4, "importance"],
      [7, "extra"],
    ]);
    expect(r.errors[0]?.message).toMatch(/^not valid JSON/);
    expect(store.list({ userScope: "u1" }).map((r) => r.memoryId)).toEqual(["a", "b", "d"]);
  });

  it("an id that lives in another scope is a skipped line, not a move", async () => {
    store.add([rec("a", "original")]);
    const r = await store.importJsonl(`${good("a", "u2")}\n${good("b", "u2")}\n`);
    expect(r).toEqual({
      imported: 1,
      skipped: 1,
      errors: [{ line: 1, path: "userScope", message: expect.stringMatching(/another scope/) }],
    });
    expect(store.get("a")?.userScope).toBe("u1");
  });

  it("batches: one transaction each, progress after each commit", async () => {
    const lines = ["a", "b", "c", "d", "e"].map((id) => good(id));
    lines.splice(2, 0, "oops");
    const seen: unknown[] = [];
    const r = await store.importJsonl(lines.join("\n"), {
      batchSize: 2,
      onProgress: (p) => seen.push(p),
    });
    expect(r.imported).toBe(5);
    expect(seen).toEqual([
      { batch: 1, lines: 2, imported: 2, skipped: 0 },
      { batch: 2, lines: 5, imported: 4, skipped: 1 },
      { batch: 3, lines: 6, imported: 5, skipped: 1 },
    ]);
  });

  it("streams: byte chunks split inside characters, CRLF, BOM", async () => {
    const text = `\ufeff${good("a")}\r\n${JSON.stringify(rec("b", "天气预报 naïve café"))}\r\n`;
    const bytes = new TextEncoder().encode(text);
    async function* chunks() {
      for (let i = 0; i < bytes.length; i += 7) yield bytes.subarray(i, i + 7);
    }
    const r = await store.importJsonl(chunks());
    expect(r).toEqual({ imported: 2, skipped: 0, errors: [] });
    expect(store.get("b")?.content).toBe("天气预报 naïve café");
  });

  it("export is ordered by scope then id (code points) and round-trips byte for byte", async () => {
    const ids = ["b", "B", "a", "😀", "\uffff", "a1", "A"];
    const scopes = ["u2", "U1", "u1", "ü"];
    const records: MemoryRecordInput[] = [];
    scopes.forEach((scope, i) => {
      for (const id of ids) {
        records.push(
          rec(`${id}-${i}`, `text ${id} in ${scope}`, {
            userScope: scope,
            tags: ["t1", "t2"],
            summary: i % 2 === 0 ? "" : "sum",
            importance: 0.1 * i,
            ...(i === 1 ? { conflictKey: "preference:x", authority: "workspace_override" } : {}),
          }),
        );
      }
    });
    store.add(records.reverse(), { now: "2026-08-18T00:00:00Z" });
    const first = exportText(store);
    const parsed = first
      .trimEnd()
      .split("\n")
      .map((l) => JSON.parse(l) as { userScope: string; memoryId: string });
    const sorted = [...parsed].sort(
      (a, b) =>
        compareCodePoints(a.userScope, b.userScope) || compareCodePoints(a.memoryId, b.memoryId),
    );
    expect(parsed).toEqual(sorted);
    expect(first.split("\n")[0]).toBe(
      JSON.stringify({
        memoryId: "A-1",
        userScope: "U1",
        kind: "fact",
        category: "general",
        tags: ["t1", "t2"],
        content: "text A in U1",
        summary: "sum",
        importance: 0.1,
        conflictKey: "preference:x",
        authority: "workspace_override",
        source: {
          sourceId: "chat-1",
          sourceType: "chat",
          title: "Chat",
          capturedAt: "2026-08-17T00:00:00Z",
        },
        storedAt: "2026-08-18T00:00:00Z",
      }),
    );

    const other = openStore(join(dir, "copy.db"));
    try {
      expect(await other.importJsonl(first)).toMatchObject({
        imported: records.length,
        skipped: 0,
      });
      expect(exportText(other)).toBe(first);
      // Importing the same export again only updates: still byte-identical.
      await other.importJsonl(first);
      expect(other.count()).toBe(records.length);
      expect(exportText(other)).toBe(first);
    } finally {
      other.close();
    }
  });
});

describe("recall: scoring and ranking", () => {
  const filler = () =>
    // Other scopes make the corpus realistic (bm25 IDF needs N > 2·df) without touching u1.
    Array.from({ length: 30 }, (_, i) =>
      rec(`f${i}`, `filler text number ${i}`, { userScope: "other" }),
    );

  it("breakdown: components in [0,1], total = round6(lexical × salience), salience from the weights", () => {
    store.add([
      ...filler(),
      rec("m1", "User prefers Python for automation", {
        importance: 0.9,
        capturedAt: "2026-08-01T00:00:00Z",
      }),
      rec("m2", "Python is installed", { importance: 0.3 }),
    ]);
    const hits = store.recall("python automation", { userScope: "u1", asOf: AS_OF });
    expect(hits.map((h) => [h.memoryId, h.rank])).toEqual([
      ["m1", 1],
      ["m2", 2],
    ]);
    for (const h of hits) {
      const b = h.scoreBreakdown;
      expect(b.weights).toEqual(DEFAULT_WEIGHTS);
      expect(b.weights.lexical + b.weights.recency + b.weights.importance).toBeCloseTo(1, 12);
      for (const v of [b.lexical, b.recency, b.importance, b.salience, b.total, b.coverage]) {
        expect(v).toBeGreaterThanOrEqual(0);
        expect(v).toBeLessThanOrEqual(1);
      }
      expect(b.salience).toBe(
        round6(
          b.weights.lexical + b.weights.recency * b.recency + b.weights.importance * b.importance,
        ),
      );
      expect(b.total).toBe(round6(b.lexical * b.salience));
      expect(b.total).toBeLessThanOrEqual(b.lexical);
      expect(h.score).toBe(b.total);
      expect(b.bm25).toBeLessThan(0);
    }
    expect(hits[0]?.scoreBreakdown).toMatchObject({
      lexical: 1,
      coverage: 1,
      importance: 0.9,
      matchedTerms: ["python", "automation"],
    });
    // m2 has "python" only: the more common of the two terms (in 2 of u1's 2 memories,
    // where "automation" is in 1), so it carries less than half of the query's weight.
    expect(hits[1]?.scoreBreakdown).toMatchObject({ coverage: 0.5, matchedTerms: ["python"] });
    expect(hits[1]!.scoreBreakdown.lexical).toBeLessThan(0.5);
  });

  it("lexical: more query terms matched → higher lexical and rank", () => {
    store.add([...filler(), rec("one", "python only here"), rec("two", "python and bash here")]);
    const hits = store.recall("python bash", { userScope: "u1", asOf: AS_OF });
    expect(hits.map((h) => h.memoryId)).toEqual(["two", "one"]);
    expect(hits[0]!.scoreBreakdown.lexical).toBe(1);
    expect(hits[1]!.scoreBreakdown.lexical).toBeLessThan(0.5);
  });

  it("recency: 30-day half-life against asOf; the future counts as age 0", () => {
    store.add([
      ...filler(),
      rec("now", "deploy notes", { capturedAt: AS_OF }),
      rec("d30", "deploy notes", { capturedAt: "2026-07-18T00:00:00Z" }),
      rec("d60", "deploy notes", { capturedAt: "2026-06-18T00:00:00Z" }),
      rec("future", "deploy notes", { capturedAt: "2026-09-01T00:00:00Z" }),
    ]);
    const hits = store.recall("deploy", { userScope: "u1", asOf: AS_OF });
    const recency = Object.fromEntries(hits.map((h) => [h.memoryId, h.scoreBreakdown.recency]));
    expect(recency).toEqual({ now: 1, d30: 0.5, d60: 0.25, future: 1 });
    expect(hits.map((h) => h.memoryId)).toEqual(["future", "now", "d30", "d60"]);
  });

  it("asOf is the only clock: the same store gives other recency at another asOf", () => {
    store.add([...filler(), rec("m", "deploy notes", { capturedAt: "2026-07-18T00:00:00Z" })]);
    const at = (asOf: string) =>
      store.recall("deploy", { userScope: "u1", asOf })[0]!.scoreBreakdown.recency;
    expect(at("2026-07-18T00:00:00Z")).toBe(1);
    expect(at(AS_OF)).toBe(0.5);
  });

  it("importance breaks an otherwise equal match", () => {
    store.add([
      ...filler(),
      rec("low", "backup schedule", { importance: 0.1 }),
      rec("high", "backup schedule", { importance: 0.8 }),
    ]);
    const hits = store.recall("backup", { userScope: "u1", asOf: AS_OF });
    expect(hits.map((h) => [h.memoryId, h.scoreBreakdown.importance])).toEqual([
      ["high", 0.8],
      ["low", 0.1],
    ]);
    expect(hits[0]!.score - hits[1]!.score).toBeCloseTo(0.2 * 0.7, 6);
  });

  it("tie-break: total → lexical → capturedAt desc (instant, not text) → memoryId (code points)", () => {
    const same = "alpha beta";
    store.add([
      ...filler(),
      // 09:00+08:00 is 01:00Z: earlier than 02:00Z although it sorts later as text.
      rec("x-early", same, { capturedAt: "2026-08-17T09:00:00+08:00" }),
      rec("😀", same, { capturedAt: "2026-08-17T02:00:00Z" }),
      rec("\uffff", same, { capturedAt: "2026-08-17T02:00:00.000Z" }),
      rec("B", same, { capturedAt: "2026-08-17T04:00:00+02:00" }),
      rec("a", same, { capturedAt: "2026-08-17T02:00:00Z" }),
    ]);
    const hits = store.recall("alpha beta", {
      userScope: "u1",
      asOf: AS_OF,
      weights: { lexical: 1, recency: 0, importance: 0 },
    });
    expect(new Set(hits.map((h) => h.score))).toEqual(new Set([1]));
    expect(hits.map((h) => h.memoryId)).toEqual(["B", "a", "\uffff", "😀", "x-early"]);
    expect(hits.map((h) => h.rank)).toEqual([1, 2, 3, 4, 5]);
  });

  it("limit, categories (inside the query, before the candidate pool), empty queries", () => {
    const small = openStore(join(dir, "small-pool.db"), { poolSize: 2 });
    try {
      small.add([
        ...Array.from({ length: 6 }, (_, i) =>
          rec(`g${i}`, "python python python", { category: "general" }),
        ),
        rec("t1", "python once among many other words here", { category: "tool_failure" }),
      ]);
      // Had the category been a post-filter on the 2-row pool, t1 would be lost.
      expect(
        small
          .recall("python", { userScope: "u1", asOf: AS_OF, categories: ["tool_failure"] })
          .map((h) => h.memoryId),
      ).toEqual(["t1"]);
      expect(small.recall("python", { userScope: "u1", asOf: AS_OF, limit: 3 })).toHaveLength(3);
    } finally {
      small.close();
    }
    store.add([rec("m", "something")]);
    for (const q of ["", "   ", "!!! ???", "🙂🙂", "\ud800"]) {
      expect(store.recall(q, { userScope: "u1", asOf: AS_OF })).toEqual([]);
    }
  });

  it("options are validated with paths; asOf is required", () => {
    const bad: Array<[Record<string, unknown>, string]> = [
      [{ userScope: "u1" }, "options.asOf"],
      [{ userScope: "u1", asOf: "soon" }, "options.asOf"],
      [{ userScope: " ", asOf: AS_OF }, "options.userScope"],
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
      const err = caught(() => store.recall("x", options as never));
      expect(err).toBeInstanceOf(InvalidInputError);
      expect((err as InvalidInputError).path).toBe(path);
    }
  });

  it("hits feed spec 02 selection through the adapter (slots and authority from the records)", () => {
    store.add([
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
    const hits = store.recall("automation python bash", { userScope: "u1", asOf: AS_OF });
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
});

describe("recall: bounded work (match budget)", () => {
  it("over budget, the rarest terms are searched first; coverage still counts every term", () => {
    const s = openStore(join(dir, "budget.db"), { matchBudget: 5 });
    try {
      s.add([
        ...Array.from({ length: 10 }, (_, i) => rec(`c${i}`, "common words everywhere")),
        rec("r", "common and rare"),
      ]);
      const hits = s.recall("common rare", { userScope: "u1", asOf: AS_OF });
      expect(hits.map((h) => h.memoryId)).toEqual(["r"]);
      expect(hits[0]?.scoreBreakdown.coverage).toBe(1);
      // Within budget nothing is left out.
      expect(store.recall("x", { userScope: "u1", asOf: AS_OF })).toEqual([]);
    } finally {
      s.close();
    }
  });

  it("a single term over budget scores only its most recently written matches", () => {
    const s = openStore(join(dir, "budget1.db"), { matchBudget: 3, poolSize: 1 });
    try {
      s.add(Array.from({ length: 8 }, (_, i) => rec(`c${i}`, "common")));
      const hits = s.recall("common", { userScope: "u1", asOf: AS_OF, limit: 3 });
      expect(hits.map((h) => h.memoryId).sort()).toEqual(["c5", "c6", "c7"]);
    } finally {
      s.close();
    }
  });
});

describe("recall: text normalization and CJK", () => {
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
    expect(queryTerms("python bash python")).toEqual(["python", "bash"]);
    expect(queryTerms(Array.from({ length: 500 }, (_, i) => `w${i}`).join(" "))).toHaveLength(64);
  });

  it("天气预报 matches 天气 (and the other way round); CJK inside Latin text", () => {
    store.add([
      rec("forecast", "明天的天气预报说有雨"),
      rec("short", "天气"),
      rec("phone", "我的iPhone手机坏了"),
      rec("rain", "雨"),
    ]);
    const ids = (q: string) =>
      store
        .recall(q, { userScope: "u1", asOf: AS_OF })
        .map((h) => h.memoryId)
        .sort();
    expect(ids("天气")).toEqual(["forecast", "short"]);
    expect(ids("天气预报")).toEqual(["forecast", "short"]);
    expect(ids("手机")).toEqual(["phone"]);
    expect(ids("IPHONE")).toEqual(["phone"]);
    // A lone character is its own term: it matches a lone character, not inside a bigram.
    expect(ids("雨")).toEqual(["rain"]);
  });

  it("full-width and case variants match", () => {
    store.add([rec("m", "Straße to the PYTHON meetup")]);
    expect(store.recall("ｐｙｔｈｏｎ strasse", { userScope: "u1", asOf: AS_OF })).toHaveLength(1);
  });
});

describe("recall: hostile queries", () => {
  const hostile = [
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
    "\u0000",
    "python\u0000java",
    "+",
    "python + java",
    "x".repeat(10_000),
    Array.from({ length: 2000 }, (_, i) => `NEAR(w${i}`).join(" OR "),
  ];

  beforeEach(() => {
    store.add([
      rec("pj", "python java"),
      rec("p", "python"),
      rec("other", "python java secret", { userScope: "u2" }),
    ]);
  });

  it("never throw and never leave the scope", () => {
    for (const q of hostile) {
      const hits = store.recall(q, { userScope: "u1", asOf: AS_OF });
      for (const h of hits) expect(h.userScope).toBe("u1");
    }
    expect(store.count()).toBe(3);
  });

  it("operators are plain words: NOT, -, * and NEAR do not change the match set", () => {
    const ids = (q: string) =>
      store
        .recall(q, { userScope: "u1", asOf: AS_OF })
        .map((h) => h.memoryId)
        .sort();
    expect(ids("python NOT java")).toEqual(["p", "pj"]);
    expect(ids("python -java")).toEqual(["p", "pj"]);
    expect(ids("NEAR(python java, 2)")).toEqual(["p", "pj"]);
    expect(ids("pyth*")).toEqual([]);
    expect(ids("NOT")).toEqual([]);
    expect(ids('"python"')).toEqual(["p", "pj"]);
  });

  it("another scope's index prefix in the query reaches nothing", () => {
    const q = `${scopePrefix("u2")}secret ${scopePrefix("u2")}python`;
    expect(store.recall(q, { userScope: "u1", asOf: AS_OF })).toEqual([]);
    expect(store.recall("secret", { userScope: "u1", asOf: AS_OF })).toEqual([]);
  });
});

describe("recall: scope isolation at the store (property)", () => {
  const VOCAB = ["alpha", "beta", "gamma", "delta", "天气", "预报", "python", "ß", "OR", "NOT"];
  // Scopes are exact: "A", "a", "A " and "A\u200b" are all different scopes.
  const SCOPES = ["A", "B", "a", "A ", "A\u200b"] as const;

  it("recall for A returns exactly A's records that share a term with the query", async () => {
    let run = 0;
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
          run++;
          const s = openStore(join(dir, `prop-${run}.db`));
          try {
            s.add(
              records.map(([scope, words], i) =>
                rec(`m${i}`, words.join(" "), {
                  userScope: scope,
                  capturedAt: `2026-08-${String((i % 28) + 1).padStart(2, "0")}T00:00:00Z`,
                }),
              ),
            );
            const hits = s.recall(query, { userScope: "A", asOf: AS_OF, limit: 1000 });
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
          } finally {
            s.close();
          }
        },
      ),
      { numRuns: 60 },
    );
  });
});
