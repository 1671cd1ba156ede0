/**
 * docs/memory-selection.md selection behaviour: every reason code, the worked A/B/C example, gates,
 * dedupe, conflict slots, top-k and budget packing.
 */
import { describe, expect, it } from "vitest";
import {
  type CandidateInput,
  type MemoryDecision,
  type MemoryPlan,
  renderMemoryBlock,
  renderMemoryHit,
  type SelectMemoryRequest,
  selectMemoryContext,
} from "../../src/memory/index.js";
import { cpLength } from "../../src/text/index.js";
import { createTokenCounter, getTokenCounter, type TokenCounter } from "../../src/tokens/index.js";
import { cand } from "./fixtures.js";

function select(
  candidates: CandidateInput[],
  policy: SelectMemoryRequest["policy"] = {},
  userScope = "u1",
): MemoryPlan {
  return selectMemoryContext({ userScope, policy, candidates });
}

function decisionOf(plan: MemoryPlan, id: string): MemoryDecision {
  const d = plan.decisions.find((x) => x.memoryId === id);
  if (d === undefined) throw new Error(`no decision for ${id}`);
  return d;
}

function reasons(plan: MemoryPlan): Array<[string, string, string | null]> {
  return plan.decisions.map((d) => [d.memoryId, d.reason, d.relatedMemoryId]);
}

/** Chars and estimate tokens of the block made of these candidates' hits. */
function blockSize(cands: CandidateInput[], scope = "u1"): { chars: number; tokens: number } {
  const block = renderMemoryBlock(
    scope,
    cands.map((c) => renderMemoryHit(c)),
  );
  return { chars: cpLength(block), tokens: getTokenCounter("estimate").count(block) };
}

