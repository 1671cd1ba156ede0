import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { planConversation } from "../../src/conversation/index.js";
import { conversationRequest } from "../fixtures/requests.js";
import { runCli } from "./run-cli.js";

const expected = () =>
  JSON.parse(JSON.stringify(planConversation(conversationRequest as never))) as unknown;

describe("promptctx plan-conversation", () => {
  it("reads a request from stdin and prints the plan the library computes", () => {
    const r = runCli(["plan-conversation"], { input: JSON.stringify(conversationRequest) });
    expect(r.code).toBe(0);
    const plan = JSON.parse(r.stdout);
    expect(plan).toEqual(expected());
    expect(plan).toMatchObject({ firstKeptId: "u2", tokenizer: "o200k_base", budgetTokens: 60 });
    expect(plan.droppedMessageIds).toEqual(["u1", "a1", "t1", "a2", "t2"]);
    expect(plan.decisions[5]).toMatchObject({ messageId: "t2", reason: "orphan_removed" });
  });

  it("reads a request from --input FILE", () => {
    const dir = mkdtempSync(join(tmpdir(), "promptctx-cli-"));
    const file = join(dir, "conversation.json");
    writeFileSync(file, JSON.stringify(conversationRequest));
    const r = runCli(["plan-conversation", "--input", file]);
    expect(r.code).toBe(0);
    expect(JSON.parse(r.stdout)).toEqual(expected());
  });

  it("invalid input: exit 2, error object with the path on stdout, one line on stderr", () => {
    const bad = structuredClone(conversationRequest);
    (bad.messages[1] as { role: string }).role = "user";
    const r = runCli(["plan-conversation"], { input: JSON.stringify(bad) });
    expect(r.code).toBe(2);
    expect(JSON.parse(r.stdout).error).toMatchObject({
      code: "invalid_input",
      path: "messages[1].content[0].type",
    });
    expect(r.stderr.trim().split("\n")).toHaveLength(1);
    expect(r.stderr).not.toMatch(/\n\s+at .+:\d+:\d+/);
  });

  it("prompt_budget_exceeded exits 3, the numbers behind it in the error object", () => {
    const r = runCli(["plan-conversation"], {
      input: JSON.stringify({ ...conversationRequest, budgetTokens: 5 }),
    });
    expect(r.code).toBe(3);
    const { error } = JSON.parse(r.stdout);
    expect(error).toMatchObject({ code: "prompt_budget_exceeded", path: "budgetTokens" });
    expect(error.details).toMatchObject({ budget: 5, over: error.details.need - 5 });
    const parts = error.details.parts as { part: string; tokens: number }[];
    expect(parts.reduce((n, p) => n + p.tokens, 0)).toBe(error.details.need);
    expect(typeof error.details.fix).toBe("string");
  });

  it("--jsonl answers every line in order; a bad line never stops the rest", () => {
    const lines = [
      JSON.stringify(conversationRequest),
      JSON.stringify({ ...conversationRequest, budgetTokens: 5 }),
      "{nope",
      JSON.stringify({ ...conversationRequest, tokenizer: "gpt-9" }),
      JSON.stringify({ ...conversationRequest, policy: { pinned: ["nope"] } }),
      JSON.stringify({ ...conversationRequest, budgetTokens: 1000 }),
    ];
    const r = runCli(["plan-conversation", "--jsonl"], { input: `${lines.join("\n")}\n` });
    expect(r.code).toBe(0);
    const out = r.stdout
      .trimEnd()
      .split("\n")
      .map((l) => JSON.parse(l));
    expect(out).toHaveLength(6);
    expect(out[0]).toEqual(expected());
    expect(out[1].error.code).toBe("prompt_budget_exceeded");
    expect(out[2].error.code).toBe("invalid_input");
    expect(out[3].error).toMatchObject({ code: "invalid_input", path: "tokenizer" });
    expect(out[4].error).toMatchObject({ code: "invalid_input", path: "policy.pinned[0]" });
    expect(out[5].droppedMessageIds).toEqual(["t2"]);
  });

  it("--help describes the verb", () => {
    const r = runCli(["plan-conversation", "--help"]);
    expect(r.code).toBe(0);
    expect(r.stdout).toContain("Usage: promptctx plan-conversation");
    expect(r.stdout).toContain("--jsonl");
  });
});
