/**
 * Every invalid-input rule of docs/memory-selection.md raises InvalidInputError (code `invalid_input`)
 * naming the exact field path.
 */
import { describe, expect, it } from "vitest";
import { InvalidInputError } from "../../src/errors/index.js";
import { type SelectMemoryRequest, selectMemoryContext } from "../../src/memory/index.js";
import { cand } from "./fixtures.js";

function raised(request: unknown): InvalidInputError {
  try {
    selectMemoryContext(request as SelectMemoryRequest);
  } catch (err) {
    expect(err).toBeInstanceOf(InvalidInputError);
    return err as InvalidInputError;
  }
  throw new Error("expected InvalidInputError, nothing was thrown");
}

function expectInvalid(request: unknown, path: string): void {
  const err = raised(request);
  expect(err.code).toBe("invalid_input");
  expect(err.path).toBe(path);
}

/** A valid request whose candidate #1 (index 1) has `patch` applied. */
function withSecond(patch: Record<string, unknown>): unknown {
  return {
    userScope: "u1",
    candidates: [cand("ok", "fine"), { ...cand("bad", "text"), ...patch }],
  };
}

function withProvenance(patch: Record<string, unknown>): unknown {
  const base = cand("bad", "text");
  return {
    userScope: "u1",
    candidates: [cand("ok", "fine"), { ...base, provenance: { ...base.provenance, ...patch } }],
  };
}

function withPolicy(policy: Record<string, unknown>): unknown {
  return { userScope: "u1", policy, candidates: [cand("ok", "fine")] };
}

const BLANKS = ["", "   ", "\n\t", "\u3000"];

describe("invalid input", () => {
  it.each(BLANKS)("blank memoryId %j", (blank) => {
    expectInvalid(withSecond({ memoryId: blank }), "candidates[1].memoryId");
  });

  it.each(BLANKS)("blank text %j", (blank) => {
    expectInvalid(withSecond({ text: blank }), "candidates[1].text");
  });

  it.each(BLANKS)("blank candidate userScope %j", (blank) => {
    expectInvalid(withSecond({ userScope: blank }), "candidates[1].userScope");
  });

  it.each(["sourceId", "sourceType", "title"])("blank provenance.%s", (field) => {
    for (const blank of BLANKS) {
      expectInvalid(withProvenance({ [field]: blank }), `candidates[1].provenance.${field}`);
    }
  });

  it("missing provenance", () => {
    expectInvalid(withSecond({ provenance: undefined }), "candidates[1].provenance");
  });

  it("duplicate memoryIds name the second occurrence", () => {
    const err = raised({
      userScope: "u1",
      candidates: [cand("m1", "a"), cand("m2", "b"), cand("m1", "c")],
    });
    expect(err.code).toBe("invalid_input");
    expect(err.path).toBe("candidates[2].memoryId");
    expect(err.message).toContain("m1");
  });

  it("memoryIds differing only in case or spaces are distinct (not duplicates)", () => {
    const plan = selectMemoryContext({
      userScope: "u1",
      candidates: [cand("m1", "a"), cand("M1", "b"), cand(" m1", "c")],
    });
    expect(plan.candidateCount).toBe(3);
  });

  it.each([
    ["NaN", Number.NaN],
    ["Infinity", Number.POSITIVE_INFINITY],
    ["-Infinity", Number.NEGATIVE_INFINITY],
    ["-0.1", -0.1],
    ["1.1", 1.1],
    ["string 0.5", "0.5"],
    ["null", null],
    ["missing", undefined],
  ])("score %s", (_, score) => {
    expectInvalid(withSecond({ score }), "candidates[1].score");
  });

  it("score 0 and 1 are valid", () => {
    for (const score of [0, 1]) {
      expect(() => selectMemoryContext(withSecond({ score }) as SelectMemoryRequest)).not.toThrow();
    }
  });

  it.each([
    ["0", 0],
    ["1.5", 1.5],
    ["-1", -1],
    ["string", "1"],
    ["NaN", Number.NaN],
  ])("sourceRank %s", (_, sourceRank) => {
    expectInvalid(withSecond({ sourceRank }), "candidates[1].sourceRank");
  });

  it.each([
    "yesterday",
    "",
    "2026-13-01T00:00:00Z",
    "2026-02-30T00:00:00Z",
    "2026-08-17T24:00:00Z",
    "2026-08-17T09:00:00+25:00",
    "17/08/2026",
  ])("capturedAt %j", (capturedAt) => {
    expectInvalid(withProvenance({ capturedAt }), "candidates[1].provenance.capturedAt");
  });

  it.each(BLANKS)("blank conflictKey %j", (blank) => {
    expectInvalid(withSecond({ conflictKey: blank }), "candidates[1].conflictKey");
  });

  it("conflictKey null or absent is valid", () => {
    expect(() =>
      selectMemoryContext(withSecond({ conflictKey: null }) as SelectMemoryRequest),
    ).not.toThrow();
  });

  it.each(["system_override", "CURRENT_TURN", "", "admin"])("unknown authority %j", (authority) => {
    expectInvalid(withSecond({ authority }), "candidates[1].authority");
  });

  it.each(BLANKS)("blank query userScope %j", (blank) => {
    expectInvalid({ userScope: blank, candidates: [] }, "userScope");
  });

  it.each([-0.1, 1.1, Number.NaN, "0.5"])("policy.minScore %j", (minScore) => {
    expectInvalid(withPolicy({ minScore }), "policy.minScore");
  });

  it.each([-1, 1.5, Number.NaN, "3"])("policy.topK %j", (topK) => {
    expectInvalid(withPolicy({ topK }), "policy.topK");
  });

  it.each([-1, Number.NaN, "10"])("policy.maxChars %j", (maxChars) => {
    expectInvalid(withPolicy({ maxChars }), "policy.maxChars");
  });

  it.each([-1, Number.NaN, "10"])("policy.maxTokens %j", (maxTokens) => {
    expectInvalid(withPolicy({ maxTokens }), "policy.maxTokens");
  });

  it("budgets of 0 and null are valid", () => {
    for (const v of [0, null]) {
      expect(() =>
        selectMemoryContext(withPolicy({ maxChars: v, maxTokens: v }) as SelectMemoryRequest),
      ).not.toThrow();
    }
  });

  it.each(["bogus", "gpt-4o", "O200K_BASE", ""])("unknown tokenizer %j", (tokenizer) => {
    expectInvalid({ userScope: "u1", tokenizer, candidates: [] }, "tokenizer");
  });

  it("invalid input fails before any selection (no partial plan)", () => {
    // The bad candidate is last and far below minScore: still a hard error.
    expectInvalid(
      {
        userScope: "u1",
        candidates: [cand("a", "x"), { ...cand("b", "y"), score: 0.01, sourceRank: 0 }],
      },
      "candidates[1].sourceRank",
    );
  });
});
