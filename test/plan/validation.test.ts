import { describe, expect, it } from "vitest";
import { z } from "zod";
import { InvalidInputError } from "../../src/errors/index.js";
import {
  PlanPromptJsonRequestSchema,
  type PlanPromptRequest,
  planPrompt,
} from "../../src/plan/index.js";
import { createTokenCounter } from "../../src/tokens/index.js";

function invalid(request: unknown): InvalidInputError {
  try {
    planPrompt(request as PlanPromptRequest);
  } catch (err) {
    if (err instanceof InvalidInputError) return err;
    throw err;
  }
  throw new Error("expected InvalidInputError");
}

const ok = { name: "ok", content: "fine" };
const seg = (extra: Record<string, unknown>) => ({
  segments: [ok, { ...ok, name: "x", ...extra }],
});

describe("planPrompt validation", () => {
  it.each<[string, unknown, string | null]>([
    ["request not an object", "plan please", null],
    ["segments missing", {}, "segments"],
    ["segments not an array", { segments: {} }, "segments"],
    ["segment not an object", { segments: [ok, "x"] }, "segments[1]"],
    ["name missing", { segments: [ok, { content: "a" }] }, "segments[1].name"],
    ["name not a string", seg({ name: 7 }), "segments[1].name"],
    ["name blank", seg({ name: " \u3000" }), "segments[1].name"],
    ["content missing", { segments: [ok, { name: "x" }] }, "segments[1].content"],
    ["content not a string", seg({ content: 3 }), "segments[1].content"],
    ["content and builder", seg({ builder: () => "b" }), "segments[1].content"],
    ["priority not a number", seg({ priority: "1" }), "segments[1].priority"],
    ["priority NaN", seg({ priority: Number.NaN }), "segments[1].priority"],
    ["priority infinite", seg({ priority: Number.POSITIVE_INFINITY }), "segments[1].priority"],
    ["budgetPriority NaN", seg({ budgetPriority: Number.NaN }), "segments[1].budgetPriority"],
    ["budgetPriority infinite", seg({ budgetPriority: -Infinity }), "segments[1].budgetPriority"],
    ["required not a boolean", seg({ required: "yes" }), "segments[1].required"],
    ["provenance blank", seg({ provenance: "" }), "segments[1].provenance"],
    ["provenance not a string", seg({ provenance: 1 }), "segments[1].provenance"],
    ["cacheTier unknown", seg({ cacheTier: "forever" }), "segments[1].cacheTier"],
    ["condition not boolean or function", seg({ condition: "on" }), "segments[1].condition"],
    [
      "builder not a function",
      { segments: [{ name: "x", builder: "text" }] },
      "segments[0].builder",
    ],
    ["budgetChars negative", { budgetChars: -1, segments: [] }, "budgetChars"],
    ["budgetChars fractional", { budgetChars: 10.5, segments: [] }, "budgetChars"],
    ["budgetChars a string", { budgetChars: "100", segments: [] }, "budgetChars"],
    ["budgetChars infinite", { budgetChars: Infinity, segments: [] }, "budgetChars"],
    ["budgetTokens negative", { budgetTokens: -5, segments: [] }, "budgetTokens"],
    ["budgetTokens fractional", { budgetTokens: 0.5, segments: [] }, "budgetTokens"],
    ["tokenizer not a string", { tokenizer: 5, segments: [] }, "tokenizer"],
    ["tokenizer unknown", { tokenizer: "gpt-9", segments: [] }, "tokenizer"],
    [
      "condition function returns a non-boolean",
      { segments: [{ name: "x", content: "a", condition: () => "yes" }] },
      "segments[0].condition",
    ],
    [
      "builder returns a non-string",
      { segments: [{ name: "x", builder: () => 42 }] },
      "segments[0].builder",
    ],
  ])("rejects %s", (_, request, path) => {
    const err = invalid(request);
    expect(err.code).toBe("invalid_input");
    expect(err.path).toBe(path);
  });

  it("names duplicates with the path of the second one", () => {
    const err = invalid({
      segments: [
        { name: "tools", content: "a" },
        { name: "memory", content: "b" },
        { name: "tools", content: "c" },
      ],
    });
    expect(err.path).toBe("segments[2].name");
    expect(err.message).toBe('duplicate segment name "tools" (also segments[0].name)');
  });

  it("treats names as exact strings: case and whitespace make other names", () => {
    const plan = planPrompt({
      segments: [
        { name: "tools", content: "a" },
        { name: "Tools", content: "b" },
        { name: "tools ", content: "c" },
      ],
    });
    expect(plan.includedNames).toHaveLength(3);
  });

  it("names the tokenizer field and the accepted names", () => {
    const err = invalid({ tokenizer: "gpt-9", segments: [] });
    expect(err.message).toContain('unknown tokenizer "gpt-9"');
    expect(err.message).toContain("cl100k_base");
  });

  it("lets an injected counter override the request tokenizer", () => {
    const counter = createTokenCounter("chars", (t) => t.length);
    const plan = planPrompt({ tokenizer: "o200k_base", segments: [ok] }, { tokenCounter: counter });
    expect(plan.tokenizer).toBe("chars");
    expect(plan.usedTokens).toBe(4);
  });

  it("accepts zero budgets (nothing optional fits)", () => {
    const plan = planPrompt({ budgetChars: 0, budgetTokens: 0, segments: [ok] });
    expect(plan.droppedNames).toEqual(["ok"]);
    expect(plan.prompt).toBe("");
  });
});

describe("PlanPromptJsonRequestSchema", () => {
  it("is the JSON contract: content is required and functions are not part of it", () => {
    expect(PlanPromptJsonRequestSchema.safeParse({ segments: [{ name: "a" }] }).success).toBe(
      false,
    );
    expect(() => z.toJSONSchema(PlanPromptJsonRequestSchema, { io: "input" })).not.toThrow();
    const parsed = PlanPromptJsonRequestSchema.parse({ segments: [{ name: "a", content: null }] });
    expect(parsed).toEqual({
      budgetChars: 12000,
      budgetTokens: null,
      segments: [
        {
          name: "a",
          content: null,
          priority: 50,
          required: false,
          budgetPriority: 50,
          provenance: "runtime",
        },
      ],
    });
  });
});
