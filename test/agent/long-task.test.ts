/**
 * The long-task generator of the bench (bench/lib/long-task.mjs, section `agent-long`) and
 * the loops over it at a small size: the task's shape (one ask, nudges when asked, every
 * needed fact from a result at most `needReach` rounds back and still present in the full
 * history), its requests in order, and the server-side clearing loop against the
 * hand-built one it edits.
 */
import { describe, expect, it } from "vitest";
import { runLoop } from "../../bench/lib/agent-loops.mjs";
import { sessionRequests } from "../../bench/lib/agent-session.mjs";
import { makeLongTask } from "../../bench/lib/long-task.mjs";
import * as pc from "../../src/index.js";

const text = (m: { content: unknown }) => JSON.stringify(m.content);

describe("the long-task generator", () => {
  it("is one ask and its rounds, deterministic by seed, 100–300 rounds when not given", () => {
    const a = makeLongTask({ seed: 7 });
    expect(makeLongTask({ seed: 7 })).toEqual(a);
    expect(a.turns).toHaveLength(1);
    const rounds = a.turns[0]?.rounds.length ?? 0;
    expect(rounds).toBeGreaterThanOrEqual(100);
    expect(rounds).toBeLessThanOrEqual(300);
    expect(a.turns[0]?.answer).not.toBeNull();
  });

  it("a nudge every 5 rounds starts a turn with no answer of its own", () => {
    const t = makeLongTask({ seed: 3, requests: 23, nudgeEvery: 5 });
    expect(t.turns.map((x) => x.rounds.length)).toEqual([5, 5, 5, 5, 3]);
    expect(t.turns.slice(0, -1).every((x) => x.answer === null)).toBe(true);
    expect(t.turns.at(-1)?.answer).not.toBeNull();
  });

  it("each request carries history up to it, and its needs are facts of earlier results in reach", () => {
    const t = makeLongTask({ seed: 11, requests: 60, nudgeEvery: 7, needReach: 10 });
    let requests = 0;
    let needs = 0;
    for (const req of sessionRequests(t)) {
      requests++;
      const last = req.messages.at(-1);
      expect(last?.role).not.toBe("assistant");
      const history = req.messages.map(text).join("\n");
      for (const f of req.needs) {
        needs++;
        expect(history).toContain(f);
        // Reach: the fact is in one of the last 10 rounds' results (a round is 1–2 results).
        const recent = req.messages.slice(-40).map(text).join("\n");
        expect(recent).toContain(f);
      }
    }
    expect(requests).toBe(61); // one per round and the final answer's
    expect(needs).toBeGreaterThan(10);
  });
});

describe("the loops over a long task", () => {
  it("server-side clearing: fewer requests over the window than the hand-built loop, fewer facts kept", async () => {
    const t = makeLongTask({ seed: 5, requests: 40 });
    const server = await runLoop(pc, t, "server-cleared", 64_000);
    const hand = await runLoop(pc, t, "hand-built", 64_000);
    expect(server.requests).toBe(41);
    expect(server.refused).toBe(0);
    expect(hand.overWindow).toBeGreaterThan(server.overWindow);
    expect(server.factsKept).toBeLessThan(hand.factsKept);
    expect(server.orphans).toBe(0);
  });
});
