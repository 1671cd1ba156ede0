/**
 * Built-in sources that know their version token before fetching (constraints, task
 * memory, tool state, profile, fixed static items) are not fetched again while the token
 * is unchanged: the assembler reuses their items. Assemblies are byte-identical to ones
 * over the same sources seen through plain wrappers (always fetched), whatever changes in
 * between; reused items are frozen; sources that read caller functions (planner, recall)
 * are fetched every time. A caller's source whose items are unchanged gives back the same
 * validated items (and so their kept rank order): its assemblies equal those over a new
 * source object each time, whatever the caller changes in place.
 */
import fc from "fast-check";
import { describe, expect, it, vi } from "vitest";
import {
  type AssembleInput,
  assemble,
  createSchemaRegistry,
  type SchemaRegistry,
} from "../../src/assemble/index.js";
import type { SlotRenderer } from "../../src/render/index.js";
import { getRenderer } from "../../src/render/index.js";
import {
  type ContextSource,
  constraintsSource,
  plannerSource,
  profileSource,
  recallSource,
  type SourceItem,
  staticSource,
  TaskMemoryBuffer,
  ToolState,
  taskMemorySource,
  toolStateSource,
} from "../../src/sources/index.js";
import { comparable, iso, WORDS } from "./helpers.js";

const NOW_MS = Date.parse("2026-11-30T09:00:00Z");

function world() {
  const buffer = new TaskMemoryBuffer(5);
  buffer.add({ text: "tests fail in db/migrate", createdAt: iso(NOW_MS - 3.6e6) });
  const tools = new ToolState([{ name: "grep", description: "search", requiredArgs: ["q"] }], {
    maxCalls: 3,
  });
  let task = { taskId: "T1", status: "in_progress", phase: "plan", done: 0, total: 3 };
  const sources = {
    constraints: constraintsSource({ rules: [{ id: "r", level: "forbid", text: "no rm -rf" }] }),
    planner: plannerSource(() => task),
    profile: profileSource([
      { key: "city", value: "Beijing", category: "identity" },
      { key: "lang", value: "zh", category: "preference", score: 0.9 },
    ]),
    recall: recallSource(() =>
      WORDS.slice(0, 3).map((w, i) => ({
        memoryId: `m${i}`,
        text: `${w} note`,
        userScope: "u1",
        score: 0.9 - i / 10,
        sourceRank: i + 1,
        provenance: {
          sourceId: `s${i}`,
          sourceType: "note",
          title: "t",
          capturedAt: iso(NOW_MS - i * 3.6e6),
        },
      })),
    ),
    kb: staticSource(
      "kb",
      ["kb"],
      [
        { id: "k1", text: "deploys run on Fridays", score: 0.9 },
        { id: "k2", text: "staging uses the blue cluster", score: 0.5, tags: ["ops"] },
      ],
    ),
    taskMemory: taskMemorySource(buffer),
    toolState: toolStateSource(tools),
  };
  const ops = {
    observe: (n: number) =>
      buffer.add({
        text: `${WORDS[n % WORDS.length]} seen ${n}`,
        createdAt: iso(NOW_MS - n * 6e5),
      }),
    clear: () => buffer.clear(),
    call: (n: number) =>
      tools.recordCall({ tool: "grep", ok: n % 2 === 0, summary: `hit ${n}`, at: iso(NOW_MS - n) }),
    clearCalls: () => tools.clearCalls(),
    task: (n: number) => {
      task = { ...task, done: n % 4 };
    },
  };
  return { sources, ops };
}

const schemas = (): SchemaRegistry => {
  const registry = createSchemaRegistry();
  const { schema } = registry.resolve("react");
  return registry.register({
    ...schema,
    slots: [...schema.slots, { kind: "kb", title: "KB", filter: { charBudget: 80, topK: 2 } }],
    budgetChars: 1600,
  });
};

/** The same source behind a plain object: the assembler cannot know its version upfront. */
const wrap = (s: ContextSource): ContextSource => ({
  id: s.id,
  supports: (k) => s.supports(k),
  fetch: (slot, query, signal) => s.fetch(slot, query, signal),
});

function input(
  sources: readonly ContextSource[],
  registry: SchemaRegistry,
  at: { hoursLater: number; scope: string } = { hoursLater: 0, scope: "u1" },
): AssembleInput {
  return {
    mode: "react",
    query: { text: "why does the deploy fail", userScope: at.scope },
    now: iso(NOW_MS + at.hoursLater * 3.6e6),
    sources,
    schemas: registry,
    tokenizer: "o200k_base",
  };
}

type Op = "observe" | "clear" | "call" | "clearCalls" | "task" | "none";

