import { describe, expect, it } from "vitest";
import {
  canonicalJson,
  type MessageInput,
  messageTokens,
  type PlanConversationRequest,
  planConversation,
} from "../../src/conversation/index.js";
import { InvalidInputError, toErrorObject } from "../../src/errors/index.js";
import { getTokenCounter } from "../../src/tokens/index.js";
import { calls, lengthCounter, results, say, user } from "./helpers.js";

const plan = (messages: MessageInput[], extra: Partial<PlanConversationRequest> = {}) =>
  planConversation({ messages, budgetTokens: 100_000, tokenizer: lengthCounter(), ...extra });

const byId = (p: ReturnType<typeof plan>) => new Map(p.decisions.map((d) => [d.messageId, d]));

/** The error object a surface would print for `run`'s failure. */
function failure(run: () => unknown) {
  try {
    run();
  } catch (err) {
    expect(err).toBeInstanceOf(InvalidInputError);
    return toErrorObject(err).error;
  }
  throw new Error("expected an InvalidInputError");
}

describe("counting", () => {
  it("charges 4 per message plus each part: name + canonical input for a call", () => {
    const counter = lengthCounter();
    const m = calls("a", ["c1", "grep", { z: 1, a: [true, null], é: "x" }]);
    expect(canonicalJson({ z: 1, a: [true, null], é: "x" })).toBe(
      '{"a":[true,null],"z":1,"é":"x"}',
    );
    expect(messageTokens(m as never, counter)).toBe(
      4 + 4 + '{"a":[true,null],"z":1,"é":"x"}'.length,
    );
    expect(messageTokens(user("u", "hello") as never, counter)).toBe(9);
    expect(messageTokens(results("t", ["c1", "abc"], ["c2", "de"]) as never, counter)).toBe(9);
  });

  it("sorts keys by code point, not UTF-16 unit, and keeps non-ASCII as is", () => {
    // U+FF5E (one unit) sorts before U+1F600 (a surrogate pair starting 0xD83D) by unit,
    // after it by code point.
    expect(canonicalJson({ "😀": 1, "～": 2 })).toBe('{"～":2,"😀":1}');
    expect(canonicalJson({ b: 'é\n"', a: { d: [], c: {} } })).toBe(
      '{"a":{"c":{},"d":[]},"b":"é\\n\\""}',
    );
  });

  it("reports the counter's name and counts with the named tokenizer", () => {
    const p = planConversation({ messages: [user("u", "hi there")], budgetTokens: 50 });
    expect(p.tokenizer).toBe("estimate");
    expect(p.usedTokens).toBe(4 + 2);
    const o = planConversation({
      messages: [user("u", "hi there")],
      budgetTokens: 50,
      tokenizer: "o200k_base",
    });
    expect(o.usedTokens).toBe(4 + getTokenCounter("o200k_base").count("hi there"));
  });
});