describe("reason codes", () => {
  it("selected: relatedMemoryId null, detail names the hit position", () => {
    const plan = select([cand("m1", "Use Python"), cand("m2", "Use Bash", { score: 0.5 })]);
    expect(reasons(plan)).toEqual([
      ["m1", "selected", null],
      ["m2", "selected", null],
    ]);
    expect(decisionOf(plan, "m1")).toMatchObject({
      status: "selected",
      detail: "selected as hit 1",
    });
    expect(decisionOf(plan, "m2").detail).toBe("selected as hit 2");
  });

  it("scope_mismatch: relatedMemoryId null, detail quotes the foreign scope", () => {
    const plan = select([cand("m1", "secret", { userScope: "u2", score: 1 })]);
    const d = decisionOf(plan, "m1");
    expect(d).toMatchObject({
      status: "rejected",
      reason: "scope_mismatch",
      relatedMemoryId: null,
    });
    expect(d.detail).toBe('scope "u2" is not the query scope');
    expect(plan.context).toBe("");
  });

  it("low_confidence: detail gives the score and minScore", () => {
    const plan = select([cand("m1", "maybe", { score: 0.2 })], { minScore: 0.35 });
    const d = decisionOf(plan, "m1");
    expect(d).toMatchObject({
      status: "rejected",
      reason: "low_confidence",
      relatedMemoryId: null,
    });
    expect(d.detail).toBe("score 0.200000 is below minScore 0.350000");
  });

  it("duplicate_content: related to the stronger-ranked original", () => {
    const plan = select([
      cand("weak", "use python", { score: 0.5 }),
      cand("strong", "Use Python", { score: 0.9 }),
    ]);
    expect(reasons(plan)).toEqual([
      ["strong", "selected", null],
      ["weak", "duplicate_content", "strong"],
    ]);
    expect(decisionOf(plan, "weak").detail).toBe("same content as strong");
  });

  it("authority_loser: lower authority than the slot winner, related to the winner", () => {
    const plan = select([
      cand("ud", "Use Bash", { conflictKey: "pref:lang", score: 0.99 }),
      cand("ws", "Use Python", {
        conflictKey: "pref:lang",
        authority: "workspace_override",
        score: 0.5,
      }),
    ]);
    expect(reasons(plan)).toEqual([
      ["ws", "selected", null],
      ["ud", "authority_loser", "ws"],
    ]);
    expect(decisionOf(plan, "ud").detail).toBe(
      'slot "pref:lang" is held by ws with higher authority workspace_override',
    );
  });

  it("conflict_loser: equal authority, lower rank, related to the winner", () => {
    const plan = select([
      cand("lo", "Use Bash", { conflictKey: "pref:lang", score: 0.6 }),
      cand("hi", "Use Python", { conflictKey: "pref:lang", score: 0.8 }),
    ]);
    expect(reasons(plan)).toEqual([
      ["hi", "selected", null],
      ["lo", "conflict_loser", "hi"],
    ]);
    expect(decisionOf(plan, "lo").detail).toBe('slot "pref:lang" is held by higher-ranked hi');
  });

  it("top_k_reached: detail names topK", () => {
    const plan = select([cand("a", "one"), cand("b", "two", { score: 0.8 })], { topK: 1 });
    expect(reasons(plan)).toEqual([
      ["a", "selected", null],
      ["b", "top_k_reached", null],
    ]);
    expect(decisionOf(plan, "b").detail).toBe("topK 1 already selected");
  });

  it("char_budget_exceeded: a block one char over; exactly at the budget passes", () => {
    const c = cand("m1", "Use Python");
    const { chars } = blockSize([c]);
    const over = select([c], { maxChars: chars - 1, maxTokens: null });
    expect(decisionOf(over, "m1")).toMatchObject({
      reason: "char_budget_exceeded",
      relatedMemoryId: null,
      detail: `would use ${chars} chars; budget is ${chars - 1}`,
    });
    expect(over.context).toBe("");
    expect(select([c], { maxChars: chars, maxTokens: null }).selectedMemoryIds).toEqual(["m1"]);
  });

  it("token_budget_exceeded: a block one token over; exactly at the budget passes", () => {
    const c = cand("m1", "Use Python");
    const { tokens } = blockSize([c]);
    const over = select([c], { maxChars: null, maxTokens: tokens - 1 });
    expect(decisionOf(over, "m1")).toMatchObject({
      reason: "token_budget_exceeded",
      relatedMemoryId: null,
      detail: `would use ${tokens} tokens; budget is ${tokens - 1}`,
    });
    const fits = select([c], { maxChars: null, maxTokens: tokens });
    expect(fits.selectedMemoryIds).toEqual(["m1"]);
    expect(fits.usedTokens).toBe(tokens);
  });

  it("the char budget is checked before the token budget", () => {
    const c = cand("m1", "Use Python");
    const plan = select([c], { maxChars: 0, maxTokens: 0 });
    expect(decisionOf(plan, "m1").reason).toBe("char_budget_exceeded");
  });

  it("budgets measure the whole block, wrapper included, for N+1 hits", () => {
    const a = cand("a", "first fact");
    const b = cand("b", "second fact", { score: 0.8 });
    const two = blockSize([a, b]).chars;
    const plan = select([a, b], { maxChars: two - 1, maxTokens: null });
    expect(reasons(plan)).toEqual([
      ["a", "selected", null],
      ["b", "char_budget_exceeded", null],
    ]);
    expect(decisionOf(plan, "b").detail).toBe(`would use ${two} chars; budget is ${two - 1}`);
    expect(select([a, b], { maxChars: two, maxTokens: null }).selectedMemoryIds).toEqual([
      "a",
      "b",
    ]);
  });
});

