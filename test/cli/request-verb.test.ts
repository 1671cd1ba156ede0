/**
 * `promptctx request` (the built CLI): the JSON form of assembleRequest, the library's body
 * byte for byte; `--jsonl` answers each line; bad input exits 2 with the error object.
 */
import { spawnSync } from "node:child_process";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { planAgentRequest } from "../../src/agent/index.js";
import { planPrompt } from "../../src/plan/index.js";

const BIN = fileURLToPath(new URL("../../bin/promptctx.js", import.meta.url));
const run = (args: string[], input: string) =>
  spawnSync(process.execPath, [BIN, ...args], { input, encoding: "utf8" });

const segments = [
  { name: "rules", content: "Be brief. ".repeat(100), cacheTier: "static" as const },
];
const messages = [
  { id: "u1", role: "user" as const, content: [{ type: "text" as const, text: "read a" }] },
  {
    id: "a1",
    role: "assistant" as const,
    content: [{ type: "tool_call" as const, callId: "A", name: "read_file", input: { path: "a" } }],
  },
  {
    id: "t1",
    role: "tool" as const,
    content: [
      { type: "tool_result" as const, callId: "A", output: "contents" },
      { type: "tool_result" as const, callId: "Z", output: "stray" },
    ],
  },
];
const request = { provider: "openai-chat", model: "gpt-4o", messages, system: { segments } };

describe("promptctx request", () => {
  it("answers the library's body, byte for byte; --jsonl answers each line", () => {
    const r = run(["request", "--json"], JSON.stringify(request));
    expect(r.status).toBe(0);
    const lib = planAgentRequest({
      provider: "openai-chat",
      model: "gpt-4o",
      messages,
      system: planPrompt({ segments }),
    });
    expect(JSON.stringify(JSON.parse(r.stdout).body)).toBe(JSON.stringify(lib.body));
    expect(r.stdout).not.toContain('"output":"stray"');
    const line = JSON.stringify(request);
    const many = run(["request", "--jsonl"], `${line}\n${line}\n`);
    expect(many.status).toBe(0);
    const [x, y] = many.stdout.trim().split("\n");
    expect(x).toBe(y);
  });

  it("include: the body alone, or with the budget; the same body bytes; a bad part exits 2", () => {
    const whole = JSON.parse(run(["request", "--json"], JSON.stringify(request)).stdout);
    const only = run(["request", "--json"], JSON.stringify({ ...request, include: [] }));
    expect(only.status).toBe(0);
    expect(Object.keys(JSON.parse(only.stdout))).toEqual(["body"]);
    expect(JSON.stringify(JSON.parse(only.stdout).body)).toBe(JSON.stringify(whole.body));
    const withBudget = JSON.parse(
      run(["request", "--json"], JSON.stringify({ ...request, include: ["budget"] })).stdout,
    );
    expect(withBudget).toEqual({ body: whole.body, budget: whole.budget });
    // The report for people shows what the answer holds.
    const wide = run(["request", "--wide"], JSON.stringify({ ...request, include: ["budget"] }));
    expect(wide.status).toBe(0);
    expect(wide.stdout).toContain("Budget");
    const bad = run(["request"], JSON.stringify({ ...request, include: ["body"] }));
    expect(bad.status).toBe(2);
    expect(JSON.parse(bad.stdout)).toMatchObject({
      error: { code: "invalid_input", path: "include[0]" },
    });
  });

  it("a { segments } system side has no char budget unless it gives one", () => {
    const big = [{ name: "manual", content: "Read the manual. ".repeat(1_500) }];
    const body = { ...request, system: { segments: big }, include: ["plan"] };
    const kept = JSON.parse(run(["request", "--json"], JSON.stringify(body)).stdout);
    expect(kept.plan.system.includedNames).toEqual(["manual"]);
    const capped = run(
      ["request", "--json"],
      JSON.stringify({ ...body, system: { segments: big, budgetChars: 12_000 } }),
    );
    expect(JSON.parse(capped.stdout).plan.system.droppedNames).toEqual(["manual"]);
  });

  it("bad input: exit 2 with the path (unknown field under system, unknown model)", () => {
    const u = run(["request"], JSON.stringify({ ...request, system: { segments, zz: 1 } }));
    expect(u.status).toBe(2);
    expect(JSON.parse(u.stdout)).toMatchObject({
      error: { code: "unknown_field", path: "system.zz" },
    });
    const m = run(["request"], JSON.stringify({ ...request, model: "nope-1" }));
    expect(m.status).toBe(2);
    expect(JSON.parse(m.stdout)).toMatchObject({ error: { code: "invalid_input", path: "model" } });
  });
});
