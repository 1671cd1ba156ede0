/**
 * `memoryPlan` describes the block the prompt holds (issue 11 item 4, docs/inline-assembly.md): with a
 * heading renderer each hit is priced as its `- text (importance=…, score=…)` line and
 * `context`/`usedChars` are the recall slot as rendered; `tagged` keeps the docs/memory-selection.md block.
 * The session (and the repl) reselect with the docs/memory-selection.md policy defaults unless a schema
 * says otherwise, and say which policy they used.
 */
import { describe, expect, it } from "vitest";
import { assemble, createSchemaRegistry } from "../../src/assemble/index.js";
import { cpLength } from "../../src/text/index.js";
import { getTokenCounter } from "../../src/tokens/index.js";
import { runCli } from "../cli/run-cli.js";
import { candidate, QUERY as SESSION_QUERY, testSession } from "../session/helpers.js";
import { layer, reactInput } from "./helpers.js";

const estimate = getTokenCounter("estimate");

describe("memoryPlan with heading renderers prices the lines the prompt holds", () => {
  it.each([
    ["en", "- 上次问过天气API (importance=0.70, score=0.82)"],
    ["zh-CN", "- 上次问过天气API（重要性=0.70, 综合分=0.82）"],
  ])(
    "%s: context is the recall slot as rendered, hits priced as their lines",
    async (renderer, line) => {
      const a = await assemble(reactInput(undefined, { renderer }));
      const plan = a.memoryPlan;
      if (plan === null) throw new Error("no memory plan");
      const recall = layer(a.manifest.layers, "recall_memory");
      expect(recall.status).toBe("included");
      expect(a.prompt).toContain(plan.context);
      expect(plan.context).not.toContain("<recalled_memory");
      expect(plan.usedChars).toBe(cpLength(plan.context));
      expect(plan.usedChars).toBe(recall.used.chars);
      expect(plan.usedChars).toBeLessThanOrEqual(200); // the react slot budget means what it says
      expect(plan.usedTokens).toBe(estimate.count(plan.context));
      const m1 = plan.decisions.find((d) => d.memoryId === "m1");
      expect(plan.context.split("\n")).toContain(line);
      expect(m1?.candidateChars).toBe(cpLength(line));
      expect(m1?.candidateTokens).toBe(estimate.count(line));
    },
  );

  it("tagged keeps the spec 02 block", async () => {
    // The tagged hit is long: give the recall slot room for its docs/memory-selection.md rendering.
    const schemas = createSchemaRegistry().register({
      mode: "react",
      slots: [{ kind: "recall_memory", filter: { charBudget: 1200, topK: 2, minScore: 0.5 } }],
    });
    const a = await assemble(reactInput(undefined, { renderer: "tagged", schemas }));
    const plan = a.memoryPlan;
    if (plan === null) throw new Error("no memory plan");
    expect(
      plan.context.startsWith('<recalled_memory user_scope="u1" selected="2">\n<memory_hit'),
    ).toBe(true);
    expect(a.prompt).toContain(plan.context);
    const m1 = plan.decisions.find((d) => d.memoryId === "m1");
    const hit = plan.context.split("\n")[1] as string;
    expect(m1?.candidateChars).toBe(cpLength(hit));
  });
});

describe("session and repl: the spec 02 policy unless a schema says otherwise", () => {
  const CANDS = Array.from({ length: 7 }, (_, i) =>
    candidate(`m${i}`, `Memory number ${i} about currency columns.`, "u1", {
      score: 0.9 - i * 0.05,
      sourceRank: i + 1,
    }),
  );

  it("without schemas: minScore 0.35, topK 5, 3000 chars, 800 tokens, and says so", async () => {
    const { session } = testSession();
    session.setRecalledMemory(CANDS);
    const a = await session.assemble(SESSION_QUERY);
    expect(session.memoryPolicy).toEqual({
      policy: { minScore: 0.35, topK: 5, maxChars: 3000, maxTokens: 800 },
      from: "defaults",
    });
    expect(a.memoryPlan?.policy).toEqual({
      minScore: 0.35,
      topK: 5,
      maxChars: 3000,
      maxTokens: 800,
    });
    expect(a.memoryPlan?.selectedMemoryIds).toEqual(["m0", "m1", "m2", "m3", "m4"]);
  });

  it("given schemas: the schema's recall slot; given a policy: that, over the rest", async () => {
    const schemas = createSchemaRegistry().register({
      mode: "chat",
      slots: [{ kind: "recall_memory", filter: { topK: 2, minScore: 0.5, charBudget: 400 } }],
    });
    const { session } = testSession({ assemble: { schemas } });
    session.setRecalledMemory(CANDS);
    const a = await session.assemble(SESSION_QUERY);
    expect(session.memoryPolicy).toEqual({
      policy: { minScore: 0.5, topK: 2, maxChars: 400, maxTokens: null },
      from: "schema",
    });
    expect(a.memoryPlan?.selectedMemoryIds).toEqual(["m0", "m1"]);
    const other = testSession().session;
    other.setRecalledMemory(CANDS, { policy: { topK: 3 } });
    await other.assemble(SESSION_QUERY);
    expect(other.memoryPolicy).toEqual({
      policy: { minScore: 0.35, topK: 3, maxChars: 3000, maxTokens: 800 },
      from: "call",
    });
  });

  it("the repl prints the policy and a memory plan whose chars are the slot's in the prompt", () => {
    const r = runCli(["repl", "--wide"], { input: "memory\n" });
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain(
      "policy minScore 0.35, topK 5, maxChars 3000, maxTokens 800 (the built-in defaults)",
    );
    const head = /Memory selection — .*, (\d+) chars \/ \d+ tokens/.exec(r.stdout);
    const row = /\nrecall_memory +\d+ +\d+ +included +fits_budget +(\d+) /.exec(r.stdout);
    expect(head?.[1]).toBeDefined();
    expect(head?.[1]).toBe(row?.[1]);
  });
});
