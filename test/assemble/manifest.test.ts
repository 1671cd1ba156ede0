/**
 * The layer manifest of docs/manifest-wire-guard.md and the cache tiers of docs/session-and-cache.md as the assembler produces
 * them: per-layer fields and hashes, assembly-level fields, timings isolated under one
 * key, tier order with boundary markers, and cache keys that move only when they should.
 */
import { createHash } from "node:crypto";
import { describe, expect, it } from "vitest";
import { assemble } from "../../src/assemble/index.js";
import { DEFAULT_CACHE_BOUNDARY } from "../../src/plan/index.js";
import { deterministicView } from "../../src/trace/index.js";
import {
  cand,
  contentsOf,
  hoursAgo,
  layer,
  reactInput,
  reactSources,
  reactWorld,
} from "./helpers.js";

const sha256 = (s: string) => createHash("sha256").update(s, "utf8").digest("hex");

describe("manifest", () => {
  it("carries every spec 07 field per layer, with versionId = sha256 of the layer's content", async () => {
    const a = await assemble(reactInput());
    const m = a.manifest;
    const contents = contentsOf(a.prompt);
    const included = m.layers.filter((l) => l.status === "included");
    expect(included.map((l) => l.id)).toEqual([
      "constraints",
      "profile",
      "planner",
      "task_memory",
      "tool_state",
      "recall_memory",
    ]);
    expect(contents).toHaveLength(included.length);
    included.forEach((l, i) => {
      const content = contents[i]!;
      expect(Object.keys(l).sort()).toEqual(
        [
          "budget",
          "budgetPriority",
          "cacheTier",
          "detail",
          "error",
          "id",
          "items",
          "neverTruncate",
          "priority",
          "reason",
          "required",
          "sourceRefs",
          "sources",
          "status",
          "used",
          "versionId",
        ].sort(),
      );
      expect(l.versionId).toMatch(/^[0-9a-f]{16}$/);
      expect(l.versionId).toBe(sha256(content).slice(0, 16));
      expect(l.used.chars).toBe([...content].length);
      expect(l.used.tokens).toBeGreaterThan(0);
      expect(l.used.chars).toBeLessThanOrEqual(l.budget.chars!);
      expect(l.error).toBeNull();
    });
    expect(m.layers.map((l) => [l.id, l.neverTruncate, l.cacheTier, l.required, l.reason])).toEqual(
      [
        ["constraints", true, "static", true, "required"],
        ["profile", false, "session", false, "fits_budget"],
        ["planner", false, "dynamic", true, "required"],
        ["task_memory", false, "dynamic", false, "fits_budget"],
        ["tool_state", false, "dynamic", true, "required"],
        ["recall_memory", false, "dynamic", false, "fits_budget"],
      ],
    );
    expect(Object.fromEntries(m.layers.map((l) => [l.id, l.sourceRefs]))).toEqual({
      constraints: ["constraints:net", "constraints:no-rm"],
      profile: ["profile:city", "profile:language"],
      planner: ["planner:task", "planner:next"],
      task_memory: ["task_memory:obs-2", "task_memory:obs-1"],
      tool_state: ["tool_state:tool:run_tests", "tool_state:tool:read_file", "tool_state:call-1"],
      recall_memory: ["memory:m1", "memory:m2"],
    });
    expect(Object.fromEntries(m.layers.map((l) => [l.id, l.sources]))).toEqual({
      constraints: ["constraints"],
      profile: ["profile"],
      planner: ["planner"],
      task_memory: ["task_memory"],
      tool_state: ["tool_state"],
      recall_memory: ["recall"],
    });
    // Assembly level.
    expect(m.promptVersion).toMatch(/^[0-9a-f]{64}$/);
    expect(m.promptVersion).toBe(sha256(a.prompt));
    expect(m.tokenizer).toBe("estimate");
    expect(m.mode).toBe("react");
    expect(m.fallbackFrom).toBeNull();
    expect(m.now).toBe("2026-08-17T10:00:00Z");
    expect(m.used.chars).toBe([...a.prompt].length);
    expect(m.segmentDecisions).toEqual(a.segmentPlan.decisions);
    expect(m.memoryDecisions).toEqual(a.memoryPlan?.decisions);
    expect(m.failures).toEqual([]);
  });

  it("an empty layer's versionId is the hash of the empty string", async () => {
    const w = reactWorld();
    w.recall = [];
    const a = await assemble(reactInput(w));
    expect(layer(a.manifest.layers, "recall_memory").versionId).toBe(sha256("").slice(0, 16));
  });

  it("keeps wall-clock timings under `timings` only", async () => {
    let t = 0;
    const slow = await assemble(reactInput(undefined, { clock: () => (t += 7) }));
    let u = 0;
    const fast = await assemble(reactInput(undefined, { clock: () => (u += 1) }));
    expect(slow.manifest.timings).not.toEqual(fast.manifest.timings);
    expect(JSON.stringify(deterministicView(slow.manifest))).toBe(
      JSON.stringify(deterministicView(fast.manifest)),
    );
    expect(Object.keys(deterministicView(slow.manifest))).not.toContain("timings");
    expect(slow.manifest.timings.fetch.map((f) => `${f.slot}/${f.sourceId}`)).toEqual([
      "constraints/constraints",
      "planner/planner",
      "profile/profile",
      "recall_memory/recall",
      "task_memory/task_memory",
      "tool_state/tool_state",
    ]);
    // No other field carries a duration.
    expect(JSON.stringify(deterministicView(slow.manifest))).not.toMatch(/"(ms|totalMs)"/);
  });

  it("plain segments are planned and reported with the slots", async () => {
    const a = await assemble(
      reactInput(undefined, {
        segments: [
          {
            name: "identity",
            content: "You are a careful coding agent.",
            required: true,
            cacheTier: "static",
            priority: -1,
            neverTruncate: true,
            sourceRefs: ["SOUL.md@sha256:abc"],
          },
          { name: "empty", content: null },
        ],
      }),
    );
    expect(a.prompt.startsWith("You are a careful coding agent.\n\n---\n\n## Constraints")).toBe(
      true,
    );
    expect(layer(a.manifest.layers, "identity")).toMatchObject({
      status: "included",
      reason: "required",
      neverTruncate: true,
      cacheTier: "static",
      sourceRefs: ["SOUL.md@sha256:abc"],
      versionId: sha256("You are a careful coding agent.").slice(0, 16),
      items: [],
    });
    expect(layer(a.manifest.layers, "empty").status).toBe("inactive");
  });
});

