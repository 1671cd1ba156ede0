/**
 * The SDK is loaded only where MCP runs: by `promptctx mcp`, and by `serve` on its first
 * `/mcp` request — never by `--help`, another verb, or a `serve` that gets no `/mcp`.
 */
import { spawn, spawnSync } from "node:child_process";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { BIN } from "../cli/run-cli.js";
import { NOW, tempWorkspace } from "./helpers.js";

// At exit, says on stderr whether any module of the SDK was loaded (required or imported).
const SHOW_SDK = `data:text/javascript,${encodeURIComponent(
  `import { createRequire } from "node:module";
   const cache = createRequire("/").cache;
   process.on("exit", () => process.stderr.write("\\nSDK " + Object.keys(cache).some((k) => k.includes("@modelcontextprotocol"))));`,
)}`;

function sdkLoaded(stderr: string): boolean {
  const m = /\nSDK (true|false)$/.exec(stderr);
  if (m === null) throw new Error(`no SDK line in: ${stderr}`);
  return m[1] === "true";
}

function cleanEnv(): Record<string, string> {
  const { NODE_OPTIONS: _, ...env } = process.env as Record<string, string>;
  return env;
}

function run(args: string[]): { code: number | null; sdk: boolean } {
  const r = spawnSync(process.execPath, ["--import", SHOW_SDK, BIN, ...args], {
    encoding: "utf8",
    env: cleanEnv(),
    input: "",
  });
  return { code: r.status, sdk: sdkLoaded(r.stderr) };
}

/** A `serve` that gets `requests` (paths, POSTed with an MCP body when `/mcp`), then SIGTERM. */
async function serveThen(root: string, paths: string[]): Promise<boolean> {
  const child = spawn(
    process.execPath,
    [
      "--import",
      SHOW_SDK,
      BIN,
      "serve",
      "--port",
      "0",
      "--no-log",
      "--workspace",
      root,
      "--mcp-user",
      "u",
    ],
    { env: cleanEnv(), stdio: ["ignore", "pipe", "pipe"] },
  );
  let err = "";
  child.stderr.setEncoding("utf8").on("data", (c: string) => {
    err += c;
  });
  const exited = new Promise<void>((resolve) => child.on("exit", () => resolve()));
  const url = await new Promise<string>((resolve, reject) => {
    void exited.then(() => reject(new Error(`serve exited: ${err}`)));
    let out = "";
    child.stdout.setEncoding("utf8").on("data", (c: string) => {
      out += c;
      const m = /listening on (http:\/\/\S+)/.exec(out);
      if (m) resolve((m[1] as string).replace(/\/$/, ""));
    });
  });
  for (const path of paths) {
    const res = await fetch(`${url}${path}`, {
      method: path === "/mcp" ? "POST" : "GET",
      headers: {
        "content-type": "application/json",
        accept: "application/json, text/event-stream",
      },
      ...(path === "/mcp"
        ? { body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "ping" }) }
        : {}),
    });
    expect(res.status).toBe(200);
    await res.text();
  }
  child.kill("SIGTERM");
  await exited;
  return sdkLoaded(err);
}

describe("the SDK is loaded lazily", () => {
  const ws = tempWorkspace();
  afterAll(() => ws.done());

  it("not by --help, serve --help, mcp --help or assemble", () => {
    expect(run(["--help"])).toEqual({ code: 0, sdk: false });
    expect(run(["serve", "--help"])).toEqual({ code: 0, sdk: false });
    expect(run(["mcp", "--help"])).toEqual({ code: 0, sdk: false });
    const assemble = ["assemble", "--workspace", ws.root, "--query", "add an index", "--now", NOW];
    expect(run([...assemble, "--no-user-files"])).toEqual({ code: 0, sdk: false });
  });

  it("by mcp, which ends when its stdin does", () => {
    const store = join(ws.dir, "lazy.db");
    expect(run(["mcp", "--user", "u", "--workspace", ws.root, "--store", store])).toEqual({
      code: 0,
      sdk: true,
    });
  });

  it("by serve only once /mcp is asked", async () => {
    expect(await serveThen(ws.root, ["/healthz"])).toBe(false);
    expect(await serveThen(ws.root, ["/healthz", "/mcp"])).toBe(true);
  }, 60_000);
});
