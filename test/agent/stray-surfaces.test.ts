/**
 * A stray part does not take the valid pair with it on the surfaces above the planner
 * (issue 34 item 6): strays planted at part level give `assembleRequest` the body of the
 * clean conversation, byte for byte, with a `stray_part_removed` transform each, and give
 * the AI SDK middleware the clean conversation's prompt.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { assembleRequest, promptctxMiddleware } from "../../src/agent/index.js";
import {
  type ConversationPlan,
  type MessageInput,
  planConversation,
} from "../../src/conversation/index.js";
import { planPrompt } from "../../src/plan/index.js";
import { conversation, plantStrays } from "../conversation/helpers.js";

const MODEL = "claude-sonnet-4-6";
const NOW = "2026-11-30T09:00:00Z";
const plants = fc.array(fc.tuple(fc.nat(), fc.boolean()), { minLength: 1, maxLength: 4 });

/** A conversation ending on a user message, with strays planted in what the clean plan keeps. */
const planted = fc
  .tuple(conversation, plants)
  .filter(([clean]) => clean.at(-1)?.role === "user")
  .map(([clean, ps]) => {
    const plan = planConversation({ messages: clean, budgetTokens: 1_000_000 });
    const kept = new Set(plan.decisions.filter((d) => d.status === "kept").map((d) => d.messageId));
    return { clean, ...plantStrays(clean, kept, ps) };
  })
  .filter(({ planted }) => planted.size > 0);

const strays = (p: ConversationPlan, id: string): string[] =>
  (p.decisions.find((d) => d.messageId === id)?.transforms ?? [])
    .filter((t) => t.kind === "stray_part_removed")
    .map((t) => t.callId)
    .sort();

async function outcome<T>(run: () => Promise<T>): Promise<{ ok: T } | { code: string }> {
  try {
    return { ok: await run() };
  } catch (err) {
    const code = (err as { code?: unknown }).code;
    if (typeof code !== "string") throw err;
    return { code };
  }
}

const request = (messages: MessageInput[]) =>
  outcome(() =>
    assembleRequest({
      provider: "anthropic",
      model: MODEL,
      contextWindow: 200_000,
      assemble: {
        mode: "chat",
        query: { text: "what next?", userScope: "u1" },
        now: NOW,
        sources: [],
      },
      messages,
    }),
  );

/** The neutral messages as an AI SDK prompt (what `generateText` hands a middleware). */
function aiSdkPrompt(messages: readonly MessageInput[]): unknown[] {
  const names = new Map<string, string>();
  for (const m of messages) {
    for (const p of m.content) if (p.type === "tool_call") names.set(p.callId, p.name);
  }
  return messages.map((m) => ({
    role: m.role,
    content: m.content.map((p) =>
      p.type === "text"
        ? { type: "text", text: p.text }
        : p.type === "tool_call"
          ? { type: "tool-call", toolCallId: p.callId, toolName: p.name, input: p.input }
          : {
              type: "tool-result",
              toolCallId: p.callId,
              toolName: names.get(p.callId) ?? "stray_tool",
              output: { type: p.isError ? "error-text" : "text", value: p.output },
            },
    ),
  }));
}

describe("strays planted at part level, through the surfaces above the planner", () => {
  it("assembleRequest: the clean conversation's body, byte for byte, a transform per stray", async () => {
    let built = 0;
    await fc.assert(
      fc.asyncProperty(planted, async ({ clean, dirty, planted }) => {
        const [a, b] = [await request(clean), await request(dirty)];
        if (!("ok" in a) || !("ok" in b)) {
          expect(b).toEqual(a);
          return;
        }
        built++;
        expect(JSON.stringify(b.ok.body)).toBe(JSON.stringify(a.ok.body));
        for (const [id, ids] of planted) {
          const before = strays(a.ok.conversation, id);
          expect(strays(b.ok.conversation, id)).toEqual([...before, ...ids].sort());
        }
      }),
      { numRuns: 40 },
    );
    expect(built).toBeGreaterThan(20);
  });

  it("the AI SDK middleware: the clean conversation's prompt", async () => {
    const middleware = promptctxMiddleware({
      system: () =>
        planPrompt({ budgetChars: null, segments: [{ name: "rules", content: "Be brief." }] }),
      contextWindow: 200_000,
      providerMetadata: false,
    });
    const transform = middleware.transformParams as NonNullable<typeof middleware.transformParams>;
    const model = {
      specificationVersion: "v3",
      provider: "anthropic.messages",
      modelId: MODEL,
      supportedUrls: {},
    } as unknown as Parameters<typeof transform>[0]["model"];
    const call = (messages: readonly MessageInput[]) =>
      outcome(async () => {
        const params = { prompt: aiSdkPrompt(messages) } as Parameters<
          typeof transform
        >[0]["params"];
        const out = await transform({ type: "generate", params, model });
        return JSON.stringify(out.prompt);
      });
    let built = 0;
    await fc.assert(
      fc.asyncProperty(planted, async ({ clean, dirty }) => {
        const want = await call(clean);
        expect(await call(dirty)).toEqual(want);
        if ("ok" in want) built++;
      }),
      { numRuns: 40 },
    );
    expect(built).toBeGreaterThan(20);
  });
});
