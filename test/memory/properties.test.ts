/**
 * Properties of docs/memory-selection.md selection over random candidate sets and policies.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  type CandidateInput,
  CandidateSchema,
  gateCandidates,
  type MemoryPlan,
  selectMemoryContext,
} from "../../src/memory/index.js";
import { cpLength, deepFreeze, escapeText, normalizeKey, trimWs } from "../../src/text/index.js";
import {
  createTokenCounter,
  getTokenCounter,
  type TokenCounter,
  type TokenizerName,
} from "../../src/tokens/index.js";
import { arbRequest, arbRequestAndShuffle, type GenRequest } from "./fixtures.js";
import { naiveRank } from "./naive-select.js";

const RUNS = 300;

const arbTokenizer = fc.constantFrom<TokenizerName | "custom">(
  "estimate",
  "o200k_base",
  "cl100k_base",
  "claude_estimate",
  "custom",
);

function counterFor(name: TokenizerName | "custom"): TokenCounter {
  if (name === "custom") {
    return createTokenCounter("words_and_marks", (t) => t.split(/[\s<>"=]+/).length - 1);
  }
  return getTokenCounter(name);
}

function run(req: GenRequest, name: TokenizerName | "custom"): MemoryPlan {
  return selectMemoryContext(req, { tokenCounter: counterFor(name) });
}

const LEVEL = { current_turn: 3, workspace_override: 2, user_default: 1 } as const;

describe("selection properties", () => {
  it("1. output is independent of input order (byte-identical JSON)", () => {
    fc.assert(
      fc.property(arbRequestAndShuffle, arbTokenizer, ([req, shuffled], name) => {
        const a = run(req, name);
        const b = run({ ...req, candidates: shuffled }, name);
        const c = run({ ...req, candidates: [...req.candidates].reverse() }, name);
        expect(JSON.stringify(b)).toBe(JSON.stringify(a));
        expect(JSON.stringify(c)).toBe(JSON.stringify(a));
      }),
      { numRuns: RUNS },
    );
  });

  it("2. budgets and topK are never exceeded; usage figures are exact", () => {
    fc.assert(
      fc.property(arbRequest, arbTokenizer, (req, name) => {
        const plan = run(req, name);
        const counter = counterFor(name);
        const { maxChars, maxTokens, topK } = plan.policy;
        expect(plan.usedChars).toBe(cpLength(plan.context));
        expect(plan.usedTokens).toBe(counter.count(plan.context));
        if (maxChars !== null) expect(plan.usedChars).toBeLessThanOrEqual(maxChars);
        if (maxTokens !== null) expect(counter.count(plan.context)).toBeLessThanOrEqual(maxTokens);
        expect(plan.selectedMemoryIds.length).toBeLessThanOrEqual(topK);
        expect(plan.context === "").toBe(plan.selectedMemoryIds.length === 0);
        if (plan.context !== "") {
          expect(
            plan.context.startsWith(
              `<recalled_memory user_scope="${escapeText(plan.userScope)}" selected="${plan.selectedMemoryIds.length}">\n`,
            ),
          ).toBe(true);
        }
      }),
      { numRuns: RUNS },
    );
  });

  it("3. no other-scope candidate is ever selected or rendered", () => {
    fc.assert(
      fc.property(arbRequest, arbTokenizer, (req, name) => {
        const plan = run(req, name);
        const scope = trimWs(req.userScope);
        expect(plan.userScope).toBe(scope);
        const byId = new Map(req.candidates.map((c) => [c.memoryId, c]));
        for (const id of plan.selectedMemoryIds) expect(byId.get(id)?.userScope).toBe(scope);
        for (const c of req.candidates) {
          if (c.userScope === scope) continue;
          expect(plan.decisions.find((d) => d.memoryId === c.memoryId)?.reason).toBe(
            "scope_mismatch",
          );
          expect(plan.context).not.toContain(`memory_id="${escapeText(c.memoryId)}"`);
        }
        // Every rendered hit carries the query scope.
        const hits = plan.context.split("<memory_hit ").length - 1;
        const scoped =
          plan.context.split(` user_scope="${escapeText(scope)}" source_id=`).length - 1;
        expect(scoped).toBe(hits);
        expect(hits).toBe(plan.selectedMemoryIds.length);
      }),
      { numRuns: RUNS },
    );
  });

  it("4. one decision per candidate in rank order; losers never selected; relations sound", () => {
    fc.assert(
      fc.property(arbRequest, arbTokenizer, (req, name) => {
        const plan = run(req, name);
        const ranked = naiveRank(req.candidates).map((c) => c.memoryId);
        expect(plan.decisions.map((d) => d.memoryId)).toEqual(ranked);
        expect(plan.candidateCount).toBe(req.candidates.length);
        expect(plan.selectedMemoryIds).toEqual(
          plan.decisions.filter((d) => d.reason === "selected").map((d) => d.memoryId),
        );
        expect(plan.rejectedMemoryIds).toEqual(
          plan.decisions.filter((d) => d.reason !== "selected").map((d) => d.memoryId),
        );
        const byId = new Map<string, CandidateInput>(req.candidates.map((c) => [c.memoryId, c]));
        const position = new Map(ranked.map((id, i) => [id, i]));
        const selected = new Set(plan.selectedMemoryIds);
        const slot = (c: CandidateInput) =>
          c.conflictKey === undefined || c.conflictKey === null
            ? null
            : normalizeKey(c.conflictKey);
        for (const d of plan.decisions) {
          expect(d.status === "selected").toBe(d.reason === "selected");
          const c = byId.get(d.memoryId) as CandidateInput;
          const related = ["duplicate_content", "authority_loser", "conflict_loser"].includes(
            d.reason,
          );
          expect(d.relatedMemoryId !== null).toBe(related);
          if (d.relatedMemoryId === null) continue;
          const w = byId.get(d.relatedMemoryId) as CandidateInput;
          expect(selected.has(d.memoryId)).toBe(false);
          expect(position.get(w.memoryId)).toBeLessThan(position.get(d.memoryId) as number);
          expect(slot(w)).toBe(slot(c));
          if (d.reason === "duplicate_content") {
            expect(normalizeKey(w.text)).toBe(normalizeKey(c.text));
          } else {
            expect(slot(c)).not.toBeNull();
            const wl = LEVEL[w.authority ?? "user_default"];
            const cl = LEVEL[c.authority ?? "user_default"];
            expect(d.reason === "authority_loser" ? wl > cl : wl === cl).toBe(true);
          }
        }
        // At most one selected candidate per normalized slot; at most one per content key.
        const slots = plan.selectedMemoryIds
          .map((id) => slot(byId.get(id) as CandidateInput))
          .filter((s) => s !== null);
        expect(new Set(slots).size).toBe(slots.length);
        const keys = plan.selectedMemoryIds.map((id) => {
          const c = byId.get(id) as CandidateInput;
          return JSON.stringify([slot(c), normalizeKey(c.text)]);
        });
        expect(new Set(keys).size).toBe(keys.length);
      }),
      { numRuns: RUNS },
    );
  });

  it("5. replay is byte-identical (same request twice, fresh counters)", () => {
    fc.assert(
      fc.property(arbRequest, arbTokenizer, (req, name) => {
        const first = JSON.stringify(run(req, name));
        const second = JSON.stringify(run(structuredClone(req), name));
        expect(second).toBe(first);
        if (name !== "custom") {
          const byName = JSON.stringify(selectMemoryContext({ ...req, tokenizer: name }));
          expect(byName).toBe(first);
        }
      }),
      { numRuns: RUNS },
    );
  });

  it("a shared counter (warm memo) gives the same plan as a fresh one", () => {
    const shared = getTokenCounter("o200k_base");
    fc.assert(
      fc.property(arbRequest, (req) => {
        const warm = selectMemoryContext(req, { tokenCounter: shared });
        const cold = selectMemoryContext({ ...req, tokenizer: "o200k_base" });
        expect(JSON.stringify(warm)).toBe(JSON.stringify(cold));
      }),
      { numRuns: 100 },
    );
  });
});

describe("gates over frozen candidates", () => {
  it("decide as over fresh copies, on the first call and on the next (property)", () => {
    const counter = getTokenCounter("o200k_base");
    fc.assert(
      fc.property(arbRequest, fc.constantFrom(0, 0.3), (req, minScore) => {
        const seen = new Set<string>();
        const parsed = req.candidates
          .map((c) => CandidateSchema.parse(c))
          .filter((c) => !seen.has(c.memoryId) && seen.add(c.memoryId) !== undefined);
        const scope = trimWs(req.userScope);
        const fresh = () => gateCandidates(structuredClone(parsed), scope, minScore, counter);
        // Frozen candidates keep their normalized texts between calls.
        const frozen = deepFreeze(structuredClone(parsed));
        const expected = JSON.stringify(fresh());
        expect(JSON.stringify(gateCandidates(frozen, scope, minScore, counter))).toBe(expected);
        expect(JSON.stringify(gateCandidates(frozen, scope, minScore, counter))).toBe(expected);
      }),
      { numRuns: 300 },
    );
  });

  it("normalize a candidate that is not frozen each time (its text may have changed)", () => {
    const counter = getTokenCounter("o200k_base");
    const base = (id: string, text: string) =>
      CandidateSchema.parse({
        memoryId: id,
        text,
        userScope: "u1",
        score: 0.9,
        sourceRank: id === "a" ? 1 : 2,
        provenance: {
          sourceId: "s",
          sourceType: "chat",
          title: "t",
          capturedAt: "2026-08-17T09:00:00Z",
        },
      });
    const a = base("a", "Use Python");
    const b = base("b", "use  python");
    const first = gateCandidates([a, b], "u1", 0, counter);
    expect(first.decisions.map((d) => d.reason)).toEqual(["selected", "duplicate_content"]);
    b.text = "use go";
    const second = gateCandidates([a, b], "u1", 0, counter);
    expect(second.decisions.map((d) => d.reason)).toEqual(["selected", "selected"]);
  });
});
