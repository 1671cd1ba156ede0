/**
 * The window under the caller's anchor past the clearing reach (docs/conversation.md "the
 * agent loop with defaults"): once the history, as given, counts more than
 * `HELD_REACH_ROOMS` rooms (twice the clearing reach), clearing under pressure waits for
 * the whole room — the held window holds while it fits, as the stateless window does past
 * its reach.
 */
import { describe, expect, it } from "vitest";
import { planRequest } from "../../src/agent/index.js";
import { HELD_REACH_ROOMS } from "../../src/agent/request/window.js";
import { type MessageInput, oneCallPlanner, sent } from "../../src/conversation/index.js";
import { MODEL, stableSystem } from "../assemble/wire-fixtures.js";
import { calls, lengthCounter, results, user } from "../conversation/helpers.js";

const counter = lengthCounter();
const system = stableSystem("tool_state", "run_tests(path)");

/** A task whose first turn read a file of `firstChars` characters; the anchor is u2. */
function task(firstChars: number): MessageInput[] {
  return [
    user("u1", "Fix the failing build."),
    calls("a1", ["c1", "read_file", { path: "build.log" }]),
    results("t1", ["c1", "x".repeat(firstChars)]),
    user("u2", "Go on with the parser."),
    calls("a2", ["c2", "read_file", { path: "parser.ts" }]),
    results("t2", ["c2", "p".repeat(700)]),
    calls("a3", ["c3", "read_file", { path: "lexer.ts" }]),
    results("t3", ["c3", "l".repeat(700)]),
    user("u3", "Now the tests."),
    calls("a4", ["c4", "run_tests", { path: "test" }]),
    results("t4", ["c4", "t".repeat(300)]),
  ];
}

const policy = {
  anchor: "u2",
  clearTrigger: 0.8,
  clearAtLeastTokens: 100,
  keepRecentToolResults: 1,
  lowWaterRatio: 0.5,
};

/** Tokens of the messages from `id` on, and before it, as a plan of everything sends them. */
function split(messages: MessageInput[], id: string) {
  const ds = oneCallPlanner().plan({
    messages,
    budgetTokens: 1_000_000,
    tokenizer: counter,
  }).decisions;
  const at = ds.findIndex((d) => d.messageId === id);
  const sum = (from: number, to: number) => ds.slice(from, to).reduce((n, d) => n + sent(d), 0);
  return { before: sum(0, at), from: sum(at, ds.length) };
}

const systemTokens = planRequest({
  provider: "anthropic",
  model: MODEL,
  system,
  messages: [user("u", "x")],
  contextWindow: 1_000_000,
  responseReserve: 0,
  tokenizer: counter,
}).budget.systemTokens;

function request(messages: MessageInput[], room: number) {
  return planRequest({
    provider: "anthropic",
    model: MODEL,
    system,
    messages,
    contextWindow: systemTokens + room,
    responseReserve: 0,
    tokenizer: counter,
    policy,
  }).conversation;
}

const cleared = (p: { decisions: readonly { transforms: readonly { kind: string }[] }[] }) =>
  p.decisions.filter((d) => d.transforms.some((t) => t.kind === "tool_result_cleared")).length;

describe("a window held by the caller's anchor", () => {
  const small = split(task(50), "u2");
  // The window from u2 is past the trigger (80 % of the room) and fits the room, and the
  // first turn is small enough that the history fits the reach.
  const room = small.before + small.from;
  const big = split(task(HELD_REACH_ROOMS * room), "u2");

  it("the sizes are what the test needs", () => {
    expect(small.from).toBeGreaterThan(0.8 * room);
    expect(big.from).toBe(small.from);
    expect(big.before + big.from).toBeGreaterThan(HELD_REACH_ROOMS * room);
  });

  it("takes a clearing step at the trigger while the history fits the reach", () => {
    const p = request(task(50), room);
    expect(cleared(p)).toBeGreaterThan(0);
  });

  it("holds while it fits once the history is past the reach: no step before the room is full", () => {
    const p = request(task(HELD_REACH_ROOMS * room), room);
    expect(p.firstKeptId).toBe("u2");
    expect(cleared(p)).toBe(0);
    expect(p.usedTokens).toBe(big.from);
    // The same plan as the planner's under the anchor with the trigger at the whole room.
    const whole = oneCallPlanner().plan({
      messages: task(HELD_REACH_ROOMS * room),
      budgetTokens: room,
      tokenizer: counter,
      policy: { ...policy, clearTrigger: 1 },
    });
    expect(JSON.stringify(p)).toBe(JSON.stringify(whole));
  });

  it("still moves once the window no longer fits the room", () => {
    const p = request(task(HELD_REACH_ROOMS * room), big.from - 1);
    expect(cleared(p) > 0 || p.firstKeptId !== "u2").toBe(true);
  });
});
