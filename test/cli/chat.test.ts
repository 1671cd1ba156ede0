/**
 * `promptctx chat` end to end against a loopback HTTP server (node:http on 127.0.0.1,
 * port 0) that speaks the Anthropic Messages protocol (and, once, OpenAI Chat
 * Completions) and records every request it receives. The CLI reaches it through
 * `ANTHROPIC_BASE_URL` / `OPENAI_BASE_URL` with the official SDKs.
 *
 * The tests spawn the built `bin/promptctx.js` asynchronously: the server lives in this
 * process.
 *
 * Each test works on a copy of examples/workspace in a temporary directory; its
 * AGENTS.md is lengthened so the cached prefix reaches Claude's minimum cacheable length
 * and the system blocks carry `cache_control`.
 */
import {
  appendFileSync,
  cpSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { anthropicTools, chatCredentials, WITHHELD_PLACEHOLDER } from "../../src/cli/chat/index.js";
import { confinePath, executeTool } from "../../src/cli/tools.js";
import type { ToolSpec } from "../../src/sources/index.js";
import { openStore } from "../../src/store/index.js";
import { WORKSPACE as EXAMPLE, NOW } from "../server/helpers.js";
import { type CliResult, spawnCli } from "./run-cli.js";

// Not on the SDK's deprecation list (it warns on stderr for those); 1024-token cache minimum.
const MODEL = "claude-sonnet-4-6";

// ---------------------------------------------------------------------------------------
// loopback provider

interface Recorded {
  method: string;
  path: string;
  headers: IncomingMessage["headers"];
  body: Record<string, unknown>;
}
type Reply = (body: Record<string, unknown>, index: number) => unknown | Promise<unknown>;

let server: Server;
let base: string;
let recorded: Recorded[] = [];
let script: Reply[] = [];

function anthropicMessage(content: unknown[], stop: string): unknown {
  return {
    id: `msg_${recorded.length}`,
    type: "message",
    role: "assistant",
    model: MODEL,
    content,
    stop_reason: stop,
    stop_sequence: null,
    usage: { input_tokens: 100, output_tokens: 10, cache_read_input_tokens: 0 },
  };
}
const toolUse =
  (id: string, name: string, input: unknown): Reply =>
  () =>
    anthropicMessage([{ type: "tool_use", id, name, input }], "tool_use");
const say =
  (text: string): Reply =>
  () =>
    anthropicMessage([{ type: "text", text }], "end_turn");

function openAICompletion(message: Record<string, unknown>, finish: string): unknown {
  return {
    id: `chatcmpl-${recorded.length}`,
    object: "chat.completion",
    created: 0,
    model: "gpt-4o",
    choices: [{ index: 0, message: { role: "assistant", ...message }, finish_reason: finish }],
    usage: {
      prompt_tokens: 100,
      completion_tokens: 10,
      total_tokens: 110,
      prompt_tokens_details: { cached_tokens: 0 },
    },
  };
}

beforeAll(async () => {
  server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", async () => {
      const body = JSON.parse(Buffer.concat(chunks).toString("utf8") || "{}");
      const index = recorded.length;
      recorded.push({ method: req.method ?? "", path: req.url ?? "", headers: req.headers, body });
      const reply = script[index];
      res.setHeader("content-type", "application/json");
      if (reply === undefined) {
        res.statusCode = 500;
        res.end(
          JSON.stringify({
            type: "error",
            error: { type: "api_error", message: "script exhausted" },
          }),
        );
        return;
      }
      try {
        res.end(JSON.stringify(await reply(body, index)));
      } catch (err) {
        res.statusCode = 500;
        res.end(
          JSON.stringify({ type: "error", error: { type: "api_error", message: String(err) } }),
        );
      }
    });
  });
  await new Promise<void>((done) => server.listen(0, "127.0.0.1", done));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(async () => {
  await new Promise<void>((done) => server.close(() => done()));
});

// ---------------------------------------------------------------------------------------
// running the command

let ws: string;
let home: string;
let tmp: string;

function chat(
  args: string[],
  input: string,
  env: Record<string, string> = {
    ANTHROPIC_API_KEY: "test-key",
    MODEL_ID: MODEL,
    ANTHROPIC_BASE_URL: base,
  },
): Promise<CliResult> {
  const full = ["chat", "--workspace", ws, "--now", NOW, "--no-user-files", ...args];
  return spawnCli(full, input, env, home);
}

