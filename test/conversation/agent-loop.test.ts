import { describe, expect, it } from "vitest";
import {
  type ConversationPlan,
  createConversationPlanner,
  type MessageInput,
} from "../../src/conversation/index.js";
import { getTokenCounter } from "../../src/tokens/index.js";
import { assertNoOrphans, calls, recount, results, say, user } from "./helpers.js";

// A seeded generator (mulberry32): the same loop every run.
function prng(seed: number) {
  let s = seed >>> 0;
  const next = () => {
    s = (s + 0x6d2b79f5) >>> 0;
    let t = s;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  const int = (lo: number, hi: number) => lo + Math.floor(next() * (hi - lo + 1));
  const WORDS = ["read", "the", "file", "世界", "テスト", "🚀", "error:", "fn", "{", "ok", "diff"];
  const words = (lo: number, hi: number) =>
    Array.from({ length: int(lo, hi) }, () => WORDS[int(0, WORDS.length - 1)]).join(" ");
  return { next, int, words };
}

/** Appends turn `t` (ask, 0–2 tool exchanges, some with huge outputs) to `messages`. */
function appendTurn(messages: MessageInput[], t: number, r: ReturnType<typeof prng>): void {
  messages.push(user(`u${t}`, r.words(3, 30)));
  for (let k = 0, n = r.int(0, 2); k < n; k++) {
    const parallel = r.int(1, 2);
    const ids = Array.from({ length: parallel }, (_, j) => `c${t}_${k}_${j}`);
    messages.push(
      calls(`a${t}_${k}`, ...ids.map((id): [string, string, unknown] => [id, "grep", { q: id }])),
    );
    for (const id of ids) {
      const huge = r.next() < 0.1;
      messages.push(results(`t_${id}`, [id, huge ? r.words(800, 1500) : r.words(5, 60)]));
    }
  }
}

interface LoopFigures {
  firstOverflow: number;
  overflowTurns: number;
  /** Turns whose first kept message differs from the previous turn's. */
  changes: number;
  /** Turns whose first kept message or clearing boundary differs (a cache break). */
  breaks: number;
}

/** 300 turns: plan each with the previous firstKeptId and clearBeforeTurn, then reply. */
function agentLoop(lowWaterRatio: number): LoopFigures {
  const r = prng(12);
  const counter = getTokenCounter("estimate");
  const count = (s: string) => getTokenCounter("estimate").count(s);
  const messages: MessageInput[] = [];
  let prev: ConversationPlan | null = null;
  // One planner for the loop, as an agent keeps it: each message is validated and priced once.
  const planner = createConversationPlanner();
  let firstOverflow = -1;
  let changes = 0;
  let breaks = 0;
  for (let t = 0; t < 300; t++) {
    appendTurn(messages, t, r);
    const plan = planner.plan({
      messages,
      budgetTokens: 3000,
      tokenizer: counter,
      policy: {
        pinned: ["u0"],
        toolResultMaxTokens: 200,
        clearToolResultsAfterTurns: 4,
        lowWaterRatio,
        anchor: prev?.firstKeptId ?? null,
        clearBeforeTurn: prev?.clearBeforeTurn ?? null,
      },
    });
    assertNoOrphans(plan.messages);
    expect(plan.usedTokens).toBe(plan.messages.reduce((s, m) => s + recount(m, count), 0));
    expect(plan.usedTokens).toBeLessThanOrEqual(3000);
    if (firstOverflow < 0 && plan.decisions.some((d) => d.reason === "history_window")) {
      firstOverflow = t;
    }
    if (prev !== null && firstOverflow >= 0 && t > firstOverflow) {
      if (plan.firstKeptId !== prev.firstKeptId) changes += 1;
      if (plan.firstKeptId !== prev.firstKeptId || plan.clearBeforeTurn !== prev.clearBeforeTurn) {
        breaks += 1;
      } else {
        // While the start and the boundary hold, last turn's request is sent again byte
        // for byte, with the new messages after it.
        expect(plan.messages.slice(0, prev.messages.length)).toEqual(prev.messages);
      }
    }
    prev = plan;
    messages.push(say(`r${t}`, r.words(5, 40)));
  }
  return { firstOverflow, overflowTurns: 300 - 1 - firstOverflow, changes, breaks };
}

describe("a 300-turn agent loop", () => {
  it("with lowWaterRatio 0.7 moves its first kept message in at most 1 turn in 5", () => {
    const f = agentLoop(0.7);
    const fraction = f.changes / f.overflowTurns;
    console.log(
      `lowWaterRatio 0.7: first overflow at turn ${f.firstOverflow}; the kept prefix changed in ` +
        `${f.changes} of ${f.overflowTurns} turns after it (${fraction.toFixed(3)}); ` +
        `start or clearing boundary in ${f.breaks}`,
    );
    expect(f.firstOverflow).toBeGreaterThan(0);
    expect(f.overflowTurns).toBeGreaterThan(200);
    expect(fraction).toBeLessThanOrEqual(1 / 5);
    expect(f.breaks / f.overflowTurns).toBeLessThanOrEqual(1 / 5);
  });

  it("with lowWaterRatio 1 moves it on most overflowing turns", () => {
    const f = agentLoop(1);
    const fraction = f.changes / f.overflowTurns;
    console.log(
      `lowWaterRatio 1: the kept prefix changed in ${f.changes} of ${f.overflowTurns} turns ` +
        `after the first overflow (${fraction.toFixed(3)}); start or clearing boundary in ` +
        `${f.breaks}`,
    );
    // The window moves by whole turns, so one move can leave a little room for the next
    // turn; still, without a low-water mark it moves on most of them.
    expect(fraction).toBeGreaterThanOrEqual(0.5);
  });
});
