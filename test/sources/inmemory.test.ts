/**
 * In-memory sources (docs/assembler.md, docs/sources.md "Others"), each tested alone: supports(), items, pinning,
 * bounded buffers, deterministic ids, tool-call categories, recall mapping.
 */
import { describe, expect, it } from "vitest";
import { InvalidInputError } from "../../src/errors/index.js";
import type { CandidateInput } from "../../src/memory/index.js";
import {
  type ContextSource,
  constraintsSource,
  plannerSource,
  profileSource,
  recallSource,
  type SlotSpec,
  type SourceItem,
  SourceItemSchema,
  type SourceQuery,
  staticSource,
  TaskMemoryBuffer,
  type TaskState,
  ToolState,
  taskMemorySource,
  toolStateSource,
} from "../../src/sources/index.js";
import { versionOf } from "../../src/sources/validated.js";

const QUERY: SourceQuery = {
  text: "what next?",
  userScope: "u1",
  mode: "react",
  now: "2026-08-17T10:00:00Z",
};
const KINDS = ["constraints", "planner", "task_memory", "tool_state", "profile", "recall_memory"];

async function fetchKind(source: ContextSource, kind: string, slot: Partial<SlotSpec> = {}) {
  const items = await source.fetch({ kind, ...slot }, QUERY, new AbortController().signal);
  // Every item a source returns passes the item schema the assembler validates with.
  for (const item of items) expect(SourceItemSchema.safeParse(item).success).toBe(true);
  return items;
}

function supported(source: ContextSource): string[] {
  return [...KINDS, "kb"].filter((k) => source.supports(k));
}

function invalid(fn: () => unknown, path: string | null) {
  try {
    fn();
    expect.unreachable();
  } catch (e) {
    expect(e).toBeInstanceOf(InvalidInputError);
    expect((e as InvalidInputError).path).toBe(path);
  }
}

describe("constraintsSource", () => {
  const policy = {
    rules: [
      { id: "no-rm", level: "forbid", text: "no rm -rf" },
      { id: "net", level: "warn", text: "network needs approval" },
      { id: "tests", level: "require", text: "run tests before commit" },
      { id: "custom", level: "audit", text: "log every shell command" },
    ],
  };

  it("serves only constraints, with pinned items `[level] text`", async () => {
    const s = constraintsSource(policy);
    expect(s.id).toBe("constraints");
    expect(supported(s)).toEqual(["constraints"]);
    expect(await fetchKind(s, "constraints")).toEqual([
      {
        id: "no-rm",
        text: "[forbid] no rm -rf",
        category: "forbid",
        pinned: true,
        rank: 0,
        data: { type: "constraint", level: "forbid", text: "no rm -rf" },
      },
      {
        id: "net",
        text: "[warn] network needs approval",
        category: "warn",
        pinned: true,
        rank: 1,
        data: { type: "constraint", level: "warn", text: "network needs approval" },
      },
      {
        id: "tests",
        text: "[require] run tests before commit",
        category: "require",
        pinned: true,
        rank: 2,
        data: { type: "constraint", level: "require", text: "run tests before commit" },
      },
      {
        id: "custom",
        text: "[audit] log every shell command",
        category: "audit",
        pinned: true,
        rank: 3,
        data: { type: "constraint", level: "audit", text: "log every shell command" },
      },
    ]);
    expect(await fetchKind(s, "profile")).toEqual([]);
  });

  it("is a snapshot of the policy when built, and fetches return fresh copies", async () => {
    const rules = [{ id: "a", level: "forbid", text: "x" }];
    const s = constraintsSource({ rules }, "policy-v1");
    expect(s.id).toBe("policy-v1");
    rules.push({ id: "b", level: "warn", text: "y" });
    const first = (await fetchKind(s, "constraints")) as SourceItem[];
    expect(first).toHaveLength(1);
    (first[0] as SourceItem).text = "mutated";
    expect((await fetchKind(s, "constraints"))[0]?.text).toBe("[forbid] x");
  });

  it("rejects duplicate ids and blank fields with a path", () => {
    invalid(
      () =>
        constraintsSource({
          rules: [
            { id: "a", level: "forbid", text: "x" },
            { id: "a", level: "warn", text: "y" },
          ],
        }),
      "policy.rules[1].id",
    );
    invalid(
      () => constraintsSource({ rules: [{ id: "a", level: " ", text: "x" }] }),
      "policy.rules[0].level",
    );
    invalid(
      () => constraintsSource({ rules: [{ id: "a", level: "warn", text: "" }] }),
      "policy.rules[0].text",
    );
    invalid(() => constraintsSource(policy, " "), "id");
  });
});

