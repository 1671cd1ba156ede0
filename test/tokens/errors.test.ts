import { describe, expect, it } from "vitest";
import { z } from "zod";
import {
  formatPath,
  InvalidInputError,
  invalidFromZod,
  PromptBudgetError,
  PromptctxError,
  TokenCounterError,
  toErrorObject,
} from "../../src/errors/index.js";

describe("formatPath", () => {
  it("formats keys and indices", () => {
    expect(formatPath(["candidates", 3, "score"])).toBe("candidates[3].score");
    expect(formatPath([])).toBe("");
    expect(formatPath(["tokenizer"])).toBe("tokenizer");
    expect(formatPath([0, "a"])).toBe("[0].a");
    expect(formatPath(["a", 0, 1, "b", "c"])).toBe("a[0][1].b.c");
  });
});

describe("error classes", () => {
  it("carry code, message and formatted path", () => {
    const e = new InvalidInputError("score must be in [0, 1]", ["candidates", 0, "score"]);
    expect(e).toBeInstanceOf(PromptctxError);
    expect(e).toBeInstanceOf(Error);
    expect(e.code).toBe("invalid_input");
    expect(e.path).toBe("candidates[0].score");
    expect(e.name).toBe("InvalidInputError");
    expect(new InvalidInputError("x", "tokenizer").path).toBe("tokenizer");
    expect(new InvalidInputError("x").path).toBeNull();
    const b = new PromptBudgetError("too big", ["system"]);
    expect(b.code).toBe("prompt_budget_exceeded");
    expect(b.names).toEqual(["system"]);
    const t = new TokenCounterError("bad");
    expect(t.code).toBe("invalid_counter_result");
    expect(t.path).toBeNull();
  });
});

describe("toErrorObject", () => {
  it("serialises promptctx errors", () => {
    const e = new InvalidInputError("bad score", ["candidates", 3, "score"]);
    expect(toErrorObject(e)).toEqual({
      error: { code: "invalid_input", message: "bad score", path: "candidates[3].score" },
    });
  });

  it("hides unknown errors as internal_error without a stack or message", () => {
    const secret = new Error("secret /etc/passwd detail");
    for (const err of [
      secret,
      new TypeError("x"),
      "a string",
      42,
      null,
      undefined,
      { code: "x" },
    ]) {
      const out = toErrorObject(err);
      expect(out).toEqual({
        error: { code: "internal_error", message: "internal error", path: null },
      });
      const json = JSON.stringify(out);
      expect(json).not.toContain("secret");
      expect(json).not.toContain("stack");
      expect(json).not.toContain("at ");
    }
  });
});

describe("invalidFromZod", () => {
  it("names the first issue's path", () => {
    const schema = z.object({ candidates: z.array(z.object({ score: z.number() })) });
    const r = schema.safeParse({ candidates: [{ score: 1 }, { score: "x" }] });
    expect(r.success).toBe(false);
    if (r.success) return;
    const e = invalidFromZod(r.error, ["request"]);
    expect(e.code).toBe("invalid_input");
    expect(e.path).toBe("request.candidates[1].score");
    expect(e.message.startsWith("request.candidates[1].score: ")).toBe(true);
  });
});
