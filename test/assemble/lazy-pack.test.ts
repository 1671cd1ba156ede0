/**
 * The lazy slot packer (filter and rank first, render and count only what the packer
 * reaches) against the naive reference it replaced (test/assemble/naive-pack.ts): same
 * item decisions, same packed slot, same memory plan — except that a recall decision the
 * lazy packer never counted has no `candidateTokens`, and only the admitted hits are
 * counted. Any slot shape, filter, renderer (built-in, framed, or a caller's without a
 * frame), item mix, pinned items and failures alike.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import type { SlotFill } from "../../src/assemble/fill.js";
import { type FilledLayer, type LayerContext, toLayer } from "../../src/assemble/layers.js";
import { resolveSlot } from "../../src/assemble/schema.js";
import type { MemoryDecision } from "../../src/memory/index.js";
import { getRenderer, type SlotRenderer } from "../../src/render/index.js";
import { type SlotSpec, type SourceItem, SourceItemSchema } from "../../src/sources/index.js";
import { deepFreeze } from "../../src/text/index.js";
import { getTokenCounter } from "../../src/tokens/index.js";
import { hoursAgo, NOW } from "./helpers.js";
import { naiveToLayer } from "./naive-pack.js";

const word = fc.constantFrom(
  "deploy",
  "tests",
  "fail",
  "Beijing",
  "天气",
  "API",
  "rm -rf",
  "<tag>",
  "a & b",
  "🚀",
  '"q"',
  "it's",
);
const text = fc.array(word, { minLength: 1, maxLength: 12 }).map((ws) => ws.join(" "));
const maybe = <T>(a: fc.Arbitrary<T>) => fc.option(a, { nil: undefined });
const unit: fc.Arbitrary<number> = fc.constantFrom(0, 0.2, 0.35, 0.4, 0.5, 0.75, 0.9, 1);

const memoryFields = fc.record({
  userScope: fc.constantFrom("u1", "u1", "u1", "u2"),
  sourceRank: fc.integer({ min: 1, max: 4 }),
  age: fc.constantFrom(0, 2, 30, 500),
  conflictKey: maybe(fc.constantFrom("city", "lang", "City ")),
  authority: maybe(
    fc.constantFrom("current_turn", "workspace_override", "user_default") as fc.Arbitrary<
      "current_turn" | "workspace_override" | "user_default"
    >,
  ),
});

const genItem = fc.record({
  text,
  category: maybe(fc.constantFrom("obs", "call", "fact", "episodic")),
  tags: maybe(fc.subarray(["db", "ci", "ui"])),
  score: maybe(unit),
  importance: maybe(unit),
  age: maybe(fc.constantFrom(0, 1, 23, 24, 25, 100)),
  pinned: fc.constantFrom(false, false, false, false, false, true),
  rank: maybe(fc.nat({ max: 3 })),
  memory: fc.option(memoryFields, { nil: undefined, freq: 2 }),
  source: fc.constantFrom("a", "b"),
  sameTextAs: maybe(fc.nat({ max: 5 })),
});
type GenItem = typeof genItem extends fc.Arbitrary<infer T> ? T : never;
const DEFAULT_MEMORY: NonNullable<GenItem["memory"]> = {
  userScope: "u1",
  sourceRank: 1,
  age: 2,
  conflictKey: undefined,
  authority: undefined,
};

const filter = fc.record(
  {
    categories: fc.subarray(["obs", "call", "fact", "episodic"]),
    requireTags: fc.subarray(["db", "ci"], { maxLength: 1 }),
    minScore: unit,
    topK: fc.nat({ max: 4 }),
    maxAgeHours: fc.constantFrom(0, 24),
    charBudget: fc.nat({ max: 400 }),
    tokenBudget: fc.nat({ max: 90 }),
  },
  { requiredKeys: [] },
);

const slotSpec = fc.record({
  kind: fc.constantFrom("recall_memory", "kb", "notes", "facts"),
  filter,
  itemStyle: maybe(fc.constantFrom("list", "block") as fc.Arbitrary<"list" | "block">),
  title: maybe(fc.constantFrom("Notes", "备注")),
  required: fc.boolean(),
});

/** A caller's renderer with no frame: priced by rendering the whole slot, as before. */
const plainRenderer: SlotRenderer = {
  name: "plain",
  renderSlot: (slot, items) =>
    items.length === 0
      ? ""
      : `# ${slot.kind}\n${items.map((i) => `* ${i.id}: ${i.text}`).join("\n")}`,
};
const renderers = [getRenderer("en"), getRenderer("zh-CN"), getRenderer("tagged"), plainRenderer];

/**
 * The items as the fill hands them over (parsed by the schema). With `allMemory`, every
 * item is a docs/memory-selection.md candidate (memory fields and a score), so the slot is served as memory.
 */
function toItems(
  gen: readonly GenItem[],
  allMemory: boolean,
): { item: SourceItem; sourceId: string }[] {
  return gen.map((g0, i) => {
    const g: GenItem = allMemory
      ? {
          ...g0,
          score: g0.score ?? 0.5,
          memory: g0.memory ?? DEFAULT_MEMORY,
        }
      : g0;
    const raw: SourceItem = {
      id: `i${i}`,
      text:
        g.sameTextAs !== undefined && g.sameTextAs < i
          ? (gen[g.sameTextAs] as GenItem).text
          : g.text,
    };
    if (g.category !== undefined) raw.category = g.category;
    if (g.tags !== undefined) raw.tags = g.tags;
    if (g.score !== undefined) raw.score = g.score;
    if (g.importance !== undefined) raw.importance = g.importance;
    if (g.age !== undefined) raw.createdAt = hoursAgo(g.age);
    if (g.pinned) raw.pinned = true;
    if (g.rank !== undefined) raw.rank = g.rank;
    if (g.memory !== undefined) {
      const m = g.memory;
      raw.memory = {
        userScope: m.userScope,
        sourceRank: m.sourceRank,
        provenance: { sourceId: "s", sourceType: "chat", title: "t", capturedAt: hoursAgo(m.age) },
      };
      if (m.conflictKey !== undefined) raw.memory.conflictKey = m.conflictKey;
      if (m.authority !== undefined) raw.memory.authority = m.authority;
    }
    // What the fill hands the packer: items parsed by the schema.
    return { item: SourceItemSchema.parse(raw) as SourceItem, sourceId: g.source };
  });
}

