/**
 * The window of a whole request when history must be dropped: the grid start and the
 * digest at its start. `planRequest` plans the conversation once to find the start, then
 * again from it with the digest, reusing the first plan's validated messages, units and
 * prices. The reference below is the two independent plans written out with the public
 * pieces (the planner of `planConversation`, `gridWindowStart`, `withWindowDigest`): the request's bytes
 * must be exactly theirs.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  gridWindowStart,
  planRequest,
  type RequestInput,
  withWindowDigest,
} from "../../src/agent/index.js";
import {
  type ConversationPlan,
  type MessageInput,
  oneCallPlanner,
  sent as sentTokens,
} from "../../src/conversation/index.js";
import { getTokenCounter } from "../../src/tokens/index.js";
import { MODEL, stableSystem } from "../assemble/wire-fixtures.js";
import { conversation } from "../conversation/helpers.js";

const counter = getTokenCounter("estimate");
const system = stableSystem("tool_state", "run_tests(path)");
/** How much dropped history the digest covers at most: 256 × its budget (docs/conversation.md). */
const REACHES = [(_: number, d: number) => 256 * d];

/** The request's body and conversation as JSON, or the error's code and path. */
function outcome(run: () => { body: unknown; conversation: ConversationPlan }): string {
  try {
    const r = run();
    return JSON.stringify([r.body, r.conversation]);
  } catch (err) {
    const code = (err as { code?: unknown }).code;
    if (typeof code !== "string") throw err;
    return JSON.stringify({ code, path: (err as { path?: unknown }).path ?? null });
  }
}

const systemTokens = planRequest({
  provider: "anthropic",
  model: MODEL,
  system,
  messages: [{ id: "u", role: "user", content: [{ type: "text", text: "x" }] }],
  contextWindow: 1_000_000,
  responseReserve: 0,
  tokenizer: counter,
}).budget.systemTokens;

const requests = conversation.chain((messages) =>
  fc.record({
    messages: fc.constant(messages),
    room: fc.integer({ min: 20, max: 3_000 }),
    step: fc.integer({ min: 1, max: 2_000 }),
    digest: fc.integer({ min: 0, max: 400 }),
    lowWaterRatio: fc.double({ min: 0.2, max: 1, noNaN: true }),
    toolResultMaxTokens: fc.option(fc.integer({ min: 32, max: 300 }), { nil: null }),
    pinned: fc.subarray(
      messages.map((m) => m.id),
      { maxLength: 1 },
    ),
  }),
);

describe("planRequest with a window step", () => {
  it("sends exactly the bytes of two independent plans (find the start, then plan from it)", () => {
    fc.assert(
      fc.property(requests, (g) => {
        const policy = {
          lowWaterRatio: g.lowWaterRatio,
          toolResultMaxTokens: g.toolResultMaxTokens,
          pinned: g.pinned,
        };
        const input: RequestInput<"anthropic"> = {
          provider: "anthropic",
          model: MODEL,
          system,
          messages: g.messages,
          contextWindow: systemTokens + g.room,
          responseReserve: 0,
          tokenizer: counter,
          policy,
          windowStepTokens: g.step,
          digestTokens: g.digest,
        };
        const got = outcome(() => planRequest(input));
        // The reference: the first plan in the room less the digest; when it drops
        // history, the same request again with the digest and the grid start as anchor.
        const room = g.room;
        const digest = Math.min(g.digest, Math.floor(room / 4));
        // A fresh planner counts everything, as planRequest does (planConversation leaves
        // what no window can reach uncounted).
        const plan = (messages: readonly MessageInput[], budgetTokens: number, anchor?: string) =>
          oneCallPlanner().plan({
            messages,
            budgetTokens,
            tokenizer: counter,
            policy:
              anchor === undefined
                ? policy
                : { ...policy, anchor, anchorFrom: "window_grid" as const },
          });
        const want = (reachOf: (typeof REACHES)[number]) =>
          outcome(() => {
            const first = plan(g.messages, room - digest);
            // Earlier turns' starts are found again on the plan's own sizes (nothing is
            // cleared without a trigger); a turn over the room on its own started at its ask.
            const sizes = first.decisions.map(sentTokens);
            const asSent = {
              size: (i: number) => sizes[i] as number,
              sumBefore: (end: number) => sizes.slice(0, end).reduce((a, b) => a + b, 0),
            };
            const anchor = gridWindowStart(first, g.step, undefined, () => asSent, room - digest);
            if (anchor === null) {
              const one = planRequest(input);
              expect(JSON.stringify(one.conversation)).toBe(JSON.stringify(first));
              return one;
            }
            const reach = reachOf(g.step, digest);
            const messages =
              digest === 0
                ? g.messages
                : withWindowDigest(g.messages, first, anchor, reach, counter, digest);
            const second = plan(messages, room, anchor);
            // The same request with that anchor and those messages renders the second plan.
            const sent = planRequest({
              ...input,
              messages,
              policy: { ...policy, anchor, anchorFrom: "window_grid" },
              windowStepTokens: null,
            });
            expect(JSON.stringify(sent.conversation)).toBe(JSON.stringify(second));
            return sent;
          });
        expect(REACHES.map(want)).toContain(got);
      }),
      { numRuns: 300 },
    );
  });
});
