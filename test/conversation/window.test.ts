import { describe, expect, it } from "vitest";
import {
  type ConversationPolicyInput,
  type MessageInput,
  planConversation,
} from "../../src/conversation/index.js";
import { PromptBudgetError } from "../../src/errors/index.js";
import { calls, lengthCounter, results, say, user } from "./helpers.js";

// Ten turns of one user message of 20 tokens each (4 framing + 16 characters).
const tenTurns = Array.from({ length: 10 }, (_, i) => user(`u${i}`, `${i}`.padEnd(16, ".")));

const run = (budgetTokens: number, policy: ConversationPolicyInput = {}, messages = tenTurns) =>
  planConversation({ messages, budgetTokens, tokenizer: lengthCounter(), policy });

const kept = (p: ReturnType<typeof run>) => p.messages.map((m) => m.id);

describe("the window", () => {
  it("keeps everything when everything fits, whatever the low-water mark", () => {
    const p = run(200, { lowWaterRatio: 0.1 });
    expect(p.firstKeptId).toBe("u0");
    expect(p.usedTokens).toBe(200);
    expect(p.droppedMessageIds).toEqual([]);
  });

  it("with lowWaterRatio 1 keeps the longest suffix that fits", () => {
    const p = run(110);
    expect(kept(p)).toEqual(["u5", "u6", "u7", "u8", "u9"]);
    expect(p.firstKeptId).toBe("u5");
    expect(p.usedTokens).toBe(100);
    expect(p.decisions[4]).toMatchObject({ status: "dropped", reason: "history_window" });
    expect(p.decisions[4]?.detail).toContain("20 tokens");
  });

  it("with a low-water mark moves the start until the total is at most ratio × budget", () => {
    const p = run(100, { lowWaterRatio: 0.5 });
    expect(p.firstKeptId).toBe("u8");
    expect(p.decisions[0]?.detail).toContain("low-water");
    // floor(0.59 × 100) = 59: three turns are 60, so two.
    expect(run(100, { lowWaterRatio: 0.59 }).firstKeptId).toBe("u8");
    expect(run(100, { lowWaterRatio: 0.6 }).firstKeptId).toBe("u7");
  });

  it("falls back to the oldest start that fits when none is under the low-water mark", () => {
    const p = run(100, { lowWaterRatio: 0.3, pinned: ["u0"] });
    // Required: u0 (pinned) + u9 (current) = 40 > 30; the oldest fitting start is u6.
    expect(kept(p)).toEqual(["u0", "u6", "u7", "u8", "u9"]);
    expect(p.firstKeptId).toBe("u6");
    expect(p.decisions[0]).toMatchObject({ status: "kept", reason: "pinned" });
  });

  it("keeps a fitting anchor even when older units would fit", () => {
    const p = run(110, { anchor: "u7" });
    expect(p.firstKeptId).toBe("u7");
    expect(kept(p)).toEqual(["u7", "u8", "u9"]);
    expect(p.decisions[5]?.detail).toContain("before the cache anchor");
  });

  it("ignores an anchor that does not fit, names no unit start, an orphan, or no turn start", () => {
    expect(run(110, { anchor: "u2" }).firstKeptId).toBe("u5");
    expect(run(110, { anchor: "nope" }).firstKeptId).toBe("u5");
    const convo: MessageInput[] = [
      user("u0", "a"),
      calls("a1", ["c1", "grep", 1]),
      results("t1", ["c1", "r"]),
      calls("a2", ["c2", "grep", 2]),
      say("a3", "b"),
      user("u1", "c"),
    ];
    expect(run(1000, { anchor: "t1" }, convo).firstKeptId).toBe("u0");
    expect(run(1000, { anchor: "a2" }, convo).firstKeptId).toBe("u0");
    // a1 starts a unit but not a turn: a window never opens on an assistant message.
    expect(run(1000, { anchor: "a1" }, convo).firstKeptId).toBe("u0");
  });

  it("an anchor inside the current turn never cuts the turn", () => {
    const convo = [
      user("u0", "a"),
      user("u1", "b"),
      calls("a1", ["c1", "grep", 1]),
      results("t1", ["c1", "r"]),
    ];
    const p = run(1000, { anchor: "a1" }, convo);
    expect(p.firstKeptId).toBe("u0");
    expect(kept(p)).toEqual(["u0", "u1", "a1", "t1"]);
  });

  it("keeps pinned units in their places, whole", () => {
    const convo: MessageInput[] = [
      user("u0", "first ask".padEnd(40, ".")),
      calls("a1", ["c1", "read_file", { p: 1 }], ["c2", "grep", { q: 2 }]),
      results("t1", ["c1", "one".padEnd(40, ".")]),
      results("t2", ["c2", "two".padEnd(40, ".")]),
      user("u1", "second".padEnd(40, ".")),
      say("a2", "reply".padEnd(40, ".")),
      user("u2", "third"),
    ];
    const p = run(200, { pinned: ["t2"] }, convo);
    // The window moves by whole turns: u1's turn (u1, a2) does not fit, so it starts at u2.
    expect(kept(p)).toEqual(["a1", "t1", "t2", "u2"]);
    expect(p.decisions.map((d) => d.reason)).toEqual([
      "history_window",
      "pinned",
      "pinned",
      "pinned",
      "history_window",
      "history_window",
      "required",
    ]);
    expect(p.decisions[3]?.detail).toBe("pinned");
    expect(p.firstKeptId).toBe("u2");
  });

  it("fails closed when the current turn and pinned units cannot fit", () => {
    expect(() => run(19)).toThrow(PromptBudgetError);
    expect(run(20).usedTokens).toBe(20);
    try {
      run(39, { pinned: ["u3"] });
      throw new Error("expected a budget error");
    } catch (err) {
      expect(err).toBeInstanceOf(PromptBudgetError);
      expect((err as PromptBudgetError).code).toBe("prompt_budget_exceeded");
      expect((err as PromptBudgetError).names).toEqual(["u3", "u9"]);
    }
    expect(kept(run(40, { pinned: ["u3"] }))).toEqual(["u3", "u9"]);
  });

  it("a budget of 0 fails closed and never sends an empty request", () => {
    expect(() => run(0)).toThrow(PromptBudgetError);
  });
});