const GUIDE = Array.from(
  { length: 40 },
  (_, i) =>
    `- Guideline ${i + 1}: keep changes small, reviewed, reversible and covered by tests; document the reason in the pull request.`,
).join("\n");

beforeEach(() => {
  tmp = mkdtempSync(join(tmpdir(), "promptctx-chat-"));
  ws = join(tmp, "ws");
  home = join(tmp, "home");
  mkdirSync(home);
  cpSync(EXAMPLE, ws, { recursive: true });
  appendFileSync(join(ws, "AGENTS.md"), `\n## House rules\n${GUIDE}\n`);
  const configPath = join(ws, ".promptctx/config.json");
  const config = JSON.parse(readFileSync(configPath, "utf8"));
  config.budgets = { chars: 16000 };
  writeFileSync(configPath, JSON.stringify(config));
  recorded = [];
  script = [];
});
afterEach(() => {
  rmSync(tmp, { recursive: true, force: true });
});

type Block = { type: string; text?: string; cache_control?: unknown };
const systemText = (r: Recorded) => (r.body.system as Block[]).map((b) => b.text).join("\n");
type Msg = { role: string; content: unknown };
const messages = (r: Recorded) => r.body.messages as Msg[];

// ---------------------------------------------------------------------------------------

describe("chat over Anthropic Messages (bin/promptctx.js)", () => {
  it("assembles cached system blocks, runs read_file, feeds the result back and into the next turn's tool state", async () => {
    const agents = readFileSync(join(ws, "AGENTS.md"), "utf8");
    script = [
      toolUse("toolu_1", "read_file", { path: "AGENTS.md" }),
      say("The instructions say to run npm test before every commit."),
      say("Backfills run in batches."),
    ];
    const r = await chat(
      [],
      "add an index on invoices.created_at in a new migration\nhow do backfills run?\n",
    );
    expect(r.stderr).toBe("");
    expect(r.code).toBe(0);
    expect(recorded).toHaveLength(3);
    for (const req of recorded) {
      expect(req.method).toBe("POST");
      expect(req.path).toBe("/v1/messages");
      // @anthropic-ai/sdk 1.14 sends the API key as a bearer token.
      expect(req.headers["x-api-key"] ?? req.headers.authorization).toMatch(/^(Bearer )?test-key$/);
      expect(req.body.model).toBe(MODEL);
    }

    // (a) the assembled system blocks, one per tier, with cache_control breakpoints.
    const first = recorded[0] as Recorded;
    const system = first.body.system as Block[];
    expect(system.length).toBeGreaterThanOrEqual(2);
    expect(system.every((b) => b.type === "text")).toBe(true);
    expect(system.some((b) => b.cache_control !== undefined)).toBe(true);
    for (const b of system) {
      if (b.cache_control !== undefined) expect(b.cache_control).toEqual({ type: "ephemeral" });
    }
    expect(system.at(-1)?.cache_control).toBeUndefined(); // dynamic tier: never cached
    expect(systemText(first)).toContain("You are the Acme platform team's coding agent.");
    expect(systemText(first)).toContain("[skill sql-review]");
    expect(systemText(first)).toContain("read_file(path) — read a file in the workspace");
    expect(systemText(first)).not.toContain("→"); // no call recorded yet
    expect(first.body.tools).toEqual([
      {
        name: "read_file",
        description: "read a file in the workspace",
        input_schema: {
          type: "object",
          properties: {
            path: { type: "string", description: "file path relative to the workspace root" },
          },
          required: ["path"],
        },
      },
      expect.objectContaining({ name: "write_file" }),
      expect.objectContaining({ name: "run" }),
    ]);
    // The last block carries the tail breakpoint (the tool loop is cached as it grows).
    expect(messages(first)).toEqual([
      {
        role: "user",
        content: [
          {
            type: "text",
            text: "add an index on invoices.created_at in a new migration",
            cache_control: { type: "ephemeral" },
          },
        ],
      },
    ]);

    // (b) the second request carries the tool_use and its tool_result with the file content.
    const second = recorded[1] as Recorded;
    expect(second.body.system).toEqual(first.body.system); // frozen within the turn
    const m2 = messages(second);
    expect(m2).toHaveLength(3);
    expect(m2[1]).toEqual({
      role: "assistant",
      content: [
        { type: "tool_use", id: "toolu_1", name: "read_file", input: { path: "AGENTS.md" } },
      ],
    });
    expect(m2[2]).toEqual({
      role: "user",
      content: [
        {
          type: "tool_result",
          tool_use_id: "toolu_1",
          content: agents,
          cache_control: { type: "ephemeral" },
        },
      ],
    });

    // (c) the next user line: reassembled, the tool-state layer shows the recorded call.
    const third = recorded[2] as Recorded;
    const bytes = Buffer.byteLength(agents);
    expect(systemText(third)).toContain(`- read_file → ok: AGENTS.md (${bytes} bytes)`);
    const m3 = messages(third);
    expect(m3).toHaveLength(5);
    // The request's last block (the new user line) carries the tail breakpoint.
    expect(m3[3]).toEqual({
      role: "assistant",
      content: [
        { type: "text", text: "The instructions say to run npm test before every commit." },
      ],
    });
    expect(m3[4]).toEqual({
      role: "user",
      content: [
        { type: "text", text: "how do backfills run?", cache_control: { type: "ephemeral" } },
      ],
    });

    // What a person sees, with the pinned clock advancing one minute per turn.
    expect(r.stdout).toContain(
      "── turn 1 · 2026-11-30T09:00:00.000Z · skills: sql-review · red lines: 1",
    );
    expect(r.stdout).toContain(
      `  tool read_file {"path":"AGENTS.md"} → ok: AGENTS.md (${bytes} bytes)`,
    );
    expect(r.stdout).toContain(
      "assistant: The instructions say to run npm test before every commit.",
    );
    expect(r.stdout).toContain("── turn 2 · 2026-11-30T09:01:00.000Z");
    expect(r.stdout).toContain("assistant: Backfills run in batches.");
  });

  it("re-reads the memory store every turn", async () => {
    const storePath = join(ws, ".promptctx/memory.db");
    await openStore(storePath).close();
    const memory = {
      memoryId: "mem-backfill",
      userScope: "user-42",
      kind: "fact",
      category: "general",
      content: "Invoice backfills run in batches of 5,000 rows.",
      importance: 0.9,
      source: {
        sourceId: "chat-1",
        sourceType: "conversation",
        title: "Backfill chat",
        capturedAt: "2026-11-29T09:00:00Z",
      },
    };
    script = [
      // Turn 1 is assembled when its request arrives: add a memory before answering.
      async (body, i) => {
        const store = openStore(storePath, { mustExist: true });
        try {
          const result = await store.importJsonl(`${JSON.stringify(memory)}\n`, { now: NOW });
          expect(result.skipped).toBe(0);
        } finally {
          await store.close();
        }
        return say("Noted.")(body, i);
      },
      say("ok"),
    ];
    const r = await chat([], "hello there\nhow do invoice backfills run?\n");
    expect(r.code).toBe(0);
    expect(recorded).toHaveLength(2);
    expect(systemText(recorded[0] as Recorded)).not.toContain("batches of 5,000");
    expect(systemText(recorded[1] as Recorded)).toContain(
      "Invoice backfills run in batches of 5,000 rows.",
    );
  });

  it("flags a draft that crosses a skill's red line and withholds a block", async () => {
    script = [
      say("Simplest fix: DROP TABLE invoices and recreate it with the index."),
      say("Mitigate first; do not DELETE rows in prod until the deploy is rolled back."),
      say("ok"),
    ];
    const r = await chat(
      ["--json"],
      "write the migration for the invoices index\nsev1 incident: checkout is down\nthanks\n",
    );
    expect(r.code).toBe(0);
    const events = r.stdout
      .trimEnd()
      .split("\n")
      .map((l) => JSON.parse(l));
    const replies = events.filter((e) => e.event === "reply");
    expect(replies).toHaveLength(3);
    // block → withheld, text not shown
    expect(replies[0]).toMatchObject({ turn: 1, final: true, withheld: true, text: null });
    expect(replies[0].check.violations[0]).toMatchObject({
      redLineId: "sql-review:no-drop-table",
      severity: "block",
      excerpt: "Simplest fix: DROP TABLE invoices and recreate it with the index…",
    });
    // review → shown and flagged
    expect(replies[1]).toMatchObject({ turn: 2, withheld: false, flagged: true });
    expect(replies[1].check.violations[0]).toMatchObject({
      redLineId: "incident-triage:no-prod-writes",
      severity: "review",
      flagged: true,
    });
    expect(events.find((e) => e.event === "turn" && e.turn === 2).redLines).toEqual([
      "incident-triage:no-prod-writes",
    ]);
    // the withheld text never goes back to the model
    const history = JSON.stringify(messages(recorded[2] as Recorded));
    expect(history).not.toContain("DROP TABLE");
    expect(history).toContain(WITHHELD_PLACEHOLDER);

    // the people's view
    script = [say("Run DROP TABLE invoices;")];
    recorded = [];
    const t = await chat([], "a new migration please\n");
    expect(t.code).toBe(0);
    expect(t.stdout).toContain(
      "  red line sql-review:no-drop-table (block) at 4-14: Run DROP TABLE invoices;",
    );
    expect(t.stdout).toContain("draft withheld: red line sql-review:no-drop-table");
    expect(t.stdout).not.toContain("assistant: Run DROP TABLE");
  });

  it("refuses run without --allow-run and reports it to the model and the tool state", async () => {
    script = [
      toolUse("toolu_r", "run", { command: "touch pwned" }),
      say("I cannot run commands here."),
      say("ok"),
    ];
    const r = await chat([], "run the tests for the migration\nnext\n");
    expect(r.code).toBe(0);
    expect(existsSync(join(ws, "pwned"))).toBe(false);
    expect(messages(recorded[1] as Recorded)[2]).toEqual({
      role: "user",
      content: [
        {
          type: "tool_result",
          tool_use_id: "toolu_r",
          content: "run needs approval (--allow-run)",
          is_error: true,
          cache_control: { type: "ephemeral" },
        },
      ],
    });
    expect(r.stdout).toContain(
      '  tool run {"command":"touch pwned"} → failed: run needs approval (--allow-run)',
    );
    expect(systemText(recorded[2] as Recorded)).toContain(
      "- run → failed: run needs approval (--allow-run)",
    );
  });

  it("runs a command with --allow-run, rejects escaping paths, caps the tool rounds", async () => {
    writeFileSync(join(tmp, "secret.txt"), "top secret");
    symlinkSync(join(tmp, "secret.txt"), join(ws, "leak.txt"));
    script = [
      toolUse("t1", "run", { command: "echo built > out.txt && echo done" }),
      toolUse("t2", "read_file", { path: "../secret.txt" }),
      toolUse("t3", "read_file", { path: "leak.txt" }),
      toolUse("t4", "list_files", { dir: "." }), // not in the config's registry
      toolUse("t5", "read_file", { path: "out.txt" }),
      toolUse("t6", "read_file", { path: "AGENTS.md" }), // round 6: over the limit
      say("done"),
    ];
    const r = await chat(["--allow-run", "--json"], "build it\nand then?\n");
    expect(r.code).toBe(0);
    expect(readFileSync(join(ws, "out.txt"), "utf8")).toBe("built\n");
    const results = recorded.slice(1, 6).map((req) => {
      const last = messages(req).at(-1) as { content: Array<Record<string, unknown>> };
      return last.content[0];
    });
    expect(results[0]).toMatchObject({ content: "exit 0\n--- stdout\ndone\n" });
    expect(results[1]).toMatchObject({
      content: "../secret.txt: outside the workspace",
      is_error: true,
    });
    expect(results[2]).toMatchObject({
      content: "leak.txt: resolves outside the workspace (symlink)",
      is_error: true,
    });
    expect(results[3]).toMatchObject({
      content: 'unknown tool "list_files" (the workspace offers: read_file, write_file, run)',
      is_error: true,
    });
    expect(results[4]).toMatchObject({ content: "built\n" });
    const events = r.stdout
      .trimEnd()
      .split("\n")
      .map((l) => JSON.parse(l));
    expect(events.find((e) => e.event === "limit")).toEqual({
      event: "limit",
      turn: 1,
      maxToolRounds: 5,
      unanswered: 1,
    });
    // The unanswered call gets an error result that opens the next user message.
    expect(messages(recorded[6] as Recorded).at(-1)).toEqual({
      role: "user",
      content: [
        {
          type: "tool_result",
          tool_use_id: "t6",
          content: "not run: tool round limit (5) reached for this user message",
          is_error: true,
        },
        // The request's last block: the tail breakpoint is on it.
        { type: "text", text: "and then?", cache_control: { type: "ephemeral" } },
      ],
    });
    expect(events.at(-1)).toEqual({ event: "end", turns: 2, reason: "end_of_input" });
  });

  it("stops after --max-turns", async () => {
    script = [say("one"), say("two")];
    const r = await chat(["--max-turns", "1"], "first\nsecond\n");
    expect(r.code).toBe(0);
    expect(recorded).toHaveLength(1);
    expect(r.stdout).toContain("max turns reached (1)");
  });
});

