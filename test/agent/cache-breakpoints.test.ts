/**
 * Breakpoints placed for the prompt cache (docs/conversation.md "the agent loop with
 * defaults"): properties over generated tool-heavy conversations growing request by
 * request — never more than 4, never below the minimum cacheable length, the tail always
 * marked when it can be, and each request's breakpoints within the provider's lookback of
 * the previous request's — per-request layers after the last cached block, and whole
 * requests with only the window given sent through the official clients.
 */
import { createAnthropic } from "@ai-sdk/anthropic";
import { createOpenAI } from "@ai-sdk/openai";
import Anthropic from "@anthropic-ai/sdk";
import { generateText } from "ai";
import fc from "fast-check";
import OpenAI from "openai";
import { describe, expect, it } from "vitest";
import { anthropicOrphans } from "../../bench/lib/cache-sim.mjs";
import {
  agentDefaults,
  assembleRequest,
  type PlannedRequest,
  planRequest,
  WINDOW_DIGEST_HEADER,
} from "../../src/agent/index.js";
import { type Message, messageTokens } from "../../src/conversation/index.js";
import {
  ANTHROPIC_CACHE_LOOKBACK_BLOCKS,
  HISTORY_BREAKPOINT_STRIDE,
  toConversationRequest,
} from "../../src/render/index.js";
import { constraintsSource, staticSource } from "../../src/sources/index.js";
import { getTokenCounter } from "../../src/tokens/index.js";
import { cacheControls, useLoopback } from "../assemble/loopback.js";
import { MODEL, stableSystem, words } from "../assemble/wire-fixtures.js";

const counter = getTokenCounter("claude_estimate");
const LOOKBACK = ANTHROPIC_CACHE_LOOKBACK_BLOCKS;
const STRIDE = HISTORY_BREAKPOINT_STRIDE;

/** A turn: its ask's words, and per tool round the output words of each parallel call. */
const turnArb = fc.record({
  ask: fc.integer({ min: 1, max: 80 }),
  rounds: fc.array(fc.array(fc.integer({ min: 1, max: 400 }), { minLength: 1, maxLength: 14 }), {
    maxLength: 3,
  }),
});

/** The requests of a conversation: the messages before each model call. */
function requestsOf(turns: { ask: number; rounds: number[][] }[]): Message[][] {
  const out: Message[][] = [];
  const history: Message[] = [];
  turns.forEach((t, i) => {
    history.push({
      id: `u${i}`,
      role: "user",
      content: [{ type: "text", text: words(t.ask, `q${i}_`) }],
    });
    out.push([...history]);
    t.rounds.forEach((calls, k) => {
      const ids = calls.map((_, c) => `c${i}_${k}_${c}`);
      history.push({
        id: `a${i}_${k}`,
        role: "assistant",
        content: ids.map((callId) => ({
          type: "tool_call",
          callId,
          name: "grep",
          input: { q: callId },
        })),
      });
      history.push({
        id: `t${i}_${k}`,
        role: "tool",
        content: ids.map((callId, c) => ({
          type: "tool_result",
          callId,
          output: words(calls[c] as number, `${callId}_`),
        })),
      });
      out.push([...history]);
    });
    history.push({
      id: `r${i}`,
      role: "assistant",
      content: [{ type: "text", text: `answer ${i}` }],
    });
  });
  return out;
}

const blockCount = (messages: readonly Message[]) =>
  messages.reduce((n, m) => n + m.content.length, 0);

