/**
 * `promptctx serve --workers 2` as a real process tree (the built bin, as `npm test` builds
 * first): two workers serve one port, requests succeed, and SIGTERM to the primary stops
 * every worker gracefully and exits 0; bad options fail once, with the worker's exit code.
 */
import { type ChildProcess, execFileSync, spawn } from "node:child_process";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { WORKER_SEMI_SPACE_MB, workerExecArgv } from "../../src/server/cluster.js";
import { exampleStore, get, NOW, post, QUERY, ROOT, WORKSPACE } from "./helpers.js";

const BIN = join(ROOT, "bin/promptctx.js");

let storePath: string;
let cleanup: () => void;

beforeAll(async () => {
  ({ path: storePath, cleanup } = await exampleStore());
});

afterAll(() => cleanup?.());

/** The pids of `pid`'s children (Linux `ps`). */
function childrenOf(pid: number): number[] {
  const out = execFileSync("ps", ["-o", "pid=", "--ppid", String(pid)], { encoding: "utf8" });
  return out
    .split("\n")
    .map((l) => Number(l.trim()))
    .filter((n) => n > 0);
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

function serve(args: string[]): {
  child: ChildProcess;
  listening: Promise<string>;
  exit: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  output: () => string;
} {
  const child = spawn(process.execPath, [BIN, "serve", ...args], {
    cwd: ROOT,
    stdio: ["ignore", "pipe", "pipe"],
  });
  let out = "";
  child.stdout?.setEncoding("utf8");
  child.stderr?.setEncoding("utf8");
  child.stderr?.on("data", (c: string) => {
    out += c;
  });
  const exit = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.on("exit", (code, signal) => resolve({ code, signal })),
  );
  const listening = new Promise<string>((resolve, reject) => {
    child.stdout?.on("data", (c: string) => {
      out += c;
      const m = /listening on (http:\/\/\S+)/.exec(out);
      if (m) resolve(m[1] as string);
    });
    void exit.then(({ code }) => reject(new Error(`exited ${code} before listening:\n${out}`)));
  });
  return { child, listening, exit, output: () => out };
}

describe("serve --workers", () => {
  it("serves from two workers and stops them all on SIGTERM", async () => {
    const proc = serve([
      "--workers",
      "2",
      "--port",
      "0",
      "--workspace",
      WORKSPACE,
      "--store",
      storePath,
      "--no-log",
    ]);
    try {
      const url = await proc.listening;
      const workers = childrenOf(proc.child.pid as number);
      expect(workers).toHaveLength(2);
      expect((await get(url, "/healthz")).json).toEqual({ status: "ok", store: true });
      const answers = await Promise.all(
        Array.from({ length: 8 }, () =>
          post(url, "/v1/assemble", { query: QUERY, now: NOW, tokenizer: "o200k_base" }),
        ),
      );
      for (const a of answers) expect(a.status, a.text).toBe(200);
      expect(new Set(answers.map((a) => (a.json as { prompt: string }).prompt)).size).toBe(1);

      proc.child.kill("SIGTERM");
      expect(await proc.exit).toEqual({ code: 0, signal: null });
      for (const pid of workers) expect(alive(pid), `worker ${pid}`).toBe(false);
      expect(proc.output()).not.toMatch(/\n\s+at .+:\d+:\d+/);
    } finally {
      proc.child.kill("SIGKILL");
    }
  }, 120_000);

  it("fails once, with the worker's code, on bad options", async () => {
    const missing = join(WORKSPACE, "no-such-dir");
    const proc = serve(["--workers", "2", "--port", "0", "--workspace", missing]);
    await expect(proc.listening).rejects.toThrow();
    const { code } = await proc.exit;
    expect(code).toBe(2);
    // One error object: the second worker never started.
    expect(proc.output().match(/"invalid_input"/g)).toHaveLength(1);
  }, 120_000);

  it("refuses zero workers", async () => {
    const proc = serve(["--workers", "0", "--port", "0"]);
    await expect(proc.listening).rejects.toThrow();
    expect((await proc.exit).code).toBe(2);
  }, 60_000);
});

describe("workerExecArgv", () => {
  it("gives workers a larger young generation unless their flags size it", () => {
    expect(workerExecArgv([], undefined)).toEqual([
      `--max-semi-space-size=${WORKER_SEMI_SPACE_MB}`,
    ]);
    expect(workerExecArgv(["--enable-source-maps"], "")).toEqual([
      "--enable-source-maps",
      `--max-semi-space-size=${WORKER_SEMI_SPACE_MB}`,
    ]);
    expect(workerExecArgv(["--max-semi-space-size=8"])).toEqual(["--max-semi-space-size=8"]);
    expect(workerExecArgv([], "--trace-gc --max_semi_space_size=4")).toEqual([]);
    expect(workerExecArgv(["--min-semi-space-size=2"], undefined)).toEqual([
      "--min-semi-space-size=2",
    ]);
  });
});
