/**
 * The grid rule of the stateless window start (`gridWindowStart`, docs/conversation.md
 * "the agent loop with defaults"): a start on the grid (the first user message at or after
 * a grid line) whose user message before is off the grid is held while its window fits,
 * even once the oldest fitting start has reached it; where user messages are on the grid
 * one after another, the start stays a grid line ahead of the oldest fitting start.
 */
import { describe, expect, it } from "vitest";
import { gridWindowStart } from "../../src/agent/index.js";
import { type MessageInput, oneCallPlanner, sent } from "../../src/conversation/index.js";
import { lengthCounter, say, user } from "../conversation/helpers.js";

const counter = lengthCounter();
// u1 and each answer are long, the later asks short: the grid lines fall inside the answers.
const messages: MessageInput[] = [
  user("u1", "a".repeat(600)),
  say("a1", "b".repeat(300)),
  user("u1b", "z".repeat(100)),
  say("a1b", "y".repeat(300)),
  user("u2", "c".repeat(100)),
  say("a2", "d".repeat(600)),
  user("u3", "e".repeat(100)),
  say("a3", "f".repeat(600)),
  user("u4", "g".repeat(100)),
  say("a4", "h".repeat(600)),
  user("u5", "i".repeat(100)),
];

const planIn = (budgetTokens: number) =>
  oneCallPlanner().plan({ messages, budgetTokens, tokenizer: counter });

/** Tokens of history before, and from, message `id` (as a plan of everything sends them). */
function around(id: string): { before: number; after: number } {
  const ds = planIn(1_000_000).decisions;
  const at = ds.findIndex((d) => d.messageId === id);
  let before = 0;
  let after = 0;
  ds.forEach((d, i) => {
    if (i < at) before += sent(d);
    else after += sent(d);
  });
  return { before, after };
}

describe("gridWindowStart", () => {
  const u2 = around("u2");
  const u3 = around("u3");
  // One grid line just before u2 (so u2 is past it) and the next after u3: u2 is on the grid,
  // u3 is not, u4 is the first user message past the second line.
  const step = u2.before - 10;

  it("the grid lines fall where the test needs them", () => {
    expect(around("u1b").before).toBeLessThan(step);
    expect(u3.before).toBeLessThan(2 * step);
    expect(around("u4").before).toBeGreaterThanOrEqual(2 * step);
  });

  it("holds a start on the grid while its window fits, though it is past its grid line", () => {
    // u2 is the oldest start that fits: it is the start, not the first user message past
    // the next grid line (u4), which would drop u2's turn for nothing.
    expect(gridWindowStart(planIn(u2.after), step)).toBe("u2");
  });

  it("moves to the next start on the grid once it no longer fits", () => {
    // The oldest fitting start is u3, not on the grid: the next start on it is u4.
    expect(gridWindowStart(planIn(u2.after - 1), step)).toBe("u4");
    expect(gridWindowStart(planIn(u3.after), step)).toBe("u4");
  });

  it("keeps a grid line ahead where the user message before the oldest fitting start is on the grid too", () => {
    // With a step of half the one above, u1b is on the grid too: u2 is not held, the start
    // is the first user message past the next line (room to grow, not a window kept full).
    const half = Math.floor(step / 2);
    expect(around("u1b").before).toBeGreaterThanOrEqual(half);
    const line = Math.ceil(u2.before / half) * half;
    const want = ["u3", "u4", "u5"].find((id) => around(id).before >= line);
    expect(gridWindowStart(planIn(u2.after), half)).toBe(want);
  });

  it("starts nowhere while everything fits", () => {
    expect(gridWindowStart(planIn(around("u1").after), step)).toBeNull();
  });
});