describe("chat without credentials", () => {
  it("says exactly what is missing, exit 2, no request sent", async () => {
    const r = await chat([], "hello\n", { ANTHROPIC_BASE_URL: base });
    expect(r.code).toBe(2);
    expect(JSON.parse(r.stdout)).toEqual({
      error: {
        code: "invalid_input",
        message: "set ANTHROPIC_API_KEY (or OPENAI_API_KEY) and MODEL_ID",
        path: "env.ANTHROPIC_API_KEY",
      },
    });
    expect(r.stderr).toBe(
      "promptctx chat: invalid_input: set ANTHROPIC_API_KEY (or OPENAI_API_KEY) and MODEL_ID (at env.ANTHROPIC_API_KEY)\n",
    );
    const m = await chat([], "hello\n", { ANTHROPIC_API_KEY: "k", ANTHROPIC_BASE_URL: base });
    expect(m.code).toBe(2);
    expect(JSON.parse(m.stdout).error).toMatchObject({ path: "env.MODEL_ID" });
    expect(recorded).toHaveLength(0);
  });

  it("names the variables per provider", () => {
    expect(() => chatCredentials({ MODEL_ID: "m" }, "openai")).toThrow(
      expect.objectContaining({ message: "set OPENAI_API_KEY", path: "env.OPENAI_API_KEY" }),
    );
    expect(chatCredentials({ OPENAI_API_KEY: "k", MODEL_ID: "gpt-4o" })).toEqual({
      provider: "openai",
      apiKey: "k",
      model: "gpt-4o",
      baseURL: undefined,
    });
    expect(
      chatCredentials({ ANTHROPIC_API_KEY: "a", OPENAI_API_KEY: "o", MODEL_ID: "m" }).provider,
    ).toBe("anthropic");
  });
});

