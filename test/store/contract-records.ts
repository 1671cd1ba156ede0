/** Contract, part 1: validation, writes, reads, JSONL import and export. */
import { describe, expect, it } from "vitest";
import { InvalidInputError } from "../../src/errors/index.js";
import type { MemoryRecordInput } from "../../src/store/index.js";
import { compareCodePoints } from "../../src/text/index.js";
import type { StoreBackend } from "./contract.js";
import { exportText, failure, useStores } from "./contract-helpers.js";
import { rec } from "./helpers.js";

function validation(ctx: ReturnType<typeof useStores>): void {
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
    ["NUL in content", rec("m", "a\u0000b"), "records[0].content"],
    ["NUL in scope", rec("m", "x", { userScope: "u\u0000" }), "records[0].userScope"],
    ["unknown field", { ...rec("m", "x"), colour: "red" }, "records[0].colour"],
    [
      "unknown source field",
      { ...rec("m", "x"), source: { ...rec("m", "x").source, url: "u" } },
      "records[0].source.url",
    ],
  ];
  for (const [name, record, path] of cases) {
    it(`${name} → ${path}`, async () => {
      const err = await failure(() => ctx.store.add([record as MemoryRecordInput]));
      expect(err).toBeInstanceOf(InvalidInputError);
      expect((err as InvalidInputError).path).toBe(path);
      expect(await ctx.store.count()).toBe(0);
    });
  }

  it("a bad record anywhere means nothing of the call is written", async () => {
    const err = await failure(() =>
      ctx.store.add([rec("a", "fine"), rec("b", "x", { importance: -1 })]),
    );
    expect(err).toBeInstanceOf(InvalidInputError);
    expect(await ctx.store.count()).toBe(0);
  });

  it("defaults: kind fact, category general, tags [], summary '', importance 0.5, storedAt", async () => {
    await ctx.store.add([rec("m1", "x")]);
    await ctx.store.add([rec("m2", "y")], { now: "2026-09-01T00:00:00Z" });
    expect(await ctx.store.get("m1")).toEqual({
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
    expect((await ctx.store.get("m2"))?.storedAt).toBe("2026-09-01T00:00:00Z");
    expect(await ctx.store.get("missing")).toBeNull();
  });
}

function writes(ctx: ReturnType<typeof useStores>): void {
  it("same id, same scope → replaced (and re-indexed)", async () => {
    const s = ctx.store;
    expect(await s.add([rec("m1", "likes tea")])).toEqual({ inserted: 1, updated: 0 });
    expect(await s.add([rec("m1", "likes coffee", { importance: 0.9 })])).toEqual({
      inserted: 0,
      updated: 1,
    });
    expect(await s.count()).toBe(1);
    expect(await s.get("m1")).toMatchObject({ content: "likes coffee", importance: 0.9 });
    expect(await s.recall("tea", { userScope: "u1", asOf: "2026-08-17T00:00:00Z" })).toEqual([]);
    const hits = await s.recall("coffee", { userScope: "u1", asOf: "2026-08-17T00:00:00Z" });
    expect(hits.map((h) => h.memoryId)).toEqual(["m1"]);
  });

  it("the same id in another scope is another memory: neither write changes the other", async () => {
    const s = ctx.store;
    await s.add([rec("m1", "u1 secret")]);
    expect(await s.add([rec("m2", "new one"), rec("m1", "u2's own", { userScope: "u2" })])).toEqual(
      { inserted: 2, updated: 0 },
    );
    expect(await s.get("m1", { userScope: "u1" })).toMatchObject({ content: "u1 secret" });
    expect(await s.get("m1", { userScope: "u2" })).toMatchObject({ content: "u2's own" });
    expect(await s.count()).toBe(3);
    // Without a scope, get reads the first scope (code points) that holds the id.
    expect((await s.get("m1"))?.userScope).toBe("u1");
    const bad = await failure(() => s.get("m1", { userScope: " " }));
    expect((bad as InvalidInputError).path).toBe("options.userScope");
  });

  it("another scope's id answers exactly as a missing id: get and write", async () => {
    const s = ctx.store;
    await s.add([rec("theirs", "secret of u2", { userScope: "u2" })]);
    const foreign = await s.get("theirs", { userScope: "u1" });
    const missing = await s.get("nobody-has-this", { userScope: "u1" });
    expect(foreign).toBeNull();
    expect(JSON.stringify(foreign)).toBe(JSON.stringify(missing));
    const wrote = await s.add([rec("theirs", "mine")]);
    const fresh = await s.add([rec("nobody-has-this", "mine")]);
    expect(JSON.stringify(wrote)).toBe(JSON.stringify(fresh));
    expect((await s.get("theirs", { userScope: "u2" }))?.content).toBe("secret of u2");
  });

  it("one batch, several scopes: each scope's repeats update its own memory", async () => {
    const s = ctx.store;
    await s.add([rec("x", "held by u1")]);
    expect(await s.add([rec("x", "from u2", { userScope: "u2" }), rec("x", "u1 again")])).toEqual({
      inserted: 1,
      updated: 1,
    });
    expect(
      await s.add([
        rec("y", "first"),
        rec("z", "z", { userScope: "u2" }),
        rec("y", "second"),
        rec("y", "y of u2", { userScope: "u2" }),
      ]),
    ).toEqual({ inserted: 3, updated: 1 });
    expect((await s.get("y", { userScope: "u1" }))?.content).toBe("second");
    expect((await s.get("x", { userScope: "u1" }))?.content).toBe("u1 again");
    expect((await s.get("x", { userScope: "u2" }))?.content).toBe("from u2");
    expect(await s.count()).toBe(5);
  });

  it("count per scope and in total", async () => {
    const s = ctx.store;
    await s.add([
      rec("a", "x"),
      rec("b", "y", { userScope: "u2" }),
      rec("c", "z", { userScope: "u2" }),
    ]);
    expect(await s.count()).toBe(3);
    expect(await s.count({ userScope: "u2" })).toBe(2);
    expect(await s.count({ userScope: "U2" })).toBe(0);
    expect(await s.count({ userScope: "u2\u0000" })).toBe(0);
  });

  it("list: one scope, filtered by kind and category, ordered by id", async () => {
    const s = ctx.store;
    await s.add([
      rec("p2", "Name: Ada", { kind: "profile", category: "identity" }),
      rec("p1", "Prefers tea", { kind: "profile", category: "preference" }),
      rec("f1", "a fact"),
      rec("p3", "other user", { kind: "profile", userScope: "u2" }),
    ]);
    const ids = async (o: Parameters<typeof s.list>[0]) => (await s.list(o)).map((r) => r.memoryId);
    expect(await ids({ userScope: "u1", kinds: ["profile"] })).toEqual(["p1", "p2"]);
    expect(await ids({ userScope: "u1", kinds: ["profile"], categories: ["identity"] })).toEqual([
      "p2",
    ]);
    expect(await ids({ userScope: "u1" })).toEqual(["f1", "p1", "p2"]);
  });
}

const good = (id: string, scope = "u1", extra: Record<string, unknown> = {}) =>
  JSON.stringify({ ...rec(id, `content of ${id}`, { userScope: scope }), ...extra });

function jsonlImport(ctx: ReturnType<typeof useStores>): void {
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
    const r = await ctx.store.importJsonl(text);
    expect(r.imported).toBe(3);
    expect(r.skipped).toBe(3);
    expect(r.errors.map((e) => [e.line, e.path])).toEqual([
      [3, null],
      [4, "importance"],
      [7, "extra"],
    ]);
    expect(r.errors[0]?.message).toMatch(/^not valid JSON/);
    const ids = (await ctx.store.list({ userScope: "u1" })).map((x) => x.memoryId);
    expect(ids).toEqual(["a", "b", "d"]);
  });

  it("an id that lives in another scope imports as this scope's own memory, not a move", async () => {
    await ctx.store.add([rec("a", "original")]);
    const r = await ctx.store.importJsonl(`${good("a", "u2")}\n${good("b", "u2")}\n`);
    expect(r).toEqual({ imported: 2, skipped: 0, errors: [] });
    expect((await ctx.store.get("a", { userScope: "u1" }))?.content).toBe("original");
    expect((await ctx.store.get("a", { userScope: "u2" }))?.content).toBe("content of a");
  });

  it("batches: one transaction each, progress after each commit", async () => {
    const lines = ["a", "b", "c", "d", "e"].map((id) => good(id));
    lines.splice(2, 0, "oops");
    const seen: unknown[] = [];
    const r = await ctx.store.importJsonl(lines.join("\n"), {
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
    const r = await ctx.store.importJsonl(chunks());
    expect(r).toEqual({ imported: 2, skipped: 0, errors: [] });
    expect((await ctx.store.get("b"))?.content).toBe("天气预报 naïve café");
  });
}

/** Records over several scopes whose ids and scopes sort differently as UTF-16 and as code points. */
export function exportFixture(): MemoryRecordInput[] {
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
  return records.reverse();
}

function jsonlExport(ctx: ReturnType<typeof useStores>): void {
  it("export is ordered by scope then id (code points) and round-trips byte for byte", async () => {
    const records = exportFixture();
    await ctx.store.add(records, { now: "2026-08-18T00:00:00Z" });
    const first = await exportText(ctx.store);
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

    const other = await ctx.open();
    expect(await other.importJsonl(first)).toMatchObject({
      imported: records.length,
      skipped: 0,
    });
    expect(await exportText(other)).toBe(first);
    // Importing the same export again only updates: still byte-identical.
    await other.importJsonl(first);
    expect(await other.count()).toBe(records.length);
    expect(await exportText(other)).toBe(first);
  });
}

/** Registers part 1 of the contract. */
export function recordsContract(backend: StoreBackend): void {
  const ctx = useStores(backend);
  describe("validation (zod schema, paths name the field)", () => validation(ctx));
  describe("add: upsert within a scope, never across scopes", () => writes(ctx));
  describe("JSONL import", () => jsonlImport(ctx));
  describe("JSONL export", () => jsonlExport(ctx));
}
