/**
 * The AI SDK middleware (`wrapLanguageModel` from `ai`): `generateText` / `streamText` on
 * wrapped `@ai-sdk/anthropic` and `@ai-sdk/openai` models against a loopback server.
 * Assertions are on the bodies the server received and on the reports the caller gets.
 */
import { createAnthropic } from "@ai-sdk/anthropic";
import { createOpenAI } from "@ai-sdk/openai";
import {
  generateText,
  type ModelMessage,
  stepCountIs,
  streamText,
  tool,
  wrapLanguageModel,
} from "ai";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { type ContextReport, promptctxMiddleware } from "../../src/agent/index.js";
import { cacheControls, useLoopback } from "../assemble/loopback.js";
import { MODEL, stableSystem, words } from "../assemble/wire-fixtures.js";

const loop = useLoopback();

/** The system side for a turn: stable rules and profile, the query in the dynamic tier. */
const systemFor = (query: string) => stableSystem("focus", `Current question: ${query}`);

/** A history of `turns` turns with a tool exchange each; the last user line is the current turn. */
function history(turns: number, outputWords = 80): ModelMessage[] {
  const out: ModelMessage[] = [];
  for (let t = 1; t <= turns; t++) {
    out.push({ role: "user", content: `question ${t} 数据` });
    if (t === turns) break;
    out.push({
      role: "assistant",
      content: [
        {
          type: "tool-call",
          toolCallId: `call_${t}`,
          toolName: "read_file",
          input: { path: `f${t}` },
        },
      ],
    });
    out.push({
      role: "tool",
      content: [
        {
          type: "tool-result",
          toolCallId: `call_${t}`,
          toolName: "read_file",
          output: { type: "text", value: words(outputWords, `out${t}_`) },
        },
      ],
    });
    out.push({ role: "assistant", content: `answer ${t}` });
  }
  return out;
}

describe("promptctxMiddleware with generateText on @ai-sdk/anthropic", () => {
  it("assembles the system side per call, plans the history in the window, reports the decisions", async () => {
    const reports: ContextReport[] = [];
    const queries: string[] = [];
    const middleware = promptctxMiddleware({
      system: ({ query }) => {
        queries.push(query);
        return systemFor(query);
      },
      contextWindow: 9000,
      pinFirstUserMessage: true,
      onContext: (r) => reports.push(r),
    });
    const base = createAnthropic({ baseURL: `${loop.base}/v1`, apiKey: "test" })(MODEL);
    const model = wrapLanguageModel({ model: base, middleware });
    const result = await generateText({
      model,
      system: "Answer in English.",
      messages: history(12, 250),
      maxOutputTokens: 1000,
      maxRetries: 0,
    });
    expect(result.text).toBe("ok");
    expect(queries).toEqual(["question 12 数据"]);
    const report = reports[0] as ContextReport;
    const r = report.request;
    expect(r.budget.responseReserve).toBe(1000);
    expect(r.budget.otherTokens).toBeGreaterThan(0);
    expect(r.budget.messagesBudget).toBe(
      9000 - r.budget.systemTokens - r.budget.otherTokens - r.budget.toolsTokens - 1000,
    );
    expect(r.conversation.droppedMessageIds.length).toBeGreaterThan(0);
    expect(r.conversation.usedTokens).toBeLessThanOrEqual(r.budget.messagesBudget);

    const wire = loop.recorded[0]?.body;
    // One system block per cached tier, then the caller's own system text; the dynamic
    // tier goes after the last cached block (the agent defaults, as assembleRequest).
    expect(wire.system.map((b: { text: string }) => b.text)).toEqual([
      words(900, "rule"),
      words(300, "prof"),
      "Answer in English.",
    ]);
    expect(JSON.stringify(wire.messages.at(-1))).toContain("Current question: question 12 数据");
    // The pinned first question, merged with the ask that opens the window (whole turns).
    expect(wire.messages[0].role).toBe("user");
    expect(wire.messages[0].content[0]).toEqual({ type: "text", text: "question 1 数据" });
    expect(JSON.stringify(wire.messages)).not.toContain('"question 2 数据"'); // dropped, then pinned first
    // The tail: the last block carries the breakpoint, so the next call reads it back.
    expect(wire.messages.at(-1)).toEqual({
      role: "user",
      content: [
        { type: "text", text: "question 12 数据", cache_control: { type: "ephemeral" } },
        { type: "text", text: "Current question: question 12 数据" },
      ],
    });
    const controls = cacheControls(wire).map((c) => c.path);
    // The agent defaults add a breakpoint inside the history (as assembleRequest does).
    expect(controls.slice(0, 2)).toEqual([".system[0]", ".system[1]"]);
    expect(controls.at(-1)).toBe(`.messages[${wire.messages.length - 1}].content[0]`);
    expect(controls.length).toBeLessThanOrEqual(4);
    expect(wire.messages.at(-2)).toMatchObject({
      role: "assistant",
      content: [{ text: "answer 11" }],
    });
    // The decisions reach the caller on the result too.
    const meta = result.providerMetadata?.promptctx as {
      droppedMessageIds: string[];
      decisions: { conversation: unknown[] };
    };
    expect(meta.droppedMessageIds).toEqual(r.conversation.droppedMessageIds);
    expect(meta.decisions.conversation).toHaveLength(r.conversation.decisions.length);
  });

  it("runs every step of a tool loop through the planner and carries the anchor between calls", async () => {
    const reports: ContextReport[] = [];
    const middleware = promptctxMiddleware({
      system: ({ query }) => systemFor(query),
      onContext: (r) => reports.push(r),
      policy: { lowWaterRatio: 0.7 },
    });
    const base = createAnthropic({ baseURL: `${loop.base}/v1`, apiKey: "test" })(MODEL);
    loop.script.push(
      { toolCalls: [{ id: "toolu_9", name: "read_file", input: { path: "README.md" } }] },
      { text: "done" },
    );
    const result = await generateText({
      model: wrapLanguageModel({ model: base, middleware }),
      messages: history(3),
      tools: {
        read_file: tool({
          description: "read a file",
          inputSchema: z.object({ path: z.string() }),
          execute: async ({ path }) => `contents of ${path}`,
        }),
      },
      stopWhen: stepCountIs(3),
      maxRetries: 0,
    });
    expect(result.text).toBe("done");
    expect(reports).toHaveLength(2);
    expect(reports[0]?.request.budget.toolsTokens).toBeGreaterThan(0);
    expect(reports[1]?.request.conversation.firstKeptId).toBe(
      reports[0]?.request.conversation.firstKeptId,
    );
    const second = loop.recorded[1]?.body;
    expect(second.messages.at(-2).content[0]).toMatchObject({
      type: "tool_use",
      id: "toolu_9",
      name: "read_file",
    });
    expect(second.messages.at(-1).content[0]).toMatchObject({
      type: "tool_result",
      tool_use_id: "toolu_9",
      content: "contents of README.md",
    });
    // The current turn (question 3 and its tool round) is sent whole; the system side stays put.
    expect(second.system).toEqual(loop.recorded[0]?.body.system);
  });
});