describe("plannerSource", () => {
  const base: TaskState = {
    taskId: "T-12",
    status: "in_progress",
    phase: "implement",
    done: 2,
    total: 5,
    nextStep: "run the migration tests",
    nextTool: "run_tests",
  };

  it("renders the task line and the next line", async () => {
    const s = plannerSource(() => base);
    expect(s.id).toBe("planner");
    expect(supported(s)).toEqual(["planner"]);
    expect(await fetchKind(s, "planner")).toEqual([
      {
        id: "task",
        text: "task T-12 · in_progress · phase implement · progress 2/5",
        category: "status",
        rank: 0,
        data: {
          type: "task",
          taskId: "T-12",
          status: "in_progress",
          phase: "implement",
          done: 2,
          total: 5,
        },
      },
      {
        id: "next",
        text: "next: run the migration tests (tool run_tests)",
        category: "next",
        rank: 1,
        data: { type: "next", nextStep: "run the migration tests", nextTool: "run_tests" },
      },
    ]);
  });

  it("next line variants and no state", async () => {
    const texts = async (state: TaskState | null) =>
      (
        await fetchKind(
          plannerSource(() => state),
          "planner",
        )
      ).map((i) => i.text);
    expect(await texts({ ...base, nextTool: undefined })).toEqual([
      "task T-12 · in_progress · phase implement · progress 2/5",
      "next: run the migration tests",
    ]);
    expect(await texts({ ...base, nextStep: undefined })).toEqual([
      "task T-12 · in_progress · phase implement · progress 2/5",
      "next tool: run_tests",
    ]);
    const { nextStep: _s, nextTool: _t, ...bare } = base;
    expect(await texts(bare)).toEqual(["task T-12 · in_progress · phase implement · progress 2/5"]);
    expect(await texts(null)).toEqual([]);
  });

  it("reads the state at fetch time", async () => {
    let state: TaskState | null = null;
    const s = plannerSource(() => state);
    expect(await fetchKind(s, "planner")).toEqual([]);
    state = { ...base, done: 3 };
    expect((await fetchKind(s, "planner"))[0]?.text).toContain("progress 3/5");
  });

  it("an invalid state fails the fetch with a path", () => {
    const f = (state: TaskState) => () =>
      plannerSource(() => state).fetch({ kind: "planner" }, QUERY, new AbortController().signal);
    invalid(f({ ...base, done: 6 }), "taskState.done");
    invalid(f({ ...base, total: -1 }), "taskState.total");
    invalid(f({ ...base, taskId: " " }), "taskState.taskId");
  });
});

