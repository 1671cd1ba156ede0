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
  WINDOW_DIGEST_HEADER,
  withWindowDigest,
} from "../../src/agent/index.js";
import { withPlanDigest } from "../../src/agent/request/window.js";
import {
  type ConversationPlan,
  type MessageInput,
  messageTokens,
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

type RequestCase = typeof requests extends fc.Arbitrary<infer T> ? T : never;

/** The generated request, sent to Anthropic in its room, and its conversation policy. */
function requestOf(g: RequestCase) {
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
  return { policy, input };
}

describe("planRequest with a window step", () => {
  it("sends exactly the bytes of two independent plans (find the start, then plan from it)", () => {
    fc.assert(
      fc.property(requests, (g) => {
        const { policy, input } = requestOf(g);
        const got = outcome(() => planRequest(input));
        // The reference: the first plan in the room less the digest; when it drops
        // history, the same request again with the digest and the grid start as anchor.
        // A current turn that fits the room only without the digest is planned without it.
        const room = g.room;
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
        const want = (reachOf: (typeof REACHES)[number], digest: number) =>
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
              digestTokens: 0,
            });
            expect(JSON.stringify(sent.conversation)).toBe(JSON.stringify(second));
            return sent;
          });
        const digest = Math.min(g.digest, Math.floor(room / 4));
        const wanted = REACHES.map((reachOf) => {
          const w = want(reachOf, digest);
          return digest > 0 && w.includes('"code":"prompt_budget_exceeded"') ? want(reachOf, 0) : w;
        });
        expect(wanted).toContain(got);
      }),
      { numRuns: 300 },
    );
  });
});

describe("planRequest under the caller's anchor, with a digest", () => {
  it("sends the held plan in the room less the digest, opened by the digest of what left it", () => {
    let digested = 0;
    fc.assert(
      fc.property(requests, (g) => {
        const { policy, input } = requestOf(g);
        let anchor: string;
        try {
          anchor = planRequest(input).conversation.firstKeptId;
        } catch {
          return;
        }
        const held = { ...input, policy: { ...policy, anchor } };
        // The plan only: the body is the renderer's of it, as in the test above.
        const got = outcome(() => ({ body: null, conversation: planRequest(held).conversation }));
        // The reference: the planner's plan under the anchor in the room less the digest,
        // opened by the digest (without one when the turn fits only without its room).
        const digest = Math.min(g.digest, Math.floor(g.room / 4));
        const want = (d: number) =>
          outcome(() => {
            const plan = oneCallPlanner().plan({
              messages: g.messages,
              budgetTokens: g.room - d,
              tokenizer: counter,
              policy: { ...policy, anchor },
            });
            const conversation =
              d === 0 ? plan : withPlanDigest(g.messages, plan, 256 * d, counter, d, g.room);
            return { body: null, conversation };
          });
        const w = want(digest);
        const degraded = w.includes('"prompt_budget_exceeded"');
        expect(got).toBe(degraded ? want(0) : w);
        if (got.startsWith("{")) return;
        const r = planRequest(held);
        const c = r.conversation;
        // The digest is counted as the planner counts a message, and the whole fits.
        let used = 0;
        for (const m of c.messages) used += messageTokens(m, counter);
        expect(c.usedTokens).toBe(used);
        expect(c.usedTokens).toBeLessThanOrEqual(g.room);
        // It depends only on the messages before the window start: a longer conversation
        // with the same start opens with the same digest.
        const opening = (p: ConversationPlan) => p.messages.find((m) => m.id === p.firstKeptId);
        const extra: MessageInput = {
          id: "more",
          role: "user",
          content: [{ type: "text", text: "go" }],
        };
        const more = outcome(() => planRequest({ ...held, messages: [...g.messages, extra] }));
        if (more.startsWith("{")) return;
        const next = (JSON.parse(more) as [unknown, ConversationPlan])[1];
        // Either request planned without its digest (its turn fits only without the
        // digest's room) has no digest to agree on.
        const nextDegraded = outcome(() => ({
          body: null,
          conversation: oneCallPlanner().plan({
            messages: [...g.messages, extra],
            budgetTokens: g.room - digest,
            tokenizer: counter,
            policy: { ...policy, anchor },
          }),
        })).includes('"prompt_budget_exceeded"');
        if (next.firstKeptId === c.firstKeptId && !degraded && !nextDegraded) {
          expect(opening(next)?.content[0]).toEqual(opening(c)?.content[0]);
          const first = opening(c)?.content[0];
          if (first?.type === "text" && first.text.startsWith(WINDOW_DIGEST_HEADER)) digested++;
        }
      }),
      { numRuns: 300 },
    );
    // Some of those requests opened with a digest.
    expect(digested).toBeGreaterThan(0);
  });
});
