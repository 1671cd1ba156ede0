/** The memory store as a context source (docs/sources.md): recall_memory and profile. */
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { assemble } from "../../src/assemble/index.js";
import {
  constraintsSource,
  memoryStoreSource,
  type SlotSpec,
  SourceItemSchema,
  type SourceQuery,
} from "../../src/sources/index.js";
import { hybridStore, openStore, type SqliteMemoryStore } from "../../src/store/index.js";
import { AS_OF, rec, tempDir } from "./helpers.js";
import { trigramEmbedder } from "./trigram-embedder.js";

let cleanup: () => void;
let store: SqliteMemoryStore;
const signal = new AbortController().signal;
const query = (text: string, userScope = "u1"): SourceQuery => ({
  text,
  userScope,
  mode: "chat",
  now: AS_OF,
});
const RECALL: SlotSpec = { kind: "recall_memory" };
const PROFILE: SlotSpec = { kind: "profile" };

beforeEach(() => {
  let dir: string;
  ({ dir, cleanup } = tempDir());
  store = openStore(join(dir, "memory.db"));
  store.add([
    rec("py", "User prefers Python for automation", {
      category: "preference",
      tags: ["lang"],
      importance: 0.8,
      conflictKey: "preference:automation-language",
      authority: "workspace_override",
    }),
    rec("fail", "The python build failed on CI", { category: "tool_failure" }),
    rec("u2py", "u2 also writes python", { userScope: "u2" }),
    rec("name", "Name: Ada Lovelace", {
      kind: "profile",
      category: "identity",
      summary: "Ada",
      importance: 0.9,
    }),
    rec("tea", "Prefers tea over coffee", {
      kind: "profile",
      category: "preference",
      importance: 0.4,
    }),
    rec("u2name", "Name: Bob", { kind: "profile", category: "identity", userScope: "u2" }),
  ]);
});
afterEach(() => {
  store.close();
  cleanup();
});

