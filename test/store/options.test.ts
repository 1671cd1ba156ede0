/**
 * The stores' option checks without zod (plainListOptions, plainRecallOptions) give the
 * schemas' answers: whatever they accept, the schema accepts with the same value; whatever
 * the schema refuses, they leave to it (null).
 */
import { describe, expect, it } from "vitest";
import {
  ListOptionsSchema,
  plainListOptions,
  plainRecallOptions,
  RecallOptionsSchema,
} from "../../src/store/sqlite-options.js";

const STRINGS: unknown[] = [
  "u1",
  "user 42",
  "",
  "   ",
  "\u3000",
  "a\u0000b",
  "\ud800",
  "ok\ud83d\ude00",
  5,
  null,
  undefined,
  ["u1"],
];
const LISTS: unknown[] = [
  undefined,
  [],
  ["fact", "profile"],
  ["", " "],
  ["a\u0000"],
  ["\udfff"],
  // biome-ignore lint/suspicious/noSparseArray: a hole is not a string
  [, "a"],
  [1],
  "fact",
  null,
];
const INSTANTS: unknown[] = [
  "2026-08-17T09:00:00Z",
  "2026-08-17",
  "2026-08-17 09:00:00.123456789+02:00",
  "2026-02-30T00:00:00Z",
  "yesterday",
  "",
  "\ud800",
  1_700_000_000_000,
  undefined,
];
const LIMITS: unknown[] = [undefined, 1, 20, 1000, 0, 1001, 1.5, -0, "20", Number.NaN, null];

function* listCases(): Generator<unknown> {
  for (const userScope of STRINGS) {
    for (const kinds of LISTS) yield { userScope, kinds };
    for (const categories of LISTS) yield { userScope, categories };
  }
  yield { userScope: "u1", kinds: ["profile"], extra: 1 };
  yield Object.assign(Object.create(null), { userScope: "u1" });
  yield { userScope: "u1", [Symbol("s")]: 1 };
  yield null;
  yield ["u1"];
  yield "u1";
}

function* recallCases(): Generator<unknown> {
  for (const userScope of STRINGS) yield { userScope, asOf: INSTANTS[0] };
  for (const asOf of INSTANTS) yield { userScope: "u1", asOf };
  for (const limit of LIMITS) yield { userScope: "u1", asOf: INSTANTS[0], limit };
  for (const categories of LISTS) yield { userScope: "u1", asOf: INSTANTS[0], categories };
  yield {
    userScope: "u1",
    asOf: INSTANTS[0],
    weights: { lexical: 0.6, recency: 0.2, importance: 0.2 },
  };
  yield { userScope: "u1", asOf: INSTANTS[0], extra: true };
  yield null;
}

describe("option checks without zod", () => {
  it("list: the schema's answer whenever they answer", () => {
    let answered = 0;
    for (const input of listCases()) {
      const plain = plainListOptions(input);
      const schema = ListOptionsSchema.safeParse(input);
      if (plain === null) continue;
      answered++;
      expect(schema.success, JSON.stringify(input)).toBe(true);
      expect(plain).toStrictEqual(schema.data);
    }
    expect(answered).toBeGreaterThan(5);
  });

  it("recall: the schema's answer whenever they answer", () => {
    let answered = 0;
    for (const input of recallCases()) {
      const plain = plainRecallOptions(input);
      const schema = RecallOptionsSchema.safeParse(input);
      if (plain === null) continue;
      answered++;
      expect(schema.success, JSON.stringify(input)).toBe(true);
      expect(plain).toStrictEqual(schema.data);
    }
    expect(answered).toBeGreaterThan(5);
  });

  it("answer the usual options themselves", () => {
    expect(plainListOptions({ userScope: "u1", kinds: ["profile"] })).toStrictEqual({
      userScope: "u1",
      kinds: ["profile"],
    });
    expect(
      plainRecallOptions({ userScope: "u1", asOf: "2026-08-17T09:00:00Z", categories: ["a"] }),
    ).toStrictEqual({
      userScope: "u1",
      limit: 20,
      categories: ["a"],
      asOf: "2026-08-17T09:00:00Z",
    });
  });
});
