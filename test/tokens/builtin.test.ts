import fc from "fast-check";
import { countTokens as countCl100k } from "gpt-tokenizer/encoding/cl100k_base";
import { countTokens as countO200k } from "gpt-tokenizer/encoding/o200k_base";
import { describe, expect, it } from "vitest";
import { InvalidInputError, PromptctxError } from "../../src/errors/index.js";
import {
  CLAUDE_ESTIMATE_MARGIN,
  createTokenCounter,
  estimateTokens,
  getTokenCounter,
  isTokenizerName,
  resolveTokenCounter,
  TOKENIZER_NAMES,
  tokenizerForModel,
} from "../../src/tokens/index.js";

function thrown(fn: () => unknown): unknown {
  try {
    fn();
  } catch (err) {
    return err;
  }
  throw new Error("expected a throw");
}

describe("estimate", () => {
  it("counts a Latin word run, one CJK character, any other non-space character as 1", () => {
    expect(estimateTokens("")).toBe(0);
    expect(estimateTokens("   \n\t")).toBe(0);
    expect(estimateTokens("hello")).toBe(1);
    expect(estimateTokens("hello world")).toBe(2);
    expect(estimateTokens("Hello, 世界!")).toBe(5);
    expect(estimateTokens("foo_bar9")).toBe(1);
    expect(estimateTokens("foo-bar")).toBe(3);
    expect(estimateTokens("🚀")).toBe(1);
    expect(estimateTokens("🚀🚀")).toBe(2);
    expect(estimateTokens("👨‍👩‍👧")).toBe(5); // 3 emoji + 2 ZWJ, per code point
    expect(estimateTokens("世界")).toBe(2);
    expect(estimateTokens("\u3400\u9fff")).toBe(2);
    expect(estimateTokens("こんにちは")).toBe(5); // kana: "other non-space", one each
    expect(estimateTokens("café")).toBe(2); // "caf" + "é"
    expect(estimateTokens("x²")).toBe(2);
    expect(estimateTokens("<|endoftext|>")).toBe(5); // < | endoftext | >
    expect(estimateTokens("a\u3000b\u00a0c")).toBe(3); // Unicode spaces separate
  });

  it("matches the spec regex over code points", () => {
    const spec = /[a-zA-Z0-9_]+|[\u3400-\u9fff]|[^\s]/gu;
    const piece = fc.constantFrom("ab", "Z9", "_", " ", "\n", "世", "、", "🚀", "é", ".", "'", "-");
    fc.assert(
      fc.property(
        fc.array(fc.oneof(piece, fc.string({ unit: "grapheme", maxLength: 3 })), {
          maxLength: 15,
        }),
        (xs) => {
          const text = xs.join("");
          // JS `\s` adds U+FEFF and lacks U+001C..U+001F, U+0085; the estimate follows
          // Python's whitespace, so compare only on text free of those characters.
          fc.pre(!/[\ufeff\u001c-\u001f\u0085]/.test(text));
          expect(estimateTokens(text)).toBe(text.match(spec)?.length ?? 0);
        },
      ),
      { numRuns: 3000 },
    );
  });

  it("uses Python whitespace: U+FEFF counts, U+001C and U+0085 separate", () => {
    expect(estimateTokens("\ufeff")).toBe(1);
    expect(estimateTokens("a\u001cb")).toBe(2);
    expect(estimateTokens("\u0085")).toBe(0);
  });

  it("is exposed as a named estimate counter", () => {
    const c = getTokenCounter("estimate");
    expect(c.name).toBe("estimate");
    expect(c.kind).toBe("estimate");
    expect(c.count("Hello, 世界!")).toBe(5);
  });
});

describe("exact BPE counters", () => {
  // Values verified against gpt-tokenizer (encode + decode of each token).
  const known: Array<[string, number, number]> = [
    ["hello world", 2, 2],
    ["Hello, world!", 4, 4],
    ["The quick brown fox jumps over the lazy dog.", 10, 10],
    ["世界", 1, 3],
    ["こんにちは世界", 2, 4],
    ["🚀", 2, 3],
    ["1234567", 3, 3],
    ["  ", 1, 1],
    ["", 0, 0],
    ["</memory_hit></recalled_memory><system>", 10, 10],
  ];

  it.each(known)("%j: o200k_base %i, cl100k_base %i", (text, o200k, cl100k) => {
    expect(getTokenCounter("o200k_base").count(text)).toBe(o200k);
    expect(getTokenCounter("cl100k_base").count(text)).toBe(cl100k);
  });

  it("declares names and kind", () => {
    for (const name of ["o200k_base", "cl100k_base"] as const) {
      const c = getTokenCounter(name);
      expect(c.name).toBe(name);
      expect(c.kind).toBe("exact");
    }
  });

  it("counts special-token literals as plain text and never throws", () => {
    // The library default throws on them.
    expect(() => countO200k("<|endoftext|>")).toThrow();
    expect(() => countCl100k("<|endoftext|>")).toThrow();
    const o = getTokenCounter("o200k_base");
    const c = getTokenCounter("cl100k_base");
    expect(o.count("<|endoftext|>")).toBe(7);
    expect(c.count("<|endoftext|>")).toBe(7);
    expect(o.count("a <|endoftext|> b")).toBe(9);
    expect(c.count("a <|endoftext|> b")).toBe(8);
    expect(o.count("<|im_start|>user")).toBe(7);
    expect(c.count("<|im_start|>user")).toBe(7);
    for (const lit of [
      "<|endofprompt|>",
      "<|fim_prefix|>",
      "<|fim_middle|>",
      "<|fim_suffix|>",
      "<|im_end|>",
    ]) {
      expect(o.count(lit)).toBeGreaterThan(1);
      expect(c.count(lit)).toBeGreaterThan(1);
    }
    expect(getTokenCounter("claude_estimate").count("<|endoftext|>")).toBe(9); // ceil(7 × 1.25)
  });
});

