import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { outputFacts } from "../../src/conversation/count.js";
import {
  clearedNotice,
  elisionNotice,
  type MessageInput,
  planConversation,
  truncateToolOutput,
} from "../../src/conversation/index.js";
import { byTier, quotedLines } from "../../src/conversation/quotes.js";
import { clearedOutput, truncatedOutput } from "../../src/conversation/transforms.js";
import { cpLength } from "../../src/text/index.js";
import { createTokenCounter, getTokenCounter, type TokenCounter } from "../../src/tokens/index.js";
import { calls, lengthCounter, recount, results, text, user } from "./helpers.js";

const NOTICE = /^([\s\S]*)\n\[… (\d+) chars of tool output elided \(call ([^)]*)\) …\]\n([\s\S]*)$/;

/** The cut keeping `keep` code points, built from the spec's words. */
function specCut(output: string, keep: number, callId: string): string {
  const cps = [...output];
  const head = Math.ceil((2 * keep) / 3);
  const tail = keep - head;
  return `${cps.slice(0, head).join("")}\n${elisionNotice(cps.length - keep, callId)}\n${cps
    .slice(cps.length - tail)
    .join("")}`;
}

describe("truncateToolOutput", () => {
  const counters: Record<string, () => TokenCounter> = {
    estimate: () => getTokenCounter("estimate"),
    o200k_base: () => getTokenCounter("o200k_base"),
  };

  it.each(Object.keys(counters))(
    "with %s: head ≈ 2 × tail, notice between, the largest cut that fits",
    (name) => {
      const counter = (counters[name] as () => TokenCounter)();
      const long = fc
        .tuple(text, fc.integer({ min: 20, max: 200 }))
        .map(([t, n]) => (t === "" ? "x" : t).repeat(n));
      fc.assert(
        fc.property(long, fc.integer({ min: 32, max: 120 }), (output, max) => {
          fc.pre(counter.count(output) > max);
          // Lines quoting ids or numbers are kept from the middle (below).
          fc.pre(quotedLines(output).length === 0);
          const cut = truncateToolOutput(output, "call_7", max, counter);
          const m = NOTICE.exec(cut);
          expect(m).not.toBeNull();
          const [, head, elided, callId, tail] = m as unknown as string[];
          expect(callId).toBe("call_7");
          expect(output.startsWith(head as string)).toBe(true);
          expect(output.endsWith(tail as string)).toBe(true);
          const keep = cpLength(head as string) + cpLength(tail as string);
          expect(Number(elided)).toBe(cpLength(output) - keep);
          expect(cpLength(head as string)).toBe(Math.ceil((2 * keep) / 3));
          expect(cut).toBe(specCut(output, keep, "call_7"));
          expect(counter.count(cut)).toBeLessThanOrEqual(max);
          // One more code point kept would not fit.
          if (keep + 1 < cpLength(output)) {
            expect(counter.count(specCut(output, keep + 1, "call_7"))).toBeGreaterThan(max);
          }
        }),
        { numRuns: 150 },
      );
    },
  );

  const KEPT =
    /^([\s\S]*)\n\[… (\d+) chars of tool output elided \(call c9\); (\d+) lines? of it quoting ids or numbers follows? …\]\n([\s\S]*)\n\[… end of the lines kept from the elided output \(call c9\) …\]\n([\s\S]*)$/;
  const fact = fc.oneof(
    fc.stringMatching(/^[a-z]{3,6} id [a-z]-[0-9a-f]{8}$/),
    fc.stringMatching(/^port [0-9]{5}$/),
    fc.stringMatching(/^commit [0-9a-f]{12}$/),
  );
  const filler = fc.stringMatching(/^[g-z ]{0,60}$/);
  const withFacts = fc
    .tuple(fc.array(fc.oneof(filler, filler, filler, fact), { minLength: 40, maxLength: 300 }))
    .map(([lines]) => lines.join("\n"));

  it.each(Object.keys(counters))(
    "with %s: lines of the elided middle quoting ids or numbers are kept, in order, within the limit",
    (name) => {
      const counter = (counters[name] as () => TokenCounter)();
      fc.assert(
        fc.property(withFacts, fc.integer({ min: 60, max: 600 }), (output, max) => {
          fc.pre(counter.count(output) > max);
          const cut = truncateToolOutput(output, "c9", max, counter);
          expect(counter.count(cut)).toBeLessThanOrEqual(max);
          const m = KEPT.exec(cut);
          if (m === null) {
            // No line kept: the plain form, and nothing quoting sits in what it elided.
            const plain = NOTICE.exec(cut) as unknown as string[];
            expect(plain).not.toBeNull();
            return;
          }
          const [, head, elided, n, body, tail] = m as unknown as string[];
          expect(output.startsWith(head as string)).toBe(true);
          expect(output.endsWith(tail as string)).toBe(true);
          const keep = cpLength(head as string) + cpLength(tail as string);
          expect(Number(elided)).toBe(cpLength(output) - keep);
          expect(cpLength(head as string)).toBe(Math.ceil((2 * keep) / 3));
          const kept = (body as string).split("\n");
          expect(kept.length).toBe(Number(n));
          // Each kept line is a whole quoting line of the elided middle, in the output's order.
          const from = (head as string).length;
          const to = output.length - (tail as string).length;
          const inMiddle = quotedLines(output)
            .filter((q) => q.start >= from && q.end <= to)
            .map((q) => q.text);
          let at = 0;
          for (const line of kept) {
            at = inMiddle.indexOf(line, at);
            expect(at).toBeGreaterThanOrEqual(0);
            at += 1;
          }
        }),
        { numRuns: 100 },
      );
    },
  );

  it("keeps a fact from the middle of a long result that would lose it", () => {
    const counter = getTokenCounter("o200k_base");
    const body = Array.from({ length: 400 }, (_, i) => `line ${"lorem ipsum ".repeat(i % 5)}`);
    body.splice(200, 0, "note: build id b-1f2e3a4b");
    const cut = truncateToolOutput(body.join("\n"), "c9", 400, counter);
    expect(cut).toContain("\nnote: build id b-1f2e3a4b\n");
    expect(cut).toMatch(/1 line of it quoting ids or numbers follows/);
    expect(counter.count(cut)).toBeLessThanOrEqual(400);
  });

  it("a cleared result never counts more than the same result cut to the limit", () => {
    const counter = getTokenCounter("o200k_base");
    const big = Array.from(
      { length: 300 },
      (_, i) => `line ${i}: build id b-${(0x1f2e3a00 + i).toString(16)}`,
    ).join("\n");
    for (const max of [32, 60, 200]) {
      const cut = truncateToolOutput(big, "c1", max, counter);
      const cleared = clearedOutput(big, "c1", "bash", counter, max);
      expect(counter.count(cleared)).toBeLessThan(counter.count(cut));
      expect(cleared.startsWith("[tool result cleared (call c1, bash)")).toBe(true);
    }
  });

  it("never splits a surrogate pair", () => {
    const out = truncateToolOutput("😀".repeat(500), "c", 80, lengthCounter());
    expect(out).not.toMatch(
      /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/,
    );
    expect(out.length).toBeLessThanOrEqual(80);
    expect(out.length).toBeGreaterThan(78);
  });
});