describe("TaskMemoryBuffer and taskMemorySource", () => {
  const at = (m: number) => `2026-08-17T09:${String(m).padStart(2, "0")}:00Z`;

  it("assigns deterministic ids obs-1, obs-2, …", () => {
    const run = () => {
      const b = new TaskMemoryBuffer(3);
      return [1, 2, 3, 4].map((m) => b.add({ text: `step ${m}`, createdAt: at(m) }).id);
    };
    expect(run()).toEqual(["obs-1", "obs-2", "obs-3", "obs-4"]);
    expect(run()).toEqual(run());
  });

  it("is bounded: the oldest observation is evicted", () => {
    const b = new TaskMemoryBuffer(2);
    for (const m of [1, 2, 3]) b.add({ text: `step ${m}`, createdAt: at(m) });
    expect(b.size).toBe(2);
    expect(b.capacity).toBe(2);
    expect(b.snapshot().map((o) => [o.id, o.text])).toEqual([
      ["obs-2", "step 2"],
      ["obs-3", "step 3"],
    ]);
  });

  it("snapshot is a copy; clear empties but ids keep counting", () => {
    const b = new TaskMemoryBuffer(4);
    b.add({ text: "a", createdAt: at(1), tags: ["db"] });
    const snap = b.snapshot();
    snap.push({ id: "x", text: "x", createdAt: at(2) });
    snap[0]!.tags!.push("mutated");
    expect(b.snapshot()).toEqual([{ id: "obs-1", text: "a", createdAt: at(1), tags: ["db"] }]);
    b.clear();
    expect(b.snapshot()).toEqual([]);
    expect(b.add({ text: "b", createdAt: at(3) }).id).toBe("obs-2");
  });

  it("explicit ids are kept; generated ids skip held ones; duplicates are rejected", () => {
    const b = new TaskMemoryBuffer(5);
    expect(b.add({ text: "a", createdAt: at(1), id: "obs-2" }).id).toBe("obs-2");
    expect(b.add({ text: "b", createdAt: at(2) }).id).toBe("obs-1");
    expect(b.add({ text: "c", createdAt: at(3) }).id).toBe("obs-3");
    invalid(() => b.add({ text: "d", createdAt: at(4), id: "obs-1" }), "observation.id");
  });

  it("validates observations and capacity", () => {
    const b = new TaskMemoryBuffer(2);
    invalid(() => b.add({ text: " ", createdAt: at(1) }), "observation.text");
    invalid(() => b.add({ text: "a", createdAt: "yesterday" }), "observation.createdAt");
    invalid(() => b.add({ text: "a", createdAt: at(1), score: 2 }), "observation.score");
    invalid(() => new TaskMemoryBuffer(0), "capacity");
    invalid(() => new TaskMemoryBuffer(1.5), "capacity");
    expect(b.size).toBe(0);
  });

  it("the source serves task_memory from the snapshot at fetch time", async () => {
    const b = new TaskMemoryBuffer(8);
    const s = taskMemorySource(b);
    expect(s.id).toBe("task_memory");
    expect(supported(s)).toEqual(["task_memory"]);
    expect(await fetchKind(s, "task_memory")).toEqual([]);
    b.add({ text: "migration 004 fails", createdAt: at(1), tags: ["db"], score: 0.9 });
    b.add({ text: "fixed the index", createdAt: at(2), category: "fix" });
    const items = await fetchKind(s, "task_memory");
    expect(items).toEqual([
      {
        id: "obs-1",
        text: "migration 004 fails",
        createdAt: at(1),
        category: "observation",
        tags: ["db"],
        score: 0.9,
      },
      { id: "obs-2", text: "fixed the index", createdAt: at(2), category: "fix" },
    ]);
    b.add({ text: "later", createdAt: at(3) });
    expect(items).toHaveLength(2); // what was fetched is frozen
    expect(await fetchKind(s, "task_memory")).toHaveLength(3);
  });

  it("hands out each held observation's frozen item, the same object on every fetch", async () => {
    const b = new TaskMemoryBuffer(2);
    const s = taskMemorySource(b);
    b.add({ text: "one", createdAt: at(1), tags: ["db"] });
    b.add({ text: "two", createdAt: at(2) });
    const first = await fetchKind(s, "task_memory");
    const again = await fetchKind(s, "task_memory");
    expect(again).not.toBe(first); // a new array each fetch
    expect(again[0]).toBe(first[0]);
    expect(again[1]).toBe(first[1]);
    for (const item of first) expect(Object.isFrozen(item)).toBe(true);
    const tags = first[0]?.tags as string[];
    expect(Object.isFrozen(tags)).toBe(true);
    expect(() => tags.push("x")).toThrow(TypeError);
    // The buffer keeps its own: the snapshot is untouched and still a mutable copy.
    const snap = b.snapshot();
    snap[0]?.tags?.push("mine");
    expect(b.snapshot()[0]?.tags).toEqual(["db"]);
    // Eviction drops the oldest item; the held one stays the same object.
    b.add({ text: "three", createdAt: at(3) });
    const after = await fetchKind(s, "task_memory");
    expect(after.map((i) => i.id)).toEqual(["obs-2", "obs-3"]);
    expect(after[0]).toBe(first[1]);
    b.clear();
    expect(await fetchKind(s, "task_memory")).toEqual([]);
  });
});

