import { spawn } from "node:child_process";
import { cpSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { BIN } from "../cli/run-cli.js";

export const EXAMPLE = fileURLToPath(new URL("../../examples/workspace", import.meta.url));
export const NOW = "2026-11-30T09:00:00Z";

/** A copy of the example workspace (with a file outside it) in a temporary directory. */
export function tempWorkspace(): { dir: string; root: string; outside: string; done: () => void } {
  const dir = mkdtempSync(join(tmpdir(), "promptctx-mcp-"));
  const root = join(dir, "ws");
  cpSync(EXAMPLE, root, { recursive: true });
  const outside = join(dir, "outside");
  cpSync(EXAMPLE, outside, { recursive: true });
  writeFileSync(join(dir, "secret.md"), "outside the root\n");
  return { dir, root, outside, done: () => rmSync(dir, { recursive: true, force: true }) };
}

/** The JSON a tool answered (its text content), and whether it is an error. */
export async function call(
  client: Client,
  name: string,
  args: Record<string, unknown>,
): Promise<{ isError: boolean; json: unknown; text: string }> {
  const r = await client.callTool({ name, arguments: args });
  const content = r.content as Array<{ type: string; text: string }>;
  const text = content[0]?.text ?? "";
  let json: unknown = null;
  try {
    json = JSON.parse(text);
  } catch {
    json = null;
  }
  return { isError: r.isError === true, json, text };
}

/** Reads a resource; the error message when it fails. */
export async function read(
  client: Client,
  uri: string,
): Promise<{ text?: string; error?: string }> {
  try {
    const r = await client.readResource({ uri });
    const c = r.contents[0] as { text?: string };
    return { text: c.text ?? "" };
  } catch (err) {
    return { error: err instanceof Error ? err.message : String(err) };
  }
}

/** A running `promptctx serve` child process. */
export interface Served {
  url: string;
  stop: () => Promise<void>;
}

/** Spawns the real CLI's `serve --port 0` with `env` and waits for its `listening on URL`. */
export function spawnServe(args: string[], env: Record<string, string>): Promise<Served> {
  const child = spawn(process.execPath, [BIN, "serve", "--port", "0", "--no-log", ...args], {
    env: { ...(process.env as Record<string, string>), ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let out = "";
  let err = "";
  child.stderr?.setEncoding("utf8").on("data", (c: string) => {
    err += c;
  });
  const exited = new Promise<void>((resolve) => child.on("exit", () => resolve()));
  const stop = async () => {
    child.kill("SIGTERM");
    await exited;
  };
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`serve did not start: ${err}`)), 20_000);
    child.stdout?.setEncoding("utf8").on("data", (c: string) => {
      out += c;
      const m = /listening on (http:\/\/\S+)/.exec(out);
      if (m) {
        clearTimeout(timer);
        resolve({ url: (m[1] as string).replace(/\/$/, ""), stop });
      }
    });
    void exited.then(() => reject(new Error(`serve exited: ${err}`)));
  });
}
