/**
 * Stateless means stable (issue 37): requests over a growing conversation, planned with the
 * agent defaults and nothing passed back, agree with each other. Over random shapes —
 * single long tasks (one ask, then only tool rounds) and tasks with short user nudges —
 * each request is checked against the one before it: the window start only moves forward,
 * at a new user message too; inside one turn what was cleared or dropped stays so, and when
 * neither the start nor the cleared and dropped sets changed (no step was due), the previous
 * request's messages are a byte-identical prefix of this one's, so the provider reads its
 * cached prefix.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { agentDefaults, planRequest } from "../../src/agent/index.js";
import type { ConversationPlan, MessageInput } from "../../src/conversation/index.js";
import { getTokenCounter } from "../../src/tokens/index.js";
import { MODEL, stableSystem } from "../assemble/wire-fixtures.js";

const counter = getTokenCounter("estimate");
const system = stableSystem("tool_state", "run_tests(path)");

/** One step of the conversation: a tool round of `chars` characters, or a user nudge. */
const event = fc.oneof(
  { weight: 6, arbitrary: fc.record({ kind: fc.constant("round"), chars: fc.nat(40_000) }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant("user"), chars: fc.nat(400) }) },
);
const shape = fc.record({
  contextWindow: fc.integer({ min: 12_000, max: 48_000 }),
  single: fc.boolean(),
  events: fc.array(event, { minLength: 5, maxLength: 45 }),
});

function text(seed: number, chars: number): string {
  const lines: string[] = [];
  let size = 0;
  for (let k = 0; size < chars; k++) {
    const line = k % 9 === 4 ? `id-${seed}-${k} = ${seed * 31 + k}` : `line ${k} of output ${seed}`;
    lines.push(line);
    size += line.length + 1;
  }
  return lines.join("\n");
}

/** Every request of the conversation: after each tool round and each user message. */
interface Shape {
  contextWindow: number;
  single: boolean;
  events: { kind: string; chars: number }[];
}

function requestsOf(s: Shape): MessageInput[][] {
  const messages: MessageInput[] = [
    { id: "u0", role: "user", content: [{ type: "text", text: "Do the whole task." }] },
  ];
  const out: MessageInput[][] = [messages.slice()];
  s.events.forEach((e, k) => {
    if (e.kind === "user" && !s.single) {
      messages.push({
        id: `u${k + 1}`,
        role: "user",
        content: [{ type: "text", text: text(k, e.chars) }],
      });
    } else {
      messages.push(
        {
          id: `a${k}`,
          role: "assistant",
          content: [{ type: "tool_call", callId: `c${k}`, name: "read_file", input: { k } }],
        },
        {
          id: `t${k}`,
          role: "tool",
          content: [{ type: "tool_result", callId: `c${k}`, output: text(k, e.chars) }],
        },
      );
    }
    out.push(messages.slice());
  });
  return out;
}

const withTransform = (p: ConversationPlan, kind: string): Set<string> =>
  new Set(
    p.decisions.filter((d) => d.transforms.some((t) => t.kind === kind)).map((d) => d.messageId),
  );
const clearedIds = (p: ConversationPlan) => withTransform(p, "tool_result_cleared");
// Cutting starts once the conversation outgrows the trigger: a step too.
const cutIds = (p: ConversationPlan) => withTransform(p, "tool_result_truncated");

/**
 * The property over growing conversations (the start only moves forward; inside a turn
 * cleared and dropped stay so, and with no step the cached prefix is read), from a fixed seed
 * (deterministic: the same runs on every machine).
 */
function stableProperty(seed: number, numRuns: number): void {
  fc.assert(
    fc.property(shape, (s) => {
      const d = agentDefaults(s.contextWindow);
      let prev: { plan: ConversationPlan; start: number; lastUser: string } | null = null;
      for (const messages of requestsOf(s)) {
        const r = planRequest({
          provider: "anthropic",
          model: MODEL,
          system,
          messages,
          contextWindow: s.contextWindow,
          responseReserve: d.responseReserve,
          tokenizer: counter,
          policy: d.policy,
          windowStepTokens: d.windowStepTokens,
          digestTokens: d.digestTokens,
        });
        const plan = r.conversation;
        expect(plan.messages[0]?.role).toBe("user");
        const start = messages.findIndex((m) => m.id === plan.firstKeptId);
        const lastUser = messages.findLast((m) => m.role === "user")?.id as string;
        if (prev !== null) {
          // Over the whole conversation, at a new user message too: the start never moves back.
          expect(start).toBeGreaterThanOrEqual(prev.start);
          if (prev.lastUser === lastUser) {
            const nowCleared = clearedIds(plan);
            const nowDropped = new Set(plan.droppedMessageIds);
            for (const id of clearedIds(prev.plan)) {
              expect(nowCleared.has(id) || nowDropped.has(id)).toBe(true);
            }
            for (const id of prev.plan.droppedMessageIds) expect(nowDropped.has(id)).toBe(true);
            const known = new Set(prev.plan.decisions.map((x) => x.messageId));
            const same =
              start === prev.start &&
              [...nowCleared].filter((id) => known.has(id)).length === clearedIds(prev.plan).size &&
              nowDropped.size === prev.plan.droppedMessageIds.length &&
              [...cutIds(plan)].filter((id) => known.has(id)).length === cutIds(prev.plan).size;
            if (same) {
              const before = JSON.stringify(prev.plan.messages);
              const now = JSON.stringify(plan.messages.slice(0, prev.plan.messages.length));
              expect(now).toBe(before);
            }
          }
        }
        prev = { plan, start, lastUser };
      }
    }),
    { numRuns, seed },
  );
}

describe("stateless requests over a growing conversation", () => {
  // 8 seeds × 30 shapes (up to 46 requests each); seed 1749706810 and seed 1 found a start
  // that moved back inside a turn before the window was found on the sizes the turn's
  // first request saw (agent/request/window.ts).
  for (const seed of [1749706810, 1, 2, 3, 4, 5, 6, 7]) {
    it(`seed ${seed}: the start moves forward only, what left stays out, the prefix is read between steps`, () => {
      stableProperty(seed, 30);
    }, 300_000);
  }
});
