/**
 * `promptctx chat` with the history planned against the model's window (docs/conversation.md): the
 * built CLI against a loopback Anthropic server (official SDK, `ANTHROPIC_BASE_URL`).
 * Older turns leave the request whole (no orphan tool result), the first line stays
 * pinned, the dropped run is compacted by the provider once it passes the threshold, and
 * `/context` shows where the window goes. Assertions are on the recorded request bodies
 * and the CLI's output.
 */
import { appendFileSync, cpSync, mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { SUMMARY_INSTRUCTIONS } from "../../src/agent/index.js";
import { type Loopback, type Recorded, startLoopback } from "../assemble/loopback.js";
import { WORKSPACE as EXAMPLE, NOW } from "../server/helpers.js";
import { type CliResult, spawnCli } from "./run-cli.js";

const MODEL = "claude-sonnet-4-6";

let loop: Loopback;
let tmp: string;
let ws: string;
beforeAll(async () => {
  loop = await startLoopback();
});
afterAll(async () => {
  await loop.close();
});
beforeEach(() => {
  tmp = mkdtempSync(join(tmpdir(), "promptctx-chat-ctx-"));
  ws = join(tmp, "ws");
  mkdirSync(join(tmp, "home"));
  cpSync(EXAMPLE, ws, { recursive: true });
  const guide = Array.from(
    { length: 40 },
    (_, i) => `- Guideline ${i + 1}: small, reviewed, reversible changes.`,
  );
  appendFileSync(join(ws, "AGENTS.md"), `\n## House rules\n${guide.join("\n")}\n`);
  loop.recorded.length = 0;
  loop.script.length = 0;
  loop.route = null;
});
afterEach(() => {
  rmSync(tmp, { recursive: true, force: true });
});

function chat(args: string[], input: string, model = MODEL): Promise<CliResult> {
  // COLUMNS: /context's long heads on one line each (piped output fits 80 columns).
  const env = {
    ANTHROPIC_API_KEY: "k",
    MODEL_ID: model,
    ANTHROPIC_BASE_URL: loop.base,
    COLUMNS: "300",
  };
  const full = ["chat", "--workspace", ws, "--now", NOW, "--no-user-files", ...args];
  return spawnCli(full, input, env, join(tmp, "home"));
}

const events = (r: CliResult) =>
  r.stdout
    .trimEnd()
    .split("\n")
    .map((l) => JSON.parse(l) as Record<string, unknown>);

/** Each turn reads AGENTS.md with a tool, then answers. */
function scriptTurns(n: number): void {
  for (let t = 1; t <= n; t++) {
    loop.script.push(
      { toolCalls: [{ id: `toolu_${t}`, name: "read_file", input: { path: "AGENTS.md" } }] },
      { text: `answer ${t}` },
    );
  }
}

const LINES = ["first: the invoices migration", "second", "third", "fourth", "fifth", "sixth"];

/** The window that leaves `room` tokens for the history, measured by a one-turn /context. */
async function windowWithRoom(room: number): Promise<number> {
  scriptTurns(1);
  const r = await chat(["--json"], `${LINES[0]}\n/context\n`);
  expect(r.code, r.stderr).toBe(0);
  const ctx = events(r).find((e) => e.event === "context") as {
    usage: { contextWindow: number; free: number; history: { tokens: number } };
  };
  loop.recorded.length = 0;
  return ctx.usage.contextWindow - ctx.usage.free - ctx.usage.history.tokens + room;
}

/** Every tool_result in a request answers a tool_use earlier in the same request. */
function orphans(req: Recorded): string[] {
  const calls = new Set<string>();
  const out: string[] = [];
  for (const m of req.body.messages as { content: unknown }[]) {
    if (!Array.isArray(m.content)) continue;
    for (const b of m.content as { type: string; id?: string; tool_use_id?: string }[]) {
      if (b.type === "tool_use") calls.add(b.id as string);
      if (b.type === "tool_result" && !calls.has(b.tool_use_id as string))
        out.push(b.tool_use_id as string);
    }
  }
  return out;
}

describe("chat history under the model's window", () => {
  it("drops whole old turns, keeps the first line pinned, and /context explains it", async () => {
    const window = await windowWithRoom(2500);
    scriptTurns(6);
    const r = await chat(
      ["--json", "--context-window", String(window), "--compact-threshold", "0"],
      `${LINES.join("\n")}\n/context\n`,
    );
    expect(r.code, r.stderr).toBe(0);
    const chats = loop.recorded.filter((q) => q.path === "/v1/messages");
    expect(chats).toHaveLength(12);
    const last = chats.at(-1) as Recorded;
    // The pinned first line, merged with the ask that opens the window (whole turns only).
    expect(last.body.messages[0].role).toBe("user");
    expect(last.body.messages[0].content[0]).toEqual({ type: "text", text: LINES[0] });
    expect(JSON.stringify(last.body.messages)).not.toContain('"second"');
    for (const q of chats) expect(orphans(q)).toEqual([]);
    const ctx = events(r).find((e) => e.event === "context") as {
      usage: { free: number; history: { dropped: number }; toolResults: { messages: number } };
      decisions: { conversation: { reason: string; messageId: string }[] };
      breakpoints: { tier: string }[];
    };
    expect(ctx.usage.history.dropped).toBeGreaterThan(0);
    expect(ctx.usage.free).toBeGreaterThanOrEqual(0);
    expect(ctx.usage.toolResults.messages).toBeGreaterThan(0);
    const reasons = new Set(ctx.decisions.conversation.map((d) => d.reason));
    for (const reason of ["pinned", "history_window", "required"])
      expect(reasons).toContain(reason);
    expect(ctx.breakpoints.map((b) => b.tier)).toContain("tail");
    const turnEvent = events(r).find((e) => e.event === "turn" && e.turn === 6) as {
      context: { dropped: number; contextWindow: number };
    };
    expect(turnEvent.context.contextWindow).toBe(window);
  });

  it("compacts the dropped run through the provider once it passes the threshold", async () => {
    const window = await windowWithRoom(2500);
    scriptTurns(6);
    loop.route = (body) =>
      body?.system === SUMMARY_INSTRUCTIONS
        ? { text: "Summary: the migration was discussed." }
        : null;
    const r = await chat(
      ["--json", "--context-window", String(window), "--compact-threshold", "1"],
      `${LINES.join("\n")}\n`,
    );
    expect(r.code, r.stderr).toBe(0);
    const summaries = loop.recorded.filter((q) => q.body.system === SUMMARY_INSTRUCTIONS);
    expect(summaries.length).toBeGreaterThan(0);
    expect(summaries[0]?.body.model).toBe(MODEL);
    const compactions = events(r).filter((e) => e.event === "compaction");
    expect(compactions).toHaveLength(summaries.length);
    const after = loop.recorded.at(-1) as Recorded;
    // The pinned first line and the one rolling summary in the place of what it replaced,
    // then the ask that opens the window (it moves by whole turns).
    expect(after.body.messages[0].role).toBe("user");
    expect(after.body.messages[0].content.slice(0, 2)).toEqual([
      { type: "text", text: LINES[0] },
      {
        type: "text",
        text: "<conversation_summary>Summary: the migration was discussed.</conversation_summary>",
      },
    ]);
    expect(JSON.stringify(after.body.messages).split("<conversation_summary>")).toHaveLength(2);
    // Later compactions summarize the earlier summary with the newly dropped run.
    expect(summaries.length).toBeGreaterThan(1);
    expect(summaries[1]?.body.messages[0].content).toContain("user: <conversation_summary>");
    expect(orphans(after)).toEqual([]);
  });

  it("/context as text: the window's parts, the cache line and both decision tables", async () => {
    scriptTurns(2);
    const r = await chat([], `${LINES[0]}\n${LINES[1]}\n/context\n`);
    expect(r.code, r.stderr).toBe(0);
    for (const piece of [
      `Context — ${MODEL}: window 1000000 tokens (table 2026-12-01), tokenizer claude_estimate`,
      "system: static",
      "tool definitions",
      "  of which tool results",
      "response reserve",
      "free",
      "Cache: breakpoints session (prefix",
      "tail (prefix",
      "Conversation plan — budget",
      "Prompt plan — budget",
    ]) {
      expect(r.stdout).toContain(piece);
    }
  });

  it("a model the table does not know needs --context-window (exit 2, nothing sent)", async () => {
    const r = await chat([], "hello\n", "my-proxy-model");
    expect(r.code).toBe(2);
    expect(JSON.parse(r.stdout).error).toMatchObject({
      code: "invalid_input",
      path: "--context-window",
    });
    expect(loop.recorded).toHaveLength(0);
  });
});