describe("breakpoints over a growing tool-heavy conversation", () => {
  it("never more than 4, never below the minimum, the tail marked when eligible, the previous ones within the lookback", () => {
    const system = stableSystem("tool_state", "state");
    fc.assert(
      fc.property(
        fc.array(turnArb, { minLength: 1, maxLength: 8 }),
        fc.integer({ min: 0, max: 4 }),
        fc.constantFrom(0, 1024, 4096, 20_000),
        (turns, toolsBreakpoints, minCacheableTokens) => {
          let previous: { blocks: number; tail: number; marks: number[] } | null = null;
          for (const messages of requestsOf(turns)) {
            const r = toConversationRequest(
              "anthropic",
              system,
              { messages, stableEnd: -1, stableTokens: 0 },
              { model: MODEL, tokenCounter: counter, toolsBreakpoints, minCacheableTokens },
            );
            expect(cacheControls(r.body).length + toolsBreakpoints).toBeLessThanOrEqual(4);
            for (const b of r.breakpoints) {
              expect(b.prefixTokens).toBeGreaterThanOrEqual(minCacheableTokens);
            }
            const n = blockCount(messages);
            const tailSkipped = r.skipped.find((s) => s.tier === "tail");
            if (toolsBreakpoints < 4) {
              expect(tailSkipped?.reason ?? "placed").not.toBe("breakpoint_limit");
              if (tailSkipped === undefined) {
                expect(r.breakpoints.find((b) => b.tier === "tail")?.block).toBe(n - 1);
              }
            }
            const marks = r.breakpoints.flatMap((b) => (b.block === undefined ? [] : [b.block]));
            // Lookback: with every place eligible and no tool breakpoints, a request that adds
            // fewer than `stride + lookback` blocks has a breakpoint within the lookback of one
            // of the previous request's, less than a stride behind its tail.
            const all =
              toolsBreakpoints === 0 &&
              r.skipped.every((s) => s.reason !== "below_min_cacheable_tokens");
            if (previous !== null && all && n - previous.blocks < STRIDE + LOOKBACK) {
              const prev = previous;
              const found = marks.some((p) =>
                prev.marks.some((e) => p >= e && p - e < LOOKBACK && e > prev.tail - STRIDE),
              );
              expect(found).toBe(true);
              if (n - prev.blocks < LOOKBACK) {
                expect(marks.some((p) => p >= prev.tail && p - prev.tail < LOOKBACK)).toBe(true);
              }
            }
            previous = all ? { blocks: n, tail: n - 1, marks } : null;
          }
        },
      ),
      { numRuns: 60 },
    );
  });

  it("per-request layers come after the last cached block, for every provider", () => {
    const system = stableSystem("tool_state", "PER-REQUEST tool state");
    fc.assert(
      fc.property(fc.array(turnArb, { minLength: 1, maxLength: 4 }), (turns) => {
        for (const messages of requestsOf(turns)) {
          const options = {
            model: MODEL,
            tokenCounter: counter,
            dynamicPlacement: "user" as const,
          };
          const planned = { messages, stableEnd: -1, stableTokens: 0 };
          const a = toConversationRequest("anthropic", system, planned, options);
          expect(JSON.stringify(a.body.system)).not.toContain("PER-REQUEST");
          const wire = JSON.stringify(a.body.messages);
          const lastMark = wire.lastIndexOf("cache_control");
          expect(wire.indexOf("PER-REQUEST")).toBeGreaterThan(lastMark);
          expect(a.perRequestIndex).toBe(messages.length);
          const o = toConversationRequest("openai-chat", system, planned, options);
          const last = o.body.messages.at(-1);
          expect(last?.role).toBe("user");
          expect(JSON.stringify(last)).toContain("PER-REQUEST");
          expect(JSON.stringify(o.body.messages.slice(0, -1))).not.toContain("PER-REQUEST");
        }
      }),
      { numRuns: 25 },
    );
  });
});

describe("whole requests with the agent defaults over generated tool-heavy conversations", () => {
  it("never over the window, never an orphan, never an assistant message first", () => {
    const system = stableSystem("tool_state", "state");
    fc.assert(
      fc.property(
        fc.array(turnArb, { minLength: 2, maxLength: 10 }),
        fc.integer({ min: 9_000, max: 40_000 }),
        (turns, contextWindow) => {
          const d = agentDefaults(contextWindow);
          for (const messages of requestsOf(turns)) {
            let r: PlannedRequest<"anthropic">;
            try {
              r = planRequest({
                provider: "anthropic",
                model: MODEL,
                system,
                messages,
                contextWindow,
                tokenizer: counter,
                responseReserve: d.responseReserve,
                policy: d.policy,
                render: d.render,
                windowStepTokens: d.windowStepTokens,
                digestTokens: d.digestTokens,
              });
            } catch (e) {
              // A current turn larger than the room fails closed: nothing is sent.
              expect(e).toMatchObject({ code: "prompt_budget_exceeded" });
              continue;
            }
            const b = r.budget;
            expect(r.conversation.usedTokens).toBeLessThanOrEqual(b.messagesBudget);
            expect(
              b.systemTokens + r.conversation.usedTokens + b.responseReserve,
            ).toBeLessThanOrEqual(contextWindow);
            expect(anthropicOrphans(r.body)).toBe(0);
            expect(r.body.messages[0]?.role).toBe("user");
            expect(cacheControls(r.body).length).toBeLessThanOrEqual(4);
          }
        },
      ),
      { numRuns: 12 },
    );
  }, 120_000);
});