describe("worked example of spec 02 (slots matter more than text)", () => {
  const A = cand("A", "Use Python", {
    authority: "current_turn",
    conflictKey: "preference:analysis-language",
    score: 0.6,
  });
  const B = cand("B", "Use Python", {
    authority: "workspace_override",
    conflictKey: "preference:automation-language",
    score: 0.6,
  });
  const C = cand("C", "Use Bash", {
    authority: "user_default",
    conflictKey: "preference:automation-language",
    score: 0.99,
  });

  it("A and B are both selected (different slots), C loses to B by authority", () => {
    for (const order of [
      [A, B, C],
      [C, B, A],
      [B, C, A],
    ]) {
      const plan = select(order, { maxChars: null, maxTokens: null });
      expect(reasons(plan)).toEqual([
        ["A", "selected", null],
        ["B", "selected", null],
        ["C", "authority_loser", "B"],
      ]);
      expect(plan.selectedMemoryIds).toEqual(["A", "B"]);
      expect(plan.rejectedMemoryIds).toEqual(["C"]);
    }
  });

  it("a tight budget that drops B does not bring C back", () => {
    // The budget is exactly what A + C would use: B's hit is longer (its authority
    // attribute and text), so B is dropped while C would fit. C still stays out.
    const budget = blockSize([A, C]).chars;
    expect(blockSize([A, B]).chars).toBeGreaterThan(budget);
    const plan = select([C, B, A], { maxChars: budget, maxTokens: null });
    expect(reasons(plan)).toEqual([
      ["A", "selected", null],
      ["B", "char_budget_exceeded", null],
      ["C", "authority_loser", "B"],
    ]);
    expect(plan.context).toBe(renderMemoryBlock("u1", [renderMemoryHit(A)]));
    expect(plan.context).not.toContain("Use Bash");
  });

  it("even when B is dropped by topK, C stays out", () => {
    const plan = select([A, B, C], { topK: 1 });
    expect(reasons(plan)).toEqual([
      ["A", "selected", null],
      ["B", "top_k_reached", null],
      ["C", "authority_loser", "B"],
    ]);
  });
});

describe("packing", () => {
  it("a winner dropped by budget keeps its losers out; other hits still fill", () => {
    const winner = cand("w", `Use Python ${"x".repeat(400)}`, {
      conflictKey: "pref:lang",
      score: 0.9,
    });
    const loser = cand("l", "Use Bash", { conflictKey: "pref:lang", score: 0.8 });
    const other = cand("o", "Likes tea", { score: 0.4 });
    const budget = blockSize([other]).chars + 50;
    const plan = select([loser, other, winner], { maxChars: budget, maxTokens: null });
    expect(reasons(plan)).toEqual([
      ["w", "char_budget_exceeded", null],
      ["l", "conflict_loser", "w"],
      ["o", "selected", null],
    ]);
  });

  it("an oversized hit does not stop packing: smaller lower-ranked hits backfill", () => {
    const big = cand("big", "y ".repeat(2000), { score: 0.99 });
    const s1 = cand("s1", "small one", { score: 0.8 });
    const s2 = cand("s2", "small two", { score: 0.7 });
    const s3 = cand("s3", "small three", { score: 0.6 });
    const plan = select([s3, big, s2, s1], { topK: 2, maxChars: 1200, maxTokens: null });
    expect(reasons(plan)).toEqual([
      ["big", "char_budget_exceeded", null],
      ["s1", "selected", null],
      ["s2", "selected", null],
      ["s3", "top_k_reached", null],
    ]);
    expect(plan.context).toBe(renderMemoryBlock("u1", [renderMemoryHit(s1), renderMemoryHit(s2)]));
  });

  it("a hit that busts the token budget is skipped and a smaller one still fits", () => {
    const big = cand("big", "word ".repeat(300), { score: 0.99 });
    const small = cand("small", "tiny", { score: 0.5 });
    const budget = blockSize([small]).tokens;
    const plan = select([big, small], { maxChars: null, maxTokens: budget });
    expect(reasons(plan)).toEqual([
      ["big", "token_budget_exceeded", null],
      ["small", "selected", null],
    ]);
    expect(plan.usedTokens).toBe(budget);
  });

  it("topK = 0: every eligible candidate is top_k_reached; gates still apply; context empty", () => {
    const plan = select(
      [
        cand("a", "one"),
        cand("b", "ONE"),
        cand("c", "two", { userScope: "u2" }),
        cand("d", "three", { score: 0.1 }),
        cand("e", "four", { score: 0.5 }),
      ],
      { topK: 0 },
    );
    expect(reasons(plan)).toEqual([
      ["a", "top_k_reached", null],
      ["b", "duplicate_content", "a"],
      ["c", "scope_mismatch", null],
      ["e", "top_k_reached", null],
      ["d", "low_confidence", null],
    ]);
    expect(plan.context).toBe("");
    expect(plan.usedChars).toBe(0);
    expect(plan.usedTokens).toBe(0);
    expect(plan.selectedMemoryIds).toEqual([]);
  });

  it("unbounded budgets (null) select everything eligible up to topK", () => {
    const many = Array.from({ length: 8 }, (_, i) =>
      cand(`m${i}`, `fact number ${i} ${"z".repeat(600)}`, { score: 0.9 - i * 0.01 }),
    );
    const plan = select(many, { topK: 6, maxChars: null, maxTokens: null });
    expect(plan.selectedMemoryIds).toEqual(["m0", "m1", "m2", "m3", "m4", "m5"]);
    expect(plan.decisions.slice(6).map((d) => d.reason)).toEqual([
      "top_k_reached",
      "top_k_reached",
    ]);
    expect(plan.usedChars).toBeGreaterThan(3000);
    expect(plan.usedChars).toBe(cpLength(plan.context));
    expect(plan.usedTokens).toBe(getTokenCounter("estimate").count(plan.context));
    expect(plan.policy).toEqual({ minScore: 0.35, topK: 6, maxChars: null, maxTokens: null });
  });

  it("default policy is applied and echoed", () => {
    const plan = selectMemoryContext({ userScope: "u1", candidates: [cand("m1", "x")] });
    expect(plan.policy).toEqual({ minScore: 0.35, topK: 5, maxChars: 3000, maxTokens: 800 });
    expect(plan.tokenizer).toBe("estimate");
  });

  it("empty candidate list: context '', zero usage, no wrapper", () => {
    const plan = select([]);
    expect(plan).toMatchObject({
      context: "",
      usedChars: 0,
      usedTokens: 0,
      candidateCount: 0,
      selectedMemoryIds: [],
      rejectedMemoryIds: [],
      decisions: [],
    });
  });

  it("nothing selected: no empty wrapper", () => {
    const plan = select([cand("m1", "x", { userScope: "other" }), cand("m2", "y", { score: 0 })]);
    expect(plan.context).toBe("");
    expect(plan.usedChars).toBe(0);
    expect(plan.usedTokens).toBe(0);
    expect(plan.context).not.toContain("recalled_memory");
  });
});