describe("memoryStoreSource", () => {
  it("supports recall_memory and profile only", async () => {
    const src = memoryStoreSource(store);
    expect(src.id).toBe("memory-store");
    expect(["recall_memory", "profile", "kb"].map((k) => src.supports(k))).toEqual([
      true,
      true,
      false,
    ]);
    expect(await src.fetch({ kind: "kb" }, query("python"), signal)).toEqual([]);
  });

  it("recall_memory: hits of the query's scope as items with spec 02 memory fields", async () => {
    const items = await memoryStoreSource(store).fetch(RECALL, query("python automation"), signal);
    expect(items.map((i) => i.id)).toEqual(["py", "fail"]);
    for (const item of items) expect(SourceItemSchema.safeParse(item).success).toBe(true);
    const hits = store.recall("python automation", { userScope: "u1", asOf: AS_OF });
    expect(items[0]).toEqual({
      id: "py",
      text: "User prefers Python for automation",
      category: "preference",
      tags: ["lang"],
      score: hits[0]!.score,
      importance: 0.8,
      createdAt: "2026-08-17T00:00:00Z",
      rank: 0,
      sourceRef: "memory:py",
      memory: {
        userScope: "u1",
        sourceRank: 1,
        provenance: {
          sourceId: "chat-1",
          sourceType: "chat",
          title: "Chat",
          capturedAt: "2026-08-17T00:00:00Z",
        },
        conflictKey: "preference:automation-language",
        authority: "workspace_override",
      },
    });
    expect(items[1]?.memory).not.toHaveProperty("conflictKey");
    const u2 = await memoryStoreSource(store).fetch(RECALL, query("python", "u2"), signal);
    expect(u2.map((i) => i.id)).toEqual(["u2py"]);
  });

  it("recall_memory: categories from the options, else from the slot filter; limit", async () => {
    const bySlot = await memoryStoreSource(store).fetch(
      { kind: "recall_memory", filter: { categories: ["tool_failure"] } },
      query("python"),
      signal,
    );
    expect(bySlot.map((i) => i.id)).toEqual(["fail"]);
    const byOption = await memoryStoreSource(store, { categories: ["preference"] }).fetch(
      { kind: "recall_memory", filter: { categories: ["tool_failure"] } },
      query("python"),
      signal,
    );
    expect(byOption.map((i) => i.id)).toEqual(["py"]);
    const one = await memoryStoreSource(store, { limit: 1 }).fetch(RECALL, query("python"), signal);
    expect(one).toHaveLength(1);
    expect(() => memoryStoreSource(store, { limit: 0 })).toThrow(/limit/);
  });

  it("profile: the scope's profile records, summary over content, by importance", async () => {
    const items = await memoryStoreSource(store).fetch(PROFILE, query("anything"), signal);
    expect(items.map((i) => [i.id, i.text, i.category, i.rank])).toEqual([
      ["name", "Ada", "identity", 0],
      ["tea", "Prefers tea over coffee", "preference", 1],
    ]);
    for (const item of items) expect(item.sourceRef).toBe(`memory:${item.id}`);
    const u2 = await memoryStoreSource(store).fetch(PROFILE, query("x", "u2"), signal);
    expect(u2.map((i) => i.id)).toEqual(["u2name"]);
  });

  it("feeds the assembler: u1's memories and profile enter the prompt, u2's never", async () => {
    // The default recall slot takes episodic/fact/general/tool_failure (preferences are
    // the profile slot's), and the source passes those categories into the SQL query.
    const { prompt } = await assemble({
      mode: "chat",
      query: { text: "python build", userScope: "u1" },
      now: AS_OF,
      timeoutMs: 10_000, // a loaded CI machine must not turn this into source_timeout
      sources: [
        constraintsSource({ rules: [{ id: "r1", level: "forbid", text: "no rm -rf" }] }),
        memoryStoreSource(store),
      ],
    });
    expect(prompt).toContain("The python build failed on CI");
    expect(prompt).not.toContain("User prefers Python for automation");
    expect(prompt).toContain("Ada");
    expect(prompt).not.toContain("u2 also writes python");
    expect(prompt).not.toContain("Bob");
  });

  it("the store's hints go to the manifest with the recall slot and source; none: no field", async () => {
    const hint = { code: "recall_full_text_only", message: "recall is by words only: …" };
    // The real store, saying what a PostgreSQL store without pgvector says.
    const hinting = new Proxy(store, {
      get: (target, key) => {
        if (key === "hints") return () => [hint];
        const v = Reflect.get(target, key, target);
        return typeof v === "function" ? v.bind(target) : v;
      },
    });
    const run = (s: SqliteMemoryStore) =>
      assemble({
        mode: "chat",
        query: { text: "python build", userScope: "u1" },
        now: AS_OF,
        timeoutMs: 10_000,
        sources: [memoryStoreSource(s, {}, "mem")],
      });
    const { manifest, prompt } = await run(hinting);
    expect(manifest.hints).toEqual([{ slot: "recall_memory", sourceId: "mem", ...hint }]);
    const plain = await run(store);
    expect("hints" in plain.manifest).toBe(false);
    expect(plain.prompt).toBe(prompt);
    // profile is served by the same source, but recalls nothing: no hint for it.
    expect(await memoryStoreSource(hinting).report?.(PROFILE, query("x"))).toBeNull();
  });

  it("a hybrid recall's match goes to each hit's item and memory decision, as the hit has it", async () => {
    const hybrid = hybridStore(store, trigramEmbedder());
    await hybrid.reembed();
    const text = "python automation build";
    // The source's own categories (not the slot filter's): the same recall as here.
    const categories = ["preference", "tool_failure", "identity"];
    const o = { userScope: "u1", asOf: AS_OF, limit: 20, categories };
    const hits = await hybrid.recall(text, o);
    expect(hits.length).toBeGreaterThan(0);
    for (const h of hits) expect(h.match).toBeDefined();
    const source = memoryStoreSource(hybrid, { categories });
    const items = await source.fetch(RECALL, query(text), signal);
    expect(items.map((i) => i.memory?.match)).toEqual(hits.map((h) => h.match));
    for (const item of items) expect(SourceItemSchema.safeParse(item).success).toBe(true);
    const { manifest, memoryPlan } = await assemble({
      mode: "chat",
      query: { text, userScope: "u1" },
      now: AS_OF,
      timeoutMs: 10_000,
      sources: [source],
    });
    const byId = new Map(hits.map((h) => [h.memoryId, h.match]));
    const decisions = memoryPlan?.decisions ?? [];
    expect(decisions.length).toBeGreaterThan(0);
    for (const d of decisions) expect(d.match).toEqual(byId.get(d.memoryId));
    expect(manifest.memoryDecisions).toEqual(decisions);
    // Recall by words only: no match, and decisions exactly as before the field existed.
    const plain = await assemble({
      mode: "chat",
      query: { text, userScope: "u1" },
      now: AS_OF,
      timeoutMs: 10_000,
      sources: [memoryStoreSource(store)],
    });
    for (const d of plain.memoryPlan?.decisions ?? []) expect("match" in d).toBe(false);
  });
});