describe("the window start without an anchor", () => {
  it("is shared by consecutive requests and moves about once per step of growth, always to a user message", () => {
    const turns = Array.from({ length: 24 }, (_, i) => ({
      ask: 20 + (i % 7) * 5,
      rounds: [[200 + (i % 5) * 90], ...(i % 3 === 0 ? [[150, 90]] : [])],
    }));
    const d = agentDefaults(30_000);
    const run = (windowStepTokens: number | null) => {
      let starts = 0;
      let last: string | null = null;
      let budget = 0;
      for (const messages of requestsOf(turns)) {
        const r = planRequest({
          provider: "anthropic",
          model: MODEL,
          system: stableSystem("tool_state", "state"),
          messages,
          contextWindow: 30_000,
          tokenizer: counter,
          responseReserve: d.responseReserve,
          policy: d.policy,
          windowStepTokens,
        });
        const first = r.conversation.messages[0];
        if (windowStepTokens !== null) expect(first?.role).toBe("user");
        if (first?.id !== last) starts++;
        last = first?.id ?? null;
        budget = r.budget.messagesBudget;
        expect(r.conversation.usedTokens).toBeLessThanOrEqual(budget);
      }
      return { starts, budget };
    };
    const grid = run(d.windowStepTokens);
    const own = run(null);
    const all = requestsOf(turns).at(-1) as Message[];
    const total = all.reduce((n, m) => n + messageTokens(m, counter), 0);
    expect(grid.starts).toBeLessThanOrEqual(
      Math.ceil((total - grid.budget) / d.windowStepTokens) + 2,
    );
    // The planner's own start (no anchor carried) moves on most requests once full.
    expect(grid.starts).toBeLessThan(own.starts);
  }, 60_000);
});

const loop = useLoopback();

describe("assembleRequest with only the window given, through the official clients", () => {
  const assembleInput = (text: string) => ({
    mode: "chat",
    query: { text, userScope: "u1" },
    now: "2026-11-30T09:00:00Z",
    sources: [
      constraintsSource({ rules: [{ id: "r1", level: "forbid", text: "never rm -rf" }] }),
      staticSource(
        "instructions",
        ["instructions"],
        [{ id: "AGENTS.md", text: words(1500, "agents") }],
      ),
    ],
  });
  const messages = requestsOf([
    { ask: 10, rounds: [[300], [200, 100]] },
    { ask: 12, rounds: [[250]] },
  ]).at(-1) as Message[];

  it("anthropic: the tail and the system cached, the clock after the last breakpoint", async () => {
    const r = await assembleRequest({
      provider: "anthropic",
      model: MODEL,
      contextWindow: 200_000,
      assemble: assembleInput("question"),
      messages,
    });
    expect(r.budget.responseReserve).toBe(agentDefaults(200_000).responseReserve);
    const client = new Anthropic({
      apiKey: "test",
      baseURL: loop.base,
      maxRetries: 0,
      timeout: 5_000,
    });
    await client.messages.create({ model: MODEL, max_tokens: r.budget.responseReserve, ...r.body });
    const wire = loop.recorded.at(-1)?.body;
    expect(wire.messages).toEqual(r.body.messages);
    expect(r.request.breakpoints.map((b) => b.tier)).toContain("tail");
    const text = JSON.stringify(wire.messages);
    expect(text.indexOf("Current time: 2026-11-30T09:00:00Z")).toBeGreaterThan(
      text.lastIndexOf("cache_control"),
    );
    expect(cacheControls(wire).length).toBeLessThanOrEqual(4);
  });

  it("openai chat and responses: the stable prefix first, a prompt_cache_key per window", async () => {
    const client = new OpenAI({
      apiKey: "test",
      baseURL: `${loop.base}/v1`,
      maxRetries: 0,
      timeout: 5_000,
    });
    const chat = await assembleRequest({
      provider: "openai-chat",
      model: "gpt-4o",
      contextWindow: 128_000,
      assemble: assembleInput("question"),
      messages,
    });
    await client.chat.completions.create({ model: "gpt-4o", ...chat.body });
    const wire = loop.recorded.at(-1)?.body;
    expect(wire.prompt_cache_key).toMatch(/^promptctx-[0-9a-f]{16}$/);
    expect(JSON.stringify(wire.messages.at(-1))).toContain("Current time:");
    const responses = await assembleRequest({
      provider: "openai-responses",
      model: "gpt-4.1",
      contextWindow: 128_000,
      assemble: assembleInput("question"),
      messages,
    });
    await client.responses.create({ model: "gpt-4.1", ...responses.body });
    expect(loop.recorded.at(-1)?.body.prompt_cache_key).toBe(chat.request.promptCacheKey);
  });

  it("AI SDK: cacheControl on the tail part reaches the wire as cache_control", async () => {
    const r = await assembleRequest({
      provider: "ai-sdk-anthropic",
      model: MODEL,
      contextWindow: 200_000,
      assemble: assembleInput("question"),
      messages,
    });
    const model = createAnthropic({ baseURL: `${loop.base}/v1`, apiKey: "test" })(MODEL);
    await generateText({ model, ...r.body, maxRetries: 0 });
    const wire = loop.recorded.at(-1)?.body;
    const marks = cacheControls(wire).map((c) => c.path);
    expect(marks.length).toBeLessThanOrEqual(4);
    expect(marks.some((p) => p.startsWith(".messages["))).toBe(true);
    const o = await assembleRequest({
      provider: "ai-sdk-openai",
      model: "gpt-4o",
      contextWindow: 128_000,
      assemble: assembleInput("question"),
      messages,
    });
    const openai = createOpenAI({ baseURL: `${loop.base}/v1`, apiKey: "test" }).chat("gpt-4o");
    await generateText({ model: openai, ...o.body, maxRetries: 0 });
    expect(loop.recorded.at(-1)?.body.prompt_cache_key).toBe(o.request.promptCacheKey);
  });
});

