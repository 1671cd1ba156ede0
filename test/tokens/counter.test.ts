import fc from "fast-check";
import { describe, expect, it, vi } from "vitest";
import { PromptctxError, TokenCounterError, toErrorObject } from "../../src/errors/index.js";
import { createTokenCounter } from "../../src/tokens/index.js";

function thrown(fn: () => unknown): unknown {
  try {
    fn();
  } catch (err) {
    return err;
  }
  throw new Error("expected a throw");
}

describe("createTokenCounter", () => {
  it("wraps a function with a name, kind and newlineCut defaults", () => {
    const c = createTokenCounter("words", (t) => t.split(" ").length);
    expect(c.name).toBe("words");
    expect(c.kind).toBe("exact");
    expect(c.newlineCut).toBe(false);
    expect(c.count("a b c")).toBe(3);
    const e = createTokenCounter("e", () => 1, { kind: "estimate", newlineCut: true });
    expect(e.kind).toBe("estimate");
    expect(e.newlineCut).toBe(true);
  });

  it.each<[string, unknown]>([
    ["NaN", Number.NaN],
    ["-1", -1],
    ["1.5", 1.5],
    ['"3"', "3"],
    ["Infinity", Number.POSITIVE_INFINITY],
    ["-Infinity", Number.NEGATIVE_INFINITY],
    ["undefined", undefined],
    ["null", null],
    ["3n", 3n],
  ])("rejects a result of %s with invalid_counter_result", (_label, bad) => {
    const c = createTokenCounter("bad", () => bad as number);
    const err = thrown(() => c.count("x"));
    expect(err).toBeInstanceOf(TokenCounterError);
    expect(err).toBeInstanceOf(PromptctxError);
    expect((err as TokenCounterError).code).toBe("invalid_counter_result");
    expect((err as TokenCounterError).message).toContain('"bad"');
    expect(toErrorObject(err).error.code).toBe("invalid_counter_result");
  });

  it("accepts 0, -0 and large integers", () => {
    expect(createTokenCounter("z", () => 0).count("")).toBe(0);
    expect(createTokenCounter("big", () => 2 ** 40).count("x")).toBe(2 ** 40);
    expect(createTokenCounter("negzero", () => -0).count("x") === 0).toBe(true);
  });

  it("never caches a bad result", () => {
    let n = Number.NaN;
    const fn = vi.fn(() => n);
    const c = createTokenCounter("flaky", fn);
    expect(() => c.count("x")).toThrow(TokenCounterError);
    n = 4;
    expect(c.count("x")).toBe(4);
    expect(fn).toHaveBeenCalledTimes(2);
  });

  it("calls the wrapped function once per distinct text", () => {
    const fn = vi.fn((t: string) => t.length);
    const c = createTokenCounter("len", fn);
    const texts = ["a", "bb", "a", "ccc", "bb", "a", "", "", "🚀", "🚀"];
    for (const t of texts) expect(c.count(t)).toBe(t.length);
    expect(fn).toHaveBeenCalledTimes(new Set(texts).size);
    expect(fn.mock.calls.map(([t]) => t)).toEqual(["a", "bb", "ccc", "", "🚀"]);
  });

  it("memoizes exactly by content (any sequence of texts)", () => {
    fc.assert(
      fc.property(fc.array(fc.constantFrom("a", "b", "c", "a b", "", "🚀", "A")), (texts) => {
        const fn = vi.fn((t: string) => t.length);
        const c = createTokenCounter("len", fn);
        for (const t of texts) expect(c.count(t)).toBe(t.length);
        expect(fn).toHaveBeenCalledTimes(new Set(texts).size);
      }),
      { numRuns: 500 },
    );
  });

  it("cacheSize 0 disables memoization", () => {
    const fn = vi.fn((t: string) => t.length);
    const c = createTokenCounter("len", fn, { cacheSize: 0 });
    for (let i = 0; i < 5; i++) expect(c.count("same")).toBe(4);
    expect(fn).toHaveBeenCalledTimes(5);
  });

  it("a bounded cache stays correct when it fills up", () => {
    const fn = vi.fn((t: string) => t.length);
    const c = createTokenCounter("len", fn, { cacheSize: 2 });
    expect(c.count("a")).toBe(1);
    expect(c.count("bb")).toBe(2);
    expect(c.count("a")).toBe(1); // still cached
    expect(fn).toHaveBeenCalledTimes(2);
    expect(c.count("ccc")).toBe(3); // cache full: starts over
    expect(c.count("a")).toBe(1);
    expect(c.count("bb")).toBe(2);
    expect(fn.mock.calls.length).toBeGreaterThan(2);
    expect(fn.mock.calls.length).toBeLessThanOrEqual(5);
  });

  it("countUncached counts past the memo, validated like count", () => {
    const fn = vi.fn((t: string) => t.length);
    const c = createTokenCounter("len", fn);
    expect(c.countUncached?.("abc")).toBe(3);
    expect(c.countUncached?.("abc")).toBe(3);
    expect(fn).toHaveBeenCalledTimes(2); // not looked up
    expect(c.count("abc")).toBe(3);
    expect(fn).toHaveBeenCalledTimes(3); // nor remembered
    expect(c.count("abc")).toBe(3);
    expect(fn).toHaveBeenCalledTimes(3);
    expect(c.countUncached?.("abc")).toBe(3); // a remembered text is still counted afresh
    expect(fn).toHaveBeenCalledTimes(4);
    const bad = createTokenCounter("bad", () => -1);
    expect(thrown(() => bad.countUncached?.("x"))).toBeInstanceOf(TokenCounterError);
  });

  it("caches are per counter", () => {
    const fn = vi.fn((t: string) => t.length);
    const a = createTokenCounter("len", fn);
    const b = createTokenCounter("len", fn);
    a.count("x");
    b.count("x");
    expect(fn).toHaveBeenCalledTimes(2);
  });
});
