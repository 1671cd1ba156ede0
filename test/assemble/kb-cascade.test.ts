/**
 * The KB cascade in the assembler (issue 11 item 3): every chunk ends with a decision and
 * a reason in the manifest (correction skipped first, then hybrid, golden cut last), and
 * the cascade runs against the room the global plan leaves the `kb` layer instead of the
 * whole layer (golden chunks included) being dropped at once.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { assemble, createSchemaRegistry } from "../../src/assemble/index.js";
import { constraintsSource, type KbChunk, type KbKind, kbSource } from "../../src/sources/index.js";
import type { LayerManifest } from "../../src/trace/index.js";
import { assembleWorkspace } from "../../src/workspace/index.js";
import { layer, NOW, QUERY } from "./helpers.js";

function chunk(kind: KbKind, docId: string, chunkId: string, score: number): KbChunk {
  return {
    docId,
    chunkId,
    content: `${kind} ${docId}/${chunkId} ${"x".repeat(30)}`,
    score,
    isGolden: kind === "golden",
    source: `${docId}.md`,
    kind,
  };
}
const G1 = chunk("golden", "d1", "g1", 0.9);
const G2 = chunk("golden", "d2", "g2", 0.5);
const H1 = chunk("hybrid", "d3", "h1", 0.95);
const H2 = chunk("hybrid", "d3", "h2", 0.4);
const C1 = chunk("correction", "d4", "c1", 0.99);
const ALL = [C1, H2, G2, H1, G1];
const ORDER = ["d1#g1", "d2#g2", "d3#h1", "d3#h2", "d4#c1"];
const KIND: Record<string, KbKind> = {
  "d1#g1": "golden",
  "d2#g2": "golden",
  "d3#h1": "hybrid",
  "d3#h2": "hybrid",
  "d4#c1": "correction",
};

const RULES = [{ id: "r1", level: "forbid", text: "no rm -rf" }];

async function run(opts: { slotBudget?: number; budgetChars: number | null }) {
  const schemas = createSchemaRegistry().register({
    mode: "k",
    slots: [
      { kind: "constraints", required: true },
      {
        kind: "kb",
        priority: 7,
        title: "Knowledge base",
        ...(opts.slotBudget !== undefined ? { filter: { charBudget: opts.slotBudget } } : {}),
      },
    ],
  });
  return assemble({
    mode: "k",
    query: QUERY,
    now: NOW,
    schemas,
    sources: [constraintsSource({ rules: RULES }), kbSource(ALL)],
    budgetChars: opts.budgetChars,
  });
}

const kept = (l: LayerManifest) => l.items.filter((d) => d.status === "selected").map((d) => d.id);

/** The cascade's shape: a level is kept only if every more valuable one is kept whole. */
function expectCascadeClosed(selected: readonly string[]) {
  const has = new Set(selected);
  const goldenKept = ORDER.filter((id) => KIND[id] === "golden" && has.has(id));
  // golden: a prefix of the golden order
  expect(goldenKept).toEqual(
    ORDER.filter((id) => KIND[id] === "golden").slice(0, goldenKept.length),
  );
  const all = (k: KbKind) => ORDER.filter((id) => KIND[id] === k).every((id) => has.has(id));
  const any = (k: KbKind) => ORDER.some((id) => KIND[id] === k && has.has(id));
  if (any("hybrid")) expect(all("golden")).toBe(true);
  if (any("correction")) expect(all("golden") && all("hybrid")).toBe(true);
  // levels above golden skip whole
  for (const k of ["hybrid", "correction"] as const) if (any(k)) expect(all(k)).toBe(true);
}

