/**
 * `POST /v1/request` on a real server: the same body, byte for byte, as the library's
 * planAgentRequest for the same conversation; strict fields; clear errors.
 */
import { describe, expect, it } from "vitest";
import { planAgentRequest } from "../../src/agent/index.js";
import type { MessageInput } from "../../src/conversation/index.js";
import { planPrompt } from "../../src/plan/index.js";
import { get, NOW, post, QUERY, useServer, WORKSPACE } from "./helpers.js";

const segments = [
  { name: "rules", content: "Be careful. ".repeat(200), cacheTier: "static" as const },
  { name: "task", content: "Fix the build.", cacheTier: "dynamic" as const },
];

function history(turns: number): MessageInput[] {
  const out: MessageInput[] = [];
  for (let t = 0; t < turns; t++) {
    out.push({ id: `u${t}`, role: "user", content: [{ type: "text", text: `step ${t}` }] });
    out.push({
      id: `a${t}`,
      role: "assistant",
      content: [
        { type: "tool_call", callId: `c${t}`, name: "read_file", input: { path: `f${t}` } },
      ],
    });
    out.push({
      id: `t${t}`,
      role: "tool",
      content: [
        { type: "tool_result", callId: `c${t}`, output: `line of file ${t}\n`.repeat(300) },
      ],
    });
  }
  return out;
}

