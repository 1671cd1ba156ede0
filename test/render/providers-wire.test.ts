/**
 * Provider output on the wire (docs/session-and-cache.md): the rendered requests go through the official
 * clients (`@anthropic-ai/sdk`, `openai`, and the Vercel AI SDK's `generateText` with
 * `@ai-sdk/anthropic` / `@ai-sdk/openai`) to a loopback HTTP server on 127.0.0.1 that
 * records each request body and answers a minimal valid response. Every assertion is on
 * what arrived on the wire, never on our own objects. No network beyond 127.0.0.1, no
 * retries, short timeouts.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { createAnthropic } from "@ai-sdk/anthropic";
import { createOpenAI } from "@ai-sdk/openai";
import Anthropic from "@anthropic-ai/sdk";
import { generateText } from "ai";
import OpenAI from "openai";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { computeCacheKeys } from "../../src/cache/index.js";
import {
  type CacheTier,
  type PromptPlan,
  planPrompt,
  SEGMENT_SEPARATOR,
} from "../../src/plan/index.js";
import {
  toAiSdkRequest,
  toAnthropicRequest,
  toOpenAIChatRequest,
  toOpenAIResponsesRequest,
} from "../../src/render/index.js";

interface Recorded {
  method: string;
  path: string;
  headers: IncomingMessage["headers"];
  // biome-ignore lint/suspicious/noExplicitAny: a parsed wire body, inspected field by field
  body: any;
}

const recorded: Recorded[] = [];
let server: Server;
let base: string;

const NOW = 1_790_000_000;

function anthropicMessage(model: string) {
  return {
    id: "msg_test",
    type: "message",
    role: "assistant",
    model,
    content: [{ type: "text", text: "ok" }],
    stop_reason: "end_turn",
    stop_sequence: null,
    usage: {
      input_tokens: 10,
      output_tokens: 1,
      cache_creation_input_tokens: 0,
      cache_read_input_tokens: 0,
    },
  };
}

function chatCompletion(model: string) {
  return {
    id: "chatcmpl-test",
    object: "chat.completion",
    created: NOW,
    model,
    choices: [
      {
        index: 0,
        message: { role: "assistant", content: "ok", refusal: null },
        logprobs: null,
        finish_reason: "stop",
      },
    ],
    usage: {
      prompt_tokens: 10,
      completion_tokens: 1,
      total_tokens: 11,
      prompt_tokens_details: { cached_tokens: 0 },
    },
  };
}

function responsesResponse(model: string) {
  return {
    id: "resp_test",
    object: "response",
    created_at: NOW,
    status: "completed",
    error: null,
    incomplete_details: null,
    model,
    output: [
      {
        type: "message",
        id: "msg_test",
        status: "completed",
        role: "assistant",
        content: [{ type: "output_text", text: "ok", annotations: [] }],
      },
    ],
    usage: {
      input_tokens: 10,
      input_tokens_details: { cached_tokens: 0 },
      output_tokens: 1,
      output_tokens_details: { reasoning_tokens: 0 },
      total_tokens: 11,
    },
  };
}

function answer(req: IncomingMessage, res: ServerResponse, raw: string): void {
  const path = (req.url ?? "").split("?")[0] as string;
  let body: unknown = null;
  try {
    body = JSON.parse(raw);
  } catch {
    body = raw;
  }
  recorded.push({ method: req.method ?? "", path, headers: req.headers, body });
  const model = (body as { model?: string } | null)?.model ?? "unknown";
  const reply =
    path === "/v1/messages"
      ? anthropicMessage(model)
      : path === "/v1/chat/completions"
        ? chatCompletion(model)
        : path === "/v1/responses"
          ? responsesResponse(model)
          : null;
  res.writeHead(reply === null ? 404 : 200, { "content-type": "application/json" });
  res.end(JSON.stringify(reply ?? { error: { message: `no route ${path}` } }));
}

beforeAll(async () => {
  server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => answer(req, res, Buffer.concat(chunks).toString("utf8")));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(async () => {
  server.closeAllConnections();
  await new Promise<void>((resolve) => server.close(() => resolve()));
});

beforeEach(() => {
  recorded.length = 0;
});

/** The one request the server saw since the test began. */
function only(): Recorded {
  expect(recorded).toHaveLength(1);
  return recorded[0] as Recorded;
}

