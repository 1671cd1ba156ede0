import { spawn, spawnSync } from "node:child_process";
import { fileURLToPath } from "node:url";

export const BIN = fileURLToPath(new URL("../../bin/promptctx.js", import.meta.url));

export interface CliResult {
  code: number;
  stdout: string;
  stderr: string;
}

/** Runs the real built CLI as a child process (npm test builds first). */
export function runCli(
  args: string[],
  options: { input?: string; env?: Record<string, string> } = {},
): CliResult {
  const env: Record<string, string> = {
    ...(process.env as Record<string, string>),
    ...options.env,
  };
  delete env.NO_COLOR;
  const r = spawnSync(process.execPath, [BIN, ...args], {
    input: options.input ?? "",
    env,
    encoding: "utf8",
    maxBuffer: 64 * 1024 * 1024,
  });
  return { code: r.status ?? -1, stdout: r.stdout, stderr: r.stderr };
}

/**
 * Runs the built CLI as a child process without blocking this one (so a loopback server in
 * this process can answer it): `input` on stdin, an environment of only PATH, `HOME` and
 * `env`.
 */
export function spawnCli(
  args: string[],
  input: string,
  env: Record<string, string>,
  home: string,
): Promise<CliResult> {
  return new Promise((done, reject) => {
    const child = spawn(process.execPath, [BIN, ...args], {
      env: { PATH: process.env.PATH ?? "", HOME: home, ...env },
      stdio: ["pipe", "pipe", "pipe"],
    });
    let stdout = "";
    let stderr = "";
    child.stdout.setEncoding("utf8").on("data", (s: string) => (stdout += s));
    child.stderr.setEncoding("utf8").on("data", (s: string) => (stderr += s));
    child.on("error", reject);
    child.on("close", (code) => done({ code: code ?? -1, stdout, stderr }));
    child.stdin.end(input);
  });
}
