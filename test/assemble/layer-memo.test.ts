/**
 * The layer memo: assemblies that share one give byte-identical results to assemblies
 * without it, whatever changes between them (buffers, tool calls, recall candidates, the
 * clock, the query, the scope, the filters); unchanged slots are reused (their decision
 * lists are the same frozen arrays), changed ones are repacked.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  type AssembleInput,
  assemble,
  createLayerMemo,
  createSchemaRegistry,
  createSession,
} from "../../src/assemble/index.js";
import { InvalidInputError } from "../../src/errors/index.js";
import type { CandidateInput } from "../../src/memory/index.js";
import {
  type ContextSource,
  constraintsSource,
  plannerSource,
  profileSource,
  recallSource,
  staticSource,
  TaskMemoryBuffer,
  ToolState,
  taskMemorySource,
  toolStateSource,
} from "../../src/sources/index.js";
import { getTokenCounter } from "../../src/tokens/index.js";
import { comparable, iso, WORDS } from "./helpers.js";

const NOW_MS = Date.parse("2026-11-30T09:00:00Z");

function candidate(i: number, text: string, score: number, scope = "u1"): CandidateInput {
  return {
    memoryId: `m${i}`,
    text,
    userScope: scope,
    score,
    sourceRank: i + 1,
    provenance: {
      sourceId: `s${i}`,
      sourceType: "note",
      title: `note ${i}`,
      capturedAt: iso(NOW_MS - i * 3.6e6),
    },
  };
}

/** Sources over mutable state, and operations that change that state. */
function world() {
  const buffer = new TaskMemoryBuffer(6);
  // Ages near the react filter's 24 h: any clock step moves one past it.
  for (const hours of [1, 20, 23.5]) {
    buffer.add({ text: `seen ${hours}h ago`, createdAt: iso(NOW_MS - hours * 3.6e6) });
  }
  const tools = new ToolState([{ name: "grep", description: "search", requiredArgs: ["q"] }], {
    maxCalls: 4,
  });
  let candidates: CandidateInput[] = WORDS.map((w, i) =>
    candidate(i, `${w} note ${i}`, 0.3 + i / 10),
  );
  let task = { taskId: "T1", status: "in_progress", phase: "plan", done: 0, total: 3 };
  const kb: ContextSource = {
    // A caller's source: its items are validated by the assembler on every fetch.
    id: "kb",
    supports: (k) => k === "kb",
    fetch: () =>
      WORDS.slice(0, 4).map((w, i) => ({ id: `k${i}`, text: `${w} doc`, score: 1 - i / 8 })),
  };
  const sources: ContextSource[] = [
    constraintsSource({ rules: [{ id: "r", level: "forbid", text: "no rm -rf" }] }),
    plannerSource(() => task),
    profileSource([
      { key: "city", value: "Beijing", category: "identity" },
      { key: "lang", value: "zh", category: "preference", score: 0.9 },
    ]),
    recallSource(() => candidates),
    kb,
    staticSource("notes", ["kb"], [{ id: "n1", text: "deploys run on Fridays" }]),
    taskMemorySource(buffer),
    toolStateSource(tools),
  ];
  return {
    sources,
    ops: {
      observe: (n: number) =>
        buffer.add({
          text: `${WORDS[n % WORDS.length]} seen ${n}`,
          createdAt: iso(NOW_MS - n * 6e5),
        }),
      call: (n: number) =>
        tools.recordCall({
          tool: "grep",
          ok: n % 2 === 0,
          summary: `hit ${n}`,
          at: iso(NOW_MS - n * 1e3),
        }),
      recallSame: () => {
        candidates = candidates.map((c) => ({ ...c, provenance: { ...c.provenance } }));
      },
      recallChange: (n: number) => {
        candidates = [...candidates.slice(1), candidate(100 + n, `${WORDS[n % 8]} new ${n}`, 0.8)];
      },
      task: (n: number) => {
        task = { ...task, done: n % 4, phase: n % 2 === 0 ? "plan" : "implement" };
      },
      clearCalls: () => tools.clearCalls(),
    },
  };
}

const schemas = () => {
  const registry = createSchemaRegistry();
  const { schema } = registry.resolve("react");
  return registry.register({
    ...schema,
    slots: [...schema.slots, { kind: "kb", title: "KB", filter: { charBudget: 60, topK: 2 } }],
    budgetChars: 1600,
  });
};

type Step =
  | { op: "observe" | "call" | "recallChange" | "task"; n: number }
  | { op: "recallSame" | "clearCalls" | "none" }
  | { op: "clock"; n: number }
  | { op: "query"; n: number }
  | { op: "scope"; n: number }
  | { op: "segment" | "segmentRef"; n: number };

const step: fc.Arbitrary<Step> = fc.oneof(
  fc.record({
    op: fc.constantFrom("observe", "call", "recallChange", "task") as fc.Arbitrary<
      "observe" | "call" | "recallChange" | "task"
    >,
    n: fc.nat({ max: 50 }),
  }),
  fc.record({
    op: fc.constantFrom("recallSame", "clearCalls", "none") as fc.Arbitrary<
      "recallSame" | "clearCalls" | "none"
    >,
  }),
  fc.record({ op: fc.constant("clock" as const), n: fc.nat({ max: 30 }) }),
  fc.record({ op: fc.constant("query" as const), n: fc.nat({ max: 7 }) }),
  fc.record({ op: fc.constant("scope" as const), n: fc.nat({ max: 1 }) }),
  fc.record({
    op: fc.constantFrom("segment", "segmentRef") as fc.Arbitrary<"segment" | "segmentRef">,
    n: fc.nat({ max: 3 }),
  }),
);

