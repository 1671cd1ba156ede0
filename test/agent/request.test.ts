/**
 * The whole request (docs/conversation.md): the system side and the conversation planned in the room
 * it leaves, sent through the official clients (`@anthropic-ai/sdk`, `openai`, the AI
 * SDK's `generateText` with `@ai-sdk/anthropic` / `@ai-sdk/openai`) to a loopback server.
 * Assertions are on the bodies the server received.
 */
import { createAnthropic } from "@ai-sdk/anthropic";
import { createOpenAI } from "@ai-sdk/openai";
import Anthropic from "@anthropic-ai/sdk";
import { generateText } from "ai";
import OpenAI from "openai";
import { describe, expect, it } from "vitest";
import { assembleRequest, type PlannedRequest, planRequest } from "../../src/agent/index.js";
import type { Message } from "../../src/conversation/index.js";
import { contextWindowFor } from "../../src/render/index.js";
import { constraintsSource } from "../../src/sources/index.js";
import { getTokenCounter } from "../../src/tokens/index.js";
import { cacheControls, useLoopback } from "../assemble/loopback.js";
import { MODEL, stableSystem, words } from "../assemble/wire-fixtures.js";

const loop = useLoopback();

const systemPlan = () => stableSystem("tool_state", "run_tests(path)");

/** `turns` turns: each a user line, a tool round (call + result), and an answer. */
function history(turns: number, outputWords = 60): Message[] {
  const out: Message[] = [];
  for (let t = 1; t <= turns; t++) {
    out.push({
      id: `u${t}`,
      role: "user",
      content: [{ type: "text", text: `question ${t} 数据 🚀` }],
    });
    out.push({
      id: `a${t}`,
      role: "assistant",
      content: [
        { type: "text", text: `checking ${t}` },
        { type: "tool_call", callId: `call_${t}`, name: "read_file", input: { path: `f${t}.md` } },
      ],
    });
    out.push({
      id: `t${t}`,
      role: "tool",
      content: [
        { type: "tool_result", callId: `call_${t}`, output: words(outputWords, `out${t}_`) },
      ],
    });
    if (t < turns) {
      out.push({
        id: `r${t}`,
        role: "assistant",
        content: [{ type: "text", text: `answer ${t}` }],
      });
    }
  }
  return out;
}

/**
 * Messages as the API reads them: without `cache_control`, a plain-string content as its
 * one text block (a message carrying a breakpoint is sent as blocks, the same message
 * without one as a string: the same prompt).
 */
const normalized = (messages: { role: string; content: unknown }[]) =>
  JSON.stringify(
    messages.map((m) => ({
      ...m,
      content: typeof m.content === "string" ? [{ type: "text", text: m.content }] : m.content,
    })),
    (k, v) => (k === "cache_control" ? undefined : v),
  );

const anthropic = () =>
  new Anthropic({ apiKey: "test", baseURL: loop.base, maxRetries: 0, timeout: 5_000 });
const openai = () =>
  new OpenAI({ apiKey: "test", baseURL: `${loop.base}/v1`, maxRetries: 0, timeout: 5_000 });

