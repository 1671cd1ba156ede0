/**
 * A whole request without what it needs (issue 37): `assembleRequest` (and
 * `planAgentRequest`) answer a typed error with a code and the offending field's path —
 * under `assemble` or `system` when it sits there — never a TypeError from deep inside.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { assembleRequest, planAgentRequest } from "../../src/agent/index.js";
import { planConversation } from "../../src/conversation/index.js";
import { InvalidInputError, PromptctxError } from "../../src/errors/index.js";
import { constraintsSource } from "../../src/sources/index.js";

const messages = [
  { id: "u1", role: "user" as const, content: [{ type: "text" as const, text: "hi" }] },
];
const assembleInput = () => ({
  mode: "chat",
  query: { text: "why does the build fail?", userScope: "u1" },
  now: "2026-12-01T09:00:00Z",
  sources: [constraintsSource({ rules: [{ id: "r1", level: "forbid", text: "No force push." }] })],
});
const request = (assemble: unknown, extra: Record<string, unknown> = {}) =>
  ({ provider: "anthropic", model: "claude-sonnet-4-6", assemble, messages, ...extra }) as never;

/** The error `run` rejects with (a failure when it resolves). */
async function errorOf(run: () => Promise<unknown>): Promise<PromptctxError> {
  try {
    await run();
  } catch (err) {
    expect(err).toBeInstanceOf(PromptctxError);
    return err as PromptctxError;
  }
  throw new Error("expected an error");
}

describe("assembleRequest without what it needs", () => {
  it("names the missing field under assemble", async () => {
    const cases: [Record<string, unknown>, string][] = [
      [{ now: undefined }, "assemble.now"],
      [{ now: "yesterday" }, "assemble.now"],
      [{ sources: undefined }, "assemble.sources"],
      [{ sources: null }, "assemble.sources"],
      [{ sources: [{}] }, "assemble.sources[0]"],
      [{ query: undefined }, "assemble.query"],
      [{ query: { text: "q" } }, "assemble.query.userScope"],
      [{ query: { text: 7, userScope: "u1" } }, "assemble.query.text"],
      [{ mode: 3 }, "assemble.mode"],
    ];
    for (const [change, path] of cases) {
      const err = await errorOf(() => assembleRequest(request({ ...assembleInput(), ...change })));
      expect(err).toBeInstanceOf(InvalidInputError);
      expect({ code: err.code, path: err.path }).toEqual({ code: "invalid_input", path });
    }
    const none = await errorOf(() => assembleRequest(request(null)));
    expect({ code: none.code, path: none.path }).toEqual({
      code: "invalid_input",
      path: "assemble",
    });
  });

  it("the request itself: not an object, both sides, neither side, a bad system side", async () => {
    for (const bad of [null, 7, "x", []]) {
      const err = await errorOf(() => assembleRequest(bad as never));
      expect({ code: err.code, path: err.path }).toEqual({ code: "invalid_input", path: null });
      expect(() => planAgentRequest(bad as never)).toThrow(InvalidInputError);
    }
    const both = await errorOf(() => assembleRequest(request(assembleInput(), { system: {} })));
    expect(both.path).toBe("system");
    const neither = await errorOf(() => assembleRequest(request(undefined)));
    expect(neither.path).toBe("system");
    const plan = await errorOf(() =>
      assembleRequest(request(undefined, { system: { prompt: "x" } })),
    );
    expect({ code: plan.code, path: plan.path }).toEqual({ code: "invalid_input", path: "system" });
  });

  it("any required field of the assembly removed or of the wrong type: invalid_input at its path", async () => {
    const field = fc.constantFrom("now", "query", "query.text", "query.userScope", "sources");
    const value = fc.constantFrom(undefined, null, 0, true, {}, "");
    await fc.assert(
      fc.asyncProperty(field, value, async (f, v) => {
        const a: Record<string, unknown> = assembleInput();
        const [head, tail] = f.split(".") as [string, string | undefined];
        if (tail === undefined) a[head] = v;
        else a[head] = { ...(a[head] as object), [tail]: v };
        // "" is a valid query text (a blank user scope is not).
        if (f === "query.text" && v === "") return;
        const err = await errorOf(() => assembleRequest(request(a)));
        expect(err.code).toBe("invalid_input");
        expect(err.path?.startsWith(`assemble.${head}`)).toBe(true);
      }),
      { numRuns: 60, seed: 37 },
    );
  });
});

describe("a typo in a policy field, through the library call", () => {
  it("is unknown_field at its path (planConversation and assembleRequest), never ignored", async () => {
    const plan = (() => {
      try {
        planConversation({
          messages,
          budgetTokens: 1000,
          policy: { toolResultMaxTokenz: 900 } as never,
        });
      } catch (err) {
        return err as PromptctxError;
      }
      throw new Error("expected an error");
    })();
    expect({ code: plan.code, path: plan.path }).toEqual({
      code: "unknown_field",
      path: "policy.toolResultMaxTokenz",
    });
    const req = await errorOf(() =>
      assembleRequest(request(assembleInput(), { policy: { lowWaterRatoi: 0.5 } })),
    );
    expect(req.code).toBe("unknown_field");
    expect(req.path).toContain("lowWaterRatoi");
  });
});