describe("chat over OpenAI Chat Completions", () => {
  it("sends the system message, prompt_cache_key and function tools; tool results as tool messages", async () => {
    const agents = readFileSync(join(ws, "AGENTS.md"), "utf8");
    script = [
      () =>
        openAICompletion(
          {
            content: null,
            tool_calls: [
              {
                id: "call_1",
                type: "function",
                function: { name: "read_file", arguments: '{"path":"AGENTS.md"}' },
              },
            ],
          },
          "tool_calls",
        ),
      () => openAICompletion({ content: "Read it." }, "stop"),
    ];
    const r = await chat(["--provider", "openai"], "add an index in a new migration\n", {
      OPENAI_API_KEY: "test-openai",
      MODEL_ID: "gpt-4o",
      OPENAI_BASE_URL: `${base}/v1`,
    });
    expect(r.stderr).toBe("");
    expect(r.code).toBe(0);
    expect(recorded.map((q) => q.path)).toEqual(["/v1/chat/completions", "/v1/chat/completions"]);
    expect(recorded[0]?.headers.authorization).toBe("Bearer test-openai");
    const first = recorded[0]?.body as {
      messages: Msg[];
      prompt_cache_key: string;
      tools: unknown[];
    };
    expect(first.messages[0]?.role).toBe("system");
    expect(String(first.messages[0]?.content)).toContain("<!-- cache-boundary -->");
    expect(first.messages[1]).toEqual({ role: "user", content: "add an index in a new migration" });
    expect(first.prompt_cache_key).toMatch(/^promptctx-[0-9a-f]{16}$/);
    expect(first.tools[0]).toEqual({
      type: "function",
      function: {
        name: "read_file",
        description: "read a file in the workspace",
        parameters: {
          type: "object",
          properties: {
            path: { type: "string", description: "file path relative to the workspace root" },
          },
          required: ["path"],
        },
      },
    });
    const second = recorded[1]?.body as { messages: Msg[] };
    expect(second.messages.slice(2)).toEqual([
      {
        role: "assistant",
        content: null,
        tool_calls: [
          {
            id: "call_1",
            type: "function",
            function: { name: "read_file", arguments: '{"path":"AGENTS.md"}' },
          },
        ],
      },
      { role: "tool", tool_call_id: "call_1", content: agents },
    ]);
    expect(r.stdout).toContain("assistant: Read it.");
  });
});