describe("units, turns and orphans", () => {
  const convo = [
    say("a0", "before any user"),
    user("u1", "first"),
    calls("a1", ["c1", "read_file", { path: "x" }], ["c2", "grep", { q: "y" }]),
    results("t1", ["c1", "one"]),
    results("t2", ["c2", "two"]),
    say("a2", "done"),
    user("u2", "second"),
    calls("a3", ["c3", "run_tests", {}]),
    results("t3", ["c3", "ok"]),
  ];

  it("groups a call with its results, numbers turns from each user message", () => {
    const d = byId(plan(convo));
    expect([...d.values()].map((x) => [x.messageId, x.turn, x.unit])).toEqual([
      ["a0", 0, 0],
      ["u1", 1, 1],
      ["a1", 1, 2],
      ["t1", 1, 2],
      ["t2", 1, 2],
      ["a2", 1, 3],
      ["u2", 2, 4],
      ["a3", 2, 5],
      ["t3", 2, 5],
    ]);
    expect([...d.values()].every((x) => x.status === "kept")).toBe(true);
    expect(d.get("u2")?.reason).toBe("required");
    expect(d.get("t3")?.reason).toBe("required");
    expect(d.get("a2")?.reason).toBe("kept");
  });

  it("one tool message may answer several parallel calls", () => {
    const p = plan([
      user("u1", "go"),
      calls("a1", ["c1", "grep", 1], ["c2", "grep", 2]),
      results("t1", ["c2", "b"], ["c1", "a"]),
    ]);
    expect(p.decisions.map((d) => d.unit)).toEqual([0, 1, 1]);
    expect(p.droppedMessageIds).toEqual([]);
  });

  it("removes a call left without its result and keeps the answered pair (issue 34)", () => {
    const p = plan([
      user("u1", "go"),
      calls("a1", ["c1", "grep", 1], ["c2", "grep", 2]),
      results("t1", ["c1", "a"]),
      user("u2", "again"),
    ]);
    const d = byId(p);
    expect(p.droppedMessageIds).toEqual([]);
    expect(p.messages.map((m) => m.id)).toEqual(["u1", "a1", "t1", "u2"]);
    expect(p.messages[1]?.content.map((x) => (x.type === "tool_call" ? x.callId : ""))).toEqual([
      "c1",
    ]);
    expect(d.get("a1")?.transforms).toEqual([
      expect.objectContaining({
        kind: "stray_part_removed",
        callId: "c2",
        part: "tool_call",
        reason: "call_without_result",
      }),
    ]);
  });

  it("drops a result whose call is not in the unit before it, naming its call id", () => {
    const p = plan([
      user("u1", "go"),
      calls("a1", ["c1", "grep", 1]),
      results("t1", ["c1", "a"]),
      say("a2", "hm"),
      results("t2", ["c1b", "late"]),
      user("u2", "again"),
      results("t3", ["zz", "stray in the current turn"]),
    ]);
    const d = byId(p);
    expect(d.get("t2")).toMatchObject({ status: "dropped", reason: "orphan_removed" });
    expect(d.get("t2")?.detail).toContain("c1b");
    expect(d.get("t3")).toMatchObject({ status: "dropped", reason: "orphan_removed" });
    expect(d.get("t3")?.detail).toContain("zz");
    expect(d.get("a1")?.status).toBe("kept");
  });

  it("a result separated from its call by another message orphans both", () => {
    const p = plan([
      user("u1", "go"),
      calls("a1", ["c1", "grep", 1]),
      say("a2", "meanwhile"),
      results("t1", ["c1", "a"]),
    ]);
    const d = byId(p);
    expect(d.get("a1")?.reason).toBe("orphan_removed");
    expect(d.get("t1")?.reason).toBe("orphan_removed");
    expect(d.get("a2")?.reason).toBe("required");
  });

  it("a pending call at the end of the current turn is an orphan, not sent", () => {
    const p = plan([user("u1", "go"), calls("a1", ["c1", "grep", 1])]);
    expect(p.messages.map((m) => m.id)).toEqual(["u1"]);
    expect(byId(p).get("a1")?.detail).toContain("c1");
  });
});