describe("POST /v1/request", () => {
  const server = useServer({ workspace: WORKSPACE });
  const tools = [{ name: "read_file", description: "Reads", input_schema: { type: "object" } }];

  for (const provider of ["anthropic", "openai-chat", "openai-responses"] as const) {
    it(`${provider}: the library's body, byte for byte (tools placed in it)`, async () => {
      const model = provider === "anthropic" ? "claude-sonnet-4-6" : "gpt-4o";
      const messages = history(30);
      const a = await post(server.base, "/v1/request", {
        provider,
        model,
        messages,
        system: { segments },
        tools,
        contextWindow: 20_000,
      });
      expect(a.status).toBe(200);
      const got = a.json as { body: Record<string, unknown>; budget: { toolsTokens: number } };
      const lib = planAgentRequest({
        provider,
        model,
        messages,
        system: planPrompt({ segments }),
        contextWindow: 20_000,
        toolsTokens: got.budget.toolsTokens,
      });
      expect(JSON.stringify(got.body)).toBe(JSON.stringify({ ...lib.body, tools }));
      expect(got.budget.toolsTokens).toBeGreaterThan(0);
      expect(got.budget).toEqual(lib.budget);
    });
  }

  it("the same input gives the same bytes; a stray result keeps its pair", async () => {
    const messages = history(3);
    (messages[2] as { content: unknown[] }).content.push({
      type: "tool_result",
      callId: "never",
      output: "x",
    });
    const body = {
      provider: "anthropic",
      model: "claude-sonnet-4-6",
      messages,
      system: { segments },
    };
    const [x, y] = [
      await post(server.base, "/v1/request", body),
      await post(server.base, "/v1/request", body),
    ];
    expect(x.status).toBe(200);
    expect(x.text).toBe(y.text);
    const plan = (x.json as { plan: { conversation: { droppedMessageIds: string[] } } }).plan;
    expect(plan.conversation.droppedMessageIds).toEqual([]);
    expect(JSON.stringify((x.json as { body: unknown }).body)).not.toContain('"never"');
  });

  it("include: body only, or body and budget — the body's bytes unchanged; strict values", async () => {
    const body = {
      provider: "anthropic",
      model: "claude-sonnet-4-6",
      messages: history(4),
      system: { segments },
    };
    const whole = await post(server.base, "/v1/request", body);
    const full = whole.json as Record<string, unknown>;
    expect(Object.keys(full)).toEqual(["body", "plan", "budget", "manifest"]);
    const same = await post(server.base, "/v1/request", {
      ...body,
      include: ["plan", "budget", "manifest"],
    });
    expect(same.text).toBe(whole.text);
    const only = await post(server.base, "/v1/request", { ...body, include: [] });
    expect(only.status).toBe(200);
    expect(only.text).toBe(JSON.stringify({ body: full.body }));
    const withBudget = await post(server.base, "/v1/request", { ...body, include: ["budget"] });
    expect(withBudget.text).toBe(JSON.stringify({ body: full.body, budget: full.budget }));
    const bad = await post(server.base, "/v1/request", { ...body, include: ["plan", "bodies"] });
    expect(bad.status).toBe(400);
    expect(bad.json).toMatchObject({ error: { code: "invalid_input", path: "include[1]" } });
    const notList = await post(server.base, "/v1/request", { ...body, include: "plan" });
    expect(notList.json).toMatchObject({ error: { code: "invalid_input", path: "include" } });
    // The OpenAPI document lists the field and its values.
    const doc = (await get(server.base, "/openapi.json")).json as {
      components: { schemas: Record<string, { properties: Record<string, unknown> }> };
    };
    expect(JSON.stringify(doc.components.schemas.AgentRequest?.properties.include)).toContain(
      '"budget"',
    );
  });

  it("a { segments } system side has no char budget unless it gives one", async () => {
    const manual = [{ name: "manual", content: "Read the manual. ".repeat(1_500) }];
    const body = {
      provider: "anthropic",
      model: "claude-sonnet-4-6",
      messages: history(1),
      system: { segments: manual },
    };
    type Answer = { plan: { system: { includedNames: string[]; droppedNames: string[] } } };
    const kept = (await post(server.base, "/v1/request", body)).json as Answer;
    expect(kept.plan.system.includedNames).toEqual(["manual"]);
    // /v1/plan-prompt keeps its default of 12,000 chars; given here, it applies.
    const capped = (
      await post(server.base, "/v1/request", {
        ...body,
        system: { segments: manual, budgetChars: 12_000 },
      })
    ).json as Answer;
    expect(capped.plan.system.droppedNames).toEqual(["manual"]);
    const planned = (await post(server.base, "/v1/plan-prompt", { segments: manual })).json as {
      droppedNames: string[];
    };
    expect(planned.droppedNames).toEqual(["manual"]);
  });

  it("a workspace assembly request as the system side, with its manifest", async () => {
    const a = await post(server.base, "/v1/request", {
      provider: "anthropic",
      model: "claude-sonnet-4-6",
      messages: history(2),
      system: { query: QUERY, now: NOW, user: "u-alice" },
    });
    expect(a.status).toBe(200);
    expect((a.json as { manifest: unknown }).manifest).not.toBeNull();
  });

  it("errors: unknown provider, unknown model (the known ones), unknown field, no room", async () => {
    const base = {
      provider: "anthropic",
      model: "claude-sonnet-4-6",
      messages: history(1),
      system: { segments },
    };
    const p = await post(server.base, "/v1/request", { ...base, provider: "gemini" });
    expect(p.status).toBe(400);
    expect(p.text).toContain("openai-responses");
    const m = await post(server.base, "/v1/request", { ...base, model: "llama-9" });
    expect(m.status).toBe(400);
    expect(m.json).toMatchObject({ error: { code: "invalid_input", path: "model" } });
    expect(m.text).toContain("gpt-4o");
    const u = await post(server.base, "/v1/request", { ...base, system: { segments, zz: 1 } });
    expect(u.json).toMatchObject({ error: { code: "unknown_field", path: "system.zz" } });
    // Deep inside the system side and inside a message: the message names the path too.
    const deep = await post(server.base, "/v1/request", {
      ...base,
      system: { segments: [{ ...segments[0], weight: 1 }] },
    });
    expect(deep.json).toMatchObject({
      error: { code: "unknown_field", path: "system.segments[0].weight" },
    });
    expect((deep.json as { error: { message: string } }).error.message).toMatch(
      /^system\.segments\[0\]\.weight: unknown field/,
    );
    const inMessage = history(1);
    (inMessage[2] as { content: Record<string, unknown>[] }).content[0] = {
      ...(inMessage[2]?.content[0] as object),
      cached: true,
    };
    const dm = await post(server.base, "/v1/request", { ...base, messages: inMessage });
    expect(dm.json).toMatchObject({
      error: { code: "unknown_field", path: "messages[2].content[0].cached" },
    });
    const big = history(1);
    (big[0] as { content: { text: string }[] }).content[0] = {
      text: "word ".repeat(50_000),
      type: "text",
    } as never;
    const b = await post(server.base, "/v1/request", {
      ...base,
      messages: big,
      contextWindow: 8_000,
    });
    // The server's status for a budget that cannot hold the required part (as elsewhere).
    expect(b.status).toBe(422);
    expect(b.json).toMatchObject({ error: { code: "prompt_budget_exceeded" } });
    expect((b.json as { error: { message: string } }).error.message).toMatch(/\d/);
    // The numbers over the whole window: the system side and reserves are parts too.
    const { details } = (b.json as { error: { details: Record<string, unknown> } }).error;
    expect(details).toMatchObject({ budget: 8_000 });
    const parts = details.parts as { part: string; tokens: number }[];
    expect(parts.map((p) => p.part)).toEqual(expect.arrayContaining(["system", "ask"]));
    expect(parts.reduce((n, p) => n + p.tokens, 0)).toBe(details.need);
    expect(details.over).toBe((details.need as number) - 8_000);
  });
});