/** Every `cache_control` object anywhere in a wire body. */
function cacheControls(x: unknown): unknown[] {
  if (Array.isArray(x)) return x.flatMap(cacheControls);
  if (typeof x !== "object" || x === null) return [];
  return Object.entries(x).flatMap(([k, v]) => (k === "cache_control" ? [v] : cacheControls(v)));
}

const anthropicClient = () =>
  new Anthropic({ apiKey: "test", baseURL: base, maxRetries: 0, timeout: 5_000 });
const openaiClient = () =>
  new OpenAI({ apiKey: "test", baseURL: `${base}/v1`, maxRetries: 0, timeout: 5_000 });

const words = (n: number, stem: string) =>
  Array.from({ length: n }, (_, i) => `${stem}${i}`).join(" ");
const RULES = words(1100, "rule");
const PROFILE = words(1100, "prof");
const MEMORY =
  '<recalled_memory user="u1">\n- likes tabs 🚀 (score 0.9)\n- 数据库: sqlite\n</recalled_memory>';
const QUERY = "add an index on invoices.created_at";

function fullPlan(memory = MEMORY, rules = RULES): PromptPlan {
  const seg = (name: string, content: string, cacheTier: CacheTier, priority: number) => ({
    name,
    content,
    cacheTier,
    priority,
  });
  return planPrompt({
    budgetChars: null,
    segments: [
      seg("rules", rules, "static", 0),
      seg("profile", PROFILE, "session", 4),
      seg("planner", "task T-12 in progress", "dynamic", 1),
      seg("recall_memory", memory, "dynamic", 5),
      seg("tool_state", "run_tests(path)", "dynamic", 3),
    ],
  });
}

const tierTexts = (p: PromptPlan) => p.tiers.map((t) => p.prompt.slice(t.start, t.end));