describe("a whole Anthropic request through @anthropic-ai/sdk", () => {
  it("plans the history in the room the system side leaves, with a breakpoint on the last block (the tail)", async () => {
    const counter = getTokenCounter("claude_estimate");
    const messages = history(8);
    const input = {
      provider: "anthropic" as const,
      model: MODEL,
      system: systemPlan(),
      messages,
      responseReserve: 1024,
      tailReserve: 500,
      tokenizer: counter,
      policy: { pinned: ["u1"] },
    };
    const whole = planRequest(input);
    expect(whole.budget.contextWindow).toBe(1_000_000);
    expect(whole.conversation.droppedMessageIds).toEqual([]);
    const contextWindow = whole.budget.systemTokens + 1024 + 500 + 1500;
    const r = planRequest({ ...input, contextWindow });
    const b = r.budget;
    expect(b.messagesBudget).toBe(1500);
    expect(r.conversation.usedTokens).toBeLessThanOrEqual(b.messagesBudget);
    expect(r.conversation.droppedMessageIds.length).toBeGreaterThan(0);
    expect(r.decisions.conversation).toHaveLength(messages.length);
    expect(r.decisions.segments.map((d) => d.name)).toEqual(["rules", "profile", "tool_state"]);

    await anthropic().messages.create({ model: MODEL, max_tokens: 1024, ...r.body });
    const wire = loop.recorded[0]?.body;
    expect(wire.system).toEqual(r.body.system);
    expect(wire.messages).toEqual(r.body.messages);
    // Alternating sides, starting with the pinned first question (merged with the ask that
    // opens the window: it moves by whole turns); tool blocks in Anthropic's shape.
    expect(wire.messages[0].role).toBe("user");
    expect(wire.messages[0].content[0]).toEqual({ type: "text", text: "question 1 数据 🚀" });
    const roles = wire.messages.map((m: { role: string }) => m.role);
    expect(roles.every((x: string, i: number) => i === 0 || x !== roles[i - 1])).toBe(true);
    const last = wire.messages.at(-1);
    expect(last.content[0].type).toBe("tool_result");
    expect(wire.messages.at(-2).content.at(-1)).toMatchObject({ type: "tool_use", id: "call_8" });
    // static, session, stride positions (block 16k − 1) and the tail, at most four, the
    // last on the request's last block (the current turn's tool loop is cached as it grows).
    const controls = cacheControls(wire);
    const tiers = r.request.breakpoints.map((x) => x.tier);
    expect(controls).toHaveLength(tiers.length);
    expect(tiers.length).toBeLessThanOrEqual(4);
    expect(tiers.slice(0, 2)).toEqual(["static", "session"]);
    expect(tiers.at(-1)).toBe("tail");
    const blocks = r.conversation.messages.reduce((n, m) => n + m.content.length, 0);
    expect(r.request.breakpoints.at(-1)?.block).toBe(blocks - 1);
    for (const b of r.request.breakpoints.filter((x) => x.tier === "history")) {
      expect(((b.block as number) + 1) % 16).toBe(0);
    }
    expect(controls.at(-1)?.path).toBe(`.messages[${wire.messages.length - 1}].content[0]`);
    expect(r.stablePrefix.lastMessageId).toBe("r7");
    expect(r.stablePrefix.tokens).toBeGreaterThan(0);
  });

  it("at the limit of 4 the tail and the last system tier keep theirs; the current turn fails closed", async () => {
    const r = planRequest({
      provider: "anthropic",
      model: MODEL,
      system: systemPlan(),
      messages: history(3),
      responseReserve: 1024,
      contextWindow: 200_000,
      render: { toolsBreakpoints: 2 },
    });
    expect(r.request.skipped.map((s) => [s.tier, s.reason])).toEqual([
      ["static", "breakpoint_limit"],
    ]);
    expect(r.request.breakpoints.map((x) => x.tier)).toEqual(["session", "tail"]);
    expect(cacheControls(r.body)).toHaveLength(2);
    expect(() =>
      planRequest({
        provider: "anthropic",
        model: MODEL,
        system: systemPlan(),
        messages: history(2, 3000),
        responseReserve: 1024,
        contextWindow: 4000,
      }),
    ).toThrow(expect.objectContaining({ code: "prompt_budget_exceeded" }));
    expect(() =>
      planRequest({
        provider: "anthropic",
        model: MODEL,
        system: systemPlan(),
        messages: history(1),
        responseReserve: 10,
        contextWindow: 100,
      }),
    ).toThrow(expect.objectContaining({ code: "prompt_budget_exceeded", path: "contextWindow" }));
  });

  it("with the anchor passed back and lowWaterRatio 0.7, the cached prefix stays byte-identical for several turns", async () => {
    const counter = getTokenCounter("claude_estimate");
    let anchor: string | null = null;
    let clearBeforeTurn: number | null = null;
    let previous: { first: string; prefix: string } | null = null;
    let same = 0;
    let moved = 0;
    for (let turns = 4; turns <= 40; turns++) {
      const r: PlannedRequest<"anthropic"> = planRequest({
        provider: "anthropic",
        model: MODEL,
        system: systemPlan(),
        messages: history(turns),
        responseReserve: 1024,
        contextWindow: 9000,
        tokenizer: counter,
        policy: { lowWaterRatio: 0.7, anchor, clearBeforeTurn },
      });
      anchor = r.conversation.firstKeptId;
      clearBeforeTurn = r.conversation.clearBeforeTurn;
      await anthropic().messages.create({ model: MODEL, max_tokens: 1024, ...r.body });
      const wire = loop.recorded.at(-1)?.body;
      const text = normalized(wire.messages);
      // The window start and the clearing boundary together: while both hold, so does the prefix.
      const held = `${anchor} ${clearBeforeTurn}`;
      if (previous !== null && previous.first === held) {
        // Everything the previous request cached is a prefix of this one.
        expect(text.startsWith(previous.prefix.slice(0, -1))).toBe(true);
        same++;
      } else if (previous !== null) moved++;
      const upTo = wire.messages.findLastIndex((m: { content: unknown }) =>
        JSON.stringify(m).includes("cache_control"),
      );
      previous = {
        first: held,
        prefix: normalized(wire.messages.slice(0, upTo + 1)),
      };
    }
    expect(moved).toBeGreaterThan(0);
    expect(same).toBeGreaterThan(2 * moved);
  });
});

