/**
 * `--record` on `demo`, `assemble` and `chat`, and `promptctx replay` (exit 0 nothing
 * changed / 1 something changed / 2 unreadable or invalid), through the built CLI. `chat`
 * talks to a loopback server that speaks the Anthropic Messages protocol.
 */
import {
  appendFileSync,
  cpSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from "node:fs";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { WORKSPACE as EXAMPLE, NOW, QUERY } from "../server/helpers.js";
import { type CliResult, runCli, spawnCli } from "./run-cli.js";

let tmp: string;
beforeAll(() => {
  tmp = mkdtempSync(join(tmpdir(), "promptctx-cli-record-"));
});
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

interface Line {
  kind: string;
  request: Record<string, unknown>;
  response: Record<string, unknown>;
}
const lines = (file: string): Line[] =>
  readFileSync(file, "utf8")
    .trim()
    .split("\n")
    .map((l) => JSON.parse(l) as Line);

describe("demo --record, then replay", () => {
  it("records the demo with its memories and replays it: nothing changed", () => {
    const file = join(tmp, "demo.jsonl");
    const demo = runCli(["demo", "--json", "--record", file]);
    expect(demo.code).toBe(0);
    const [line] = lines(file);
    if (line === undefined) throw new Error("no line recorded");
    expect(line.kind).toBe("assemble");
    expect(line?.request).toMatchObject({ workspace: EXAMPLE, query: QUERY, now: NOW });
    expect((line.request.store as { seed: { jsonl: string } }).seed.jsonl).toBe(
      readFileSync(join(EXAMPLE, "memories.jsonl"), "utf8"),
    );
    const printed = JSON.parse(demo.stdout) as { prompt: string; manifest: { cacheKeys: unknown } };
    expect(line?.response.prompt).toBe(printed.prompt);
    expect((line.response.manifest as { cacheKeys: unknown }).cacheKeys).toEqual(
      printed.manifest.cacheKeys,
    );

    const replay = runCli(["replay", file, "--wide"]);
    expect(replay.code, replay.stderr).toBe(0);
    expect(replay.stdout).toBe(
      `line 1 · assemble · ${NOW} · ${JSON.stringify(QUERY)}: unchanged\nreplay: 1 line, nothing changed\n`,
    );
    const json = JSON.parse(runCli(["replay", file, "--json"]).stdout) as {
      file: string;
      changed: number;
      lines: Array<{ changed: boolean; diff: { cacheBreak: unknown } }>;
    };
    expect(json).toMatchObject({ file, changed: 0, lines: [{ changed: false }] });
  });

  it("refuses --record with --segments, and a file it cannot write", () => {
    const seg = runCli(["demo", "--segments", "--record", join(tmp, "x.jsonl")]);
    expect(seg.code).toBe(2);
    expect(JSON.parse(seg.stdout).error.path).toBe("--record");
    const nowhere = runCli(["demo", "--record", join(tmp, "missing/dir/r.jsonl")]);
    expect(nowhere.code).toBe(2);
    expect(JSON.parse(nowhere.stdout).error).toMatchObject({
      code: "invalid_input",
      path: "--record",
    });
  });
});

describe("assemble --record and replay's exit codes", () => {
  it("0 unchanged, 1 after the workspace changed (with what changed), 2 for a bad file", () => {
    const ws = join(tmp, "ws");
    cpSync(EXAMPLE, ws, { recursive: true });
    const file = join(tmp, "assemble.jsonl");
    const args = ["assemble", "--workspace", ws, "--query", QUERY, "--now", NOW, "--no-user-files"];
    expect(runCli([...args, "--format", "json", "--record", file]).code).toBe(0);
    const small = runCli([...args, "--budget", "100", "--record", file]);
    expect(small.code).toBe(3);
    const recorded = lines(file);
    expect(recorded.map((l) => l.request.budgetChars)).toEqual([undefined, 100]);
    expect(recorded[1]?.response).toEqual({ error: JSON.parse(small.stdout).error });
    expect(runCli(["replay", file]).code).toBe(0);

    appendFileSync(join(ws, "AGENTS.md"), "\n- Never edit generated files.\n");
    const changed = runCli(["replay", file, "--wide"]);
    expect(changed.code).toBe(1);
    expect(changed.stdout).toContain(
      `line 1 · assemble · ${NOW} · ${JSON.stringify(QUERY)}: changed`,
    );
    expect(changed.stdout).toMatch(
      / {2}first changed layer instructions \(\d+ → \d+ bytes, at byte \d+\):/,
    );
    expect(changed.stdout).toContain('    + "- Never edit generated files.\\n\\n"');
    expect(changed.stdout).toContain("cache breaks at session");
    expect(changed.stdout).toContain("line 2 · assemble");
    expect(changed.stdout.trim().split("\n").at(-1)).toBe("replay: 2 lines, 1 changed (line 1)");

    const bad = join(tmp, "bad.jsonl");
    writeFileSync(bad, `${readFileSync(file, "utf8")}{"recordVersion":1}\n`);
    const invalid = runCli(["replay", bad]);
    expect(invalid.code).toBe(2);
    expect(JSON.parse(invalid.stdout).error).toMatchObject({
      code: "invalid_input",
      path: "lines[2].at",
    });
    expect(invalid.stderr).toContain("line 3: ");
    const missing = runCli(["replay", join(tmp, "nope.jsonl")]);
    expect(missing.code).toBe(2);
    expect(JSON.parse(missing.stdout).error.path).toBe("file");
  });
});

describe("chat --record", () => {
  let server: Server;
  let base: string;
  const replies = [
    {
      content: [
        { type: "tool_use", id: "toolu_1", name: "read_file", input: { path: "AGENTS.md" } },
      ],
      stop: "tool_use",
    },
    { content: [{ type: "text", text: "Read it." }], stop: "end_turn" },
    { content: [{ type: "text", text: "Done." }], stop: "end_turn" },
  ];
  beforeAll(async () => {
    let n = 0;
    server = createServer((req, res) => {
      req.resume();
      req.on("end", () => {
        const r = replies[n++] ?? replies[2];
        res.setHeader("content-type", "application/json");
        res.end(
          JSON.stringify({
            id: `msg_${n}`,
            type: "message",
            role: "assistant",
            model: "claude-sonnet-4-6",
            content: r?.content,
            stop_reason: r?.stop,
            stop_sequence: null,
            usage: { input_tokens: 100, output_tokens: 10 },
          }),
        );
      });
    });
    await new Promise<void>((done) => server.listen(0, "127.0.0.1", done));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(() => new Promise<void>((done) => server.close(() => done())));

  function chat(args: string[], input: string): Promise<CliResult> {
    const home = join(tmp, "home");
    mkdirSync(home, { recursive: true });
    const env = { ANTHROPIC_API_KEY: "k", MODEL_ID: "claude-sonnet-4-6", ANTHROPIC_BASE_URL: base };
    return spawnCli(["chat", ...args], input, env, home);
  }

  it("one line per turn, each with the tool calls made before it; replays clean", async () => {
    const file = join(tmp, "chat.jsonl");
    const r = await chat(
      ["--workspace", EXAMPLE, "--now", NOW, "--no-user-files", "--record", file],
      "add a currency column\nnow the migration\n",
    );
    expect(r.code, r.stderr).toBe(0);
    const recorded = lines(file);
    expect(recorded.map((l) => [l.kind, l.request.turn, l.request.now, l.request.query])).toEqual([
      ["chat", 1, "2026-11-30T09:00:00.000Z", "add a currency column"],
      ["chat", 2, "2026-11-30T09:01:00.000Z", "now the migration"],
    ]);
    expect(recorded[0]?.request.toolCalls).toEqual([]);
    expect(recorded[1]?.request.toolCalls).toEqual([
      {
        tool: "read_file",
        ok: true,
        summary: expect.stringMatching(/^AGENTS\.md \(\d+ bytes\)$/),
        at: "2026-11-30T09:00:00.000Z",
      },
    ]);
    expect(String(recorded[1]?.response.prompt)).toContain("read_file → ok: AGENTS.md");
    const replay = runCli(["replay", file]);
    expect(replay.code, replay.stdout).toBe(0);
    expect(replay.stdout).toContain("replay: 2 lines, nothing changed");
  });
});
