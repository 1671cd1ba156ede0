/**
 * Properties of the assembler (fast-check): determinism under any source registration
 * order, item order and completion order; slot and global budgets never exceeded; one
 * decision per item; no other-scope memory ever rendered; and a growing dynamic slot never
 * evicting a static (or session) layer that fit before at the same budget.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { type Assembly, assemble, createSchemaRegistry } from "../../src/assemble/index.js";
import { PromptctxError } from "../../src/errors/index.js";
import type { ContextSource, SlotSpec, SourceItem } from "../../src/sources/index.js";
import { getTokenCounter } from "../../src/tokens/index.js";
import { deterministicView } from "../../src/trace/index.js";
import { hoursAgo, NOW, QUERY } from "./helpers.js";

/** mulberry32: a tiny seeded PRNG, so every shuffle is reproducible from the fast-check seed. */
function rng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

function shuffle<T>(xs: readonly T[], next: () => number): T[] {
  const out = [...xs];
  for (let i = out.length - 1; i > 0; i--) {
    const j = Math.floor(next() * (i + 1));
    [out[i], out[j]] = [out[j]!, out[i]!];
  }
  return out;
}

const SCHEMAS = createSchemaRegistry().register({
  mode: "p",
  budgetChars: 420,
  slots: [
    { kind: "constraints", filter: { charBudget: 160 } },
    { kind: "kb", priority: 3, cacheTier: "session", filter: { charBudget: 200, topK: 4 } },
    {
      kind: "notes",
      priority: 2,
      filter: { tokenBudget: 30, maxAgeHours: 24, categories: ["obs", "call"] },
    },
    { kind: "recall_memory", filter: { charBudget: 160, topK: 3, minScore: 0.4 } },
  ],
});
const KINDS = ["constraints", "kb", "notes", "recall_memory"] as const;

const word = fc.constantFrom(
  "deploy",
  "tests",
  "fail",
  "Beijing",
  "天气",
  "API",
  "migrate",
  "rm -rf",
  "<tag>",
  "a & b",
  "🚀",
);
const text = fc.array(word, { minLength: 1, maxLength: 9 }).map((ws) => ws.join(" "));
const score = fc.option(fc.constantFrom(0, 0.3, 0.4, 0.5, 0.75, 0.9, 1), { nil: undefined });
const age = fc.option(fc.constantFrom(0, 1, 5, 23, 24, 25, 100), { nil: undefined });

interface GenItem {
  kind: (typeof KINDS)[number];
  item: SourceItem;
  /** Which of the sources serves it. */
  source: number;
}

const plainItem = (kind: "constraints" | "kb" | "notes") =>
  fc
    .record({
      text,
      score,
      age,
      category: fc.option(fc.constantFrom("obs", "call", "doc"), { nil: undefined }),
      pinned: fc.constantFrom(false, false, false, true),
      rank: fc.option(fc.nat({ max: 3 }), { nil: undefined }),
      source: fc.nat({ max: 2 }),
    })
    .map((r) => {
      const item: SourceItem = { id: "", text: r.text };
      if (r.score !== undefined) item.score = r.score;
      if (r.age !== undefined) item.createdAt = hoursAgo(r.age);
      if (r.category !== undefined) item.category = r.category;
      if (r.pinned && kind === "constraints") item.pinned = true;
      if (r.rank !== undefined) item.rank = r.rank;
      return { kind, item, source: r.source } as GenItem;
    });

const memoryItem = fc
  .record({
    text,
    other: fc.boolean(),
    score: fc.constantFrom(0.2, 0.4, 0.5, 0.75, 0.9, 1),
    sourceRank: fc.integer({ min: 1, max: 3 }),
    age: fc.constantFrom(1, 5, 48),
    conflictKey: fc.option(fc.constantFrom("city", "lang"), { nil: undefined }),
    authority: fc.option(
      fc.constantFrom("current_turn", "user_default") as fc.Arbitrary<
        "current_turn" | "user_default"
      >,
      { nil: undefined },
    ),
    source: fc.nat({ max: 2 }),
  })
  .map((r) => {
    const item: SourceItem = {
      id: "",
      // Every other-scope memory says "secret", so the prompt can be searched for it.
      text: r.other ? `secret ${r.text}` : r.text,
      score: r.score,
      createdAt: hoursAgo(r.age),
      memory: {
        userScope: r.other ? "u2" : "u1",
        sourceRank: r.sourceRank,
        provenance: {
          sourceId: `src-${r.source}`,
          sourceType: "chat",
          title: "t",
          capturedAt: hoursAgo(r.age),
        },
      },
    };
    if (r.conflictKey !== undefined) item.memory!.conflictKey = r.conflictKey;
    if (r.authority !== undefined) item.memory!.authority = r.authority;
    return { kind: "recall_memory", item, source: r.source } as GenItem;
  });