describe("invalid input", () => {
  it("needs a user message", () => {
    expect(failure(() => plan([say("a", "hi")]))).toMatchObject({
      code: "invalid_input",
      path: "messages",
    });
  });

  it("rejects duplicate ids", () => {
    expect(failure(() => plan([user("u", "a"), user("u", "b")])).path).toBe("messages[1].id");
  });

  it("rejects a pinned id that names no message", () => {
    const e = failure(() => plan([user("u", "a")], { policy: { pinned: ["u", "nope"] } }));
    expect(e.path).toBe("policy.pinned[1]");
    expect(e.message).toContain("nope");
  });

  it("rejects a duplicate callId among calls and among results", () => {
    const twoCalls = [user("u", "a"), calls("a1", ["c1", "x", 1], ["c1", "y", 2])];
    expect(failure(() => plan(twoCalls)).path).toBe("messages[1].content[1].callId");
    const twoResults = [
      user("u", "a"),
      calls("a1", ["c1", "x", 1]),
      results("t1", ["c1", "a"]),
      results("t2", ["c1", "b"]),
    ];
    expect(failure(() => plan(twoResults)).path).toBe("messages[3].content[0].callId");
  });

  it("rejects a part its role cannot hold", () => {
    const bad = [
      { id: "u", role: "user", content: [{ type: "tool_result", callId: "c", output: "" }] },
    ];
    expect(failure(() => plan(bad as MessageInput[])).path).toBe("messages[0].content[0].type");
    const callFromTool = [
      user("u", "a"),
      { id: "t", role: "tool", content: [{ type: "tool_call", callId: "c", name: "n", input: 1 }] },
    ];
    expect(failure(() => plan(callFromTool as MessageInput[])).path).toBe(
      "messages[1].content[0].type",
    );
    const textInTool = [
      user("u", "a"),
      { id: "t", role: "tool", content: [{ type: "text", text: "" }] },
    ];
    expect(failure(() => plan(textInTool as MessageInput[])).path).toBe(
      "messages[1].content[0].type",
    );
  });

  it("rejects toolResultMaxTokens below 32, and accepts 32", () => {
    const e = failure(() => plan([user("u", "a")], { policy: { toolResultMaxTokens: 31 } }));
    expect(e.path).toBe("policy.toolResultMaxTokens");
    expect(() => plan([user("u", "a")], { policy: { toolResultMaxTokens: 32 } })).not.toThrow();
  });

  it("rejects malformed messages, budgets and policies with the field path", () => {
    const cases: [unknown, string][] = [
      [
        { messages: [{ id: " ", role: "user", content: [{ type: "text", text: "" }] }] },
        "messages[0].id",
      ],
      [{ messages: [{ id: "u", role: "user", content: [] }] }, "messages[0].content"],
      [
        { messages: [{ id: "u", role: "system", content: [{ type: "text", text: "" }] }] },
        "messages[0].role",
      ],
      [{ messages: [user("u", "a"), calls("a", ["", "n", 1])] }, "messages[1].content[0].callId"],
      [{ messages: [user("u", "a")], budgetTokens: -1 }, "budgetTokens"],
      [{ messages: [user("u", "a")], budgetTokens: 1.5 }, "budgetTokens"],
      [{ messages: [user("u", "a")], policy: { lowWaterRatio: 0 } }, "policy.lowWaterRatio"],
      [{ messages: [user("u", "a")], policy: { lowWaterRatio: 1.01 } }, "policy.lowWaterRatio"],
      [
        { messages: [user("u", "a")], policy: { clearToolResultsAfterTurns: 0 } },
        "policy.clearToolResultsAfterTurns",
      ],
      [{ messages: [user("u", "a")], tokenizer: "gpt-9" }, "tokenizer"],
      [{ messages: "nope" }, "messages"],
    ];
    for (const [request, path] of cases) {
      const r = { budgetTokens: 100, ...(request as object) } as PlanConversationRequest;
      expect(failure(() => planConversation(r)).path, path).toBe(path);
    }
  });
});

describe("tool call inputs", () => {
  it("refuses inputs nested deeper than 64 levels before recursing into them", () => {
    const nest = (n: number) => JSON.parse(`${"[".repeat(n)}${"]".repeat(n)}`) as unknown;
    const at = (n: number) => [user("u", "a"), calls("a1", ["c1", "grep", nest(n)])];
    expect(() => plan(at(64))).not.toThrow();
    expect(failure(() => plan(at(65)))).toMatchObject({
      code: "invalid_input",
      path: "messages[1].content[0].input",
    });
    expect(failure(() => plan(at(100_000))).path).toBe("messages[1].content[0].input");
  });
});
