/**
 * Modes and schemas (docs/assembler.md): the default schemas and their reference budgets, the
 * fallback of an unknown mode, caller-registered schemas with their own kinds and
 * priorities, and the global layer of the two-layer budget.
 */
import { describe, expect, it } from "vitest";
import {
  assemble,
  createSchemaRegistry,
  DEFAULT_GLOBAL_BUDGET_CHARS,
  DEFAULT_SCHEMAS,
  resolveSlot,
} from "../../src/assemble/index.js";
import { InvalidInputError, PromptBudgetError } from "../../src/errors/index.js";
import { SEGMENT_SEPARATOR } from "../../src/plan/index.js";
import { constraintsSource, staticSource } from "../../src/sources/index.js";
import {
  layer,
  NOW,
  QUERY,
  RULES,
  reactInput,
  reactWorld,
  rejectsWith,
  schemaWith,
} from "./helpers.js";

describe("default schemas", () => {
  it("hold the slots, required flags and reference budgets of spec 04", async () => {
    const table = Object.fromEntries(
      DEFAULT_SCHEMAS.map((s) => [
        s.mode,
        s.slots.map((slot) => `${slot.kind}${slot.required ? "!" : ""}`).join(" "),
      ]),
    );
    expect(table).toEqual({
      chat: "constraints profile recall_memory",
      tool: "constraints profile tool_state! recall_memory",
      rag: "constraints profile recall_memory",
      react: "constraints! profile planner! task_memory tool_state! recall_memory",
    });
    const a = await assemble(reactInput());
    expect(
      a.manifest.layers.map((l) => [l.id, l.budget, l.priority, l.budgetPriority, l.required]),
    ).toEqual([
      ["constraints", { chars: 280 }, 0, 100, true],
      ["profile", { chars: 250 }, 4, 96, false],
      ["planner", { chars: 300 }, 1, 99, true],
      ["task_memory", { chars: 350 }, 2, 98, false],
      ["tool_state", { chars: 350 }, 3, 97, true],
      ["recall_memory", { chars: 200 }, 5, 95, false],
    ]);
    const react = DEFAULT_SCHEMAS.find((s) => s.mode === "react")!;
    const filters = Object.fromEntries(react.slots.map((s) => [s.kind, s.filter]));
    expect(filters.task_memory).toMatchObject({ topK: 8, maxAgeHours: 24 });
    expect(filters.tool_state).toMatchObject({ topK: 8 });
    expect(filters.profile).toMatchObject({ categories: ["identity", "preference"], topK: 6 });
    expect(filters.recall_memory).toMatchObject({
      categories: ["episodic", "fact", "general", "tool_failure"],
      topK: 2,
      minScore: 0.5,
    });
  });

  it("an unknown mode falls back to chat and the manifest says so", async () => {
    const a = await assemble({
      mode: "brainstorm",
      query: QUERY,
      now: NOW,
      sources: [constraintsSource({ rules: RULES })],
    });
    expect(a.manifest.mode).toBe("chat");
    expect(a.manifest.fallbackFrom).toBe("brainstorm");
    expect(a.manifest.layers.map((l) => l.id)).toEqual(["constraints", "profile", "recall_memory"]);
    const known = await assemble({
      mode: "rag",
      query: QUERY,
      now: NOW,
      sources: [constraintsSource({ rules: RULES })],
    });
    expect(known.manifest.mode).toBe("rag");
    expect(known.manifest.fallbackFrom).toBeNull();
  });

  it("a registry without chat cannot serve an unknown mode", () => {
    const only = createSchemaRegistry([{ mode: "solo", slots: [{ kind: "kb" }] }]);
    expect(only.modes()).toEqual(["solo"]);
    expect(() => only.resolve("x")).toThrow(InvalidInputError);
  });
});

describe("resolved slots", () => {
  it("the default schemas are frozen; a frozen spec resolves once, any other every time", () => {
    const { schema } = createSchemaRegistry().resolve("react");
    expect(Object.isFrozen(schema)).toBe(true);
    const spec = schema.slots[0] as (typeof schema.slots)[number];
    expect(Object.isFrozen(spec.filter)).toBe(true);
    const once = resolveSlot(spec);
    expect(resolveSlot(spec)).toBe(once);
    expect(Object.isFrozen(once)).toBe(true);
    expect(once).toMatchObject({ kind: "constraints", neverTruncate: true, cacheTier: "static" });
    // Not frozen all the way down: resolved again, so a change shows.
    const filter = { charBudget: 10, categories: ["a"] };
    const open = Object.freeze({ kind: "kb", filter });
    const first = resolveSlot(open);
    filter.charBudget = 20;
    expect(resolveSlot(open)).not.toBe(first);
    expect(resolveSlot(open).filter?.charBudget).toBe(20);
    const listOpen = Object.freeze({ kind: "kb", filter: Object.freeze({ categories: ["a"] }) });
    expect(resolveSlot(listOpen)).not.toBe(resolveSlot(listOpen));
  });
});

