/** Invalid session input throws InvalidInputError with the offending field path. */
import { describe, expect, it } from "vitest";
import { createSession, type WorkingMode } from "../../src/assemble/index.js";
import { InvalidInputError } from "../../src/errors/index.js";
import { testSegments, testSession } from "./helpers.js";

const STATE = {
  userScope: "u1",
  mode: "chat",
  workingMode: "craft" as WorkingMode,
  expert: null,
  identity: "Acme.",
};

function thrown(fn: () => unknown): InvalidInputError {
  try {
    fn();
  } catch (err) {
    expect(err).toBeInstanceOf(InvalidInputError);
    return err as InvalidInputError;
  }
  throw new Error("expected a throw");
}

describe("session validation", () => {
  it.each(["", "Plan", "review", "craft "])(
    "working mode %j → invalid_input at workingMode",
    (mode) => {
      const { session } = testSession();
      const err = thrown(() => session.setWorkingMode(mode as WorkingMode));
      expect(err.code).toBe("invalid_input");
      expect(err.path).toBe("workingMode");
      expect(err.message).toContain("craft, plan, ask");
      expect(session.current.workingMode).toBe("craft");
    },
  );

  it("an invalid initial working mode is rejected at state.workingMode", () => {
    const err = thrown(() =>
      createSession({
        state: { ...STATE, workingMode: "review" as WorkingMode },
        segments: testSegments(),
      }),
    );
    expect(err.path).toBe("state.workingMode");
  });

  it.each(["", "   ", "\t\n"])("blank user scope %j is rejected (path userScope)", (scope) => {
    const { session } = testSession();
    const err = thrown(() => session.setUserScope(scope));
    expect(err.path).toBe("userScope");
    expect(session.current.userScope).toBe("u1");
    expect(
      thrown(() => createSession({ state: { ...STATE, userScope: scope }, segments: [] })).path,
    ).toBe("userScope");
  });

  it("duplicate segment names are rejected with their index", () => {
    const segs = testSegments();
    const err = thrown(() =>
      createSession({
        state: STATE,
        segments: [...segs, { ...(segs[1] as (typeof segs)[number]) }],
      }),
    );
    expect(err.path).toBe(`segments[${segs.length}].name`);
  });

  it("a rejected event leaves the cached assembly valid", async () => {
    const { session } = testSession();
    const a = await session.assemble({ text: "q", now: "2026-11-30T09:00:00Z" });
    expect(() => session.setWorkingMode("bogus" as WorkingMode)).toThrow(InvalidInputError);
    expect(() => session.setUserScope(" ")).toThrow(InvalidInputError);
    expect(await session.assemble({ text: "q", now: "2026-11-30T09:00:00Z" })).toBe(a);
    expect(session.report.reused).toBe(true);
  });
});