describe("gates", () => {
  it("current_turn cannot pass the scope gate, whatever its score", () => {
    const plan = select([
      cand("ct", "Do X", { authority: "current_turn", score: 1, userScope: "u2" }),
    ]);
    expect(decisionOf(plan, "ct").reason).toBe("scope_mismatch");
  });

  it("current_turn cannot pass the confidence gate", () => {
    const plan = select([cand("ct", "Do X", { authority: "current_turn", score: 0.34 })]);
    expect(decisionOf(plan, "ct").reason).toBe("low_confidence");
  });

  it("a score equal to minScore passes", () => {
    expect(select([cand("m", "x", { score: 0.35 })]).selectedMemoryIds).toEqual(["m"]);
    expect(select([cand("m", "x", { score: 0.7 })], { minScore: 0.7 }).selectedMemoryIds).toEqual([
      "m",
    ]);
    expect(select([cand("m", "x", { score: 1 })], { minScore: 1 }).selectedMemoryIds).toEqual([
      "m",
    ]);
    expect(select([cand("m", "x", { score: 0 })], { minScore: 0 }).selectedMemoryIds).toEqual([
      "m",
    ]);
  });

  it("gated candidates do not take part in dedupe or conflicts", () => {
    const plan = select([
      cand("foreign", "Use Python", { userScope: "u2", score: 1, authority: "current_turn" }),
      cand("unsure", "Use Bash", {
        conflictKey: "pref:lang",
        score: 0.1,
        authority: "current_turn",
      }),
      cand("dup", "use python", { score: 0.5 }),
      cand("slot", "Use Zsh", { conflictKey: "pref:lang", score: 0.5 }),
    ]);
    expect(reasons(plan)).toEqual([
      ["foreign", "scope_mismatch", null],
      ["unsure", "low_confidence", null],
      ["dup", "selected", null],
      ["slot", "selected", null],
    ]);
  });

  it("userScope is compared exactly; the query scope is trimmed once", () => {
    const plan = selectMemoryContext({
      userScope: " u1 ",
      candidates: [
        cand("ok", "a"),
        cand("upper", "b", { userScope: "U1" }),
        cand("lead", "c", { userScope: " u1" }),
        cand("zw", "d", { userScope: "u1\u200b" }),
        cand("padded", "e", { userScope: " u1 " }),
      ],
    });
    expect(plan.userScope).toBe("u1");
    expect(plan.selectedMemoryIds).toEqual(["ok"]);
    for (const id of ["upper", "lead", "zw", "padded"]) {
      expect(decisionOf(plan, id).reason).toBe("scope_mismatch");
    }
    expect(plan.context.startsWith('<recalled_memory user_scope="u1" selected="1">\n')).toBe(true);
  });
});