describe("cache tiers", () => {
  it("render static → session → dynamic, with the boundary marker between tiers", async () => {
    const a = await assemble(reactInput());
    const tiers = a.prompt.split(DEFAULT_CACHE_BOUNDARY);
    expect(tiers).toHaveLength(3);
    expect(tiers[0]!.startsWith("## Constraints")).toBe(true);
    expect(tiers[1]!.startsWith("## User profile")).toBe(true);
    expect(tiers[2]!.startsWith("## Task plan")).toBe(true);
    expect(a.segmentPlan.tiers.map((t) => [t.tier, t.names])).toEqual([
      ["static", ["constraints"]],
      ["session", ["profile"]],
      ["dynamic", ["planner", "task_memory", "tool_state", "recall_memory"]],
    ]);
    const custom = await assemble(reactInput(undefined, { cacheBoundary: "\n\n=====\n\n" }));
    expect(custom.prompt.split("\n\n=====\n\n")).toHaveLength(3);
    expect(custom.manifest.cacheKeys.static).toBe(a.manifest.cacheKeys.static);
  });

  it("cache keys are prefix hashes of the prompt", async () => {
    const a = await assemble(reactInput());
    const [s, p] = a.prompt.split(DEFAULT_CACHE_BOUNDARY);
    expect(a.manifest.cacheKeys).toEqual({
      static: sha256(s!).slice(0, 16),
      session: sha256(`${s}${DEFAULT_CACHE_BOUNDARY}${p}`).slice(0, 16),
      dynamic: sha256(a.prompt).slice(0, 16),
    });
  });

  it("only dynamic content changing (task memory, recall) leaves the static and session keys", async () => {
    const w = reactWorld();
    const before = await assemble(reactInput(w));
    w.buffer.add({ text: "migration fixed, rerunning", createdAt: hoursAgo(0.1) });
    w.recall = [...w.recall, cand("m9", "asked about cache keys", { score: 0.95 })];
    w.extras = { ...w.extras, categories: { ...w.extras.categories, m9: "fact" } };
    const after = await assemble(reactInput(w));
    expect(after.prompt).not.toBe(before.prompt);
    expect(after.prompt).toContain("asked about cache keys");
    expect(after.manifest.cacheKeys.static).toBe(before.manifest.cacheKeys.static);
    expect(after.manifest.cacheKeys.session).toBe(before.manifest.cacheKeys.session);
    expect(after.manifest.cacheKeys.dynamic).not.toBe(before.manifest.cacheKeys.dynamic);
    const versions = (a: typeof before) =>
      Object.fromEntries(a.manifest.layers.map((l) => [l.id, l.versionId]));
    const [v0, v1] = [versions(before), versions(after)];
    expect(v1.constraints).toBe(v0.constraints);
    expect(v1.profile).toBe(v0.profile);
    expect(v1.task_memory).not.toBe(v0.task_memory);
    expect(v1.recall_memory).not.toBe(v0.recall_memory);
    expect(v1.planner).toBe(v0.planner);
  });

  it("a constraint changing changes the static key and every key after it", async () => {
    const w = reactWorld();
    const before = await assemble(reactInput(w));
    w.rules = [...w.rules, { id: "push", level: "forbid", text: "no force push" }];
    const after = await assemble({ ...reactInput(w), sources: reactSources(w) });
    expect(after.prompt).toContain("[forbid] no force push");
    for (const tier of ["static", "session", "dynamic"] as const) {
      expect(after.manifest.cacheKeys[tier]).not.toBe(before.manifest.cacheKeys[tier]);
    }
  });

  it("a tier without content has a null key", async () => {
    const w = reactWorld();
    w.profile = [];
    const a = await assemble(reactInput(w));
    expect(a.manifest.cacheKeys.session).toBeNull();
    expect(a.manifest.cacheKeys.static).not.toBeNull();
    expect(a.prompt.split(DEFAULT_CACHE_BOUNDARY)).toHaveLength(2);
  });
});