const world = fc
  .tuple(
    fc.array(plainItem("constraints"), { maxLength: 4 }),
    fc.array(plainItem("kb"), { maxLength: 7 }),
    fc.array(plainItem("notes"), { maxLength: 7 }),
    fc.array(memoryItem, { maxLength: 8 }),
  )
  .map((groups) =>
    groups.flat().map((g, i) => ({ ...g, item: { ...g.item, id: `${g.kind}-${i}` } })),
  );

/**
 * Three sources over the generated items. `seed` null: canonical order, synchronous.
 * Otherwise: shuffled registration, items returned in a shuffled order, and each fetch
 * resolving after a random number of microtask turns (so completion order varies too).
 */
function sourcesFor(items: readonly GenItem[], seed: number | null): ContextSource[] {
  const next = seed === null ? null : rng(seed);
  const sources = [0, 1, 2].map((n): ContextSource => {
    const id = `s${n}`;
    const mine = items.filter((g) => g.source === n);
    return {
      id,
      supports: (kind) => mine.some((g) => g.kind === kind),
      fetch: async (slot: SlotSpec) => {
        const forSlot = mine.filter((g) => g.kind === slot.kind).map((g) => ({ ...g.item }));
        if (next === null) return forSlot;
        const ticks = Math.floor(next() * 6);
        for (let t = 0; t < ticks; t++) await Promise.resolve();
        return shuffle(forSlot, next);
      },
    };
  });
  return next === null ? sources : shuffle(sources, next);
}

type Outcome = { ok: true; a: Assembly; key: string } | { ok: false; key: string };

async function run(items: readonly GenItem[], seed: number | null): Promise<Outcome> {
  try {
    const a = await assemble({
      mode: "p",
      query: QUERY,
      now: NOW,
      schemas: SCHEMAS,
      sources: sourcesFor(items, seed),
    });
    return {
      ok: true,
      a,
      key: `${a.prompt}\u0000${JSON.stringify(deterministicView(a.manifest))}`,
    };
  } catch (e) {
    // Pinned overflow or required content over budget must fail the same way every time.
    if (!(e instanceof PromptctxError)) throw e;
    return { ok: false, key: `${e.code}\u0000${e.path}\u0000${e.message}` };
  }
}

