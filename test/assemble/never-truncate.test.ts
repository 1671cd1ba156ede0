/**
 * `neverTruncate` layers (docs/manifest-wire-guard.md, issue 11 item 1): reserved like required ones (reason
 * `never_truncate`), never a trimming candidate; when they cannot fit, the assembly fails
 * closed with `prompt_budget_exceeded`. Planner unit tests, a fast-check property over
 * random budgets, and the demo repro through the real CLI.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { type AssembleSegment, assemble } from "../../src/assemble/index.js";
import { PromptBudgetError } from "../../src/errors/index.js";
import { planPrompt } from "../../src/plan/index.js";
import { getTokenCounter } from "../../src/tokens/index.js";
import { runCli } from "../cli/run-cli.js";
import { layer, reactInput } from "./helpers.js";

const IDENTITY: AssembleSegment = {
  name: "identity",
  content: "You are Ada, a careful billing engineer. Never reveal secrets.",
  priority: 0.2,
  budgetPriority: 1, // lowest value: without the reservation it would be the first dropped
  cacheTier: "static",
  neverTruncate: true,
};
const FILLER: AssembleSegment = {
  name: "notes",
  content: "Some optional notes that are worth keeping when there is room.",
  priority: 8,
  budgetPriority: 90,
  cacheTier: "session",
};

describe("planPrompt: neverTruncate", () => {
  it("reserves a neverTruncate segment before optional ones (reason never_truncate)", () => {
    const plan = planPrompt({
      budgetChars: 30,
      segments: [
        { name: "red", content: "no rm -rf", neverTruncate: true, budgetPriority: 0 },
        { name: "big", content: "x".repeat(20), budgetPriority: 100 },
      ],
    });
    expect(plan.includedNames).toEqual(["red"]);
    const red = plan.decisions.find((d) => d.name === "red");
    expect(red).toMatchObject({ status: "included", reason: "never_truncate", required: false });
    expect(plan.decisions.find((d) => d.name === "big")?.reason).toBe("char_budget_exceeded");
  });

  it("fails closed when a neverTruncate segment cannot fit, naming it", () => {
    let caught: unknown;
    try {
      planPrompt({
        budgetChars: 5,
        segments: [{ name: "red", content: "no rm -rf", neverTruncate: true }],
      });
    } catch (err) {
      caught = err;
    }
    expect(caught).toBeInstanceOf(PromptBudgetError);
    expect((caught as PromptBudgetError).code).toBe("prompt_budget_exceeded");
    expect((caught as PromptBudgetError).message).toContain("red");
  });

  it("holds under a token budget too", () => {
    expect(() =>
      planPrompt(
        {
          budgetChars: null,
          budgetTokens: 2,
          segments: [{ name: "red", content: "never run rm -rf anywhere", neverTruncate: true }],
        },
        { tokenCounter: getTokenCounter("estimate") },
      ),
    ).toThrow(PromptBudgetError);
  });
});

describe("assemble: neverTruncate layers", () => {
  it("reports the identity segment as reserved with reason never_truncate", async () => {
    const a = await assemble(reactInput(undefined, { segments: [IDENTITY, FILLER] }));
    const id = layer(a.manifest.layers, "identity");
    expect(id).toMatchObject({ status: "included", reason: "never_truncate", neverTruncate: true });
  });

  it("a neverTruncate layer is included or the whole assembly fails closed, at any budget", async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.integer({ min: 0, max: 2600 }),
        fc.option(fc.integer({ min: 0, max: 700 }), { nil: null }),
        async (budgetChars, budgetTokens) => {
          let outcome: "included" | "failed";
          try {
            const a = await assemble(
              reactInput(undefined, { segments: [IDENTITY, FILLER], budgetChars, budgetTokens }),
            );
            for (const id of ["identity", "constraints"]) {
              const l = layer(a.manifest.layers, id);
              expect(l.status, `${id} at ${budgetChars}/${budgetTokens}`).toBe("included");
              expect(a.prompt).toContain(id === "identity" ? IDENTITY.content : "no rm -rf");
            }
            outcome = "included";
          } catch (err) {
            expect(err).toBeInstanceOf(PromptBudgetError);
            expect((err as PromptBudgetError).code).toBe("prompt_budget_exceeded");
            outcome = "failed";
          }
          expect(["included", "failed"]).toContain(outcome);
        },
      ),
      { numRuns: 120 },
    );
  });
});

describe("promptctx demo: the identity layer (neverTruncate) at a tight budget", () => {
  it("fails closed with exit 3 instead of dropping it (PROMPT_BUDGET_CHARS=520)", () => {
    const r = runCli(["demo", "--json"], { env: { PROMPT_BUDGET_CHARS: "520" } });
    expect(r.code).toBe(3);
    const error = JSON.parse(r.stdout).error;
    expect(error.code).toBe("prompt_budget_exceeded");
    expect(error.message).toContain("identity");
  });

  it("includes it with reason never_truncate when it fits", () => {
    const r = runCli(["demo", "--json"], { env: { PROMPT_BUDGET_CHARS: "700" } });
    expect(r.code, r.stderr).toBe(0);
    const id = JSON.parse(r.stdout).manifest.layers.find(
      (l: { id: string }) => l.id === "identity",
    );
    expect(id).toMatchObject({ status: "included", reason: "never_truncate" });
  });
});
