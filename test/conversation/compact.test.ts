import { createHash } from "node:crypto";
import { describe, expect, it } from "vitest";
import {
  compactConversation,
  type MessageInput,
  oneCallPlanner,
  planConversation,
  type Summarize,
} from "../../src/conversation/index.js";
import { InvalidInputError } from "../../src/errors/index.js";
import { assertNoOrphans, calls, lengthCounter, results, say, user } from "./helpers.js";

// user u0 (pinned), then four turns of ask + tool exchange + answer, then the current ask.
const convo: MessageInput[] = [
  user("u0", "the task".padEnd(30, ".")),
  ...[1, 2, 3, 4].flatMap((t) => [
    user(`u${t}`, `ask ${t}`.padEnd(30, ".")),
    calls(`a${t}`, [`c${t}`, "grep", { t }]),
    results(`t${t}`, [`c${t}`, `found ${t}`.padEnd(60, ".")]),
    say(`s${t}`, `answer ${t}`.padEnd(30, ".")),
  ]),
  results("stray", ["zz", "an orphan in the dropped run"]),
  user("u5", "now".padEnd(30, ".")),
];
// Reorder so the stray orphan sits between dropped messages.
convo.splice(convo.length - 2, 1);
convo.splice(5, 0, results("stray", ["zz", "an orphan in the dropped run"]));

// Every message counted (a fresh planner): the run's figures are exact in the decisions.
const planOf = (messages: MessageInput[], pinned: string[]) =>
  oneCallPlanner().plan({
    messages,
    budgetTokens: 450,
    tokenizer: lengthCounter(),
    policy: { pinned },
  });

const seen: MessageInput[][] = [];
const summarize: Summarize = (messages) => {
  seen.push([...messages]);
  return `covered ${messages.map((m) => m.id).join(",")} <&>`;
};

describe("compactConversation", () => {
  const plan = planOf(convo, ["u0"]);
  const window = plan.decisions.filter((d) => d.reason === "history_window");
  const windowTokens = window.reduce((s, d) => s + d.tokens, 0);

  it("leaves the messages alone under the threshold", async () => {
    expect(window.length).toBeGreaterThan(3);
    const r = await compactConversation({
      messages: convo,
      plan,
      summarize,
      thresholdTokens: windowTokens + 1,
    });
    expect(r).toEqual({ compacted: false, messages: convo, summary: null });
  });

  it("replaces only the history_window run by one summary, pinned and orphans untouched", async () => {
    seen.length = 0;
    const r = await compactConversation({
      messages: convo,
      plan,
      summarize,
      thresholdTokens: windowTokens,
    });
    expect(r.compacted).toBe(true);
    const ids = window.map((d) => d.messageId);
    expect(seen).toEqual([convo.filter((m) => ids.includes(m.id))]);
    const text = `<conversation_summary>covered ${ids.join(",")} &lt;&amp;&gt;</conversation_summary>`;
    const id = `summary:${createHash("sha256").update(text).digest("hex").slice(0, 16)}`;
    expect(r.summary).toEqual({ id, text, summarizedIds: ids, summarizedTokens: windowTokens });
    const firstDropped = convo.findIndex((m) => m.id === ids[0]);
    const expected = convo.filter((m) => !ids.includes(m.id));
    expected.splice(firstDropped, 0, { id, role: "user", content: [{ type: "text", text }] });
    expect(r.messages).toEqual(expected);
    // The pinned first message and the orphan stay where they were; the kept window too.
    expect(r.messages[0]).toBe(convo[0]);
    expect(r.messages.map((m) => m.id)).toContain("stray");
    // The next plan, with the summary pinned, is valid and keeps the summary.
    const next = planOf(r.messages, ["u0", id]);
    assertNoOrphans(next.messages);
    expect(next.messages.map((m) => m.id)).toContain(id);
    expect(next.decisions.find((d) => d.messageId === id)?.reason).toBe("pinned");
  });

  it("is deterministic: the same run gives the same summary id", async () => {
    const a = await compactConversation({ messages: convo, plan, summarize, thresholdTokens: 0 });
    const b = await compactConversation({
      messages: convo,
      plan,
      summarize: async (m) => summarize(m),
      thresholdTokens: 0,
    });
    expect(b).toEqual(a);
  });

  it("does nothing when nothing was left out of the window", async () => {
    const roomy = planConversation({
      messages: convo,
      budgetTokens: 100_000,
      tokenizer: lengthCounter(),
    });
    const r = await compactConversation({
      messages: convo,
      plan: roomy,
      summarize,
      thresholdTokens: 0,
    });
    expect(r.compacted).toBe(false);
  });

  it("rejects a bad threshold, a plan of other messages, and a non-string summary", async () => {
    await expect(
      compactConversation({ messages: convo, plan, summarize, thresholdTokens: -1 }),
    ).rejects.toMatchObject({ code: "invalid_input", path: "thresholdTokens" });
    await expect(
      compactConversation({ messages: convo.slice(1), plan, summarize, thresholdTokens: 0 }),
    ).rejects.toBeInstanceOf(InvalidInputError);
    const renamed = convo.map((m, i) => (i === 2 ? { ...m, id: "other" } : m));
    await expect(
      compactConversation({ messages: renamed, plan, summarize, thresholdTokens: 0 }),
    ).rejects.toMatchObject({ code: "invalid_input", path: "messages[2].id" });
    const bad = (() => 42) as unknown as Summarize;
    await expect(
      compactConversation({ messages: convo, plan, summarize: bad, thresholdTokens: 0 }),
    ).rejects.toMatchObject({ path: "summarize" });
  });
});