const exchange = (turn: number, name: string, output: string): MessageInput[] => [
  user(`u${turn}`, `ask ${turn}`),
  calls(`a${turn}`, [`c${turn}`, name, { turn }]),
  results(`t${turn}`, [`c${turn}`, output]),
];

describe("truncation in a plan", () => {
  it("cuts only results over the limit, records the original tokens, recounts the rest", () => {
    const counter = lengthCounter();
    const big = "0123456789".repeat(30);
    const messages = [
      user("u1", "go"),
      calls("a1", ["c1", "read_file", {}], ["c2", "grep", {}]),
      results("t1", ["c1", big], ["c2", "short"]),
      results("t2x", ["c9", big]), // an orphan: dropped, never truncated into the output
    ];
    const p = planConversation({
      messages,
      budgetTokens: 10_000,
      tokenizer: counter,
      policy: { toolResultMaxTokens: 64 },
    });
    const t1 = p.decisions[2];
    expect(t1?.transforms).toEqual([
      { kind: "tool_result_truncated", callId: "c1", originalTokens: 4 + 300 + 5 },
    ]);
    const sent = p.messages.find((m) => m.id === "t1") as MessageInput;
    const [first, second] = sent.content as { output: string }[];
    expect(first?.output).toBe(truncateToolOutput(big, "c1", 64, counter));
    expect(first?.output.length).toBeLessThanOrEqual(64);
    expect(second?.output).toBe("short");
    expect(t1?.tokens).toBe(recount(sent, (t) => t.length));
    expect(p.decisions[1]?.transforms).toEqual([]);
    // The input is never modified.
    expect(((messages[2] as MessageInput).content[0] as { output: string }).output).toBe(big);
  });

  it("a result at exactly the limit is left whole", () => {
    const p = planConversation({
      messages: exchange(1, "grep", "x".repeat(40)),
      budgetTokens: 1000,
      tokenizer: lengthCounter(),
      policy: { toolResultMaxTokens: 40 },
    });
    expect(p.decisions.every((d) => d.transforms.length === 0)).toBe(true);
  });
});