describe("assembler properties", () => {
  it("is deterministic under source, item and completion order", async () => {
    await fc.assert(
      fc.asyncProperty(world, fc.integer(), async (items, seed) => {
        const base = await run(items, null);
        const shuffled = await run(items, seed);
        expect(shuffled.key).toBe(base.key);
      }),
      { numRuns: 100 },
    );
  });

  it("never exceeds a slot or the global budget, and decides every item once", async () => {
    const estimate = getTokenCounter("estimate");
    await fc.assert(
      fc.asyncProperty(world, fc.integer(), async (items, seed) => {
        const out = await run(items, seed);
        if (!out.ok) return;
        const { manifest, prompt } = out.a;
        for (const l of manifest.layers) {
          if (l.budget.chars !== undefined)
            expect(l.used.chars).toBeLessThanOrEqual(l.budget.chars);
          if (l.budget.tokens !== undefined) {
            expect(l.used.tokens).toBeLessThanOrEqual(l.budget.tokens);
          }
          const returned = items.filter((g) => g.kind === l.id).map((g) => g.item.id);
          if (l.status !== "skipped") {
            expect(l.items.map((d) => d.id).sort()).toEqual([...returned].sort());
          }
          // Pinned items are never dropped.
          for (const d of l.items) {
            const pinned = items.find((g) => g.item.id === d.id)?.item.pinned === true;
            if (pinned) expect(d.reason).toBe("pinned");
          }
        }
        expect(manifest.used.chars).toBe([...prompt].length);
        expect(manifest.used.chars).toBeLessThanOrEqual(manifest.budget.chars!);
        expect(manifest.used.tokens).toBe(estimate.count(prompt));
      }),
      { numRuns: 100 },
    );
  });

  it("never renders another scope's memory; selected memories are the rendered ones", async () => {
    await fc.assert(
      fc.asyncProperty(world, fc.integer(), async (items, seed) => {
        const out = await run(items, seed);
        if (!out.ok) return;
        const { prompt, memoryPlan, manifest } = out.a;
        expect(prompt).not.toContain("secret");
        if (memoryPlan === null) {
          // Only when no source serves the recall slot.
          expect(items.some((g) => g.kind === "recall_memory")).toBe(false);
          return;
        }
        const plan = memoryPlan;
        const byId = new Map(items.map((g) => [g.item.id, g.item]));
        for (const id of plan.selectedMemoryIds) {
          expect(byId.get(id)?.memory?.userScope).toBe("u1");
        }
        const recall = manifest.layers.find((l) => l.id === "recall_memory")!;
        const rendered = recall.status === "included" ? recall.sourceRefs : [];
        expect(plan.selectedMemoryIds.map((id) => `memory:${id}`)).toEqual(rendered);
        // One memory decision per recall item that passed the declarative filter.
        const passed = recall.items.filter(
          (d) => !["category_filtered", "tag_filtered", "too_old"].includes(d.reason),
        );
        expect(plan.decisions.map((d) => d.memoryId).sort()).toEqual(
          passed.map((d) => d.id).sort(),
        );
        for (const d of plan.decisions) {
          if (byId.get(d.memoryId)?.memory?.userScope === "u2") {
            expect(d.reason).toBe("scope_mismatch");
          }
        }
      }),
      { numRuns: 100 },
    );
  });
});

describe("cache tiers under a growing dynamic slot", () => {
  // The dynamic slot has the highest budgetPriority, and still cannot evict static content.
  const schemas = createSchemaRegistry().register({
    mode: "g",
    slots: [
      { kind: "rules", cacheTier: "static", priority: 5 },
      { kind: "prefs", cacheTier: "session", priority: 4 },
      { kind: "notes", cacheTier: "dynamic", priority: 0 },
    ],
  });
  const texts = fc.array(text, { maxLength: 5 });
  const build = (rules: string[], prefs: string[], notes: string[], budgetChars: number) =>
    assemble({
      mode: "g",
      query: QUERY,
      now: NOW,
      schemas,
      budgetChars,
      sources: (
        [
          ["rules", rules],
          ["prefs", prefs],
          ["notes", notes],
        ] as const
      ).map(
        ([kind, ts]): ContextSource => ({
          id: kind,
          supports: (k) => k === kind,
          fetch: () => ts.map((t, i) => ({ id: `${kind}-${i}`, text: t })),
        }),
      ),
    });

  it("never evicts a static or session layer that fit before at the same budget", async () => {
    await fc.assert(
      fc.asyncProperty(
        texts,
        texts,
        texts,
        fc.array(text, { minLength: 1, maxLength: 6 }),
        fc.integer({ min: 0, max: 400 }),
        async (rules, prefs, notes, more, budget) => {
          const before = await build(rules, prefs, notes, budget);
          const after = await build(rules, prefs, [...notes, ...more], budget);
          for (const id of ["rules", "prefs"]) {
            const b = before.manifest.layers.find((l) => l.id === id)!;
            const a = after.manifest.layers.find((l) => l.id === id)!;
            expect(a.status).toBe(b.status);
            expect(a.versionId).toBe(b.versionId);
          }
          expect(after.manifest.cacheKeys.static).toBe(before.manifest.cacheKeys.static);
          expect(after.manifest.cacheKeys.session).toBe(before.manifest.cacheKeys.session);
        },
      ),
      { numRuns: 200 },
    );
  });
});
