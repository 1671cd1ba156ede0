/**
 * The SQLite connection's recall cache (src/store/sqlite/cache.ts): a recall answers what
 * a fresh connection answers, after writes of this connection and of another one. And
 * round6's fast path against the exact formatting.
 */
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import {
  openStore,
  type RecallOptions,
  round6,
  type SqliteMemoryStore,
} from "../../src/store/index.js";
import { formatFixed } from "../../src/text/index.js";
import { AS_OF, rec, tempDir } from "./helpers.js";

let dir: string;
let cleanup: () => void;
let path: string;
const opened: SqliteMemoryStore[] = [];

function open(options: { matchBudget?: number; poolSize?: number } = {}): SqliteMemoryStore {
  const store = openStore(path, options);
  opened.push(store);
  return store;
}

beforeEach(() => {
  ({ dir, cleanup } = tempDir());
  path = join(dir, "memory.db");
});
afterEach(() => {
  for (const s of opened.splice(0)) s.close();
  cleanup();
});

const QUERIES: Array<[string, Partial<RecallOptions>]> = [
  ["postgres index migration", {}],
  ["postgres", {}],
  ["index", { limit: 2 }],
  ["migration postgres", { categories: ["work"] }],
  ["index", { categories: ["work", "home"] }],
  ["the", {}],
];

/** Every query's hits from `store` and from a fresh connection are the same. */
function expectFresh(store: SqliteMemoryStore, options: { matchBudget?: number } = {}): void {
  const fresh = openStore(path, options);
  try {
    for (const [query, extra] of QUERIES) {
      const o = { userScope: "u1", asOf: AS_OF, ...extra };
      expect(store.recall(query, o), query).toEqual(fresh.recall(query, o));
    }
  } finally {
    fresh.close();
  }
}

function seed(store: SqliteMemoryStore): void {
  store.add([
    rec("m1", "Add the postgres index in a migration", { category: "work" }),
    rec("m2", "Postgres runs on the staging host", { category: "home" }),
    rec("m3", "An index card on the desk", { category: "home", tags: ["index"] }),
    rec("m4", "Migration notes for the billing service", { category: "work" }),
  ]);
}

describe("the recall cache", () => {
  for (const matchBudget of [undefined, 2]) {
    const options = matchBudget === undefined ? {} : { matchBudget };
    it(`repeated recalls answer as a fresh connection (budget ${matchBudget ?? "default"})`, () => {
      const store = open(options);
      seed(store);
      expectFresh(store, options);
      expectFresh(store, options);
    });

    it(`sees this connection's writes at once (budget ${matchBudget ?? "default"})`, () => {
      const store = open(options);
      seed(store);
      expectFresh(store, options);
      store.add([
        rec("m5", "Postgres index on invoices", { category: "work" }),
        rec("m1", "Nothing about databases any more", { category: "work" }),
      ]);
      expectFresh(store, options);
      const hits = store.recall("postgres", { userScope: "u1", asOf: AS_OF });
      expect(hits.map((h) => h.memoryId).sort()).toEqual(["m2", "m5"]);
    });

    it(`sees another connection's writes at once (budget ${matchBudget ?? "default"})`, () => {
      const store = open(options);
      const other = open(options);
      seed(other);
      expectFresh(store, options);
      other.add([
        rec("m6", "A migration adds the postgres index", { category: "work" }),
        rec("m3", "The index card is now in the drawer", { category: "home" }),
      ]);
      expectFresh(store, options);
      const hits = store.recall("drawer", { userScope: "u1", asOf: AS_OF });
      expect(hits.map((h) => h.memoryId)).toEqual(["m3"]);
      // A write in another scope moves the version too; this scope's answers hold.
      other.add([rec("x1", "postgres index", { userScope: "u2" })]);
      expectFresh(store, options);
    });
  }

  it("lists see writes at once", () => {
    const store = open();
    const other = open();
    const list = () => store.list({ userScope: "u1", kinds: ["profile"] }).map((r) => r.memoryId);
    expect(list()).toEqual([]);
    other.add([rec("p1", "Likes tea", { kind: "profile" })]);
    expect(list()).toEqual(["p1"]);
    store.add([rec("p2", "Likes coffee", { kind: "profile" })]);
    expect(list()).toEqual(["p1", "p2"]);
    other.add([rec("p1", "Likes green tea", { kind: "profile", category: "drinks" })]);
    const fresh = openStore(path);
    try {
      for (const o of [
        { userScope: "u1", kinds: ["profile"] },
        { userScope: "u1", categories: ["drinks"] },
        { userScope: "u1" },
      ]) {
        expect(store.list(o)).toEqual(fresh.list(o));
        expect(store.list(o)).toEqual(fresh.list(o));
      }
    } finally {
      fresh.close();
    }
    expect(store.list({ userScope: "u1", categories: ["drinks"] })[0]?.content).toBe(
      "Likes green tea",
    );
  });
});

describe("round6", () => {
  it("is the double formatFixed(x, 6) reads as, ties and signs included", () => {
    const exact = (x: number) => {
      const r = Number(formatFixed(x, 6));
      return r === 0 ? 0 : r;
    };
    let seed = 7;
    const random = () => {
      seed = (seed * 1103515245 + 12345) % 2 ** 31;
      return seed / 2 ** 31;
    };
    const xs = [0, -0, 1, -1, 5e-7, -5e-7, 1.0000005, 0.1234565, 2 ** 52 / 1e6, 1e300, -1e300];
    for (let k = 0; k < 20_000; k++) xs.push((k + 0.5) / 1e6, -(k + 0.5) / 1e6, k / 1e6);
    for (let i = 0; i < 20_000; i++) xs.push(random(), -random() * 40, random() * 1e-5);
    for (const x of xs) expect(Object.is(round6(x), exact(x)), String(x)).toBe(true);
  });
});