describe("clearing old tool results", () => {
  const ONE = "contents of one, ".repeat(4);
  const convo = [
    ...exchange(1, "read_file", ONE),
    ...exchange(2, "grep", "matches of two"),
    ...exchange(3, "read_file", "x".repeat(500)),
    ...exchange(4, "run_tests", "all green"),
  ];
  const run = (policy: object, budgetTokens = 100_000) =>
    planConversation({ messages: convo, budgetTokens, tokenizer: lengthCounter(), policy });
  const output = (p: ReturnType<typeof run>, id: string) =>
    ((p.messages.find((m) => m.id === id) as MessageInput).content[0] as { output: string }).output;

  it("replaces results older than the last N turns by a notice, except kept tools", () => {
    const p = run({ clearToolResultsAfterTurns: 2, keepToolResults: ["grep"] });
    expect(p.clearBeforeTurn).toBe(3);
    expect(output(p, "t1")).toBe(clearedNotice("c1", "read_file"));
    expect(output(p, "t1")).toBe("[tool result cleared (call c1, read_file)]");
    expect(output(p, "t2")).toBe("matches of two");
    expect(output(p, "t3")).toBe("x".repeat(500));
    expect(p.decisions[2]?.transforms).toEqual([
      { kind: "tool_result_cleared", callId: "c1", originalTokens: 4 + ONE.length },
    ]);
    expect(p.decisions[2]?.tokens).toBe(4 + clearedNotice("c1", "read_file").length);
  });

  it("never makes a result bigger: one below its notice's size is left as it is", () => {
    const small = [
      ...exchange(1, "read_file", "ok: 21 lines"),
      ...exchange(2, "grep", "n".repeat(40)),
    ];
    const p = planConversation({
      messages: small,
      budgetTokens: 100_000,
      tokenizer: lengthCounter(),
      policy: { clearToolResultsAfterTurns: 1, toolResultMaxTokens: 32 },
    });
    expect(p.decisions[2]?.transforms).toEqual([]);
    expect(output(p, "t1")).toBe("ok: 21 lines");
    // Over a limit below the notice's own size (40 > 32 chars; the notice is longer): not cut.
    expect(p.decisions[5]?.transforms).toEqual([]);
    expect(output(p, "t2")).toBe("n".repeat(40));
  });

  it("never makes a result bigger (property: any output, limit and counter)", () => {
    fc.assert(
      fc.property(
        fc.string({ maxLength: 300 }),
        fc.integer({ min: 32, max: 120 }),
        fc.boolean(),
        (text, max, clear) => {
          const messages = [...exchange(1, "bash", text), ...exchange(2, "grep", "x")];
          for (const tokenizer of [lengthCounter(), "estimate"] as const) {
            const p = planConversation({
              messages,
              budgetTokens: 1_000_000,
              tokenizer,
              policy: {
                toolResultMaxTokens: max,
                clearToolResultsAfterTurns: clear ? 1 : null,
              },
            });
            const d = p.decisions[2];
            const before = d?.transforms[0]?.originalTokens ?? d?.tokens;
            expect(d?.tokens).toBeLessThanOrEqual(before as number);
          }
        },
      ),
      { numRuns: 150 },
    );
  });

  it("keeps the lines of a cleared result that quote ids or numbers, ids first, in a tenth of it", () => {
    const filler = (n: number) =>
      Array.from({ length: n }, (_, i) => `line of plain text ${"z".repeat(i % 7)}`);
    const lines = [
      ...filler(40),
      "took 1234 ms",
      ...filler(40),
      "note: build id b-1f2e3a4b",
      ...filler(40),
      "error code E21206-ab12",
    ];
    const out = clearedOutput(lines.join("\n"), "c9", "bash", lengthCounter());
    const [head, ...kept] = out.split("\n");
    expect(head).toBe(
      "[tool result cleared (call c9, bash); 3 lines of it quoting ids or numbers follow]",
    );
    // In the output's order; all three fit the room (at least 100 tokens).
    expect(kept).toEqual(["took 1234 ms", "note: build id b-1f2e3a4b", "error code E21206-ab12"]);
    // A crowded room (100 tokens, 15 per line): ids first, the number line goes.
    const ids = Array.from({ length: 12 }, (_, i) => `commit ${(0xabcdef0 + i).toString(16)}`);
    const crowded = clearedOutput(
      ["took 1234 ms", ...ids].join("\n"),
      "c8",
      "bash",
      lengthCounter(),
    );
    expect(crowded.split("\n").slice(1)).toEqual(ids.slice(0, 6));
    // Nothing quoted: the notice alone.
    expect(clearedOutput(filler(10).join("\n"), "c7", "grep", lengthCounter())).toBe(
      clearedNotice("c7", "grep"),
    );
  });

  it("clears before truncating, and never truncates a cleared result", () => {
    const p = run({ clearToolResultsAfterTurns: 1, toolResultMaxTokens: 32 });
    expect(p.clearBeforeTurn).toBe(4);
    expect(p.decisions[8]?.transforms.map((t) => t.kind)).toEqual(["tool_result_cleared"]);
    const q = run({ clearToolResultsAfterTurns: 2, toolResultMaxTokens: 32 });
    expect(q.decisions[8]?.transforms.map((t) => t.kind)).toEqual(["tool_result_truncated"]);
  });

  it("is off by default", () => {
    const p = run({});
    expect(p.clearBeforeTurn).toBeNull();
    expect(p.decisions.every((d) => d.transforms.length === 0)).toBe(true);
  });

  it("holds the boundary while the anchor holds, and moves it with the window", () => {
    const policy = { clearToolResultsAfterTurns: 2 };
    const first = planConversation({
      messages: convo.slice(0, 9),
      budgetTokens: 100_000,
      tokenizer: lengthCounter(),
      policy,
    });
    expect(first.clearBeforeTurn).toBe(2);
    expect(first.firstKeptId).toBe("u1");
    const held = run({ ...policy, anchor: first.firstKeptId, clearBeforeTurn: 2 });
    expect(held.firstKeptId).toBe("u1");
    expect(held.clearBeforeTurn).toBe(2);
    // Turn 2 is older than the last 2 turns, but the boundary held: still there.
    expect(output(held, "t2")).toBe("matches of two");
    expect(held.messages.slice(0, 6)).toEqual(first.messages.slice(0, 6));
    // Without the anchor the boundary is where the policy puts it.
    expect(run({ ...policy, clearBeforeTurn: 2 }).clearBeforeTurn).toBe(3);
    // When the anchor no longer fits, the window and the boundary move together.
    const tight = held.usedTokens - 1;
    const moved = run({ ...policy, anchor: "u1", clearBeforeTurn: 2 }, tight);
    expect(moved.firstKeptId).not.toBe("u1");
    expect(moved.clearBeforeTurn).toBe(3);
  });
});

