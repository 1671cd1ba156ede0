import { spawnSync } from "node:child_process";
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
