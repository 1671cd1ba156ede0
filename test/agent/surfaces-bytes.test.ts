/**
 * One cost, any surface (issue 34 item 3): over a growing conversation in a small window
 * (so the window moves, results are cut and the digest opens the window), the AI SDK
 * middleware's prompt and `POST /v1/request`'s body are, byte for byte, what the library's
 * one function (`planAgentRequest`) builds for the same neutral messages.
 */
import { describe, expect, it } from "vitest";
import { planAgentRequest, promptctxMiddleware } from "../../src/agent/index.js";
import type { MessageInput } from "../../src/conversation/index.js";
import { planPrompt } from "../../src/plan/index.js";
import { fromAiSdkMessages } from "../../src/render/index.js";
import { post, useServer } from "../server/helpers.js";

const MODEL = "claude-sonnet-4-6";
const WINDOW = 12_000;
const segments = [
  { name: "rules", content: "Be careful. ".repeat(100), cacheTier: "static" as const },
];

/** The AI SDK prompt of a conversation of `turns` tool rounds (what `generateText` passes). */
function prompt(turns: number): unknown[] {
  const out: unknown[] = [];
  for (let t = 0; t < turns; t++) {
    out.push({ role: "user", content: [{ type: "text", text: `step ${t}: read f${t}` }] });
    out.push({
      role: "assistant",
      content: [{ type: "tool-call", toolCallId: `c${t}`, toolName: "read", input: { t } }],
    });
    out.push({
      role: "tool",
      content: [
        {
          type: "tool-result",
          toolCallId: `c${t}`,
          toolName: "read",
          output: { type: "text", value: `line ${t} id b-${1000 + t}\n`.repeat(60 + (t % 5) * 40) },
        },
      ],
    });
    out.push({ role: "assistant", content: [{ type: "text", text: `read f${t}` }] });
  }
  out.push({ role: "user", content: [{ type: "text", text: "what next?" }] });
  return out;
}

describe("the same request on every surface", () => {
  const server = useServer({});
  const system = () => planPrompt({ budgetChars: null, segments });
  const middleware = promptctxMiddleware({
    system,
    contextWindow: WINDOW,
    providerMetadata: false,
  });
  const transform = middleware.transformParams as NonNullable<typeof middleware.transformParams>;
  const model = {
    specificationVersion: "v3",
    provider: "anthropic.messages",
    modelId: MODEL,
    supportedUrls: {},
  } as unknown as Parameters<typeof transform>[0]["model"];

  it("middleware and POST /v1/request equal planAgentRequest, byte for byte", async () => {
    let moved = 0;
    for (const turns of [3, 8, 14, 20, 27]) {
      const p = prompt(turns);
      const messages = fromAiSdkMessages(p).messages as MessageInput[];
      const lib = (provider: "ai-sdk-anthropic" | "anthropic") =>
        planAgentRequest({
          provider,
          model: MODEL,
          system: system(),
          messages,
          contextWindow: WINDOW,
        });
      const ai = lib("ai-sdk-anthropic");
      if (ai.conversation.droppedMessageIds.length > 0) moved++;
      const params = { prompt: p } as Parameters<typeof transform>[0]["params"];
      const out = await transform({ type: "generate", params, model });
      const body = ai.body as unknown as { system?: unknown; messages: unknown[] };
      const sys = body.system === undefined ? [] : Array.isArray(body.system) ? body.system : [];
      expect(JSON.stringify(out.prompt)).toBe(JSON.stringify([...sys, ...body.messages]));
      for (const provider of ["anthropic", "ai-sdk-anthropic"] as const) {
        const r = await post(server.base, "/v1/request", {
          provider,
          model: MODEL,
          messages,
          system: { segments },
          contextWindow: WINDOW,
        });
        expect(r.status).toBe(200);
        const want = provider === "anthropic" ? lib("anthropic").body : ai.body;
        expect(JSON.stringify((r.json as { body: unknown }).body)).toBe(JSON.stringify(want));
      }
    }
    // The window moved on some of them: the comparison covers dropping and the digest.
    expect(moved).toBeGreaterThan(0);
  });
});