/** Packing in English for scope u1 at NOW, o200k_base. */
function enContext(): LayerContext {
  return {
    renderer: getRenderer("en"),
    scope: "u1",
    nowMs: Date.parse(NOW),
    counter: getTokenCounter("o200k_base"),
  };
}

type Outcome = { ok: true; layer: FilledLayer } | { ok: false; error: string };

function attempt(f: () => FilledLayer): Outcome {
  try {
    return { ok: true, layer: f() };
  } catch (e) {
    return { ok: false, error: `${(e as Error).constructor.name}: ${(e as Error).message}` };
  }
}

/** The naive memory decisions with `candidateTokens` dropped wherever the lazy ones lack it. */
function alignTokens(naive: MemoryDecision[], lazy: MemoryDecision[]): MemoryDecision[] {
  return naive.map((d, i) => {
    if (lazy[i]?.candidateTokens !== undefined) return d;
    const { candidateTokens: _dropped, ...rest } = d;
    return rest as MemoryDecision;
  });
}

function compare(naive: Outcome, lazy: Outcome): void {
  expect(lazy.ok).toBe(naive.ok);
  if (!naive.ok || !lazy.ok) {
    expect(lazy).toEqual(naive);
    return;
  }
  const n = naive.layer;
  const l = lazy.layer;
  expect(JSON.stringify(l.decisions)).toBe(JSON.stringify(n.decisions));
  expect(JSON.stringify(l.packed)).toBe(JSON.stringify(n.packed));
  expect(l.fill).toEqual(n.fill);
  if (n.memoryPlan === null || l.memoryPlan === null) {
    expect(l.memoryPlan).toBe(n.memoryPlan);
    return;
  }
  const lazyDecisions = l.memoryPlan.decisions;
  const aligned = {
    ...n.memoryPlan,
    decisions: alignTokens(n.memoryPlan.decisions, lazyDecisions),
  };
  expect(JSON.stringify(l.memoryPlan)).toBe(JSON.stringify(aligned));
  // Counted exactly the hits admitted to the slot.
  for (const d of lazyDecisions) {
    expect(d.candidateTokens !== undefined).toBe(d.status === "selected");
  }
}

describe("lazy slot packing", () => {
  it("decides every item exactly as the naive reference (token fields aside)", () => {
    fc.assert(
      fc.property(
        slotSpec,
        fc.array(genItem, { maxLength: 14 }),
        fc.nat({ max: renderers.length - 1 }),
        fc.boolean(),
        fc.boolean(),
        (spec, gen, r, allMemory, frozen) => {
          const slot = resolveSlot(spec as SlotSpec);
          const items = toItems(gen, allMemory);
          // Frozen items, as the fill hands over validated ones, have their instants and
          // line sizes remembered: a second run reads them back.
          if (frozen) for (const s of items) deepFreeze(s.item);
          const fill: SlotFill = { status: "ok", items, sourceIds: ["a", "b"], parts: [] };
          const ctx = (): LayerContext => ({
            renderer: renderers[r] as SlotRenderer,
            scope: "u1",
            nowMs: Date.parse(NOW),
            counter: getTokenCounter("o200k_base"),
          });
          const naive = attempt(() => naiveToLayer(slot, fill, ctx()));
          compare(
            naive,
            attempt(() => toLayer(slot, fill, ctx())),
          );
          if (frozen)
            compare(
              naive,
              attempt(() => toLayer(slot, fill, ctx())),
            );
        },
      ),
      { numRuns: 600 },
    );
  });

  it("leaves failed and sourceless fills to the same verdict", () => {
    const slot = resolveSlot({ kind: "kb", required: false });
    const ctx = enContext();
    for (const fill of [
      { status: "no_source", items: [], sourceIds: [] },
      { status: "source_failed", sourceId: "a", message: "a: boom", sourceIds: ["a"] },
    ] as SlotFill[]) {
      compare(
        attempt(() => naiveToLayer(slot, fill, ctx)),
        attempt(() => toLayer(slot, fill, ctx)),
      );
    }
  });

  it("reads a memory item's scope afresh unless its memory fields are frozen too", () => {
    const slot = resolveSlot({ kind: "recall_memory", required: false });
    const ctx = enContext();
    const memory = {
      userScope: "u1",
      sourceRank: 1,
      provenance: { sourceId: "s", sourceType: "chat", title: "t", capturedAt: hoursAgo(1) },
    };
    // Frozen, but not all the way down: a candidate made of it cannot be kept.
    const item = Object.freeze({ id: "m1", text: "deploys on Friday", score: 0.9, memory });
    const fill: SlotFill = {
      status: "ok",
      items: [{ item, sourceId: "recall" }],
      sourceIds: ["recall"],
      parts: [],
    };
    const reasons = () => toLayer(slot, fill, ctx).decisions.map((d) => d.reason);
    expect(reasons()).toEqual(["selected"]);
    memory.userScope = "u2";
    expect(reasons()).toEqual(["scope_mismatch"]);
  });
});
