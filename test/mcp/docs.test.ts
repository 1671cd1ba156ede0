/**
 * The host configurations of docs/mcp.md (and the README) work as written: every JSON block parses, and each
 * server it (or a shell or TOML block) declares starts the real CLI (`npx promptctx …` run
 * as `node bin/promptctx.js …`, the placeholder paths replaced) and answers the SDK's
 * client; each HTTP entry names `/mcp` with a bearer token the `serve` line grants.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { afterAll, describe, expect, it } from "vitest";
import { BIN } from "../cli/run-cli.js";
import { spawnServe, tempWorkspace } from "./helpers.js";

const text = (path: string) => readFileSync(fileURLToPath(new URL(path, import.meta.url)), "utf8");
// docs/mcp.md and the README's MCP section.
const DOC = `${text("../../docs/mcp.md")}\n${text("../../README.md")}`;
const PLACEHOLDER = "/path/to/your/repo";

function blocks(lang: string): string[] {
  return [...DOC.matchAll(new RegExp(`\`\`\`${lang}\\n([\\s\\S]*?)\`\`\``, "g"))].map(
    (m) => m[1] as string,
  );
}

interface Entry {
  command?: string;
  args?: string[];
  url?: string;
  headers?: Record<string, string>;
}

/** Every server entry of the JSON blocks (`mcpServers` or VS Code's `servers`). */
function jsonEntries(): Entry[] {
  return blocks("json")
    .map((b) => JSON.parse(b) as Record<string, unknown>)
    .flatMap((o) => Object.values((o.mcpServers ?? o.servers ?? {}) as Record<string, Entry>));
}

/** `npx promptctx ARGS` in a shell or TOML block, as argument lists. */
function commandLines(): string[][] {
  const shell = blocks("sh").flatMap((b) =>
    [...b.matchAll(/-- npx promptctx (mcp [^\n]*)/g)].map((m) => (m[1] as string).split(" ")),
  );
  const toml = blocks("toml").map(
    (b) => JSON.parse(/^args = (.*)$/m.exec(b)?.[1] ?? "[]") as string[],
  );
  return [...shell, ...toml.map((a) => a.slice(1))];
}

describe("docs/mcp.md host configurations", () => {
  const ws = tempWorkspace();
  afterAll(() => ws.done());

  async function listTools(args: string[]): Promise<string[]> {
    const client = new Client({ name: "doc-test", version: "0" });
    const resolved = args.map((a) => (a === PLACEHOLDER ? ws.root : a));
    await client.connect(
      new StdioClientTransport({
        command: process.execPath,
        args: [BIN, ...resolved],
        stderr: "pipe",
      }),
    );
    try {
      return (await client.listTools()).tools.map((t) => t.name).sort();
    } finally {
      await client.close();
    }
  }

  it("each stdio entry starts a server with the four tools", async () => {
    const stdio = jsonEntries().filter((e) => e.command !== undefined);
    const lines = [...stdio.map((e) => (e.args ?? []).slice(1)), ...commandLines()];
    expect(stdio.every((e) => e.command === "npx" && e.args?.[0] === "promptctx")).toBe(true);
    expect(lines.length).toBeGreaterThanOrEqual(4);
    for (const args of lines) {
      expect(args[0]).toBe("mcp");
      expect(await listTools(args)).toEqual(["assemble_context", "forget", "recall", "remember"]);
    }
  }, 60_000);

  it("the HTTP entry reaches /mcp of the documented serve with its token", async () => {
    const serveLine = /^PROMPTCTX_TOKENS=(\S+) npx promptctx serve (.*)$/m.exec(
      blocks("sh").join("\n"),
    );
    expect(serveLine).not.toBeNull();
    const http = jsonEntries().filter((e) => e.url !== undefined);
    expect(http.length).toBe(1);
    const entry = http[0] as Entry;
    const args = (serveLine?.[2] ?? "")
      .split(" ")
      .map((a) =>
        a === PLACEHOLDER ? ws.root : a === "memory.db" ? join(ws.dir, "memory.db") : a,
      );
    const served = await spawnServe(args, { PROMPTCTX_TOKENS: serveLine?.[1] ?? "" });
    try {
      const url = new URL(entry.url as string);
      expect(url.pathname).toBe("/mcp");
      const client = new Client({ name: "doc-test", version: "0" });
      await client.connect(
        new StreamableHTTPClientTransport(new URL(`${served.url}/mcp`), {
          requestInit: { headers: entry.headers ?? {} },
        }),
      );
      expect((await client.listTools()).tools.length).toBe(4);
      await client.close();
    } finally {
      await served.stop();
    }
  }, 60_000);
});
