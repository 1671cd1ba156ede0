/**
 * The recall slot (docs/assembler.md over docs/memory-selection.md): scope and confidence gates before anything
 * ranks or packs, one memory decision per candidate that passed the slot's declarative
 * filter, slot-budget drops in the memory log, and `selectedMemoryIds` equal to what was
 * rendered — also when the global budget drops the whole slot.
 */
import { describe, expect, it } from "vitest";
import { assemble, createSchemaRegistry, DEFAULT_SCHEMAS } from "../../src/assemble/index.js";
import { type CandidateInput, selectMemoryContext } from "../../src/memory/index.js";
import { constraintsSource, type RecallExtras, recallSource } from "../../src/sources/index.js";
import { cand, hoursAgo, layer, NOW, QUERY, RULES, reactInput, reactWorld } from "./helpers.js";

const LONG = `a very long memory ${"that goes on ".repeat(12)}and on`;

const CANDIDATES: CandidateInput[] = [
  cand("m1", "short one", { score: 0.95 }),
  cand("m2", LONG, { score: 0.9 }),
  cand("m3", "short three", { score: 0.85 }),
  cand("m4", "short four", { score: 0.8 }),
  cand("m5", "other scope secret", { score: 0.99, userScope: "u2" }),
  cand("m6", "weak guess", { score: 0.4 }),
  cand("m7", "identity, not recall", { score: 0.9 }),
  cand("m8", "short one", { score: 0.7 }),
];
const EXTRAS: RecallExtras = {
  categories: {
    m1: "episodic",
    m2: "fact",
    m3: "general",
    m4: "tool_failure",
    m5: "fact",
    m6: "fact",
    m7: "identity",
    m8: "fact",
  },
};

async function react(candidates: CandidateInput[], extras: RecallExtras = EXTRAS, budget?: number) {
  const w = reactWorld();
  w.recall = candidates;
  w.extras = extras;
  return assemble(reactInput(w, budget === undefined ? {} : { budgetChars: budget }));
}