describe("whole OpenAI requests through the openai client", () => {
  it("chat completions: system first, tool_calls and tool messages, prompt_cache_key", async () => {
    const r = planRequest({
      provider: "openai-chat",
      model: "gpt-4o",
      system: systemPlan(),
      messages: history(3),
      responseReserve: 4096,
      render: { role: "developer" },
    });
    expect(r.budget.contextWindow).toBe(128_000);
    expect(r.budget.tokenizer).toBe("o200k_base");
    await openai().chat.completions.create({ model: "gpt-4o", ...r.body });
    const wire = loop.recorded[0]?.body;
    expect(wire.messages[0]).toEqual({ role: "developer", content: systemPlan().prompt });
    expect(wire.messages[2]).toEqual({
      role: "assistant",
      content: "checking 1",
      tool_calls: [
        {
          id: "call_1",
          type: "function",
          function: { name: "read_file", arguments: '{"path":"f1.md"}' },
        },
      ],
    });
    expect(wire.messages[3]).toMatchObject({ role: "tool", tool_call_id: "call_1" });
    expect(wire.prompt_cache_key).toMatch(/^promptctx-[0-9a-f]{16}$/);
  });

  it("responses: instructions and function_call / function_call_output items", async () => {
    const r = planRequest({
      provider: "openai-responses",
      model: "gpt-4.1",
      system: systemPlan(),
      messages: history(2),
      responseReserve: 4096,
    });
    await openai().responses.create({ model: "gpt-4.1", ...r.body });
    const wire = loop.recorded[0]?.body;
    expect(wire.instructions).toBe(systemPlan().prompt);
    expect(wire.input.slice(0, 4)).toEqual([
      { role: "user", content: "question 1 数据 🚀" },
      { role: "assistant", content: "checking 1" },
      {
        type: "function_call",
        call_id: "call_1",
        name: "read_file",
        arguments: '{"path":"f1.md"}',
      },
      {
        type: "function_call_output",
        call_id: "call_1",
        output: expect.stringMatching(/^out1_0 /),
      },
    ]);
  });
});

