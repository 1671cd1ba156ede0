/**
 * `promptctx serve` in a child process for the bench sections that measure through a real
 * server (server, agent-surfaces): resolves its base URL once it listens, and stops it.
 */
import { spawn } from "node:child_process";
import { fileURLToPath } from "node:url";

const BIN = fileURLToPath(new URL("../../bin/promptctx.js", import.meta.url));

/** `promptctx serve …args`; `url` resolves to the base URL (no trailing slash). */
export function startServe(args) {
  const child = spawn(process.execPath, [BIN, "serve", ...args], {
    stdio: ["ignore", "pipe", "pipe"],
  });
  let out = "";
  child.stdout.setEncoding("utf8");
  child.stderr.setEncoding("utf8");
  child.stderr.on("data", (c) => {
    out += c;
  });
  const exited = new Promise((resolve) => child.on("exit", (code) => resolve(code)));
  const url = new Promise((resolve, reject) => {
    child.stdout.on("data", (c) => {
      out += c;
      const m = /listening on (http:\/\/\S+)/.exec(out);
      if (m) resolve(m[1].replace(/\/$/, ""));
    });
    void exited.then((code) =>
      reject(new Error(`promptctx serve ${args.join(" ")} exited ${code}:\n${out}`)),
    );
  });
  return {
    url,
    stop: async () => {
      child.kill("SIGTERM");
      return exited;
    },
  };
}
