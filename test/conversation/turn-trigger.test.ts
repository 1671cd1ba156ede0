/**
 * `policy.turnTriggerUncut`: the trigger of clearing inside the current turn counts
 * truncated results at their uncut size, so a whole request that cuts nothing before a
 * step takes its first step with the request that starts cutting (one cache break).
 */
import { describe, expect, it } from "vitest";
import {
  type ConversationPlan,
  type MessageInput,
  planConversation,
} from "../../src/conversation/index.js";
import { calls, lengthCounter, results, user } from "./helpers.js";

/** One ask, then `n` rounds of one result of `size` characters each. */
function task(n: number, size: number): MessageInput[] {
  const out: MessageInput[] = [user("u1", "do the task")];
  for (let k = 0; k < n; k++) {
    out.push(
      calls(`a${k}`, [`c${k}`, "read_file", { k }]),
      results(`t${k}`, [`c${k}`, `${k}:`.padEnd(size, "x")]),
    );
  }
  return out;
}

const cleared = (p: ConversationPlan): number =>
  p.decisions.filter((d) => d.transforms.some((t) => t.kind === "tool_result_cleared")).length;

describe("policy.turnTriggerUncut", () => {
  const counter = lengthCounter();
  const plan = (n: number, turnTriggerUncut?: boolean) =>
    planConversation({
      messages: task(n, 1_000),
      budgetTokens: 10_000,
      tokenizer: counter,
      policy: {
        toolResultMaxTokens: 500,
        clearCurrentTurn: true,
        clearToolResultsAfterTurns: 1,
        lowWaterRatio: 0.5,
        ...(turnTriggerUncut === undefined ? {} : { turnTriggerUncut }),
      },
    });

  it("steps as soon as the rounds, uncut, pass the trigger; off (the default), once the cut rounds do", () => {
    // Each round counts about 1,000 uncut and 500 cut: uncut passes 10,000 at round 10,
    // cut at round 20.
    const firstStep = (on: boolean | undefined) => {
      for (let n = 1; n <= 30; n++) if (cleared(plan(n, on)) > 0) return n;
      return null;
    };
    const on = firstStep(true) as number;
    const off = firstStep(undefined) as number;
    expect(on).toBeGreaterThanOrEqual(9);
    expect(on).toBeLessThanOrEqual(11);
    expect(off).toBeGreaterThan(on + 5);
    expect(firstStep(false)).toBe(off);
    // Either way the request fits and keeps the ask and the latest round.
    const p = plan(on, true);
    expect(p.usedTokens).toBeLessThanOrEqual(10_000);
    expect(p.messages[0]?.id).toBe("u1");
    expect(p.messages.at(-1)?.id).toBe(`t${on - 1}`);
  });

  it("is a boolean: anything else is invalid_input at policy.turnTriggerUncut", () => {
    expect(() =>
      planConversation({
        messages: task(1, 10),
        budgetTokens: 1_000,
        policy: { turnTriggerUncut: "yes" as unknown as boolean },
      }),
    ).toThrow(expect.objectContaining({ code: "invalid_input", path: "policy.turnTriggerUncut" }));
  });
});
