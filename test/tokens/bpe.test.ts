import fc from "fast-check";
import { countTokens as gptCl100k } from "gpt-tokenizer/encoding/cl100k_base";
import { countTokens as gptO200k } from "gpt-tokenizer/encoding/o200k_base";
import { describe, expect, it } from "vitest";
import { BpeCounter, type BpeEncoding, sharedBpeData } from "../../src/tokens/bpe.js";
import { getTokenCounter } from "../../src/tokens/index.js";
import { STRESS_ATOMS } from "./stress-atoms.js";

// The reference: gpt-tokenizer's own count, special-token literals counted as text. Its
// rank table loses the bytes of U+FEFF (decoding the token strips it as a byte-order
// mark), so it is compared on text without one; the BOM values are pinned below from the
// native tiktoken (`@anysphere/tiktoken-node`), which agrees with ours there.
const AS_TEXT = { allowedSpecial: new Set<string>(), disallowedSpecial: new Set<string>() };
const noBom = (t: string) => t.replaceAll("\ufeff", "");
const reference: Record<BpeEncoding, (text: string) => number> = {
  cl100k_base: (t) => gptCl100k(t, AS_TEXT),
  o200k_base: (t) => gptO200k(t, AS_TEXT),
};

// The shared stress atoms, plus one of each class the split regexes tell apart and their
// borders: title case, modifier and other letters, spacing marks, numbers of every kind,
// whitespace in only one sense, every contraction in both cases, astral letters, digits
// and emoji, lone surrogates.
const atom = fc.constantFrom(
  ...STRESS_ATOMS,
  "HTTPServer",
  "camelCase",
  "ǅ", // title case (Lt)
  "ʰ", // modifier letter (Lm)
  "ª", // other letter (Lo)
  "\u0903", // spacing mark
  "'S",
  "'LL",
  "'ve",
  "'re",
  "'d",
  "'m",
  "'t",
  "'x",
  "²",
  "½",
  "Ⅻ",
  "٣",
  "世界你好",
  "こんにちは",
  "한국어",
  "👨‍👩‍👧",
  "𝐀",
  "𝟘",
  "𐐷",
  "İ",
  "\v",
  "\f",
  "\u2028",
  "\ufeff",
  "\u200b",
  "\u0085",
  "\u001c",
  "$",
  "\\",
  "{}",
  "()",
  "\ud800",
  "\udc00",
  "\ud83d",
);
const text = fc.array(fc.oneof(atom, fc.string({ unit: "binary", maxLength: 4 })), {
  maxLength: 24,
});
const joined = text.map((xs) => noBom(xs.join("")));
// Long pieces exercise the heap merge: a CJK or accented run is one piece.
const longRun = fc
  .tuple(
    fc.constantFrom("世界你好中文测试", "ünïcödé", "аБвГд", "abc", "🚀"),
    fc.integer({ min: 5, max: 60 }),
  )
  .map(([s, n]) => s.repeat(n));

