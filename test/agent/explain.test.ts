/**
 * `explainRequest`: a planned request in figures and a few lines — the window's parts add
 * up, drops are grouped by their decisions' reasons, cleared and truncated results are
 * counted from the transforms, and the cache line names the breakpoints placed.
 */
import { describe, expect, it } from "vitest";
import { agentDefaults, explainRequest, planRequest } from "../../src/agent/index.js";
import type { MessageInput } from "../../src/conversation/index.js";
import { MODEL, stableSystem } from "../assemble/wire-fixtures.js";
import { calls, lengthCounter, results, say, user } from "../conversation/helpers.js";

const output = (chars: number, id: string) =>
  `${"lorem ipsum dolor sit amet\n".repeat(Math.max(1, Math.floor(chars / 27)))}note: build id b-${id}`;

function conversation(turns: number, chars: number): MessageInput[] {
  const out: MessageInput[] = [];
  for (let i = 0; i < turns; i++) {
    out.push(
      user(`u${i}`, `ask ${i}`),
      calls(`a${i}`, [`c${i}`, "read_file", { n: i }]),
      results(`t${i}`, [`c${i}`, output(chars, `${1000 + i}`)]),
      say(`r${i}`, `done ${i}`),
    );
  }
  out.push(user("now", "the current ask"));
  return out;
}

function plan(messages: MessageInput[], window: number, provider: "anthropic" | "openai-chat") {
  const d = agentDefaults(window);
  return planRequest({
    provider,
    model: provider === "anthropic" ? MODEL : "gpt-4o",
    system: stableSystem("state", "the state"),
    messages,
    contextWindow: window,
    tokenizer: lengthCounter(),
    responseReserve: d.responseReserve,
    policy: d.policy,
    windowStepTokens: d.windowStepTokens,
    digestTokens: d.digestTokens,
  });
}

describe("explainRequest", () => {
  it("a request that fits: nothing dropped, the parts add up to the window", () => {
    const r = plan(conversation(3, 500), 64_000, "anthropic");
    const e = explainRequest(r);
    const w = e.window;
    expect(w.system + w.tools + w.other + w.messagesUsed + w.responseReserve + w.free).toBe(
      w.contextWindow - w.tailReserve,
    );
    expect(e.history).toMatchObject({ messages: 13, kept: 13, dropped: 0, firstKeptId: "u0" });
    expect(e.history.reasons).toEqual([]);
    expect(e.cleared.messages).toBe(0);
    expect(e.lines[1]).toBe("history: 13 of 13 messages kept, from u0; nothing dropped");
    expect(e.cache.breakpoints.length).toBeGreaterThan(0);
    expect(e.cache.nextReadTokens).toBe(e.cache.breakpoints.at(-1)?.prefixTokens);
    expect(e.lines.some((l) => l.startsWith("cache: breakpoints "))).toBe(true);
  });

  it("a long conversation: drops grouped by reason, clearing counted from the transforms", () => {
    const r = plan(conversation(60, 6_000), 64_000, "anthropic");
    const e = explainRequest(r);
    const ds = r.conversation.decisions;
    expect(e.history.dropped).toBe(r.conversation.droppedMessageIds.length);
    expect(e.history.dropped).toBeGreaterThan(0);
    expect(e.history.reasons.reduce((s, x) => s + x.messages, 0)).toBe(e.history.dropped);
    const dropped = ds.filter((d) => d.status === "dropped").reduce((s, d) => s + d.tokens, 0);
    expect(e.history.reasons.reduce((s, x) => s + x.tokens, 0)).toBe(dropped);
    const cleared = ds.filter(
      (d) => d.status === "kept" && d.transforms.some((t) => t.kind === "tool_result_cleared"),
    );
    expect(e.cleared.messages).toBe(cleared.length);
    for (const x of e.history.reasons) {
      expect(e.lines).toContain(
        `  ${x.messages} ${x.reason} (${x.tokens.toLocaleString("en-US")} tokens): ${x.why}`,
      );
    }
    expect(e.digest?.messageId).toBe(r.conversation.firstKeptId);
    expect(e.lines).toContain(
      `digest: ${r.conversation.firstKeptId} opens with a digest of what left the window`,
    );
  });

  it("OpenAI-bound: the prompt cache key line and the stable prefix to read back", () => {
    const r = plan(conversation(3, 500), 64_000, "openai-chat");
    const e = explainRequest(r);
    expect(e.cache.breakpoints).toEqual([]);
    expect(e.cache.nextReadTokens).toBe(r.budget.systemTokens + r.stablePrefix.tokens);
    expect(e.lines.some((l) => l.startsWith("cache: prompt_cache_key "))).toBe(true);
  });
});
