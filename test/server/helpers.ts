/** Shared fixtures of the server tests: the example workspace, a temp store, HTTP helpers. */
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import type { FastifyInstance } from "fastify";
import { afterAll, beforeAll, expect } from "vitest";
import type { ServerOptions } from "../../src/server/index.js";
import { openStore } from "../../src/store/index.js";

export const ROOT = fileURLToPath(new URL("../../", import.meta.url));
export const WORKSPACE = join(ROOT, "examples/workspace");
export const NOW = "2026-11-30T09:00:00Z";
export const QUERY = "add an index on invoices.created_at in a new migration";

/**
 * A server built with `options`, listening on 127.0.0.1 (an ephemeral port) for the tests
 * of the enclosing file or `describe`, closed after them. `base` is its URL inside tests.
 */
export function useServer(options: ServerOptions): { readonly base: string } {
  let app: FastifyInstance | undefined;
  const server = { base: "" };
  beforeAll(async () => {
    // Loaded here: the suites that only want the fixtures above do not load the server.
    const { buildServer } = await import("../../src/server/index.js");
    app = await buildServer(options);
    await app.listen({ port: 0, host: "127.0.0.1" });
    const address = app.server.address();
    if (address === null || typeof address === "string") throw new Error("no port");
    server.base = `http://127.0.0.1:${address.port}`;
  });
  afterAll(async () => {
    await app?.close();
  });
  return server;
}

/** A temp dir with `memory.db` imported from the example workspace's memories.jsonl. */
export async function exampleStore(): Promise<{ path: string; cleanup: () => void }> {
  const dir = mkdtempSync(join(tmpdir(), "promptctx-server-"));
  const path = join(dir, "memory.db");
  const store = openStore(path);
  try {
    const r = await store.importJsonl(readFileSync(join(WORKSPACE, "memories.jsonl"), "utf8"), {
      now: NOW,
    });
    expect(r.skipped).toBe(0);
  } finally {
    await store.close();
  }
  return { path, cleanup: () => rmSync(dir, { recursive: true, force: true }) };
}

export interface Answer {
  status: number;
  contentType: string | null;
  text: string;
  json: unknown;
}

/** POSTs `body` (an object is sent as JSON; a string or bytes as they are). */
export async function post(
  base: string,
  path: string,
  body: unknown,
  contentType: string | null = "application/json",
): Promise<Answer> {
  const payload =
    typeof body === "string" || body instanceof Uint8Array ? body : JSON.stringify(body);
  const headers: Record<string, string> = {};
  if (contentType !== null) headers["content-type"] = contentType;
  const res = await fetch(`${base}${path}`, { method: "POST", headers, body: payload });
  return answer(res);
}

export async function get(base: string, path: string): Promise<Answer> {
  return answer(await fetch(`${base}${path}`));
}

async function answer(res: Response): Promise<Answer> {
  const text = await res.text();
  let json: unknown = null;
  try {
    json = JSON.parse(text);
  } catch {
    json = null;
  }
  return { status: res.status, contentType: res.headers.get("content-type"), text, json };
}

/** Asserts the error object shape and that no stack trace leaked. */
export function expectErrorObject(a: Answer, status: number, code: string): void {
  expect(a.status, a.text).toBe(status);
  expect(a.contentType).toMatch(/^application\/json/);
  const obj = a.json as { error: { code: unknown; message: unknown; path: unknown } };
  expect(Object.keys(obj)).toEqual(["error"]);
  // A refusal may carry its numbers (`details`); nothing else is ever added.
  const keys = Object.keys(obj.error).filter(
    (k) => !(code === "prompt_budget_exceeded" && k === "details"),
  );
  expect(keys.sort()).toEqual(["code", "message", "path"]);
  expect(obj.error.code).toBe(code);
  expect(typeof obj.error.message).toBe("string");
  expect(obj.error.path === null || typeof obj.error.path === "string").toBe(true);
  expect(a.text).not.toMatch(/\n\s+at .+:\d+:\d+|\bat .+\.(ts|js):\d+/);
}