describe("agentDefaults and the options assembleRequest keeps", () => {
  it("scales every budget from the window", () => {
    const small = agentDefaults(64_000);
    const large = agentDefaults(200_000);
    expect(small).toMatchObject({
      responseReserve: 3200,
      policy: { lowWaterRatio: 0.74, toolResultMaxTokens: 6400, clearBatchTokens: 16_000 },
      slots: { system: 6400, recall: 1280 },
      render: { dynamicPlacement: "user" },
    });
    expect(large).toMatchObject({
      responseReserve: 10_000,
      // A tool result is capped at 8,000 tokens whatever the window (a tenth of 200k is 20,000).
      policy: { lowWaterRatio: 0.4, toolResultMaxTokens: 8000, clearBatchTokens: 50_000 },
      windowStepTokens: 102_000,
      slots: { system: 20_000, recall: 4000 },
    });
    expect(agentDefaults(1_000_000).responseReserve).toBe(16_384);
    expect(() => agentDefaults(0)).toThrow(expect.objectContaining({ path: "contextWindow" }));
  });

  it("an anchor, pinned ids and render options given by the caller win over the defaults", async () => {
    const messages = requestsOf(
      Array.from({ length: 12 }, (_, i) => ({ ask: 10 + i, rounds: [[300]] })),
    ).at(-1) as Message[];
    const base = {
      provider: "anthropic" as const,
      model: MODEL,
      contextWindow: 12_000,
      system: stableSystem("tool_state", "state"),
      messages,
      tokenizer: counter,
    };
    const plain = await assembleRequest(base);
    expect(plain.conversation.droppedMessageIds.length).toBeGreaterThan(0);
    expect(plain.defaults.contextWindow).toBe(12_000);
    // The dynamic tier left the system side by default…
    expect(JSON.stringify(plain.body.system)).not.toContain("state");
    // …and stays there when the caller says so; pinned and anchor are honoured.
    const anchor = plain.conversation.firstKeptId as string;
    const kept = await assembleRequest({
      ...base,
      render: { dynamicPlacement: "system" },
      policy: { pinned: ["u0"], anchor },
    });
    expect(JSON.stringify(kept.body.system)).toContain("state");
    expect(kept.conversation.messages[0]?.id).toBe("u0");
    expect(kept.conversation.firstKeptId).toBe(anchor);
    const fixed = await assembleRequest({ ...base, windowStepTokens: null, responseReserve: 500 });
    expect(fixed.budget.responseReserve).toBe(500);
    // By default the window opens with the digest of what left it; digestTokens 0 drops it.
    const opening = (r: PlannedRequest) => JSON.stringify(r.conversation.messages[0]?.content[0]);
    expect(opening(plain)).toContain(WINDOW_DIGEST_HEADER);
    expect(opening(await assembleRequest({ ...base, digestTokens: 0 }))).not.toContain(
      WINDOW_DIGEST_HEADER,
    );
    // Clearing under pressure is on by default; an explicit `clearTrigger: null` turns it
    // off, field by field, and an explicit trigger overrides the default one.
    expect(plain.conversation.clearBeforeTurn).not.toBeNull();
    const unpressed = await assembleRequest({ ...base, policy: { clearTrigger: null } });
    expect(unpressed.conversation.clearBeforeTurn).toBeNull();
    const pressed = await assembleRequest({
      ...base,
      windowStepTokens: null,
      policy: { clearTrigger: 0.5, clearAtLeastTokens: 100 },
    });
    expect(pressed.conversation.clearBeforeTurn).not.toBeNull();
  });
});