describe("layer memo", () => {
  it("changes no byte of any assembly, whatever changes between them (property)", async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(step, { minLength: 1, maxLength: 8 }), async (steps) => {
        const w = world();
        const counter = getTokenCounter("o200k_base");
        const memo = createLayerMemo();
        const s = schemas();
        let now = NOW_MS;
        let q = "why does the deploy fail";
        let scope = "u1";
        // The same segment objects every time, changed in place (the manifest memo must see it).
        const rules = { name: "rules", content: "Be brief.", sourceRefs: ["rules.md"] };
        const segments = [rules];
        const input = (): AssembleInput => ({
          mode: "react",
          query: { text: q, userScope: scope },
          now: iso(now),
          sources: w.sources,
          segments,
          schemas: s,
          tokenCounter: counter,
        });
        for (const st of [{ op: "none" } as Step, ...steps]) {
          if (st.op === "clock") now += st.n * 3.6e6;
          else if (st.op === "segment") rules.content = `Be brief ${st.n}.`;
          else if (st.op === "segmentRef") rules.sourceRefs[0] = `rules.md@${st.n}`;
          else if (st.op === "query") q = `${WORDS[st.n]} again`;
          else if (st.op === "scope") scope = st.n === 0 ? "u1" : "u2";
          else if (st.op !== "none") w.ops[st.op]((st as { n?: number }).n ?? 0);
          const withMemo = await assemble({ ...input(), layerMemo: memo });
          const without = await assemble({
            ...input(),
            tokenCounter: getTokenCounter("o200k_base"),
          });
          expect(comparable(withMemo)).toBe(comparable(without));
        }
      }),
      { numRuns: 60 },
    );
  });

  it("reuses the unchanged slots and repacks the changed ones", async () => {
    const w = world();
    const memo = createLayerMemo();
    const input: AssembleInput = {
      mode: "react",
      query: { text: "deploy", userScope: "u1" },
      now: iso(NOW_MS),
      sources: w.sources,
      schemas: schemas(),
      tokenizer: "o200k_base",
      tokenCounter: getTokenCounter("o200k_base"),
      layerMemo: memo,
    };
    w.ops.observe(1);
    w.ops.call(1);
    const first = await assemble(input);
    w.ops.observe(2); // task memory changes; nothing else does
    w.ops.recallSame(); // equal candidates in new objects: still the same items
    const second = await assemble(input);
    const items = (a: typeof first, id: string) =>
      a.manifest.layers.find((l) => l.id === id)?.items;
    for (const id of ["constraints", "profile", "tool_state", "recall_memory", "kb"]) {
      expect(items(second, id), id).toBe(items(first, id));
    }
    expect(items(second, "task_memory")).not.toBe(items(first, "task_memory"));
    // A layer's whole manifest entry made from the same inputs is the same frozen object.
    const entry = (a: typeof first, id: string) => a.manifest.layers.find((l) => l.id === id);
    const third = await assemble(input);
    for (const id of ["constraints", "profile", "kb", "task_memory"]) {
      expect(entry(third, id), id).toBe(entry(second, id));
      expect(Object.isFrozen(entry(third, id)?.sources), id).toBe(true);
    }
    expect(entry(second, "task_memory")).not.toBe(entry(first, "task_memory"));
    // Shared lists are frozen: one assembly's manifest cannot alter another's.
    const shared = items(second, "profile") as unknown as object[];
    expect(Object.isFrozen(shared)).toBe(true);
    expect(Object.isFrozen(shared[0])).toBe(true);
  });

  it("a session repacks only what a turn changed", async () => {
    const buffer = new TaskMemoryBuffer(4);
    const session = createSession({
      state: { userScope: "u1", mode: "react", workingMode: "craft", expert: null, identity: "" },
      segments: [],
      sources: [
        constraintsSource({ rules: [{ id: "r", level: "forbid", text: "no rm -rf" }] }),
        plannerSource(() => ({
          taskId: "T",
          status: "in_progress",
          phase: "plan",
          done: 0,
          total: 1,
        })),
        taskMemorySource(buffer),
        toolStateSource(new ToolState([], { maxCalls: 2 })),
      ],
      assemble: { tokenizer: "o200k_base" },
    });
    const query = { text: "next", now: iso(NOW_MS) };
    const t1 = await session.beginTurn(query);
    buffer.add({ text: "tests pass", createdAt: iso(NOW_MS - 1000) });
    const t2 = await session.beginTurn(query);
    const layer = (a: typeof t1, id: string) => a.manifest.layers.find((l) => l.id === id)?.items;
    expect(layer(t2, "constraints")).toBe(layer(t1, "constraints"));
    expect(layer(t2, "task_memory")).not.toBe(layer(t1, "task_memory"));
    expect(t2.prompt).toContain("tests pass");
    // Nothing changed since: every slot and the global plan come from the memo.
    const t3 = await session.beginTurn(query);
    expect(t3.segmentPlan).toBe(t2.segmentPlan);
    expect(Object.isFrozen(t3.segmentPlan.decisions)).toBe(true);
    expect(t3.prompt).toBe(t2.prompt);
  });

  it("rejects a layerMemo that createLayerMemo did not make", async () => {
    const w = world();
    await expect(
      assemble({
        mode: "react",
        query: { text: "x", userScope: "u1" },
        now: iso(NOW_MS),
        sources: w.sources,
        layerMemo: {} as ReturnType<typeof createLayerMemo>,
      }),
    ).rejects.toMatchObject({ constructor: InvalidInputError, path: "layerMemo" });
  });
});