describe("claude_estimate", () => {
  it("is o200k_base × 1.25 rounded up, declared an estimate", () => {
    expect(CLAUDE_ESTIMATE_MARGIN).toBe(1.25);
    const c = getTokenCounter("claude_estimate");
    expect(c.kind).toBe("estimate");
    expect(c.name).toBe("claude_estimate");
    expect(c.count("hello world")).toBe(3); // ceil(2.5)
    expect(c.count("The quick brown fox jumps over the lazy dog.")).toBe(13); // ceil(12.5)
    expect(c.count("")).toBe(0);
    fc.assert(
      fc.property(fc.string({ maxLength: 40 }), (s) => {
        const base = getTokenCounter("o200k_base").count(s);
        expect(c.count(s)).toBe(Math.ceil(base * 1.25));
        expect(c.count(s)).toBeGreaterThanOrEqual(base);
      }),
      { numRuns: 500 },
    );
  });
});

describe("tokenizerForModel", () => {
  it.each([
    ["gpt-4o", "o200k_base"],
    ["gpt-4o-mini", "o200k_base"],
    ["gpt-4o-2024-08-06", "o200k_base"],
    ["gpt-4.1", "o200k_base"],
    ["gpt-4.1-mini", "o200k_base"],
    ["gpt-5", "o200k_base"],
    ["gpt-5-mini", "o200k_base"],
    ["o1", "o200k_base"],
    ["o1-mini", "o200k_base"],
    ["o3", "o200k_base"],
    ["o3-mini", "o200k_base"],
    ["o4-mini", "o200k_base"],
    ["GPT-4o", "o200k_base"],
    ["gpt-4", "cl100k_base"],
    ["gpt-4-turbo", "cl100k_base"],
    ["gpt-4-0613", "cl100k_base"],
    ["gpt-3.5-turbo", "cl100k_base"],
    ["gpt-3.5-turbo-16k", "cl100k_base"],
    ["claude-3-5-sonnet-20241022", "claude_estimate"],
    ["claude-opus-4", "claude_estimate"],
    ["claude-haiku-4-5", "claude_estimate"],
  ])("%s → %s", (model, name) => {
    expect(tokenizerForModel(model)).toBe(name);
  });

  it("rejects unknown models as invalid input with a path", () => {
    for (const model of ["llama-3-70b", "", "gemini-1.5-pro", "mistral-large"]) {
      const err = thrown(() => tokenizerForModel(model));
      expect(err).toBeInstanceOf(InvalidInputError);
      expect((err as InvalidInputError).code).toBe("invalid_input");
      expect((err as InvalidInputError).path).toBe("model");
    }
    const err = thrown(() => tokenizerForModel("llama-3", "request.model"));
    expect((err as InvalidInputError).path).toBe("request.model");
    expect((err as InvalidInputError).message).toContain("llama-3");
  });
});

describe("resolveTokenCounter", () => {
  it("defaults to estimate", () => {
    expect(resolveTokenCounter(undefined).name).toBe("estimate");
    expect(resolveTokenCounter(null).name).toBe("estimate");
  });

  it("resolves every built-in name to a counter of that name", () => {
    for (const name of TOKENIZER_NAMES) {
      expect(isTokenizerName(name)).toBe(true);
      expect(resolveTokenCounter(name).name).toBe(name);
    }
    expect(resolveTokenCounter("o200k_base").count("hello world")).toBe(2);
  });

  it("uses an injected counter as is", () => {
    const custom = createTokenCounter("chars", (t) => t.length);
    expect(resolveTokenCounter(custom)).toBe(custom);
  });

  it("rejects an unknown name as invalid_input at path `tokenizer`", () => {
    for (const name of ["gpt-4o", "o200k", "ESTIMATE", "", "p50k_base"]) {
      expect(isTokenizerName(name)).toBe(false);
      const err = thrown(() => resolveTokenCounter(name));
      expect(err).toBeInstanceOf(InvalidInputError);
      expect(err).toBeInstanceOf(PromptctxError);
      expect((err as InvalidInputError).code).toBe("invalid_input");
      expect((err as InvalidInputError).path).toBe("tokenizer");
    }
    const err = thrown(() => resolveTokenCounter("nope", "plan.tokenizer"));
    expect((err as InvalidInputError).path).toBe("plan.tokenizer");
  });

  it("gives every resolution of a name the process's shared counter (issue 34)", () => {
    expect(resolveTokenCounter("estimate")).toBe(resolveTokenCounter("estimate"));
  });
});
