/**
 * Graceful shutdown of a real server process (the built dist/, as `npm test` builds
 * first): SIGTERM while a request is in flight → no new connections, the in-flight
 * request still completes with 200, the store is closed, exit 0.
 *
 * The in-flight request is a slow upload: headers and half the body are sent, the
 * signal arrives, then the rest of the body follows. No test-only route is needed.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { request as httpRequest } from "node:http";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { exampleStore, get, NOW, QUERY, ROOT, WORKSPACE } from "./helpers.js";

const DIST_SERVER = join(ROOT, "dist/server/index.js");
const BIN = join(ROOT, "bin/promptctx.js");
const serveWired = /registerServeCommand\(/.test(
  readFileSync(join(ROOT, "src/cli/registry.ts"), "utf8"),
);

/**
 * Node arguments for `promptctx serve ARGS`: the real bin once main.ts registers the verb;
 * until then a program with only `registerServeCommand` (dist), run the way main() runs it.
 */
function serveArgs(args: string[]): string[] {
  if (serveWired) return [BIN, "serve", ...args];
  const script = `
    import { Command } from "commander";
    import { registerServeCommand } from ${JSON.stringify(join(ROOT, "dist/cli/serve-cmd.js"))};
    let code = 0;
    const program = new Command("promptctx").exitOverride();
    registerServeCommand(program, (c) => { code = c; });
    try { await program.parseAsync(process.argv.slice(1), { from: "user" }); } catch { code = 2; }
    process.exitCode = code;`;
  return ["--input-type=module", "-e", script, "serve", ...args];
}

interface Proc {
  child: ChildProcess;
  url: string;
  stdout: () => string;
  stderr: () => string;
  exit: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

/** Spawns a server process and waits for its `listening on URL` line. */
function spawnServer(args: string[]): Promise<Proc> {
  const child = spawn(process.execPath, args, { cwd: ROOT, stdio: ["ignore", "pipe", "pipe"] });
  let out = "";
  let err = "";
  child.stdout?.setEncoding("utf8");
  child.stderr?.setEncoding("utf8");
  child.stderr?.on("data", (c: string) => {
    err += c;
  });
  const exit = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.on("exit", (code, signal) => resolve({ code, signal })),
  );
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill("SIGKILL");
      reject(new Error(`server did not start:\n${out}\n${err}`));
    }, 20_000);
    child.stdout?.on("data", (c: string) => {
      out += c;
      const m = /listening on (http:\/\/\S+)/.exec(out);
      if (m) {
        clearTimeout(timer);
        resolve({ child, url: m[1] as string, stdout: () => out, stderr: () => err, exit });
      }
    });
    void exit.then(({ code }) => {
      clearTimeout(timer);
      reject(new Error(`server exited ${code} before listening:\n${out}\n${err}`));
    });
  });
}

/** Starts a POST with half its body sent; `finish()` sends the rest and resolves the answer. */
function slowUpload(url: string, path: string, body: string) {
  const bytes = Buffer.from(body);
  const half = Math.floor(bytes.length / 2);
  let resolveAnswer: (a: { status: number; text: string }) => void = () => {};
  let rejectAnswer: (e: unknown) => void = () => {};
  const answer = new Promise<{ status: number; text: string }>((resolve, reject) => {
    resolveAnswer = resolve;
    rejectAnswer = reject;
  });
  const req = httpRequest(
    `${url}${path}`,
    {
      method: "POST",
      headers: { "content-type": "application/json", "content-length": String(bytes.length) },
    },
    (res) => {
      let text = "";
      res.setEncoding("utf8");
      res.on("data", (c: string) => {
        text += c;
      });
      res.on("end", () => resolveAnswer({ status: res.statusCode ?? 0, text }));
    },
  );
  req.on("error", rejectAnswer);
  req.write(bytes.subarray(0, half));
  return {
    finish: () => {
      req.end(bytes.subarray(half));
      return answer;
    },
  };
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

let storePath: string;
let cleanup: () => void;

beforeAll(async () => {
  ({ path: storePath, cleanup } = await exampleStore());
});

afterAll(() => cleanup?.());

async function shutdownWhileInFlight(proc: Proc): Promise<void> {
  expect((await get(proc.url, "/healthz")).json).toEqual({ status: "ok", store: true });
  const upload = slowUpload(
    proc.url,
    "/v1/assemble",
    JSON.stringify({ query: QUERY, now: NOW, tokenizer: "o200k_base" }),
  );
  await sleep(300); // the request is in flight: headers and half the body received
  proc.child.kill("SIGTERM");
  await sleep(300);
  // Still running: it waits for the in-flight request...
  expect(proc.child.exitCode).toBeNull();
  // ...and no longer accepts connections.
  await expect(fetch(`${proc.url}/healthz`)).rejects.toThrow();
  const answer = await upload.finish();
  const answeredAt = Date.now();
  expect(answer.status, answer.text).toBe(200);
  expect(JSON.parse(answer.text).prompt).toContain("Acme platform");
  const { code, signal } = await proc.exit;
  expect({ code, signal }).toEqual({ code: 0, signal: null });
  // The answer closed its keep-alive connection: the exit does not wait for the client's
  // idle timeout (5 s for Node's agent).
  expect(Date.now() - answeredAt).toBeLessThan(4_000);
  expect(proc.stdout() + proc.stderr()).not.toMatch(/\n\s+at .+:\d+:\d+/);
}

describe("graceful shutdown", () => {
  it("runServer (dist): SIGTERM lets the in-flight request finish, then exits 0", async () => {
    expect(existsSync(DIST_SERVER), "run `npm run build` first").toBe(true);
    const script = `
      import { runServer } from ${JSON.stringify(DIST_SERVER)};
      process.exitCode = await runServer(
        { port: 0, workspace: ${JSON.stringify(WORKSPACE)}, store: ${JSON.stringify(storePath)}, logger: true },
        { onListening: (url) => process.stdout.write("listening on " + url + "\\n") },
      );`;
    const proc = await spawnServer(["--input-type=module", "-e", script]);
    await shutdownWhileInFlight(proc);
    // Structured logs: the in-flight request was logged, then the shutdown.
    const lines = proc
      .stderr()
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(lines.find((l) => l.route === "/v1/assemble")).toMatchObject({
      status: 200,
      code: null,
    });
    expect(lines.at(-1)).toMatchObject({ msg: "stopped", code: 0 });
  }, 60_000);

  it("promptctx serve: the same through the CLI", async () => {
    const proc = await spawnServer(
      serveArgs(["--port", "0", "--workspace", WORKSPACE, "--store", storePath]),
    );
    expect(proc.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    await shutdownWhileInFlight(proc);
  }, 60_000);

  it("promptctx serve: a bad flag or a store in a missing directory exits 2 with the error object", async () => {
    for (const args of [
      ["--port", "x"],
      ["--store", join(WORKSPACE, "no-such-dir", "memory.db")],
      ["--workspace", "/no/such/dir"],
    ]) {
      const child = spawn(process.execPath, serveArgs(["--port", "0", ...args]), {
        cwd: ROOT,
        stdio: ["ignore", "pipe", "pipe"],
      });
      let out = "";
      child.stdout?.setEncoding("utf8").on("data", (c: string) => {
        out += c;
      });
      const code = await new Promise<number | null>((r) => child.on("exit", (c) => r(c)));
      expect(code, out).toBe(2);
      expect(JSON.parse(out).error.code).toBe("invalid_input");
    }
  }, 60_000);
});