describe("whole requests through the AI SDK's generateText", () => {
  it("@ai-sdk/anthropic: tool_use / tool_result on the wire and the history breakpoint from providerOptions", async () => {
    const r = planRequest({
      provider: "ai-sdk-anthropic",
      model: MODEL,
      system: systemPlan(),
      messages: history(3),
      responseReserve: 1024,
    });
    const model = createAnthropic({ baseURL: `${loop.base}/v1`, apiKey: "test" })(MODEL);
    await generateText({ model, ...r.body, maxRetries: 0 });
    const wire = loop.recorded[0]?.body;
    expect(cacheControls(wire).map((c) => c.path)).toEqual([
      ".system[0]",
      ".system[1]",
      ".messages[10].content[0]",
    ]);
    expect(wire.messages[1].content[1]).toEqual({
      type: "tool_use",
      id: "call_1",
      name: "read_file",
      input: { path: "f1.md" },
    });
    expect(wire.messages[2].content[0]).toMatchObject({
      type: "tool_result",
      tool_use_id: "call_1",
    });
  });

  it("@ai-sdk/openai: tool_calls and tool messages, promptCacheKey", async () => {
    const r = planRequest({
      provider: "ai-sdk-openai",
      model: "gpt-4o",
      system: systemPlan(),
      messages: history(2),
      responseReserve: 1024,
    });
    const model = createOpenAI({ baseURL: `${loop.base}/v1`, apiKey: "test" }).chat("gpt-4o");
    await generateText({ model, ...r.body, maxRetries: 0 });
    const wire = loop.recorded[0]?.body;
    expect(wire.messages[0]).toEqual({ role: "system", content: systemPlan().prompt });
    expect(wire.messages[2].tool_calls[0]).toMatchObject({
      id: "call_1",
      function: { name: "read_file", arguments: '{"path":"f1.md"}' },
    });
    expect(wire.messages[3]).toMatchObject({ role: "tool", tool_call_id: "call_1" });
    expect(wire.prompt_cache_key).toBe(r.request.promptCacheKey);
  });
});

describe("assembleRequest", () => {
  it("assembles the system prompt, then plans the conversation; moved layers go after the last cached block", async () => {
    const r = await assembleRequest({
      provider: "anthropic",
      model: MODEL,
      assemble: {
        mode: "chat",
        query: { text: "question 2", userScope: "u1" },
        now: "2026-11-30T09:00:00Z",
        sources: [
          constraintsSource({ rules: [{ id: "r1", level: "forbid", text: "never rm -rf" }] }),
        ],
      },
      messages: history(2),
      responseReserve: 2048,
      render: { memoryPlacement: "user", memoryNames: ["constraints"] },
    });
    expect(r.assembly?.prompt).toBeDefined();
    expect(r.budget.contextWindow).toBe(contextWindowFor(MODEL));
    expect(r.budget.contextWindowSource).toBe("2026-12-01");
    await anthropic().messages.create({ model: MODEL, max_tokens: 2048, ...r.body });
    const wire = loop.recorded[0]?.body;
    expect(JSON.stringify(wire.system)).not.toContain("never rm -rf");
    // The current turn ends with its tool result: the tail breakpoint is on it, and the
    // moved layers (constraints, and the per-request clock) follow it in the same message.
    const last = wire.messages.at(-1);
    expect(last.content[0]).toMatchObject({ type: "tool_result", tool_use_id: "call_2" });
    // (Below the minimum cacheable length here: the tail says so instead of a breakpoint.)
    expect(r.request.skipped.map((x) => x.tier)).toContain("tail");
    expect(last.content[1].text).toContain("never rm -rf");
    expect(last.content.at(-1).text).toContain("Current time: 2026-11-30T09:00:00Z");
    expect(JSON.stringify(wire.messages.slice(0, -1))).not.toContain("never rm -rf");
    expect(r.request.perRequestIndex).toBe(r.conversation.messages.length);
    expect(r.budget.responseReserve).toBe(2048);
    expect(wire.messages[0]).toEqual({ role: "user", content: "question 1 数据 🚀" });
  });

  it("model context windows come from the table, with unknown models refused", () => {
    expect(contextWindowFor("claude-haiku-4-5-20251001")).toBe(200_000);
    expect(contextWindowFor("anthropic/claude-opus-4-6")).toBe(1_000_000);
    expect(contextWindowFor("claude-some-future-model")).toBe(200_000);
    expect(contextWindowFor("gpt-4o-2024-08-06")).toBe(128_000);
    expect(() => contextWindowFor("llama-3")).toThrow(expect.objectContaining({ path: "model" }));
  });
});