describe("recall slot", () => {
  it("gates, filters and packs with one decision per item and per filtered candidate", async () => {
    const a = await react(CANDIDATES);
    const plan = a.memoryPlan!;
    // docs/memory-selection.md rank order: score desc. m7 never reaches the gates (category filter).
    expect(plan.decisions.map((d) => [d.memoryId, d.status, d.reason])).toEqual([
      ["m5", "rejected", "scope_mismatch"],
      ["m1", "selected", "selected"],
      ["m2", "rejected", "char_budget_exceeded"],
      ["m3", "selected", "selected"],
      ["m4", "rejected", "top_k_reached"],
      ["m8", "rejected", "duplicate_content"],
      ["m6", "rejected", "low_confidence"],
    ]);
    expect(plan.decisions.find((d) => d.memoryId === "m8")?.relatedMemoryId).toBe("m1");
    expect(plan.candidateCount).toBe(7);
    expect(plan.selectedMemoryIds).toEqual(["m1", "m3"]);
    expect(plan.rejectedMemoryIds).toEqual(["m5", "m2", "m4", "m8", "m6"]);
    expect(plan.policy).toEqual({ minScore: 0.5, topK: 2, maxChars: 200, maxTokens: null });
    expect(plan.decisions.find((d) => d.memoryId === "m2")?.detail).toMatch(
      /^would use \d+ chars; slot budget is 200$/,
    );
    expect(a.manifest.memoryDecisions).toEqual(plan.decisions);

    const recall = layer(a.manifest.layers, "recall_memory");
    expect(recall.items.map((d) => [d.id, d.reason])).toEqual([
      ["m5", "scope_mismatch"],
      ["m1", "selected"],
      ["m2", "char_budget_exceeded"],
      ["m7", "category_filtered"],
      ["m3", "selected"],
      ["m4", "top_k_reached"],
      ["m8", "duplicate_content"],
      ["m6", "low_confidence"],
    ]);
    expect(recall.items.find((d) => d.id === "m5")?.detail).toBe(
      'scope "u2" is not the query scope',
    );
    expect(recall.sourceRefs).toEqual(["memory:m1", "memory:m3"]);
    expect(
      a.prompt.endsWith(
        "## Related memories\n- short one (score=0.95)\n- short three (score=0.85)",
      ),
    ).toBe(true);
    expect(a.prompt).not.toContain("other scope secret");
  });

  it("tag and age filters run before the gates and stay out of the memory log", async () => {
    const react = DEFAULT_SCHEMAS.find((s) => s.mode === "react")!;
    const schemas = createSchemaRegistry().register({
      ...react,
      slots: react.slots.map((s) =>
        s.kind === "recall_memory"
          ? { kind: "recall_memory", filter: { requireTags: ["work"], maxAgeHours: 24 } }
          : s,
      ),
    });
    const w = reactWorld();
    w.recall = [
      cand("t1", "tagged and fresh", { capturedAt: hoursAgo(1) }),
      cand("t2", "untagged", { capturedAt: hoursAgo(1) }),
      cand("t3", "tagged but old", { capturedAt: hoursAgo(25) }),
      cand("t4", "tagged, fresh, barely confident", { capturedAt: hoursAgo(1), score: 0.36 }),
      cand("t5", "tagged, fresh, below the default", { capturedAt: hoursAgo(1), score: 0.34 }),
    ];
    w.extras = { tags: { t1: ["work"], t3: ["work"], t4: ["work", "x"], t5: ["work"] } };
    const a = await assemble(reactInput(w, { schemas }));
    expect(layer(a.manifest.layers, "recall_memory").items.map((d) => [d.id, d.reason])).toEqual([
      ["t1", "selected"],
      ["t2", "tag_filtered"],
      ["t3", "too_old"],
      ["t4", "selected"],
      ["t5", "low_confidence"],
    ]);
    // Without a filter minScore the docs/memory-selection.md default (0.35) applies.
    expect(a.memoryPlan?.policy.minScore).toBe(0.35);
    expect(a.memoryPlan?.decisions.map((d) => [d.memoryId, d.reason])).toEqual([
      ["t1", "selected"],
      ["t4", "selected"],
      ["t5", "low_confidence"],
    ]);
  });

  it("never renders another scope's memory, even the best-scored one", async () => {
    const a = await react(
      [
        cand("x1", "u2 private note", { score: 1, userScope: "u2" }),
        cand("x2", "u1 note", { score: 0.6 }),
        cand("x3", "U1 is not u1", { score: 0.99, userScope: "U1" }),
      ],
      { categories: { x1: "fact", x2: "fact", x3: "fact" } },
    );
    expect(a.prompt).not.toContain("private");
    expect(a.prompt).not.toContain("U1 is not");
    expect(a.memoryPlan?.selectedMemoryIds).toEqual(["x2"]);
    expect(a.memoryPlan?.decisions.filter((d) => d.reason === "scope_mismatch").length).toBe(2);
  });

  it("selectedMemoryIds are exactly the memories rendered (tagged: parsed from the prompt)", async () => {
    const react = DEFAULT_SCHEMAS.find((s) => s.mode === "react")!;
    const schemas = createSchemaRegistry().register({
      ...react,
      slots: react.slots.map((s) =>
        s.kind === "recall_memory" ? { ...s, filter: { ...s.filter, charBudget: 700 } } : s,
      ),
    });
    const w = reactWorld();
    w.recall = CANDIDATES;
    w.extras = EXTRAS;
    const a = await assemble(reactInput(w, { schemas, renderer: "tagged", budgetChars: 4000 }));
    const rendered = [...a.prompt.matchAll(/<memory_hit memory_id="([^"]+)"/g)].map((m) => m[1]);
    expect(rendered).toEqual(a.memoryPlan?.selectedMemoryIds);
    expect(rendered).toEqual(["m1", "m2"]);
    expect(a.memoryPlan?.context).not.toBe("");
    expect(a.prompt).toContain(a.memoryPlan!.context);
  });

  it("when the global budget drops the slot, no memory is reported selected", async () => {
    const full = await react(CANDIDATES);
    const a = await react(CANDIDATES, EXTRAS, full.prompt.length - 1);
    expect(layer(a.manifest.layers, "recall_memory")).toMatchObject({
      status: "dropped",
      reason: "char_budget_exceeded",
    });
    expect(a.prompt).not.toContain("short one");
    const plan = a.memoryPlan!;
    expect(plan.selectedMemoryIds).toEqual([]);
    expect(plan.context).toBe("");
    expect(plan.usedChars).toBe(0);
    expect(plan.decisions.map((d) => [d.memoryId, d.reason])).toEqual([
      ["m5", "scope_mismatch"],
      ["m1", "char_budget_exceeded"],
      ["m2", "char_budget_exceeded"],
      ["m3", "char_budget_exceeded"],
      ["m4", "top_k_reached"],
      ["m8", "duplicate_content"],
      ["m6", "low_confidence"],
    ]);
    expect(plan.decisions[1]?.detail).toMatch(/^slot recall_memory dropped by the global budget: /);
    expect(plan.rejectedMemoryIds).toHaveLength(7);
    expect(a.manifest.memoryDecisions).toEqual(plan.decisions);
  });

  it("an empty recall source gives an empty memory plan and an inactive slot", async () => {
    const a = await react([]);
    expect(layer(a.manifest.layers, "recall_memory").status).toBe("inactive");
    expect(a.memoryPlan).toMatchObject({ selectedMemoryIds: [], decisions: [], context: "" });
  });

  it("a mode without a recall slot has no memory plan", async () => {
    const a = await assemble({
      mode: "t",
      query: QUERY,
      now: NOW,
      schemas: createSchemaRegistry().register({ mode: "t", slots: [{ kind: "constraints" }] }),
      sources: [constraintsSource({ rules: RULES }), recallSource(() => CANDIDATES, EXTRAS)],
    });
    expect(a.memoryPlan).toBeNull();
    expect(a.manifest.memoryDecisions).toBeNull();
  });

  it("the tagged recall slot is the spec 02 block, byte for byte", async () => {
    const react = DEFAULT_SCHEMAS.find((s) => s.mode === "react")!;
    const schemas = createSchemaRegistry().register({
      ...react,
      slots: react.slots.map((s) =>
        s.kind === "recall_memory" ? { ...s, filter: { ...s.filter, charBudget: 2000 } } : s,
      ),
    });
    const w = reactWorld();
    const a = await assemble(reactInput(w, { schemas, renderer: "tagged" }));
    const direct = selectMemoryContext({
      userScope: QUERY.userScope,
      policy: { minScore: 0.5, topK: 2, maxChars: null, maxTokens: null },
      candidates: w.recall,
    });
    expect(direct.context).toBe(
      [
        '<recalled_memory user_scope="u1" selected="2">',
        `<memory_hit memory_id="m1" score="0.820000" source_rank="1" authority="user_default" user_scope="u1" source_id="chat-m1" source_type="chat" captured_at="${hoursAgo(48)}">上次问过天气API</memory_hit>`,
        `<memory_hit memory_id="m2" score="0.750000" source_rank="1" authority="user_default" user_scope="u1" source_id="chat-m2" source_type="chat" captured_at="${hoursAgo(48)}">prefers pytest over unittest</memory_hit>`,
        "</recalled_memory>",
      ].join("\n"),
    );
    expect(a.memoryPlan?.context).toBe(direct.context);
    expect(a.prompt.endsWith(`\n\n---\n\n${direct.context}`)).toBe(true);
    expect(layer(a.manifest.layers, "recall_memory").used.chars).toBe(direct.usedChars);
  });
});