describe("fetches skipped for unchanged built-in sources", () => {
  it("changes no byte of any assembly, whatever changes between them (property)", async () => {
    // Each step also moves the clock or changes the scope: the rankings the assembler
    // keeps for unchanged items are shared by assemblies whose decisions differ.
    const op = fc.record({
      op: fc.constantFrom<Op>("observe", "clear", "call", "clearCalls", "task", "none"),
      n: fc.nat({ max: 40 }),
      hoursLater: fc.constantFrom(0, 30),
      scope: fc.constantFrom("u1", "u2"),
    });
    await fc.assert(
      fc.asyncProperty(fc.array(op, { minLength: 1, maxLength: 10 }), async (steps) => {
        const w = world();
        const registry = schemas();
        const direct = Object.values(w.sources);
        const wrapped = direct.map(wrap);
        for (const st of steps) {
          if (st.op !== "none") w.ops[st.op](st.n);
          const reused = await assemble(input(direct, registry, st));
          const fetched = await assemble(input(wrapped, registry, st));
          expect(comparable(reused)).toBe(comparable(fetched));
        }
      }),
      { numRuns: 60 },
    );
  });

  it("a caller's source gives the same assemblies as a new source object each time (property)", async () => {
    type Op = { op: "text" | "score" | "swap" | "add" | "drop" | "none"; n: number };
    const op: fc.Arbitrary<Op> = fc.record({
      op: fc.constantFrom<Op["op"]>("text", "score", "swap", "add", "drop", "none"),
      n: fc.nat({ max: 20 }),
    });
    await fc.assert(
      fc.asyncProperty(fc.array(op, { minLength: 1, maxLength: 10 }), async (steps) => {
        const registry = schemas();
        // Plain objects the caller changes in place between fetches.
        const items: Array<{ id: string; text: string; score: number }> = WORDS.slice(0, 5).map(
          (w, i) => ({ id: `k${i}`, text: `${w} doc`, score: 1 - i / 8 }),
        );
        let next = 5;
        const fetch = () => items;
        const kept: ContextSource = { id: "kb", supports: (k) => k === "kb", fetch };
        // Every other slot served by the built-in sources of the world; kb by the caller.
        const others = Object.values(world().sources).filter((x) => x.id !== "kb");
        for (const st of steps) {
          const at = items.length === 0 ? -1 : st.n % items.length;
          if (st.op === "text" && at >= 0) (items[at] as { text: string }).text += " x";
          else if (st.op === "score" && at >= 0) (items[at] as { score: number }).score = st.n / 20;
          else if (st.op === "swap" && items.length > 1) items.push(items.shift() as never);
          else if (st.op === "add")
            items.push({ id: `k${next++}`, text: `new ${st.n}`, score: 0.5 });
          else if (st.op === "drop" && at >= 0) items.splice(at, 1);
          const fresh: ContextSource = { id: "kb", supports: (k) => k === "kb", fetch };
          const a = await assemble(input([...others, kept], registry));
          const b = await assemble(input([...others, fresh], registry));
          expect(comparable(a)).toBe(comparable(b));
        }
      }),
      { numRuns: 60 },
    );
  });

  it("fetches a source again only when its data changed", async () => {
    const w = world();
    const registry = schemas();
    const spies = Object.fromEntries(
      Object.entries(w.sources).map(([k, s]) => [k, vi.spyOn(s, "fetch")]),
    );
    const sources = Object.values(w.sources);
    const calls = () =>
      Object.fromEntries(Object.entries(spies).map(([k, s]) => [k, s.mock.calls.length]));
    for (let i = 0; i < 4; i++) await assemble(input(sources, registry));
    // Items are kept from the second fetch under one token; caller functions: every time.
    expect(calls()).toEqual({
      constraints: 2,
      planner: 4,
      profile: 2,
      recall: 4,
      kb: 2,
      taskMemory: 2,
      toolState: 2,
    });
    w.ops.observe(1);
    await assemble(input(sources, registry));
    expect(calls()).toMatchObject({ taskMemory: 3, toolState: 2, profile: 2 });
    // Data that changes before every assembly is fetched every time; the buffer, unchanged
    // since, is kept from its second fetch.
    w.ops.call(2);
    await assemble(input(sources, registry));
    w.ops.call(3);
    await assemble(input(sources, registry));
    expect(calls()).toMatchObject({ taskMemory: 4, toolState: 4, profile: 2 });
    // Unchanged again: kept after one more fetch.
    await assemble(input(sources, registry));
    await assemble(input(sources, registry));
    expect(calls()).toMatchObject({ taskMemory: 4, toolState: 5 });
  });

  it("hands renderers frozen items, so none can alter a later assembly", async () => {
    const w = world();
    const registry = schemas();
    const en = getRenderer("en");
    const seen: SourceItem[] = [];
    const spying: SlotRenderer = {
      name: "spying",
      renderSlot: (slot, items, ctx) => {
        seen.push(...items);
        return en.renderSlot(slot, items, ctx);
      },
    };
    const sources = Object.values(w.sources);
    const first = await assemble({ ...input(sources, registry), renderer: spying });
    seen.length = 0;
    // The second fetch under one token is kept: frozen before the renderer sees it.
    const second = await assemble({ ...input(sources, registry), renderer: spying });
    const third = await assemble({ ...input(sources, registry), renderer: spying });
    expect(second.prompt).toBe(first.prompt);
    expect(third.prompt).toBe(first.prompt);
    const profile = seen.filter((i) => i.id === "city" || i.id === "lang");
    expect(profile.length).toBeGreaterThan(0);
    for (const item of profile) {
      expect(Object.isFrozen(item)).toBe(true);
      expect(Object.isFrozen(item.data)).toBe(true);
    }
    const kb = seen.find((i) => i.id === "k2");
    expect(kb && Object.isFrozen(kb.tags)).toBe(true);
  });
});
