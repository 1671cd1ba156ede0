/**
 * The recall-hit adapter of docs/memory-selection.md: copies fields without recomputing them, slots and
 * authority only from the caller's maps, missing provenance/score is invalid input.
 */
import { describe, expect, it } from "vitest";
import { InvalidInputError } from "../../src/errors/index.js";
import {
  candidatesFromRecallHits,
  type RecallHit,
  selectMemoryContext,
} from "../../src/memory/index.js";

const prov = {
  sourceId: "store:7",
  sourceType: "memory",
  title: "Saved preference",
  capturedAt: "2026-08-17T09:00:00+08:00",
};

function hit(memoryId: string, over: Partial<RecallHit> = {}): RecallHit {
  return {
    memoryId,
    snippet: `snippet of ${memoryId}`,
    userScope: "u1",
    score: 0.5,
    rank: 1,
    provenance: { ...prov },
    ...over,
  };
}

function expectInvalid(fn: () => unknown, path: string): void {
  try {
    fn();
  } catch (err) {
    expect(err).toBeInstanceOf(InvalidInputError);
    expect((err as InvalidInputError).code).toBe("invalid_input");
    expect((err as InvalidInputError).path).toBe(path);
    return;
  }
  throw new Error("expected InvalidInputError");
}

describe("candidatesFromRecallHits", () => {
  it("copies id, snippet, scope, score, rank and provenance without recomputing", () => {
    const [c] = candidatesFromRecallHits([
      hit("m1", {
        snippet: "  Use Python \n",
        userScope: " U1 ",
        score: 0.123456789,
        rank: 42,
      }),
    ]);
    expect(c).toEqual({
      memoryId: "m1",
      text: "  Use Python \n",
      userScope: " U1 ",
      score: 0.123456789,
      sourceRank: 42,
      provenance: prov,
    });
    expect(c).not.toHaveProperty("conflictKey");
    expect(c).not.toHaveProperty("authority");
  });

  it("uses scoreBreakdown.total when there is no score", () => {
    const h = hit("m1", { scoreBreakdown: { total: 0.77 } });
    delete h.score;
    expect(candidatesFromRecallHits([h])[0]?.score).toBe(0.77);
  });

  it("applies the conflictKeys and authorityByMemoryId maps by memoryId", () => {
    const cs = candidatesFromRecallHits([hit("m1"), hit("m2"), hit("m3")], {
      conflictKeys: { m1: "preference:lang", m3: "preference:editor" },
      authorityByMemoryId: { m2: "current_turn", m3: "workspace_override" },
    });
    expect(cs.map((c) => [c.memoryId, c.conflictKey, c.authority])).toEqual([
      ["m1", "preference:lang", undefined],
      ["m2", undefined, "current_turn"],
      ["m3", "preference:editor", "workspace_override"],
    ]);
  });

  it("ids named like Object.prototype members get nothing from empty maps", () => {
    // Regression: a plain `map[id]` lookup gave "constructor" the Object function as slot
    // and authority, which then failed validation.
    const ids = ["constructor", "toString", "__proto__", "hasOwnProperty", "valueOf"];
    const cs = candidatesFromRecallHits(
      ids.map((id) => hit(id)),
      { conflictKeys: {}, authorityByMemoryId: {} },
    );
    for (const c of cs) {
      expect(c).not.toHaveProperty("conflictKey");
      expect(c).not.toHaveProperty("authority");
    }
    const plan = selectMemoryContext({ userScope: "u1", policy: { topK: 10 }, candidates: cs });
    expect(plan.decisions.map((d) => d.reason)).toEqual(ids.map(() => "selected"));
  });

  it("rejects a hit without provenance: hits[i].provenance", () => {
    const h = hit("m2");
    delete h.provenance;
    expectInvalid(() => candidatesFromRecallHits([hit("m1"), h]), "hits[1].provenance");
  });

  it("rejects a hit without score or breakdown: hits[i].score", () => {
    const h = hit("m2");
    delete h.score;
    expectInvalid(() => candidatesFromRecallHits([hit("m1"), h]), "hits[1].score");
    const n = { ...hit("m3"), score: null } as unknown as RecallHit;
    expectInvalid(() => candidatesFromRecallHits([n]), "hits[0].score");
  });

  it("feeds selection: scope compared exactly, authority and slots honoured", () => {
    const cs = candidatesFromRecallHits(
      [
        hit("bash", { snippet: "Use Bash", score: 0.99, rank: 1 }),
        hit("py", { snippet: "Use Python", score: 0.6, rank: 2 }),
        hit("foreign", { snippet: "Other user", userScope: "u1 ", score: 1, rank: 3 }),
      ],
      {
        conflictKeys: {
          bash: "preference:automation-language",
          py: "preference:automation-language",
        },
        authorityByMemoryId: { py: "workspace_override" },
      },
    );
    const plan = selectMemoryContext({ userScope: "u1", candidates: cs });
    expect(plan.decisions.map((d) => [d.memoryId, d.reason, d.relatedMemoryId])).toEqual([
      ["py", "selected", null],
      ["foreign", "scope_mismatch", null],
      ["bash", "authority_loser", "py"],
    ]);
  });

  it("out-of-range values are copied, then rejected by selection with candidate paths", () => {
    const cs = candidatesFromRecallHits([hit("m1"), hit("m2", { score: 1.5 })]);
    expect(cs[1]?.score).toBe(1.5);
    expectInvalid(
      () => selectMemoryContext({ userScope: "u1", candidates: cs }),
      "candidates[1].score",
    );
  });
});
