/**
 * The Python client of docs/conversation.md (examples/python/agent_loop.py, standard
 * library only) runs a tool loop through a real `promptctx serve` on loopback against a
 * loopback stand-in of the Anthropic Messages API; every body it sent equals, byte for
 * byte, what the TypeScript library builds for the same conversation.
 */
import { type ChildProcess, execFile, spawn } from "node:child_process";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { planAgentRequest } from "../../src/agent/index.js";
import type { MessageInput } from "../../src/conversation/index.js";
import { planPrompt } from "../../src/plan/index.js";
import { resolveTokenCounter } from "../../src/tokens/index.js";

const ROOT = fileURLToPath(new URL("../../", import.meta.url));
const BIN = `${ROOT}bin/promptctx.js`;
const SCRIPT = `${ROOT}examples/python/agent_loop.py`;

let serve: ChildProcess | undefined;
let promptctx = "";
let standIn: Server | undefined;
let anthropic = "";
const seen: Record<string, unknown>[] = [];

beforeAll(async () => {
  serve = spawn(
    process.execPath,
    [BIN, "serve", "--port", "0", "--workspace", `${ROOT}examples/workspace`, "--no-log"],
    {
      cwd: ROOT,
      stdio: ["ignore", "pipe", "pipe"],
    },
  );
  promptctx = await new Promise<string>((resolve, reject) => {
    let out = "";
    serve?.stdout?.on("data", (c: Buffer) => {
      out += c.toString("utf8");
      const m = /listening on (\S+)/.exec(out);
      if (m) resolve(m[1] as string);
    });
    serve?.on("exit", (code) => reject(new Error(`serve exited ${code}`)));
  });
  // The Messages API stand-in: asks for a file three times, then answers.
  standIn = createServer((req, res) => {
    let data = "";
    req.on("data", (c: Buffer) => {
      data += c.toString("utf8");
    });
    req.on("end", () => {
      const body = JSON.parse(data) as Record<string, unknown>;
      seen.push(body);
      const n = seen.length;
      const content =
        n <= 3
          ? [
              { type: "text", text: `reading file ${n}` },
              {
                type: "tool_use",
                id: `toolu_${n}`,
                name: "read_file",
                input: { path: `src/f${n}.ts` },
              },
            ]
          : [{ type: "text", text: "The build id is set in src/f2.ts." }];
      res.setHeader("content-type", "application/json");
      res.end(
        JSON.stringify({
          id: `msg_${n}`,
          type: "message",
          role: "assistant",
          model: body.model,
          content,
          stop_reason: n <= 3 ? "tool_use" : "end_turn",
          usage: { input_tokens: 1, output_tokens: 1 },
        }),
      );
    });
  });
  await new Promise<void>((r) => standIn?.listen(0, "127.0.0.1", r));
  anthropic = `http://127.0.0.1:${(standIn.address() as AddressInfo).port}`;
});

afterAll(async () => {
  serve?.kill();
  await new Promise<void>((r) => (standIn ? standIn.close(() => r()) : r()));
});

describe("the Python client (standard library) through a real promptctx serve", () => {
  it("runs the tool loop; each body equals the TypeScript library's for the same conversation", async () => {
    const stdout = await new Promise<string>((resolve, reject) =>
      execFile(
        "python3",
        [SCRIPT, "--promptctx", promptctx, "--anthropic", anthropic],
        { encoding: "utf8" },
        (err, out, errOut) => (err ? reject(new Error(`${err.message}\n${errOut}`)) : resolve(out)),
      ),
    );
    const calls = stdout
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l) as { messages: MessageInput[]; body: Record<string, unknown> });
    expect(calls).toHaveLength(4);
    expect(seen).toHaveLength(4);
    const system = planPrompt({
      segments: [
        {
          name: "rules",
          content: "You are a careful coding agent. Read before you edit.",
          cacheTier: "static",
        },
        { name: "task", content: "Task: find where the build id is set.", cacheTier: "dynamic" },
      ],
    });
    calls.forEach((call, i) => {
      const tools = (seen[i] as { tools: unknown }).tools;
      const lib = planAgentRequest({
        provider: "anthropic",
        model: "claude-sonnet-4-6",
        system,
        messages: call.messages,
        // The tools as the server counts them: their JSON, with the model's counter.
        toolsTokens: resolveTokenCounter("claude_estimate").count(JSON.stringify(tools)),
      });
      expect(JSON.stringify(call.body)).toBe(JSON.stringify({ ...lib.body, tools }));
      // What reached the Messages API is the body as answered, plus model and max_tokens.
      const { model: _m, max_tokens: _x, ...wire } = seen[i] as Record<string, unknown>;
      expect(JSON.stringify(wire)).toBe(JSON.stringify(call.body));
      expect(tools).toHaveLength(1);
    });
  });
});