describe("built-in tools", () => {
  const registry: ToolSpec[] = [
    { name: "read_file", description: "", requiredArgs: ["path"] },
    { name: "list_files", description: "", requiredArgs: [] },
    { name: "write_file", description: "", requiredArgs: ["path", "content"] },
    { name: "run", description: "", requiredArgs: ["command"] },
    { name: "deploy", description: "ship it", requiredArgs: ["env"] },
  ];
  const ctx = () => ({ root: ws, allowRun: false });

  it("confines paths: .., absolute outside, symlinked dirs, dangling links", async () => {
    mkdirSync(join(tmp, "outside"));
    symlinkSync(join(tmp, "outside"), join(ws, "out-dir"));
    symlinkSync(join(tmp, "missing"), join(ws, "dangling"));
    await expect(confinePath(ws, "docs/../AGENTS.md")).resolves.toMatchObject({ rel: "AGENTS.md" });
    for (const [path, why] of [
      ["../x", "outside the workspace"],
      [join(tmp, "secret.txt"), "outside the workspace"],
      ["out-dir/new.txt", "resolves outside the workspace (symlink)"],
      ["dangling", "dangling symlink"],
    ] as const) {
      const w = await executeTool("write_file", { path, content: "x" }, registry, ctx());
      expect(w).toEqual({ ok: false, content: `${path}: ${why}`, summary: `${path}: ${why}` });
    }
    expect(existsSync(join(tmp, "outside/new.txt"))).toBe(false);
    expect(existsSync(join(tmp, "missing"))).toBe(false);
  });

  it("writes inside (creating directories), lists, and reports bad calls as errors", async () => {
    const w = await executeTool(
      "write_file",
      { path: "db/m/001.sql", content: "select 1;" },
      registry,
      ctx(),
    );
    expect(w).toMatchObject({ ok: true, summary: "db/m/001.sql (9 bytes written)" });
    expect(readFileSync(join(ws, "db/m/001.sql"), "utf8")).toBe("select 1;");
    const l = await executeTool("list_files", { dir: "db" }, registry, ctx());
    expect(l).toMatchObject({ ok: true, content: "m/", summary: "db: 1 entry" });
    expect(await executeTool("read_file", { path: "docs" }, registry, ctx())).toMatchObject({
      ok: false,
      content: "docs: is a directory (use list_files)",
    });
    expect(await executeTool("read_file", { path: "nope.md" }, registry, ctx())).toMatchObject({
      ok: false,
      content: "nope.md: no such file or directory",
    });
    expect(await executeTool("read_file", {}, registry, ctx())).toMatchObject({
      ok: false,
      content: "read_file needs a string `path`",
    });
    expect(await executeTool("deploy", { env: "prod" }, registry, ctx())).toMatchObject({
      ok: false,
      content: 'tool "deploy" has no built-in implementation',
    });
    expect(await executeTool("run", { command: "true" }, registry, ctx())).toMatchObject({
      ok: false,
      content: "run needs approval (--allow-run)",
    });
    const fail = await executeTool("run", { command: "exit 3" }, registry, {
      root: ws,
      allowRun: true,
    });
    expect(fail).toMatchObject({ ok: false, content: "exit 3", summary: "`exit 3` exit 3" });
    const env = await executeTool("run", { command: 'echo "[$OPENAI_API_KEY]"' }, registry, {
      root: ws,
      allowRun: true,
      env: { PATH: process.env.PATH ?? "", OPENAI_API_KEY: "sk-secret" },
    });
    expect(env.content).toBe("exit 0\n--- stdout\n[]\n");
  });

  it("offers configured tools with their arguments", () => {
    expect(anthropicTools(registry).map((t) => [t.name, t.input_schema.required])).toEqual([
      ["read_file", ["path"]],
      ["list_files", []],
      ["write_file", ["path", "content"]],
      ["run", ["command"]],
      ["deploy", ["env"]],
    ]);
    expect(anthropicTools(registry)[1]?.input_schema.properties).toEqual({
      dir: {
        type: "string",
        description: "directory relative to the workspace root (default: the root)",
      },
    });
  });
});
