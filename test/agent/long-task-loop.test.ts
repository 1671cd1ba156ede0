/**
 * The single long task of issue 37, as a new user writes it from the docs: assembleRequest
 * with its defaults, no state passed back, a 32k window, one ask and 25 `read_file` rounds
 * of 5–20k characters, sent through the official Anthropic client to a loopback stand-in.
 * It used to be refused at request 11 ("the current turn and pinned messages need …"): the
 * current turn was kept whole. Now its older rounds are cleared (and dropped when even
 * cleared they do not fit); every request goes out, opens on the ask, keeps the latest
 * round whole and every call with its result.
 */
import Anthropic from "@anthropic-ai/sdk";
import { describe, expect, it } from "vitest";
import { anthropicOrphans } from "../../bench/lib/cache-sim.mjs";
import { assembleRequest } from "../../src/agent/index.js";
import type { MessageInput } from "../../src/conversation/index.js";
import { useLoopback } from "../assemble/loopback.js";
import { MODEL } from "../assemble/wire-fixtures.js";

const loop = useLoopback();

/** A file's text of `chars` characters, its k-th line quoting an id the task may ask for. */
function fileText(round: number, chars: number): string {
  const lines: string[] = [];
  let size = 0;
  for (let k = 0; size < chars; k++) {
    const line =
      k % 40 === 7
        ? `export const BUILD_${round}_${k} = "b-${(round * 7919 + k * 104729).toString(16)}";`
        : `  function step${k}(input) { return input.map((x) => x * ${k} + ${round}); }`;
    lines.push(line);
    size += line.length + 1;
  }
  return lines.join("\n").slice(0, chars);
}

describe("one long task with the defaults, stateless, 32k window", () => {
  it("runs all 30 requests to the end: never refused, the ask and the latest round kept", async () => {
    const client = new Anthropic({ apiKey: "test", baseURL: loop.base, maxRetries: 0 });
    const messages: MessageInput[] = [
      {
        id: "u1",
        role: "user",
        content: [{ type: "text", text: "Read the 25 modules and list every build id." }],
      },
    ];
    let sent = 0;
    for (let request = 1; request <= 30; request++) {
      const r = await assembleRequest({
        provider: "anthropic",
        model: MODEL,
        contextWindow: 32_000,
        assemble: {
          mode: "chat",
          query: { text: "list build ids", userScope: "u1" },
          now: "2026-12-06T22:00:00Z",
          sources: [],
        },
        messages,
      });
      await client.messages.create({
        model: MODEL,
        max_tokens: r.budget.responseReserve,
        ...r.body,
      });
      sent += 1;
      const wire = loop.recorded.at(-1)?.body;
      expect(wire.messages[0].role).toBe("user");
      expect(JSON.stringify(wire.messages[0])).toContain("list every build id");
      expect(anthropicOrphans(wire)).toBe(0);
      const kept = new Set(r.conversation.messages.map((m) => m.id));
      const last = messages.at(-1) as MessageInput;
      expect(kept.has(last.id)).toBe(true);
      expect(r.conversation.usedTokens).toBeLessThanOrEqual(r.conversation.budgetTokens);
      if (request <= 25) {
        // The latest round is sent whole (up to the per-result cap).
        const latest = r.conversation.decisions.find((d) => d.messageId === last.id);
        expect(latest?.transforms.some((t) => t.kind === "tool_result_cleared") ?? false).toBe(
          false,
        );
        const chars = 5_000 + ((request * 5_881) % 15_001);
        messages.push(
          {
            id: `a${request}`,
            role: "assistant",
            content: [
              {
                type: "tool_call",
                callId: `c${request}`,
                name: "read_file",
                input: { path: `src/m${request}.ts` },
              },
            ],
          },
          {
            id: `t${request}`,
            role: "tool",
            content: [
              { type: "tool_result", callId: `c${request}`, output: fileText(request, chars) },
            ],
          },
        );
      } else {
        messages.push({
          id: `a${request}`,
          role: "assistant",
          content: [{ type: "text", text: `Still listing (${request}).` }],
        });
      }
    }
    expect(sent).toBe(30);
  }, 120_000);
});