describe("output memo (stateless callers)", () => {
  // Counts every call of its function: no memo of its own (cacheSize 0).
  const tallied = () => {
    const tally = { calls: 0 };
    const counter = createTokenCounter(
      "tally",
      (t) => {
        tally.calls += 1;
        return t.length;
      },
      { cacheSize: 0 },
    );
    return { tally, counter };
  };
  const convo = (): MessageInput[] => [
    ...exchange(1, "read_file", "a".repeat(5000)),
    ...exchange(2, "grep", "b".repeat(3000)),
    ...exchange(3, "grep", "short"),
  ];

  it("a repeated call with new objects cuts nothing again and plans the same", () => {
    const { tally, counter } = tallied();
    const plan = (toolResultMaxTokens: number | null) =>
      planConversation({
        messages: structuredClone(convo()),
        budgetTokens: 100_000,
        tokenizer: counter,
        policy: { toolResultMaxTokens },
      });
    plan(null);
    const plain = tally.calls;
    tally.calls = 0;
    const first = plan(64);
    const cold = tally.calls;
    tally.calls = 0;
    const second = plan(64);
    expect(second).toEqual(first);
    // Warm: what a plan without truncation counts but the 3 tool outputs (outputs and
    // their cuts are remembered by content with their counts).
    expect(tally.calls).toBe(plain - 3);
    expect(cold).toBeGreaterThan(plain + 10);
  });

  it("the memo gives truncateToolOutput's cut, null when the output fits, per call id", () => {
    fc.assert(
      fc.property(fc.string({ maxLength: 400 }), fc.integer({ min: 32, max: 200 }), (s, max) => {
        const counter = lengthCounter();
        const fits = s.length <= max;
        for (const id of ["c1", "c2", "c1"]) {
          const cut = truncatedOutput(s, id, max, counter);
          expect(cut).toBe(fits ? null : truncateToolOutput(s, id, max, counter));
        }
      }),
      { numRuns: 50 },
    );
  });

  it("finds outputs by content, whatever the string object, and never mixes two of one length", () => {
    // Long outputs of few lengths (more than a length's bucket holds), as new strings.
    const output = fc
      .tuple(fc.constantFrom(1024, 1500), fc.string({ minLength: 1, maxLength: 3 }))
      .map(([n, seed]) => seed.repeat(n).slice(0, n));
    fc.assert(
      fc.property(fc.array(output, { minLength: 1, maxLength: 40 }), (outputs) => {
        const counter = createTokenCounter("words", (t) => new Set(t).size, { cacheSize: 0 });
        for (const round of [0, 1]) {
          for (const o of outputs) {
            const fresh = round === 0 ? o : [...o].join("");
            const facts = outputFacts(fresh, counter);
            expect(facts.output).toBe(o);
            expect(facts.tokens).toBe(new Set(o).size);
          }
        }
      }),
      { numRuns: 100 },
    );
  });
});