describe("dedupe", () => {
  it("full-width, case and whitespace variants are duplicates of the first in rank", () => {
    const plan = select([
      cand("a", "Use Python", { score: 0.9 }),
      cand("b", "ＵＳＥ  Python\n", { score: 0.8 }),
      cand("c", "USE PYTHON", { score: 0.7 }),
      cand("d", "\tuse\u3000python ", { score: 0.6 }),
      cand("e", "straße", { score: 0.5 }),
      cand("f", "STRASSE", { score: 0.4 }),
    ]);
    expect(reasons(plan)).toEqual([
      ["a", "selected", null],
      ["b", "duplicate_content", "a"],
      ["c", "duplicate_content", "a"],
      ["d", "duplicate_content", "a"],
      ["e", "selected", null],
      ["f", "duplicate_content", "e"],
    ]);
  });

  it("the same text under different slots is not a duplicate", () => {
    const plan = select([
      cand("a", "Use Python", { conflictKey: "preference:analysis-language" }),
      cand("b", "Use Python", { conflictKey: "preference:automation-language", score: 0.8 }),
    ]);
    expect(plan.selectedMemoryIds).toEqual(["a", "b"]);
  });

  it("a slot-less candidate only dedupes against slot-less ones", () => {
    const plan = select([
      cand("slotted", "Use Python", { conflictKey: "pref:lang", score: 0.9 }),
      cand("free", "use python", { score: 0.8 }),
      cand("free2", "USE PYTHON", { score: 0.7, conflictKey: null }),
    ]);
    expect(reasons(plan)).toEqual([
      ["slotted", "selected", null],
      ["free", "selected", null],
      ["free2", "duplicate_content", "free"],
    ]);
  });

  it("the same text in normalizeKey-equal slots is a duplicate (dedupe precedes conflicts)", () => {
    const plan = select([
      cand("a", "Use Python", { conflictKey: "Preference:X", score: 0.9 }),
      cand("b", "use python", { conflictKey: "preference:x ", score: 0.8 }),
    ]);
    expect(reasons(plan)).toEqual([
      ["a", "selected", null],
      ["b", "duplicate_content", "a"],
    ]);
  });

  it("dedupe precedes conflicts: a copy of a conflict loser is that loser's duplicate", () => {
    const plan = select([
      cand("w", "Use Python", { conflictKey: "k", score: 0.9 }),
      cand("l", "Use Bash", { conflictKey: "k", score: 0.8 }),
      cand("l2", "use  BASH", { conflictKey: "K", score: 0.7 }),
    ]);
    expect(reasons(plan)).toEqual([
      ["w", "selected", null],
      ["l", "conflict_loser", "w"],
      ["l2", "duplicate_content", "l"],
    ]);
  });

  it("a duplicate of an original dropped by budget stays a duplicate", () => {
    const big = cand("big", "Use Python", {
      score: 0.9,
      provenance: { ...cand("x", "x").provenance, sourceId: "s".repeat(500) },
    });
    const copy = cand("copy", "use python", { score: 0.8 });
    const plan = select([copy, big], { maxChars: 500, maxTokens: null });
    expect(reasons(plan)).toEqual([
      ["big", "char_budget_exceeded", null],
      ["copy", "duplicate_content", "big"],
    ]);
    expect(plan.context).toBe("");
  });

  it("no collision between (slot, text) pairs that concatenate alike", () => {
    // Regression: the key was once slot + "\0" + text, so these two collided.
    const plan = select([
      cand("a", "c", { conflictKey: "x\u0000y" }),
      cand("b", "y\u0000c", { conflictKey: "x", score: 0.8 }),
    ]);
    expect(plan.selectedMemoryIds).toEqual(["a", "b"]);
  });
});

