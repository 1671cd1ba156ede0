/**
 * Compaction with a summarizer that calls the provider through its official client
 * (`@anthropic-ai/sdk`, `openai`) against a loopback server: the request the server
 * receives (instructions, transcript, model, max tokens) and the summary that replaces
 * the dropped run.
 */
import Anthropic from "@anthropic-ai/sdk";
import OpenAI from "openai";
import { describe, expect, it } from "vitest";
import {
  anthropicSummarizer,
  openAISummarizer,
  SUMMARY_INSTRUCTIONS,
  summaryTranscript,
} from "../../src/agent/index.js";
import {
  compactConversation,
  type Message,
  planConversation,
} from "../../src/conversation/index.js";
import { getTokenCounter } from "../../src/tokens/index.js";
import { useLoopback } from "../assemble/loopback.js";

const loop = useLoopback();

const big = Array.from({ length: 3000 }, (_, i) => `line${i}`).join("\n");

const messages: Message[] = [
  { id: "u1", role: "user", content: [{ type: "text", text: "migrate the invoices table 数据" }] },
  {
    id: "a1",
    role: "assistant",
    content: [
      { type: "tool_call", callId: "c1", name: "read_file", input: { path: "schema.sql", b: 1 } },
    ],
  },
  { id: "t1", role: "tool", content: [{ type: "tool_result", callId: "c1", output: big }] },
  { id: "r1", role: "assistant", content: [{ type: "text", text: "The table has 12 columns." }] },
  { id: "u2", role: "user", content: [{ type: "text", text: "now add the index" }] },
  {
    id: "a2",
    role: "assistant",
    content: [{ type: "tool_call", callId: "c2", name: "run", input: { command: "psql" } }],
  },
  {
    id: "t2",
    role: "tool",
    content: [{ type: "tool_result", callId: "c2", output: "permission denied", isError: true }],
  },
  { id: "u3", role: "user", content: [{ type: "text", text: "ok, what next?" }] },
];

function droppedPlan() {
  return planConversation({
    messages,
    budgetTokens: 60,
    tokenizer: "o200k_base",
    policy: { pinned: ["u1"] },
  });
}

describe("summaryTranscript", () => {
  it("writes each part on its own, canonical inputs, errors marked, huge outputs cut", () => {
    const text = summaryTranscript(messages.slice(1, 3), getTokenCounter("o200k_base"), 100);
    expect(
      text.startsWith('assistant called read_file (call c1): {"b":1,"path":"schema.sql"}'),
    ).toBe(true);
    expect(text).toContain("tool result (call c1): line0\nline1");
    expect(text).toMatch(/\[… \d+ chars of tool output elided \(call c1\) …\]/);
    expect(getTokenCounter("o200k_base").count(text)).toBeLessThan(200);
    expect(summaryTranscript(messages.slice(6, 7), getTokenCounter("estimate"), 100)).toBe(
      "tool result (call c2, error): permission denied",
    );
  });
});

describe("provider summarizers through the official clients", () => {
  it("anthropic: one Messages request, the reply becomes the pinned summary of the dropped run", async () => {
    const plan = droppedPlan();
    expect(plan.droppedMessageIds.length).toBeGreaterThan(0);
    loop.script.push({ text: "Goal: migrate invoices; 12 columns; psql denied." });
    const client = new Anthropic({
      apiKey: "k",
      baseURL: loop.base,
      maxRetries: 0,
      timeout: 5_000,
    });
    const summarize = anthropicSummarizer(client, { model: "claude-haiku-4-5", maxTokens: 300 });
    const done = await compactConversation({ messages, plan, summarize, thresholdTokens: 1 });
    expect(done.compacted).toBe(true);
    const wire = loop.recorded[0];
    expect(wire?.path).toBe("/v1/messages");
    expect(wire?.body).toMatchObject({
      model: "claude-haiku-4-5",
      max_tokens: 300,
      system: SUMMARY_INSTRUCTIONS,
    });
    expect(wire?.body.messages).toHaveLength(1);
    expect(wire?.body.messages[0].role).toBe("user");
    const transcript: string = wire?.body.messages[0].content;
    expect(transcript).not.toContain("migrate the invoices table"); // pinned: not summarized
    expect(transcript).toContain("tool result (call c1): line0");
    expect(transcript).toContain("(call c1) …]"); // the 3000-line output was cut
    expect(done.summary?.text).toBe(
      "<conversation_summary>Goal: migrate invoices; 12 columns; psql denied.</conversation_summary>",
    );
    expect(done.summary?.summarizedIds).toEqual(plan.droppedMessageIds);
    expect(done.messages[0]?.id).toBe("u1");
    expect(done.messages[1]?.id).toBe(done.summary?.id);
  });

  it("openai: chat completions (developer role) and responses", async () => {
    const client = new OpenAI({
      apiKey: "k",
      baseURL: `${loop.base}/v1`,
      maxRetries: 0,
      timeout: 5_000,
    });
    loop.script.push({ text: "chat summary" }, { text: "responses summary" });
    const chat = openAISummarizer(client, { model: "gpt-4o-mini", role: "developer" });
    const responses = openAISummarizer(client, {
      model: "gpt-4.1-mini",
      api: "responses",
      maxTokens: 200,
    });
    expect(await chat(messages.slice(3, 5))).toBe("chat summary");
    expect(await responses(messages.slice(3, 5))).toBe("responses summary");
    const [c, r] = loop.recorded;
    expect(c?.path).toBe("/v1/chat/completions");
    expect(c?.body.messages).toEqual([
      { role: "developer", content: SUMMARY_INSTRUCTIONS },
      { role: "user", content: "assistant: The table has 12 columns.\n\nuser: now add the index" },
    ]);
    expect(c?.body.max_completion_tokens).toBe(1024);
    expect(r?.path).toBe("/v1/responses");
    expect(r?.body).toMatchObject({
      model: "gpt-4.1-mini",
      instructions: SUMMARY_INSTRUCTIONS,
      max_output_tokens: 200,
    });
  });

  it("an empty reply or a failed request is an internal_error at summarize", async () => {
    loop.script.push({ text: "  " });
    const client = new Anthropic({
      apiKey: "k",
      baseURL: loop.base,
      maxRetries: 0,
      timeout: 5_000,
    });
    const summarize = anthropicSummarizer(client, { model: "claude-haiku-4-5" });
    await expect(summarize(messages.slice(0, 1))).rejects.toMatchObject({
      code: "internal_error",
      path: "summarize",
    });
    const down = new Anthropic({ apiKey: "k", baseURL: `${loop.base}/nowhere`, maxRetries: 0 });
    await expect(
      anthropicSummarizer(down, { model: "m" })(messages.slice(0, 1)),
    ).rejects.toMatchObject({
      code: "internal_error",
    });
  });
});