describe("lines quoting ids", () => {
  it("a hex hash of 7+ digits counts as an id; 6 hex digits and hex-letter words do not", () => {
    const tiers = (t: string) => quotedLines(t).map((q) => q.tier);
    // 6 hex digits counted as ids crowded the facts out of cut results on the wider agent
    // study (64k facts on seeds 10, 19 and 24 fell below the hand-built loop's): a token
    // mixing digits and letters is a tier of its own, after ids, before bare numbers.
    expect(tiers("50667 tests passed (run 812b8f)")).toEqual([1]);
    expect(tiers("run e34d1f")).toEqual([1]);
    expect(tiers("commit a1b2c3d")).toEqual([0]);
    expect(tiers("a facade of a decade")).toEqual([]);
    expect(tiers("utf8 base64 md5sum ipv6")).toEqual([]);
    expect(tiers("id = 57039")).toEqual([2]);
    expect(tiers("run 123456")).toEqual([2]);
  });

  it("keeps ids, then mixed tokens, then bare numbers", () => {
    const lines = quotedLines("port 41234\nrun e34d1f\nbuild b-1f2e3a4b");
    expect(byTier(lines).map((q) => q.text)).toEqual([
      "build b-1f2e3a4b",
      "run e34d1f",
      "port 41234",
    ]);
  });
});