describe("ToolState and toolStateSource", () => {
  const tools = [
    { name: "run_tests", description: "runs the test suite", requiredArgs: ["path"] },
    { name: "http_get", description: "fetches a URL", requiredArgs: ["url", "timeout"] },
    { name: "now", description: "", requiredArgs: [] },
  ];

  it("tools then recent calls (newest first) with categories and createdAt", async () => {
    const state = new ToolState(tools, { maxCalls: 5 });
    state.recordCall({
      tool: "run_tests",
      ok: false,
      summary: "3 failures",
      at: "2026-08-17T09:00:00Z",
    });
    state.recordCall({
      tool: "run_tests",
      ok: true,
      summary: "all green",
      at: "2026-08-17T09:05:00Z",
    });
    state.recordCall({ tool: "now", ok: true, summary: "", at: "2026-08-17T09:06:00Z" });
    const s = toolStateSource(state);
    expect(s.id).toBe("tool_state");
    expect(supported(s)).toEqual(["tool_state"]);
    expect(await fetchKind(s, "tool_state")).toEqual([
      {
        id: "tool:run_tests",
        text: "run_tests(path) — runs the test suite",
        category: "tool",
        rank: 0,
        data: { type: "tool", ...tools[0] },
      },
      {
        id: "tool:http_get",
        text: "http_get(url, timeout) — fetches a URL",
        category: "tool",
        rank: 1,
        data: { type: "tool", ...tools[1] },
      },
      {
        id: "tool:now",
        text: "now()",
        category: "tool",
        rank: 2,
        data: { type: "tool", ...tools[2] },
      },
      {
        id: "call-3",
        text: "now → ok",
        category: "call",
        createdAt: "2026-08-17T09:06:00Z",
        rank: 3,
        data: { type: "call", tool: "now", ok: true, summary: "" },
      },
      {
        id: "call-2",
        text: "run_tests → ok: all green",
        category: "call",
        createdAt: "2026-08-17T09:05:00Z",
        rank: 4,
        data: { type: "call", tool: "run_tests", ok: true, summary: "all green" },
      },
      {
        id: "call-1",
        text: "run_tests → failed: 3 failures",
        category: "call",
        createdAt: "2026-08-17T09:00:00Z",
        rank: 5,
        data: { type: "call", tool: "run_tests", ok: false, summary: "3 failures" },
      },
    ]);
  });

  it("recent calls are bounded; ids keep counting", () => {
    const state = new ToolState(tools, { maxCalls: 2 });
    for (let i = 1; i <= 4; i++) {
      const c = state.recordCall({
        tool: "now",
        ok: true,
        summary: `#${i}`,
        at: "2026-08-17T09:00:00Z",
      });
      expect(c.id).toBe(`call-${i}`);
    }
    expect(state.recentCalls().map((c) => c.id)).toEqual(["call-3", "call-4"]);
    state.clearCalls();
    expect(state.recentCalls()).toEqual([]);
    expect(
      state.recordCall({ tool: "now", ok: true, summary: "", at: "2026-08-17T09:00:00Z" }).id,
    ).toBe("call-5");
    expect(
      new ToolState([], { maxCalls: 0 }).recordCall({
        tool: "x",
        ok: true,
        summary: "",
        at: "2026-08-17",
      }).id,
    ).toBe("call-1");
  });

  it("copies are returned, never the internal state", () => {
    const state = new ToolState(tools);
    state.tools()[0]?.requiredArgs.push("mutated");
    expect(state.tools()[0]?.requiredArgs).toEqual(["path"]);
    expect(state.maxCalls).toBe(20);
  });

  it("tool items and call data are frozen and shared by fetches; call ranks move", async () => {
    const at = (m: number) => `2026-08-17T09:0${m}:00Z`;
    const state = new ToolState(tools, { maxCalls: 3 });
    const s = toolStateSource(state);
    state.recordCall({ tool: "run_tests", ok: true, summary: "green", at: at(1) });
    const first = await fetchKind(s, "tool_state");
    const toolData = first[0]?.data as { requiredArgs: string[] };
    expect(() => toolData.requiredArgs.push("x")).toThrow(TypeError);
    expect(state.tools()[0]?.requiredArgs).toEqual(["path"]);
    state.recordCall({ tool: "now", ok: false, summary: "clock skew", at: at(2) });
    const second = await fetchKind(s, "tool_state");
    expect(second[0]).toBe(first[0]); // a tool's item is built once
    const oldCall = (items: readonly SourceItem[]) => items.find((i) => i.id === "call-1");
    expect(oldCall(second)?.data).toBe(oldCall(first)?.data);
    expect(Object.isFrozen(oldCall(first)?.data)).toBe(true);
    expect([oldCall(first)?.rank, oldCall(second)?.rank]).toEqual([3, 4]);
    expect(second.map((i) => [i.id, i.rank])).toEqual([
      ["tool:run_tests", 0],
      ["tool:http_get", 1],
      ["tool:now", 2],
      ["call-2", 3],
      ["call-1", 4],
    ]);
  });

  it("validates tools and calls with a path", () => {
    invalid(() => new ToolState([tools[0]!, { ...tools[0]! }]), "tools[1].name");
    invalid(
      () => new ToolState([{ ...tools[0]!, requiredArgs: [""] }]),
      "tools[0].requiredArgs[0]",
    );
    invalid(() => new ToolState(tools, { maxCalls: -1 }), "maxCalls");
    const state = new ToolState(tools);
    invalid(() => state.recordCall({ tool: "now", ok: true, summary: "", at: "soon" }), "call.at");
    invalid(
      () => state.recordCall({ tool: " ", ok: true, summary: "", at: "2026-08-17" }),
      "call.tool",
    );
  });
});

