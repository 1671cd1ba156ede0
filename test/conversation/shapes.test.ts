/**
 * The hidden classes of a stateless plan outlive it (docs/performance.md "A stateless
 * conversation plan"): a child process (the build in dist/) plans the same 4,500-message
 * request, parsed again each time, with one warm counter (as a server's pool gives) and a
 * full GC after every call, under `--trace-deopt`. When the classes of the planner's objects died with each call, every
 * GC deoptimized the per-message path ("weak objects", about 50 times in this run); now
 * none is. No timing is read: only V8's own log.
 */
import { spawnSync } from "node:child_process";
import { join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { describe, expect, it } from "vitest";

const ROOT = fileURLToPath(new URL("../../", import.meta.url));
const DIST = pathToFileURL(join(ROOT, "dist/conversation/index.js")).href;
const TOKENS = pathToFileURL(join(ROOT, "dist/tokens/index.js")).href;

const SCRIPT = `
const { planConversation } = await import(${JSON.stringify(DIST)});
const { getTokenCounter } = await import(${JSON.stringify(TOKENS)});
// One counter for every call, as a server's pool gives: warm calls count from its memos.
const tokenizer = getTokenCounter("estimate");
const messages = [];
for (let t = 0; t < 1500; t++) {
  messages.push({ id: "u" + t, role: "user", content: [{ type: "text", text: "ask " + t }] });
  messages.push({ id: "a" + t, role: "assistant", content: [{ type: "text", text: "ok" },
    { type: "tool_call", callId: "c" + t, name: "t", input: { a: [t] } }] });
  messages.push({ id: "t" + t, role: "tool", content: [{ type: "tool_result", callId: "c" + t,
    output: ("out " + t + " ").repeat(20) }] });
}
const body = JSON.stringify({ messages, budgetTokens: 20000,
  policy: { toolResultMaxTokens: 32, lowWaterRatio: 0.7 } });
for (let i = 0; i < 8; i++) {
  planConversation({ ...JSON.parse(body), tokenizer });
  globalThis.gc();
  console.log("--- after call " + i);
}
`;

describe("a stateless plan's hidden classes", () => {
  it("survive full GCs between calls: no 'weak objects' deoptimization after the first", () => {
    const run = spawnSync(
      process.execPath,
      ["--expose-gc", "--trace-deopt", "--input-type=module", "-e", SCRIPT],
      { encoding: "utf8", maxBuffer: 64 * 1024 * 1024 },
    );
    expect(run.status, run.stderr).toBe(0);
    const log = run.stdout;
    expect(log).toContain("--- after call 7");
    const afterFirst = log.slice(log.indexOf("--- after call 0"));
    const weak = afterFirst.split("\n").filter((line) => line.includes("reason: weak objects"));
    expect(weak).toEqual([]);
  });
});