describe("conflict slots", () => {
  it("conflict keys are compared by normalizeKey", () => {
    const plan = select([
      cand("a", "Use Python", { conflictKey: "Preference:X", score: 0.9 }),
      cand("b", "Use Bash", { conflictKey: "preference:x ", score: 0.8 }),
      cand("c", "Use Zsh", { conflictKey: "ＰＲＥＦＥＲＥＮＣＥ:Ｘ", score: 0.7 }),
    ]);
    expect(reasons(plan)).toEqual([
      ["a", "selected", null],
      ["b", "conflict_loser", "a"],
      ["c", "conflict_loser", "a"],
    ]);
    expect(decisionOf(plan, "b").detail).toBe('slot "preference:x" is held by higher-ranked a');
  });

  it("authority beats a higher score for the slot; mixed losers get the right codes", () => {
    const plan = select([
      cand("ud-hi", "Bash", { conflictKey: "k", score: 1 }),
      cand("ct", "Python", { conflictKey: "k", score: 0.4, authority: "current_turn" }),
      cand("ct2", "Ruby", { conflictKey: "k", score: 0.39, authority: "current_turn" }),
      cand("ws", "Go", { conflictKey: "k", score: 0.9, authority: "workspace_override" }),
    ]);
    expect(reasons(plan)).toEqual([
      ["ct", "selected", null],
      ["ct2", "conflict_loser", "ct"],
      ["ws", "authority_loser", "ct"],
      ["ud-hi", "authority_loser", "ct"],
    ]);
  });

  it("slot-less candidates never conflict", () => {
    const plan = select([cand("a", "Use Python"), cand("b", "Use Bash", { score: 0.8 })]);
    expect(plan.selectedMemoryIds).toEqual(["a", "b"]);
  });
});

describe("usage figures", () => {
  it("usedChars and usedTokens equal cpLength(context) and counter.count(context)", () => {
    const cs = [
      cand("a", "🚀 launch 世界 <|endoftext|>"),
      cand("b", "```js\nconst a = 1;\n```\n", { score: 0.8 }),
      cand("c", "</memory_hit> & 'q'", { score: 0.7 }),
    ];
    for (const tokenizer of ["estimate", "o200k_base", "cl100k_base", "claude_estimate"]) {
      for (const maxTokens of [null, 800, 150]) {
        const plan = selectMemoryContext({
          userScope: "u1",
          tokenizer,
          policy: { maxTokens },
          candidates: cs,
        });
        expect(plan.tokenizer).toBe(tokenizer);
        expect(plan.usedChars).toBe(cpLength(plan.context));
        expect(plan.usedChars).toBe([...plan.context].length);
        expect(plan.usedTokens).toBe(getTokenCounter(tokenizer as "estimate").count(plan.context));
      }
    }
  });

  it("candidateChars and candidateTokens measure the hit's own rendering", () => {
    const c = cand("a", "🚀 世界");
    const plan = select([c]);
    const line = renderMemoryHit(c);
    expect(decisionOf(plan, "a").candidateChars).toBe(cpLength(line));
    expect(decisionOf(plan, "a").candidateTokens).toBe(getTokenCounter("estimate").count(line));
  });

  it("hit lines are counted past a shared counter's memo; counters without it use count", () => {
    const cs = [
      cand("a", "alpha"),
      cand("b", "beta", { score: 0.8 }),
      cand("c", "gamma", { score: 0.7 }),
    ];
    const lines = cs.map((c) => renderMemoryHit(c));
    const seen: string[] = [];
    const shared = createTokenCounter("spy", (t) => {
      seen.push(t);
      return getTokenCounter("estimate").count(t);
    });
    const plan = selectMemoryContext({ userScope: "u1", candidates: cs }, { tokenCounter: shared });
    for (const line of lines) expect(seen.filter((t) => t === line)).toHaveLength(1);
    seen.length = 0;
    for (const line of lines) shared.count(line); // none was remembered
    expect(seen).toEqual(lines);
    // A hand-written counter with count only gives the same plan.
    const plain = getTokenCounter("estimate");
    const bare: TokenCounter = {
      name: "spy",
      kind: "exact",
      newlineCut: false,
      count: (t) => plain.count(t),
    };
    expect(
      selectMemoryContext({ userScope: "u1", candidates: cs }, { tokenCounter: bare }),
    ).toEqual(plan);
  });
});