describe("profileSource", () => {
  it("serves profile items `key: value` with category, score and updatedAt", async () => {
    const s = profileSource([
      { key: "city", value: "Beijing", category: "identity", updatedAt: "2026-08-01T00:00:00Z" },
      { key: "language", value: "zh", category: "preference", score: 0.9 },
      { key: "editor", value: "vim" },
    ]);
    expect(s.id).toBe("profile");
    expect(supported(s)).toEqual(["profile"]);
    expect(await fetchKind(s, "profile")).toEqual([
      {
        id: "city",
        text: "city: Beijing",
        category: "identity",
        createdAt: "2026-08-01T00:00:00Z",
        data: { type: "profile", key: "city", value: "Beijing" },
      },
      {
        id: "language",
        text: "language: zh",
        category: "preference",
        score: 0.9,
        data: { type: "profile", key: "language", value: "zh" },
      },
      { id: "editor", text: "editor: vim", data: { type: "profile", key: "editor", value: "vim" } },
    ]);
  });

  it("rejects duplicate keys and bad fields with a path", () => {
    invalid(
      () =>
        profileSource([
          { key: "city", value: "Beijing" },
          { key: "city", value: "Shanghai" },
        ]),
      "entries[1].key",
    );
    invalid(() => profileSource([{ key: "city", value: " " }]), "entries[0].value");
    invalid(
      () => profileSource([{ key: "city", value: "x", updatedAt: "nope" }]),
      "entries[0].updatedAt",
    );
  });
});

describe("recallSource", () => {
  const prov = (capturedAt: string) => ({
    sourceId: "chat-42",
    sourceType: "chat",
    title: "Chat",
    capturedAt,
  });
  const candidates: CandidateInput[] = [
    {
      memoryId: "m1",
      text: "asked about the weather API last time",
      userScope: "u1",
      score: 0.82,
      sourceRank: 1,
      provenance: prov("2026-08-16T09:00:00Z"),
      conflictKey: "interest:api",
      authority: "workspace_override",
    },
    {
      memoryId: "m2",
      text: "someone else's memory",
      userScope: "u2",
      score: 0.99,
      sourceRank: 2,
      provenance: prov("2026-08-15T09:00:00+08:00"),
    },
  ];

  it("maps spec 02 candidates to items with memory fields", async () => {
    const s = recallSource(() => candidates, {
      importance: { m1: 0.7 },
      categories: { m1: "episodic", m2: "fact" },
      tags: { m2: ["weather"] },
    });
    expect(s.id).toBe("recall");
    expect(supported(s)).toEqual(["recall_memory"]);
    expect(await fetchKind(s, "recall_memory")).toEqual([
      {
        id: "m1",
        text: "asked about the weather API last time",
        score: 0.82,
        importance: 0.7,
        category: "episodic",
        createdAt: "2026-08-16T09:00:00Z",
        sourceRef: "chat-42",
        memory: {
          userScope: "u1",
          sourceRank: 1,
          provenance: prov("2026-08-16T09:00:00Z"),
          conflictKey: "interest:api",
          authority: "workspace_override",
        },
      },
      {
        id: "m2",
        text: "someone else's memory",
        score: 0.99,
        category: "fact",
        tags: ["weather"],
        createdAt: "2026-08-15T09:00:00+08:00",
        sourceRef: "chat-42",
        memory: { userScope: "u2", sourceRank: 2, provenance: prov("2026-08-15T09:00:00+08:00") },
      },
    ]);
  });

  it("does not filter by scope (the assembler's gates do) and reads candidates per fetch", async () => {
    let list: CandidateInput[] = [];
    const s = recallSource(() => list, {}, "graph");
    expect(s.id).toBe("graph");
    expect(await fetchKind(s, "recall_memory")).toEqual([]);
    list = candidates;
    const items = await fetchKind(s, "recall_memory");
    expect(items.map((i) => i.memory?.userScope)).toEqual(["u1", "u2"]);
    expect(items[0]).not.toHaveProperty("importance");
  });

  it("keeps an explicit null conflict key; copies provenance; ignores prototype keys", async () => {
    const c = { ...candidates[1]!, memoryId: "constructor", conflictKey: null };
    const items = await fetchKind(
      recallSource(() => [c]),
      "recall_memory",
    );
    expect(items[0]?.memory?.conflictKey).toBeNull();
    expect(items[0]).not.toHaveProperty("importance");
    expect(items[0]?.memory?.provenance).not.toBe(c.provenance);
  });
});