describe("KB cascade under the slot budget", () => {
  it("every chunk gets a decision: correction skipped first, then hybrid, golden cut last", async () => {
    const full = layer((await run({ budgetChars: null })).manifest.layers, "kb");
    expect(kept(full)).toEqual(ORDER);
    const budgets = [full.used.chars - 1, 200, 120, 80, 10];
    const seen: string[][] = [];
    for (const slotBudget of budgets) {
      const l = layer((await run({ slotBudget, budgetChars: null })).manifest.layers, "kb");
      expect(l.items.map((d) => d.id)).toEqual(ORDER); // one decision per chunk, rank order
      expect(l.used.chars).toBeLessThanOrEqual(slotBudget);
      expectCascadeClosed(kept(l));
      for (const d of l.items.filter((x) => x.status === "rejected")) {
        expect(d.detail).toMatch(
          /^cascade: .* under the slot budget \(would use \d+ chars; slot budget is \d+\)$/,
        );
        expect(d.reason).toBe(KIND[d.id] === "golden" ? "char_budget_exceeded" : "level_skipped");
      }
      seen.push(kept(l));
    }
    expect(seen[0]).toEqual(["d1#g1", "d2#g2", "d3#h1", "d3#h2"]); // correction first
    expect(seen.at(-1)).toEqual([]);
    const l = layer((await run({ slotBudget: 10, budgetChars: null })).manifest.layers, "kb");
    expect(l.status).toBe("inactive");
    expect(l.items.find((d) => d.id === "d4#c1")?.detail).toContain("level correction skipped");
  });
});

describe("KB cascade under the global budget", () => {
  it("cascades into the room the global plan leaves the layer instead of dropping it whole", async () => {
    const base = await run({ budgetChars: null });
    const kb = layer(base.manifest.layers, "kb");
    // Room for the constraints and about half of the KB layer.
    const budget = base.manifest.used.chars - Math.floor(kb.used.chars / 2);
    const a = await run({ budgetChars: budget });
    const l = layer(a.manifest.layers, "kb");
    expect(l.status).toBe("included");
    expect(a.manifest.used.chars).toBeLessThanOrEqual(budget);
    expect(kept(l)).toContain("d1#g1");
    expectCascadeClosed(kept(l));
    const correction = l.items.find((d) => d.id === "d4#c1");
    expect(correction).toMatchObject({ status: "rejected", reason: "level_skipped" });
    expect(correction?.detail).toMatch(
      /under the global budget \(with the layer the prompt would use \d+ chars; budget is \d+\)/,
    );
    expect(l.sourceRefs).toEqual(kept(l).map((id) => `kb:${id}`));
    expect(a.prompt).toContain("[doc:d1 chunk:g1]");
    expect(a.prompt).not.toContain("[doc:d4 chunk:c1]");
  });

  it("over any global budget: the layer holds a cascade-closed selection, or is dropped with every chunk rejected", async () => {
    const base = await run({ budgetChars: null });
    await fc.assert(
      fc.asyncProperty(
        fc.integer({ min: 0, max: base.manifest.used.chars + 20 }),
        async (budget) => {
          let a: Awaited<ReturnType<typeof run>>;
          try {
            a = await run({ budgetChars: budget });
          } catch (err) {
            expect((err as { code?: string }).code).toBe("prompt_budget_exceeded");
            return;
          }
          const l = layer(a.manifest.layers, "kb");
          expect(l.items.map((d) => d.id)).toEqual(ORDER);
          expect(a.manifest.used.chars).toBeLessThanOrEqual(budget);
          if (l.status === "included") {
            expect(kept(l).length).toBeGreaterThan(0);
            expectCascadeClosed(kept(l));
            for (const id of kept(l)) expect(a.prompt).toContain(`chunk:${id.split("#")[1]}]`);
          } else {
            expect(l.status).toBe("dropped");
            expect(kept(l)).toEqual([]);
            for (const d of l.items) expect(d.detail).toMatch(/global budget/);
          }
        },
      ),
      { numRuns: 60 },
    );
  });

  it("the example workspace keeps its golden runbook chunk at a tight budget", async () => {
    const query = "add an index on invoices in a new migration";
    const opts = { workspace: "examples/workspace", query, now: "2026-11-30T09:00:00Z" };
    const full = await assembleWorkspace(opts);
    const kb = layer(full.manifest.layers, "kb");
    const a = await assembleWorkspace({
      ...opts,
      budgetChars: full.manifest.used.chars - kb.used.chars + 200,
    });
    const l = layer(a.manifest.layers, "kb");
    expect(l.status).toBe("included");
    expect(kept(l)).toEqual(["runbook-migrations#c1"]);
    expect(l.items.map((d) => [d.id, d.reason])).toEqual([
      ["runbook-migrations#c1", "selected"],
      ["runbook-migrations#c2", "level_skipped"],
      ["adr-014#c1", "level_skipped"],
      ["review-2026-09#c7", "level_skipped"],
    ]);
  });
});