describe("Anthropic Messages through @anthropic-ai/sdk", () => {
  it("arrives as one system block per tier with cache_control on static and session", async () => {
    const p = fullPlan();
    const { body } = toAnthropicRequest(p, { query: QUERY });
    const reply = await anthropicClient().messages.create({
      model: "claude-sonnet-4-6",
      max_tokens: 16,
      system: body.system,
      messages: body.messages ?? [],
    });
    expect(reply.content[0]).toMatchObject({ type: "text", text: "ok" });
    const wire = only();
    expect(wire.method).toBe("POST");
    expect(wire.path).toBe("/v1/messages");
    expect(wire.headers["anthropic-version"]).toBeDefined();
    expect(`${wire.headers.authorization ?? ""} ${wire.headers["x-api-key"] ?? ""}`).toContain(
      "test",
    );
    expect(wire.body.model).toBe("claude-sonnet-4-6");
    expect(wire.body.system).toEqual([
      { type: "text", text: tierTexts(p)[0], cache_control: { type: "ephemeral" } },
      { type: "text", text: tierTexts(p)[1], cache_control: { type: "ephemeral" } },
      { type: "text", text: tierTexts(p)[2] },
    ]);
    expect(wire.body.messages).toEqual([{ role: "user", content: QUERY }]);
  });

  it('ttl "1h" and the 4-breakpoint limit hold on the wire, tools included', async () => {
    const p = fullPlan();
    const tool = (name: string) => ({
      name,
      description: `tool ${name}`,
      input_schema: { type: "object" as const, properties: {} },
      cache_control: { type: "ephemeral" as const, ttl: "1h" as const },
    });
    const tools = [tool("a"), tool("b"), tool("c")];
    const r = toAnthropicRequest(p, { ttl: "1h", toolsBreakpoints: tools.length, query: QUERY });
    expect(r.skipped.map((s) => [s.tier, s.reason])).toEqual([["session", "breakpoint_limit"]]);
    await anthropicClient().messages.create({
      model: "claude-sonnet-4-6",
      max_tokens: 16,
      tools,
      ...r.body,
      messages: r.body.messages ?? [],
    });
    const wire = only().body;
    expect(cacheControls(wire)).toHaveLength(4);
    expect(wire.system.map((b: { cache_control?: unknown }) => b.cache_control)).toEqual([
      { type: "ephemeral", ttl: "1h" },
      undefined,
      undefined,
    ]);
  });

  it("a static tier below the minimum cacheable length carries no cache_control", async () => {
    const p = fullPlan(MEMORY, "Be brief.");
    const r = toAnthropicRequest(p, { model: "claude-haiku-4-5", query: QUERY });
    await anthropicClient().messages.create({
      model: "claude-haiku-4-5",
      max_tokens: 16,
      ...r.body,
      messages: r.body.messages ?? [],
    });
    const wire = only().body;
    // Haiku 4.5 caches from 4096 tokens: static (3) and static+session (1103) are too short.
    expect(cacheControls(wire)).toEqual([]);
    expect(wire.system.map((b: { text: string }) => b.text)).toEqual(tierTexts(p));
  });

  it('memoryPlacement "user": memory arrives as the first user block, byte for byte, not in system', async () => {
    const p = fullPlan();
    const r = toAnthropicRequest(p, { memoryPlacement: "user", query: QUERY });
    await anthropicClient().messages.create({
      model: "claude-sonnet-4-6",
      max_tokens: 16,
      ...r.body,
      messages: r.body.messages ?? [],
    });
    const wire = only().body;
    expect(wire.system.map((b: { text: string }) => b.text)).toEqual([
      RULES,
      PROFILE,
      `task T-12 in progress${SEGMENT_SEPARATOR}run_tests(path)`,
    ]);
    expect(JSON.stringify(wire.system)).not.toContain("recalled_memory");
    expect(wire.messages).toEqual([
      {
        role: "user",
        content: [
          { type: "text", text: MEMORY },
          { type: "text", text: QUERY },
        ],
      },
    ]);
  });
});

describe("OpenAI through the openai client", () => {
  it("chat completions: the prompt as the system message, prompt_cache_key from the static key", async () => {
    const p = fullPlan();
    const { body } = toOpenAIChatRequest(p, { query: QUERY });
    const reply = await openaiClient().chat.completions.create({ model: "gpt-4o", ...body });
    expect(reply.choices[0]?.message.content).toBe("ok");
    const wire = only();
    expect(wire.path).toBe("/v1/chat/completions");
    expect(wire.headers.authorization).toBe("Bearer test");
    expect(wire.body.messages).toEqual([
      { role: "system", content: p.prompt },
      { role: "user", content: QUERY },
    ]);
    expect(wire.body.prompt_cache_key).toBe(`promptctx-${computeCacheKeys(p).static}`);
  });

  it("chat completions: developer role; the key survives a dynamic change, not a static one", async () => {
    const client = openaiClient();
    for (const p of [fullPlan(), fullPlan("other memory"), fullPlan(MEMORY, `${RULES} more`)]) {
      const { body } = toOpenAIChatRequest(p, { role: "developer", query: QUERY });
      await client.chat.completions.create({ model: "o3", ...body });
    }
    expect(recorded.map((r) => r.body.messages[0].role)).toEqual([
      "developer",
      "developer",
      "developer",
    ]);
    const keys = recorded.map((r) => r.body.prompt_cache_key as string);
    expect(keys[0]).toMatch(/^promptctx-[0-9a-f]{16}$/);
    expect(keys[1]).toBe(keys[0]);
    expect(keys[2]).not.toBe(keys[0]);
  });

  it("responses: instructions, input and prompt_cache_key; moved memory as input_text", async () => {
    const p = fullPlan();
    const client = openaiClient();
    const plain = toOpenAIResponsesRequest(p, { query: QUERY });
    const reply = await client.responses.create({ model: "gpt-4o", ...plain.body });
    expect(reply.output_text).toBe("ok");
    const moved = toOpenAIResponsesRequest(p, { memoryPlacement: "user", query: QUERY });
    await client.responses.create({ model: "gpt-4o", ...moved.body });
    const [a, b] = recorded;
    expect(a?.path).toBe("/v1/responses");
    expect(a?.body.instructions).toBe(p.prompt);
    expect(a?.body.input).toBe(QUERY);
    expect(a?.body.prompt_cache_key).toBe(`promptctx-${computeCacheKeys(p).static}`);
    expect(b?.body.instructions).not.toContain("recalled_memory");
    expect(b?.body.instructions.startsWith(tierTexts(p)[0] as string)).toBe(true);
    expect(b?.body.input).toEqual([
      {
        role: "user",
        content: [
          { type: "input_text", text: MEMORY },
          { type: "input_text", text: QUERY },
        ],
      },
    ]);
    expect(b?.body.prompt_cache_key).toBe(a?.body.prompt_cache_key);
  });
});