describe("custom schemas", () => {
  const kbItems = [
    { id: "k1", text: "Deploys run on Fridays", score: 0.9, sourceRef: "kb/deploy.md#c1" },
    { id: "k2", text: "Rollbacks need two approvals", score: 0.8, sourceRef: "kb/deploy.md#c2" },
    { id: "k3", text: "Staging mirrors prod", score: 0.7, sourceRef: "kb/env.md#c1" },
  ];
  const skillItems = [{ id: "sql@1.2.0", text: "sql: write migrations", pinned: true }];
  const sources = [
    constraintsSource({ rules: RULES }),
    staticSource("kb", ["kb"], kbItems),
    staticSource("skills", ["skills"], skillItems),
  ];

  it("are used with caller-defined kinds and priorities", async () => {
    const schemas = createSchemaRegistry().register({
      mode: "research",
      slots: [
        { kind: "constraints", required: true },
        { kind: "kb", priority: 7, title: "Knowledge base", filter: { topK: 2 } },
        { kind: "skills", priority: 6, required: true },
      ],
      budgetChars: 1000,
    });
    expect(schemas.modes()).toEqual(["chat", "rag", "react", "research", "tool"]);
    const a = await assemble({ mode: "research", query: QUERY, now: NOW, schemas, sources });
    expect(a.manifest.mode).toBe("research");
    expect(a.manifest.fallbackFrom).toBeNull();
    expect(a.manifest.budget).toEqual({ chars: 1000, tokens: null });
    expect(
      a.manifest.layers.map((l) => [l.id, l.priority, l.budgetPriority, l.required, l.cacheTier]),
    ).toEqual([
      ["constraints", 0, 100, true, "static"],
      ["skills", 6, 94, true, "dynamic"],
      ["kb", 7, 93, false, "dynamic"],
    ]);
    expect(a.prompt).toBe(
      [
        "## Constraints\n- [warn] network needs approval\n- [forbid] no rm -rf",
        "<!-- cache-boundary -->",
        `## skills\n- sql: write migrations${SEGMENT_SEPARATOR}## Knowledge base\n- Deploys run on Fridays\n- Rollbacks need two approvals`,
      ].join("\n\n"),
    );
    expect(layer(a.manifest.layers, "kb").sourceRefs).toEqual([
      "kb/deploy.md#c1",
      "kb/deploy.md#c2",
    ]);
    expect(layer(a.manifest.layers, "skills").sourceRefs).toEqual(["skills:sql@1.2.0"]);
  });

  it("a caller kind without a priority gets the custom default (10)", async () => {
    const a = await assemble({
      mode: "t",
      query: QUERY,
      now: NOW,
      schemas: schemaWith([{ kind: "kb" }]),
      sources,
    });
    expect(layer(a.manifest.layers, "kb")).toMatchObject({ priority: 10, budgetPriority: 90 });
  });

  it("registering replaces the schema of the same mode and leaves the old registry alone", async () => {
    const base = createSchemaRegistry();
    const replaced = base.register({ mode: "chat", slots: [{ kind: "kb" }] });
    expect(base.resolve("chat").schema.slots.map((s) => s.kind)).toEqual([
      "constraints",
      "profile",
      "recall_memory",
    ]);
    expect(replaced.resolve("nope")).toMatchObject({ fallbackFrom: "nope" });
    expect(replaced.resolve("nope").schema.slots.map((s) => s.kind)).toEqual(["kb"]);
  });

  it("rejects a blank mode and duplicate slot kinds", () => {
    expect(() => createSchemaRegistry().register({ mode: " ", slots: [] })).toThrow(
      InvalidInputError,
    );
    try {
      createSchemaRegistry().register({ mode: "x", slots: [{ kind: "kb" }, { kind: "kb" }] });
      expect.unreachable();
    } catch (e) {
      expect((e as InvalidInputError).path).toBe("slots[1].kind");
    }
  });
});

