/**
 * Issue 11 item 7: text with a lone surrogate cannot be encoded for any provider, so every
 * text field is rejected with `invalid_input` and its path — through the library (every
 * stage's validation, one shared rule), the CLI (exit 2) and HTTP (400).
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import fc from "fast-check";
import { afterAll, describe, expect, it } from "vitest";
import { planConversation } from "../../src/conversation/index.js";
import { PromptctxError } from "../../src/errors/index.js";
import { selectMemoryContext } from "../../src/memory/index.js";
import { planPrompt } from "../../src/plan/index.js";
import { kbSource } from "../../src/sources/index.js";
import { parseRecord } from "../../src/store/index.js";
import { isWellFormedText } from "../../src/text/index.js";
import { compileRedLines } from "../../src/trace/index.js";
import { assembleWorkspace } from "../../src/workspace/index.js";
import { runCli } from "../cli/run-cli.js";
import { planRequest, prov, selectRequest } from "../fixtures/requests.js";
import { expectErrorObject, NOW, post, useServer, WORKSPACE } from "./helpers.js";

const tmp: string[] = [];
afterAll(() => {
  for (const d of tmp) rmSync(d, { recursive: true, force: true });
});

/** A string holding exactly one lone surrogate somewhere in well-formed text. */
const illFormed = fc
  .tuple(
    fc.string({ unit: "grapheme", maxLength: 8 }),
    fc.integer({ min: 0xd800, max: 0xdfff }),
    fc.string({ unit: "grapheme", maxLength: 8 }),
  )
  .map(([a, unit, b]) => `${a}${String.fromCharCode(unit)}.${b}`)
  .filter((s) => !isWellFormedText(s));

function rejects(run: () => unknown, path: string): void {
  let err: unknown = null;
  try {
    run();
  } catch (e) {
    err = e;
  }
  expect(err, `no error for ${path}`).toBeInstanceOf(PromptctxError);
  expect((err as PromptctxError).code).toBe("invalid_input");
  expect((err as PromptctxError).path).toBe(path);
  expect((err as Error).message).toMatch(/well-formed/);
}

const candidate = {
  memoryId: "m1",
  text: "Use Python",
  userScope: "u1",
  score: 0.9,
  sourceRank: 1,
  provenance: prov,
};
const chunk = {
  docId: "d1",
  chunkId: "c1",
  content: "ok",
  score: 0.5,
  isGolden: false,
  source: "s",
  kind: "hybrid",
};
const conversation = (input: unknown, text: string) => ({
  budgetTokens: 1000,
  messages: [
    { id: "u1", role: "user", content: [{ type: "text", text }] },
    {
      id: "a1",
      role: "assistant",
      content: [{ type: "tool_call", callId: "c1", name: "read", input }],
    },
    { id: "t1", role: "tool", content: [{ type: "tool_result", callId: "c1", output: "ok" }] },
  ],
});

/** Library entry points, each with one text field set to `bad`, and the path expected. */
const LIBRARY: Array<[string, (bad: string) => unknown]> = [
  ["userScope", (bad) => selectMemoryContext({ userScope: bad, candidates: [] })],
  [
    "candidates[0].text",
    (bad) => selectMemoryContext({ ...selectRequest, candidates: [{ ...candidate, text: bad }] }),
  ],
  [
    "candidates[0].provenance.title",
    (bad) =>
      selectMemoryContext({
        ...selectRequest,
        candidates: [{ ...candidate, provenance: { ...prov, title: bad } }],
      }),
  ],
  [
    "segments[0].content",
    (bad) => planPrompt({ ...planRequest, segments: [{ name: "a", content: bad, priority: 1 }] }),
  ],
  ["redLines[0].literal", (bad) => compileRedLines([{ id: "x", severity: "warn", literal: bad }])],
  ["messages[0].content[0].text", (bad) => planConversation(conversation({}, bad) as never)],
  [
    "messages[1].content[0].input",
    (bad) => planConversation(conversation({ path: [bad] }, "hi") as never),
  ],
  ["chunks[0].content", (bad) => kbSource([{ ...chunk, content: bad }] as never)],
  [
    "content",
    (bad) => parseRecord({ memoryId: "m1", userScope: "u1", content: bad, source: prov }, []),
  ],
];

describe("library: every text field rejects a lone surrogate, with its path", () => {
  it.each(LIBRARY)("%s", (path, run) => {
    rejects(() => run("\ud800"), path);
    rejects(() => run("a\udc00b"), path);
    // A surrogate pair is fine: the same call does not fail on this field.
    let err: unknown = null;
    try {
      run("ok 🚀");
    } catch (e) {
      err = e;
    }
    expect((err as PromptctxError | null)?.path ?? null).not.toBe(path);
  });

  it("property: any lone surrogate anywhere in the text is rejected", () => {
    fc.assert(
      fc.property(illFormed, fc.constantFrom(...LIBRARY), (bad, [path, run]) => {
        rejects(() => run(bad), path);
      }),
      { numRuns: 200, seed: 11 },
    );
  });

  it("assembly: the query text and a workspace config field", async () => {
    await expect(
      assembleWorkspace({ workspace: WORKSPACE, query: "x\ud800", now: NOW }),
    ).rejects.toMatchObject({ code: "invalid_input", path: "query.text" });
    const ws = mkdtempSync(join(tmpdir(), "promptctx-wellformed-"));
    tmp.push(ws);
    mkdirSync(join(ws, ".promptctx"));
    writeFileSync(join(ws, ".promptctx", "config.json"), '{"user":"u1","identity":"I am \\ud800"}');
    await expect(assembleWorkspace({ workspace: ws, query: "hi", now: NOW })).rejects.toMatchObject(
      { code: "invalid_input", path: "config.identity" },
    );
  });
});

describe("CLI: exit 2 with the error object naming the field", () => {
  it.each([
    ["select-memory", '{"userScope":"\\ud800","candidates":[]}', "userScope"],
    [
      "plan-prompt",
      '{"budgetChars":10,"segments":[{"name":"a","content":"\\udfff","priority":1}]}',
      "segments[0].content",
    ],
  ])("%s", (verb, input, path) => {
    const r = runCli([verb], { input });
    expect(r.code).toBe(2);
    const obj = JSON.parse(r.stdout) as { error: { code: string; path: string } };
    expect(obj.error).toMatchObject({ code: "invalid_input", path });
  });
});

describe("HTTP: 400 invalid_input with the field path", () => {
  const server = useServer({ workspace: WORKSPACE, logger: false });

  it.each([
    ["/v1/select-memory", '{"userScope":"\\ud800","candidates":[]}', "userScope"],
    [
      "/v1/plan-prompt",
      '{"budgetChars":10,"segments":[{"name":"a","content":"x\\ud800","priority":1}]}',
      "segments[0].content",
    ],
    ["/v1/assemble", `{"query":"\\udc00","now":"${NOW}"}`, "query"],
  ])("%s", async (route, body, path) => {
    const a = await post(server.base, route, body);
    expectErrorObject(a, 400, "invalid_input");
    expect((a.json as { error: { path: string } }).error.path).toBe(path);
  });
});