describe("Vercel AI SDK generateText", () => {
  it("@ai-sdk/anthropic: one system block per tier, cache_control from providerOptions", async () => {
    const p = fullPlan();
    const anthropic = createAnthropic({ baseURL: `${base}/v1`, apiKey: "test" });
    const { body } = toAiSdkRequest(p, { provider: "anthropic", query: QUERY, ttl: "1h" });
    const result = await generateText({
      model: anthropic("claude-sonnet-4-6"),
      ...body,
      maxRetries: 0,
      timeout: 5_000,
    });
    expect(result.text).toBe("ok");
    const wire = only();
    expect(wire.path).toBe("/v1/messages");
    expect(wire.body.system).toEqual([
      { type: "text", text: tierTexts(p)[0], cache_control: { type: "ephemeral", ttl: "1h" } },
      { type: "text", text: tierTexts(p)[1], cache_control: { type: "ephemeral", ttl: "1h" } },
      { type: "text", text: tierTexts(p)[2] },
    ]);
    expect(wire.body.messages).toEqual([
      { role: "user", content: [{ type: "text", text: QUERY }] },
    ]);
  });

  it("@ai-sdk/anthropic with memory in the user role", async () => {
    const p = fullPlan();
    const anthropic = createAnthropic({ baseURL: `${base}/v1`, apiKey: "test" });
    const { body } = toAiSdkRequest(p, {
      provider: "anthropic",
      query: QUERY,
      memoryPlacement: "user",
    });
    await generateText({ model: anthropic("claude-sonnet-4-6"), ...body, maxRetries: 0 });
    const wire = only().body;
    expect(JSON.stringify(wire.system)).not.toContain("recalled_memory");
    expect(wire.messages[0].role).toBe("user");
    expect(wire.messages[0].content.map((c: { text: string }) => c.text)).toEqual([MEMORY, QUERY]);
    expect(cacheControls(wire)).toEqual([{ type: "ephemeral" }, { type: "ephemeral" }]);
  });

  it("@ai-sdk/openai (chat and responses): the prompt first, prompt_cache_key from providerOptions", async () => {
    const p = fullPlan();
    const openai = createOpenAI({ baseURL: `${base}/v1`, apiKey: "test" });
    const { body } = toAiSdkRequest(p, { provider: "openai", query: QUERY });
    const key = `promptctx-${computeCacheKeys(p).static}`;
    await generateText({ model: openai.chat("gpt-4o"), ...body, maxRetries: 0 });
    await generateText({ model: openai.responses("gpt-4o"), ...body, maxRetries: 0 });
    const [chat, responses] = recorded;
    expect(chat?.path).toBe("/v1/chat/completions");
    expect(chat?.body.messages).toEqual([
      { role: "system", content: p.prompt },
      { role: "user", content: QUERY },
    ]);
    expect(chat?.body.prompt_cache_key).toBe(key);
    expect(responses?.path).toBe("/v1/responses");
    const input = responses?.body.input as { role: string; content: unknown }[];
    expect(input[0]).toEqual({ role: "system", content: p.prompt });
    expect(input[1]?.role).toBe("user");
    expect(responses?.body.prompt_cache_key).toBe(key);
  });
});
