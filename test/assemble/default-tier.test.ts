/**
 * Issue 11 item 9: a segment that names no cache tier gets one default tier, stated once
 * (`DEFAULT_CACHE_TIER`), the same in the planner and in the assembler (its plan, its
 * layout and its manifest).
 */
import { describe, expect, it } from "vitest";
import { assemble } from "../../src/assemble/index.js";
import { DEFAULT_CACHE_TIER, planPrompt } from "../../src/plan/index.js";
import { constraintsSource } from "../../src/sources/index.js";

describe("the default cache tier of an untiered segment", () => {
  it("is dynamic: a segment that does not say how stable it is never sits in a cached prefix", () => {
    expect(DEFAULT_CACHE_TIER).toBe("dynamic");
  });

  it("the planner lays an untiered segment out in the default tier", () => {
    const plan = planPrompt({
      segments: [
        { name: "untiered", content: "U", priority: 0 },
        { name: "session", content: "S", cacheTier: "session", priority: 1 },
      ],
    });
    const d = plan.decisions.find((x) => x.name === "untiered");
    expect(d?.cacheTier).toBe(DEFAULT_CACHE_TIER);
  });

  it("the assembler gives an untiered extra segment the same tier, in its plan and its manifest", async () => {
    const out = await assemble({
      mode: "chat",
      query: { text: "q", userScope: "u1" },
      now: "2026-11-30T09:00:00Z",
      sources: [constraintsSource({ rules: [{ id: "r1", level: "forbid", text: "no rm -rf" }] })],
      segments: [
        { name: "untiered", content: "Untiered text.", priority: 0 },
        { name: "session-seg", content: "Session text.", cacheTier: "session", priority: 1 },
      ],
    });
    const decision = out.segmentPlan.decisions.find((d) => d.name === "untiered");
    expect(decision?.cacheTier).toBe(DEFAULT_CACHE_TIER);
    const layer = out.manifest.layers.find((l) => l.id === "untiered");
    expect(layer?.cacheTier).toBe(DEFAULT_CACHE_TIER);
    // Laid out after the session tier, like the planner would.
    expect(out.prompt.indexOf("Untiered text.")).toBeGreaterThan(
      out.prompt.indexOf("Session text."),
    );
  });
});