describe("global budget (second layer)", () => {
  it("defaults to 2400 chars; the input overrides it, a schema may set its own or none", async () => {
    expect(DEFAULT_GLOBAL_BUDGET_CHARS).toBe(2400);
    const a = await assemble(reactInput());
    expect(a.manifest.budget).toEqual({ chars: 2400, tokens: null });
    const b = await assemble(reactInput(undefined, { budgetChars: 5000 }));
    expect(b.manifest.budget.chars).toBe(5000);

    const big = [staticSource("kb", ["kb"], [{ id: "k", text: "x".repeat(3000) }])];
    const run = (budgetChars: number | null | undefined) =>
      assemble({
        mode: "t",
        query: QUERY,
        now: NOW,
        schemas: schemaWith([{ kind: "kb" }], budgetChars === undefined ? {} : { budgetChars }),
        sources: big,
      });
    // No schema budget: the default 2400 drops a 3000-char slot.
    const dflt = await run(undefined);
    expect(dflt.manifest.budget.chars).toBe(2400);
    expect(layer(dflt.manifest.layers, "kb").status).toBe("dropped");
    // A schema budget of null means unbounded (not the default).
    const unbounded = await run(null);
    expect(unbounded.manifest.budget.chars).toBeNull();
    expect(layer(unbounded.manifest.layers, "kb").status).toBe("included");
    const own = await run(4000);
    expect(own.manifest.budget.chars).toBe(4000);
    expect(layer(own.manifest.layers, "kb").status).toBe("included");
  });

  it("a small budget drops optional slots lowest budgetPriority first; required slots stay", async () => {
    const full = await assemble(reactInput());
    expect(full.manifest.layers.every((l) => l.status === "included")).toBe(true);
    const recall = layer(full.manifest.layers, "recall_memory");
    // One char short of the full prompt: the lowest budgetPriority (recall, 95) goes.
    const a = await assemble(reactInput(undefined, { budgetChars: full.prompt.length - 1 }));
    expect(a.manifest.layers.map((l) => [l.id, l.status, l.reason])).toEqual([
      ["constraints", "included", "required"],
      ["profile", "included", "fits_budget"],
      ["planner", "included", "required"],
      ["task_memory", "included", "fits_budget"],
      ["tool_state", "included", "required"],
      ["recall_memory", "dropped", "char_budget_exceeded"],
    ]);
    expect(a.prompt).toBe(full.prompt.slice(0, -(recall.used.chars + SEGMENT_SEPARATOR.length)));
    expect(layer(a.manifest.layers, "recall_memory").detail).toBe(
      `would use ${full.prompt.length} chars; budget is ${full.prompt.length - 1}`,
    );

    // Only the required slots fit: every optional one is dropped, none is cut.
    const requiredOnly = await assemble(reactInput(undefined, { budgetChars: 317 }));
    expect(requiredOnly.manifest.layers.map((l) => [l.id, l.status])).toEqual([
      ["constraints", "included"],
      ["profile", "dropped"],
      ["planner", "included"],
      ["task_memory", "dropped"],
      ["tool_state", "included"],
      ["recall_memory", "dropped"],
    ]);
    expect(requiredOnly.manifest.used.chars).toBe(317);
    await expect(assemble(reactInput(undefined, { budgetChars: 316 }))).rejects.toThrow(
      PromptBudgetError,
    );
  });

  it("admits by budgetPriority, not by size or schema order", async () => {
    const sources = [
      staticSource("s", ["skills"], [{ id: "s", text: "s".repeat(40) }]),
      staticSource("k", ["kb"], [{ id: "k", text: "k".repeat(20) }]),
    ];
    const run = (skills: number, kb: number) =>
      assemble({
        mode: "t",
        query: QUERY,
        now: NOW,
        budgetChars: 60,
        schemas: schemaWith([
          { kind: "kb", priority: kb },
          { kind: "skills", priority: skills },
        ]),
        sources,
      });
    const skillsFirst = await run(6, 7);
    expect(skillsFirst.manifest.layers.map((l) => [l.id, l.status])).toEqual([
      ["skills", "included"],
      ["kb", "dropped"],
    ]);
    const kbFirst = await run(7, 6);
    expect(kbFirst.manifest.layers.map((l) => [l.id, l.status])).toEqual([
      ["kb", "included"],
      ["skills", "dropped"],
    ]);
  });

  it("required slots over the global budget fail closed", async () => {
    const err = await rejectsWith(
      assemble(reactInput(undefined, { budgetChars: 100 })),
      PromptBudgetError,
      "prompt_budget_exceeded",
      "budgetChars",
    );
    expect(err.names).toEqual(["constraints", "planner", "tool_state"]);
  });

  it("a global token budget fails closed the same way and drops optional slots by tokens", async () => {
    const full = await assemble(reactInput(undefined, { tokenizer: "o200k_base" }));
    const tokens = full.manifest.used.tokens;
    const a = await assemble(
      reactInput(undefined, { tokenizer: "o200k_base", budgetTokens: tokens - 1 }),
    );
    expect(a.manifest.budget).toEqual({ chars: 2400, tokens: tokens - 1 });
    expect(layer(a.manifest.layers, "recall_memory")).toMatchObject({
      status: "dropped",
      reason: "token_budget_exceeded",
    });
    expect(a.manifest.used.tokens).toBeLessThanOrEqual(tokens - 1);
    await rejectsWith(
      assemble(reactInput(undefined, { tokenizer: "o200k_base", budgetTokens: 10 })),
      PromptBudgetError,
      "prompt_budget_exceeded",
      "budgetTokens",
    );
  });

  it("a required slot that grows past the global budget fails the assembly", async () => {
    const w = reactWorld();
    w.task = { ...w.task!, nextStep: "x".repeat(150) };
    // The planner slot still fits its own budget (300); the required slots no longer fit 350.
    const unbounded = await assemble(reactInput(w, { budgetChars: null }));
    const planner = layer(unbounded.manifest.layers, "planner");
    expect(planner.items.map((d) => d.reason)).toEqual(["selected", "selected"]);
    expect(planner.used.chars).toBeLessThanOrEqual(300);
    await rejectsWith(
      assemble(reactInput(w, { budgetChars: 350 })),
      PromptBudgetError,
      "prompt_budget_exceeded",
      "budgetChars",
    );
  });
});
