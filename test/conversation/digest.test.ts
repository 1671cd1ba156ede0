import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  compactConversation,
  createDigestSummarizer,
  digestConversation,
  type MessageInput,
  planConversation,
} from "../../src/conversation/index.js";
import { getTokenCounter } from "../../src/tokens/index.js";
import { calls, conversation, say, user } from "./helpers.js";

const toolMessage = (
  id: string,
  callId: string,
  output: string,
  isError = false,
): MessageInput => ({
  id,
  role: "tool",
  content: [{ type: "tool_result", callId, output, ...(isError ? { isError: true } : {}) }],
});

const session: MessageInput[] = [
  user("u1", "Fix the failing test in src/auth/login.ts, keep the public API."),
  calls("a1", ["c1", "read_file", { path: "src/auth/login.ts" }]),
  toolMessage("t1", "c1", "export function login(user) { /* ticket AUTH-1234, 4096 retries */ }"),
  calls("a2", ["c2", "bash", { command: "npm test" }]),
  toolMessage("t2", "c2", "FAIL test/login.test.ts\nprocess exited with code 1", true),
  say("r1", "I will change the retry limit.\n- [ ] update docs/auth.md"),
];

describe("digestConversation", () => {
  it("keeps asks verbatim, files, commands with their ending, errors, tasks and quoted ids", () => {
    const text = digestConversation(session, getTokenCounter("estimate"), 2000);
    expect(text).toContain("- Fix the failing test in src/auth/login.ts, keep the public API.");
    expect(text).toContain("Open tasks:\n- update docs/auth.md");
    expect(text).toContain("Errors:\n- bash (call c2): FAIL test/login.test.ts process exited");
    expect(text).toContain("Commands:\n- npm test → error, exit 1");
    expect(text).toMatch(/Files: .*src\/auth\/login\.ts/);
    expect(text).toContain("Assistant said:\n- I will change the retry limit.");
    expect(text).toContain(
      "Quoted ids and numbers:\n- export function login(user) { /* ticket AUTH-1234, 4096 retries */ }",
    );
  });

  it("never exceeds its budget and is deterministic", () => {
    const counter = getTokenCounter("o200k_base");
    fc.assert(
      fc.property(conversation, fc.integer({ min: 0, max: 300 }), (messages, max) => {
        const text = digestConversation(messages, counter, max);
        expect(counter.count(text)).toBeLessThanOrEqual(max);
        expect(digestConversation(structuredClone(messages), counter, max)).toBe(text);
      }),
      { numRuns: 150 },
    );
  });

  it("a long run of asks never crowds out the ids: each section first gets its share", () => {
    const counter = getTokenCounter("o200k_base");
    const asks = Array.from({ length: 60 }, (_, i) =>
      user(`u${i}`, `ask ${i}: ${"please look again at the whole module ".repeat(12)}`),
    );
    const messages = [
      ...asks.slice(0, 30),
      calls("a1", ["c1", "bash", { command: "make" }]),
      toolMessage("t1", "c1", "ok\nnote: build id b-1f2e3a4b\ndone"),
      ...asks.slice(30),
    ];
    const text = digestConversation(messages, counter, 600);
    expect(counter.count(text)).toBeLessThanOrEqual(600);
    expect(text).toContain("- note: build id b-1f2e3a4b");
    // The first ask (the task) and the newest one are kept; asks in between are cut.
    expect(text).toContain("- ask 0: ");
    expect(text).toContain("- ask 59: ");
    expect(text).not.toContain("- ask 30: ");
    expect(text.indexOf("- ask 0: ")).toBeLessThan(text.indexOf("- ask 59: "));
  });

  it("fills the room a section leaves with the others' items, in the same order", () => {
    const counter = getTokenCounter("estimate");
    const asks = Array.from({ length: 10 }, (_, i) => user(`u${i}`, `ask number ${i}`));
    const text = digestConversation(asks, counter, 2000);
    // Asks alone: their share is no limit when nothing else wants the room.
    for (let i = 0; i < 10; i++) expect(text).toContain(`- ask number ${i}\n`.trimEnd());
  });

  it("compacts a dropped run without a model, as a pinned summary", async () => {
    const messages = [...session, user("u2", "now run the linter")];
    const plan = planConversation({ messages, budgetTokens: 20, tokenizer: "estimate" });
    const done = await compactConversation({
      messages,
      plan,
      thresholdTokens: 0,
      summarize: createDigestSummarizer({ maxTokens: 500 }),
    });
    expect(done.compacted).toBe(true);
    expect(done.messages[0]?.id).toBe(done.summary?.id);
    expect(done.summary?.text).toContain("Fix the failing test");
  });
});
