import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  type ConversationPlan,
  type MessageInput,
  planConversation,
} from "../../src/conversation/index.js";
import {
  assertNoOrphans,
  calls,
  conversation,
  plantStrays,
  results,
  say,
  user,
} from "./helpers.js";

const plan = (messages: MessageInput[]): ConversationPlan =>
  planConversation({ messages, budgetTokens: 1_000_000, tokenizer: "estimate" });

const strays = (p: ConversationPlan, id: string) =>
  p.decisions
    .find((d) => d.messageId === id)
    ?.transforms.filter((t) => t.kind === "stray_part_removed")
    .map((t) => t.callId);

describe("a stray part does not take the valid pair with it (issue 34)", () => {
  it("[result A, result Z] after a call to A: Z removed, the pair kept", () => {
    const p = plan([
      user("u1", "read a"),
      calls("a1", ["A", "read_file", { path: "a" }]),
      results("t1", ["A", "contents of a"], ["Z", "never asked"]),
      say("a2", "done"),
      user("u2", "next"),
    ]);
    expect(p.droppedMessageIds).toEqual([]);
    expect(p.messages.find((m) => m.id === "t1")?.content).toEqual([
      { type: "tool_result", callId: "A", output: "contents of a" },
    ]);
    const d = p.decisions.find((x) => x.messageId === "t1");
    expect(d?.transforms).toEqual([
      {
        kind: "stray_part_removed",
        callId: "Z",
        part: "tool_result",
        reason: "result_without_call",
        originalTokens: expect.any(Number),
      },
    ]);
    expect(d?.tokens).toBeLessThan(d?.transforms[0]?.originalTokens ?? 0);
    assertNoOrphans(p.messages);
  });

  it("a call answered on a later request is sent again, whole", () => {
    const head = [user("u1", "go"), calls("a1", ["A", "grep", 1], ["B", "grep", 2])];
    const first = plan([...head, results("t1", ["A", "a"])]);
    expect(strays(first, "a1")).toEqual(["B"]);
    const second = plan([...head, results("t1", ["A", "a"]), results("t2", ["B", "b"])]);
    expect(strays(second, "a1")).toEqual([]);
    expect(second.messages.find((m) => m.id === "a1")?.content).toHaveLength(2);
  });

  it("a tool message of strays only is still an orphan", () => {
    const p = plan([user("u1", "go"), results("t1", ["Z", "x"])]);
    expect(p.droppedMessageIds).toEqual(["t1"]);
  });

  it("strays planted at part level: the plan is the clean conversation's, with a transform each", () => {
    fc.assert(
      fc.property(
        conversation,
        fc.array(fc.tuple(fc.nat(), fc.boolean()), { minLength: 1, maxLength: 4 }),
        (clean, plants) => {
          const cleanPlan = plan(clean);
          const kept = new Set(
            cleanPlan.decisions.filter((d) => d.status === "kept").map((d) => d.messageId),
          );
          const { dirty, planted } = plantStrays(clean, kept, plants);
          const p = plan(dirty);
          assertNoOrphans(p.messages);
          expect(p.messages).toEqual(cleanPlan.messages);
          expect(p.droppedMessageIds).toEqual(cleanPlan.droppedMessageIds);
          for (const d of p.decisions) {
            const before = strays(cleanPlan, d.messageId) ?? [];
            expect(strays(p, d.messageId)?.sort()).toEqual(
              [...before, ...(planted.get(d.messageId) ?? [])].sort(),
            );
          }
        },
      ),
      { numRuns: 60 },
    );
  });
});