describe("staticSource", () => {
  it("serves its kinds with copies of fixed items", async () => {
    const items = [{ id: "k1", text: "Deploys run on Fridays", category: "ops" }];
    const s = staticSource("kb", ["kb", "profile"], items);
    expect(supported(s)).toEqual(["profile", "kb"]);
    const got = await fetchKind(s, "kb");
    expect(got).toEqual(items);
    expect(got[0]).not.toBe(items[0]);
    expect(await fetchKind(s, "profile")).toEqual(items);
    expect(await fetchKind(s, "constraints")).toEqual([]);
  });

  it("calls a function with the slot and query", async () => {
    const s = staticSource("echo", ["kb"], (slot, query) => [
      { id: "q", text: `${slot.kind}/${slot.title ?? "-"}: ${query.text} @ ${query.now}` },
    ]);
    expect(await fetchKind(s, "kb", { title: "KB" })).toEqual([
      { id: "q", text: "kb/KB: what next? @ 2026-08-17T10:00:00Z" },
    ]);
  });

  it("rejects a blank id", () => {
    invalid(() => staticSource("", ["kb"], []), "id");
  });
});

describe("version tokens of the package's sources", () => {
  // Equal tokens promise equal items: the assembler's layer memo reuses a slot on them.
  const version = async (s: ContextSource, kind: string) => {
    const items = await s.fetch({ kind }, QUERY, new AbortController().signal);
    return { items, version: versionOf(items) };
  };

  it("stay while the data stays and change with every change", async () => {
    const buffer = new TaskMemoryBuffer(2);
    const tm = taskMemorySource(buffer);
    const a = await version(tm, "task_memory");
    const b = await version(tm, "task_memory");
    expect(a.version).not.toBeNull();
    expect(b.version).toBe(a.version);
    expect(b.items).not.toBe(a.items); // still fresh copies
    buffer.add({ text: "x", createdAt: "2026-08-17T09:00:00Z" });
    const c = await version(tm, "task_memory");
    expect(c.version).not.toBe(b.version);
    buffer.clear();
    expect((await version(tm, "task_memory")).version).not.toBe(c.version);

    const tools = new ToolState([{ name: "t", description: "d", requiredArgs: [] }]);
    const ts = toolStateSource(tools);
    const t1 = await version(ts, "tool_state");
    expect((await version(ts, "tool_state")).version).toBe(t1.version);
    tools.recordCall({ tool: "t", ok: true, summary: "s", at: "2026-08-17T09:00:00Z" });
    const t2 = await version(ts, "tool_state");
    expect(t2.version).not.toBe(t1.version);
    tools.clearCalls();
    expect((await version(ts, "tool_state")).version).not.toBe(t2.version);
  });

  it("follow the planner's state by content, and are fixed for fixed data", async () => {
    let state: TaskState | null = { taskId: "T", status: "s", phase: "p", done: 0, total: 1 };
    const planner = plannerSource(() => (state === null ? null : { ...state }));
    const p1 = await version(planner, "planner");
    expect((await version(planner, "planner")).version).toBe(p1.version);
    state = { taskId: "T", status: "s", phase: "p", done: 1, total: 1 };
    const p2 = await version(planner, "planner");
    expect(p2.version).not.toBe(p1.version);
    state = null;
    expect((await version(planner, "planner")).version).not.toBe(p2.version);

    for (const [s, kind] of [
      [constraintsSource({ rules: [{ id: "a", level: "forbid", text: "x" }] }), "constraints"],
      [profileSource([{ key: "k", value: "v" }]), "profile"],
      [staticSource("kb", ["kb"], [{ id: "k1", text: "t" }]), "kb"],
    ] as const) {
      const v = (await version(s, kind)).version;
      expect(v).not.toBeNull();
      expect((await version(s, kind)).version).toBe(v);
    }
    // A caller's candidates have no token: the assembler compares what it validated.
    expect(
      (
        await version(
          recallSource(() => []),
          "recall_memory",
        )
      ).version,
    ).toBeNull();
  });
});
