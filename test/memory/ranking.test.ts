/**
 * The single ranking of docs/memory-selection.md: authority desc → score desc → sourceRank asc →
 * capturedAt desc (instant) → memoryId asc (code points). Decisions come in rank order.
 */
import { describe, expect, it } from "vitest";
import { type CandidateInput, selectMemoryContext } from "../../src/memory/index.js";
import { cand, PROV } from "./fixtures.js";

function order(candidates: CandidateInput[]): string[] {
  const forward = selectMemoryContext({
    userScope: "u1",
    policy: { topK: 0 },
    candidates,
  }).decisions.map((d) => d.memoryId);
  const backward = selectMemoryContext({
    userScope: "u1",
    policy: { topK: 0 },
    candidates: [...candidates].reverse(),
  }).decisions.map((d) => d.memoryId);
  expect(backward).toEqual(forward);
  return forward;
}

const at = (capturedAt: string) => ({ provenance: { ...PROV, capturedAt } });

describe("ranking", () => {
  it("authority first, over score", () => {
    expect(
      order([
        cand("ud", "a", { score: 1 }),
        cand("ws", "b", { score: 0.5, authority: "workspace_override" }),
        cand("ct", "c", { score: 0.36, authority: "current_turn" }),
      ]),
    ).toEqual(["ct", "ws", "ud"]);
  });

  it("then score desc", () => {
    expect(
      order([
        cand("a", "a", { score: 0.5 }),
        cand("b", "b", { score: 0.9 }),
        cand("c", "c", { score: 0.7 }),
      ]),
    ).toEqual(["b", "c", "a"]);
  });

  it("then sourceRank asc", () => {
    expect(
      order([
        cand("a", "a", { sourceRank: 3 }),
        cand("b", "b", { sourceRank: 1 }),
        cand("c", "c", { sourceRank: 2 }),
      ]),
    ).toEqual(["b", "c", "a"]);
  });

  it("then capturedAt desc by instant: offsets honoured, naive = UTC", () => {
    // As strings, "…T09:00:00+08:00" would sort first; as instants it is the oldest.
    expect(
      order([
        cand("plus8", "a", at("2026-08-17T09:00:00+08:00")), // 01:00Z
        cand("zulu", "b", at("2026-08-17T02:00:00Z")), // 02:00Z
        cand("naive", "c", at("2026-08-17T01:30:00")), // 01:30Z
        cand("frac", "d", at("2026-08-17T01:00:00.000000001Z")), // 1 ns after plus8
        cand("minus", "e", at("2026-08-16T20:00:00-05:00")), // 01:00Z too: ties with plus8 → memoryId
      ]),
    ).toEqual(["zulu", "naive", "frac", "minus", "plus8"]);
  });

  it("equal instants in different spellings fall through to memoryId", () => {
    expect(
      order([
        cand("c", "a", at("2026-08-17T09:00:00+08:00")),
        cand("a", "b", at("2026-08-17T01:00:00Z")),
        cand("b", "c", at("2026-08-17T01:00:00")),
      ]),
    ).toEqual(["a", "b", "c"]);
  });

  it("then memoryId asc by code point, not UTF-16 unit and not locale", () => {
    // UTF-16 units put "😀" (D83D…) before "\uffff"; code points put it after.
    expect(
      order([
        cand("😀", "a"),
        cand("\uffff", "b"),
        cand("b", "c"),
        cand("B", "d"),
        cand("é", "e"),
        cand("a", "f"),
        cand("ab", "g"),
      ]),
    ).toEqual(["B", "a", "ab", "b", "é", "\uffff", "😀"]);
  });

  it("decisions follow the ranking whatever the reasons", () => {
    const plan = selectMemoryContext({
      userScope: "u1",
      policy: { topK: 1 },
      candidates: [
        cand("low", "x", { score: 0.1, authority: "current_turn" }),
        cand("foreign", "y", { userScope: "u9", score: 0.2 }),
        cand("sel", "z", { score: 0.9 }),
        cand("topk", "w", { score: 0.8 }),
      ],
    });
    expect(plan.decisions.map((d) => [d.memoryId, d.reason])).toEqual([
      ["low", "low_confidence"],
      ["sel", "selected"],
      ["topk", "top_k_reached"],
      ["foreign", "scope_mismatch"],
    ]);
    expect(plan.selectedMemoryIds).toEqual(["sel"]);
    expect(plan.rejectedMemoryIds).toEqual(["low", "topk", "foreign"]);
  });
});