describe.each<BpeEncoding>(["cl100k_base", "o200k_base"])("%s", (encoding) => {
  const ref = reference[encoding];
  const data = sharedBpeData(encoding);

  it("counts exactly what gpt-tokenizer counts, on adversarial text", () => {
    const bpe = new BpeCounter(data);
    fc.assert(
      fc.property(joined, (t) => {
        expect(bpe.count(t)).toBe(ref(t));
      }),
      { numRuns: 4000 },
    );
  });

  it("stops early on long non-ASCII pieces only when they cannot fit", () => {
    const bpe = new BpeCounter(data);
    fc.assert(
      fc.property(longRun, joined, fc.integer({ min: 0, max: 120 }), (run, t, limit) => {
        const n = ref(run + t);
        const upTo = bpe.countUpTo(run + t, limit);
        if (n <= limit) expect(upTo).toBe(n);
        else expect(upTo).toBeGreaterThan(limit);
      }),
      { numRuns: 400 },
    );
  });

  it("counts long single pieces exactly (heap merge)", () => {
    const bpe = new BpeCounter(data);
    fc.assert(
      fc.property(longRun, joined, (run, t) => {
        expect(bpe.count(run + t)).toBe(ref(run + t));
      }),
      { numRuns: 300 },
    );
  });

  it("counts any string exactly", () => {
    const bpe = new BpeCounter(data);
    fc.assert(
      fc.property(fc.string({ unit: "binary", maxLength: 60 }).map(noBom), (t) => {
        expect(bpe.count(t)).toBe(ref(t));
      }),
      { numRuns: 3000 },
    );
  });

  it("counts documents exactly: prose, code, markup, mixed scripts", () => {
    const bpe = new BpeCounter(data);
    const docs = [
      "",
      "Hello, world! It's a test: don't panic.\n\n",
      "def f(x):\n    return x ** 2  # square\n\n\n",
      '<memory_hit id="m1" scope="user">Prefers tabs &amp; dark mode</memory_hit>\n',
      "价格是 1234567 元，折扣 25%。Straße, İstanbul, ǅemal — ʰello\u0301!",
      "   leading and trailing   \n \n\t\n   ",
      "https://example.com/a/b?c=d&e=f#g\n/usr/bin/env node\n./x//y",
      "<|endoftext|><|fim_prefix|>special literals are text<|im_end|>",
      "1 22 333 4444 55555 ٣٣٣٣ ²³ ½",
      "😀😃😄 👨‍👩‍👧‍👦 🇺🇸 flags and ZWJ",
      "a\r\nb\rc\nd\n\re",
      "x".repeat(500),
      " ".repeat(300),
      "世界".repeat(400),
    ];
    for (const d of docs) expect(bpe.count(d), JSON.stringify(d.slice(0, 40))).toBe(ref(d));
  });

  it("counts U+FEFF's bytes as tiktoken does", () => {
    const bpe = new BpeCounter(data);
    const pinned: [string, number, number][] = [
      // text, cl100k_base, o200k_base (native tiktoken)
      ["\ufeff", 1, 1],
      ["x\ufeff", 2, 2],
      ["\ufeffhello", 2, 2],
      ["a\ufeff\ufeff", 3, 2],
    ];
    for (const [t, cl, o] of pinned) expect(bpe.count(t)).toBe(encoding === "cl100k_base" ? cl : o);
  });

  it("countUpTo is the count within the limit and above it otherwise", () => {
    const bpe = new BpeCounter(data);
    fc.assert(
      fc.property(joined, fc.integer({ min: -2, max: 30 }), (t, limit) => {
        const n = ref(t);
        const upTo = bpe.countUpTo(t, limit);
        if (n <= limit) expect(upTo).toBe(n);
        else expect(upTo).toBeGreaterThan(limit);
      }),
      { numRuns: 2000 },
    );
  });

  it("countUpToWithNewlines is countUpTo of the joined text, the bound never above the count", () => {
    const bpe = new BpeCounter(data);
    const newlines = fc.constantFrom("\n", "\n\n", "\n\n\n");
    // Limits at and just around the true count: a lower bound that ever passed the count
    // would answer "above the limit" for a limit the text fits in.
    fc.assert(
      fc.property(joined, newlines, fc.integer({ min: -3, max: 1 }), (t, nl, delta) => {
        const n = ref(t + nl);
        const limit = n + delta;
        const upTo = bpe.countUpToWithNewlines(t, nl, limit);
        if (n <= limit) expect(upTo).toBe(n);
        else expect(upTo).toBeGreaterThan(limit);
      }),
      { numRuns: 3000 },
    );
    // Trailing whitespace runs merge with the newlines (the last two pieces change).
    for (const t of ["a\n  ", "a  ", "x.\n ", "word \t", "a\n \n  ", "'s  ", "1 2 3   "]) {
      const n = ref(`${t}\n\n`);
      for (let limit = n - 2; limit <= n; limit++) {
        const upTo = bpe.countUpToWithNewlines(t, "\n\n", limit);
        if (n <= limit) expect(upTo).toBe(n);
        else expect(upTo).toBeGreaterThan(limit);
      }
    }
  });

  it("the built-in counter offers it and stops early", () => {
    const counter = getTokenCounter(encoding);
    const long = "one two three four five six seven eight nine ten";
    expect(counter.countUpTo?.(long, 3)).toBe(4); // stopped at the fourth token
    expect(counter.countUpTo?.(long, 10)).toBe(ref(long));
    expect(counter.count(long)).toBe(ref(long));
  });
});

describe("bpe tables", () => {
  it("are loaded once and shared", () => {
    expect(sharedBpeData("cl100k_base")).toBe(sharedBpeData("cl100k_base"));
    expect(sharedBpeData("o200k_base")).not.toBe(sharedBpeData("cl100k_base"));
  });
  it("estimate and claude_estimate stop at the limit too", () => {
    const est = getTokenCounter("estimate");
    expect(est.countUpTo?.("a b c d e", 2)).toBeGreaterThan(2);
    expect(est.countUpTo?.("a b", 2)).toBe(2);
    const claude = getTokenCounter("claude_estimate");
    const n = claude.count("Hello world, again and again.");
    expect(claude.countUpTo?.("Hello world, again and again!", n + 10)).toBe(
      claude.count("Hello world, again and again!"),
    );
    expect(claude.countUpTo?.("Hello world, again and again!", 1)).toBeGreaterThan(1);
  });
  it("every built-in counts a text with newlines appended as the joined text", () => {
    const texts = ["", "a b c", "Hello, 世界!\n", "x  ", "end.", "one two three four five"];
    for (const name of ["estimate", "o200k_base", "cl100k_base", "claude_estimate"] as const) {
      const c = getTokenCounter(name);
      for (const t of texts) {
        for (const nl of ["\n", "\n\n"]) {
          const n = c.count(t + nl);
          for (let limit = -1; limit <= n + 1; limit++) {
            const upTo = c.countUpToWithNewlines?.(t, nl, limit) as number;
            if (n <= limit) expect(upTo).toBe(n);
            else expect(upTo).toBeGreaterThan(limit);
          }
        }
      }
    }
  });
});