describe("promptctxMiddleware with streamText on @ai-sdk/openai", () => {
  it("sends the assembled system message, the planned messages and promptCacheKey; metadata on finish", async () => {
    const reports: ContextReport[] = [];
    const middleware = promptctxMiddleware({
      system: ({ query }) => systemFor(query),
      onContext: (r) => reports.push(r),
    });
    const base = createOpenAI({ baseURL: `${loop.base}/v1`, apiKey: "test" }).chat("gpt-4o");
    const result = streamText({
      model: wrapLanguageModel({ model: base, middleware }),
      messages: history(3),
      maxRetries: 0,
    });
    expect(await result.text).toBe("ok");
    const wire = loop.recorded[0]?.body;
    expect(wire.stream).toBe(true);
    // The cached tiers in the system message; the dynamic tier after them, in the turn.
    expect(wire.messages[0].role).toBe("system");
    expect(systemFor("question 3 数据").prompt.startsWith(wire.messages[0].content)).toBe(true);
    expect(JSON.stringify(wire.messages)).toContain("Current question: question 3 数据");
    expect(wire.messages[2].tool_calls[0]).toMatchObject({
      id: "call_1",
      function: { name: "read_file" },
    });
    expect(wire.messages[3]).toMatchObject({ role: "tool", tool_call_id: "call_1" });
    expect(wire.prompt_cache_key).toBe(reports[0]?.request.request.promptCacheKey);
    expect(reports[0]?.callType).toBe("stream");
    expect(reports[0]?.request.budget.contextWindow).toBe(128_000);
    const meta = (await result.providerMetadata)?.promptctx as { budget: { tokenizer: string } };
    expect(meta.budget.tokenizer).toBe("o200k_base");
  });

  it("a prompt the neutral model cannot hold fails the call with invalid_input, naming the part", async () => {
    const middleware = promptctxMiddleware({ system: ({ query }) => systemFor(query) });
    const base = createOpenAI({ baseURL: `${loop.base}/v1`, apiKey: "test" }).chat("gpt-4o");
    await expect(
      generateText({
        model: wrapLanguageModel({ model: base, middleware }),
        messages: [
          {
            role: "user",
            content: [{ type: "image", image: new URL("https://example.com/x.png") }],
          },
        ],
        maxRetries: 0,
      }),
    ).rejects.toMatchObject({ code: "invalid_input" });
    expect(loop.recorded).toHaveLength(0);
  });
});
