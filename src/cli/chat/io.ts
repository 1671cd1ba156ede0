/** Where `promptctx chat` reads and writes, and how a failed chat is reported there. */
import { homedir } from "node:os";
import { toErrorObject } from "../../errors/index.js";
import { exitCodeFor } from "../io.js";
import type { ChatEnv } from "./credentials.js";

/** Where `chat` reads and writes (the process by default; tests inject their own). */
export interface ChatIO {
  env: ChatEnv;
  input: NodeJS.ReadableStream;
  output: { write(chunk: string): unknown };
  error: { write(chunk: string): unknown };
  /** Show the `you> ` prompt (stdin is a terminal). */
  interactive: boolean;
  home: string;
}

/** The process's streams, environment and home directory. */
export function processIO(): ChatIO {
  return {
    env: process.env,
    input: process.stdin,
    output: process.stdout,
    error: process.stderr,
    interactive: Boolean(process.stdin.isTTY),
    home: homedir(),
  };
}

/** Prints the error object on stdout and a one-line reason on stderr; returns the exit code. */
export function reportChatError(err: unknown, io: ChatIO): number {
  const obj = toErrorObject(err);
  io.output.write(`${JSON.stringify(obj)}\n`);
  const at = obj.error.path ? ` (at ${obj.error.path})` : "";
  io.error.write(`promptctx chat: ${obj.error.code}: ${obj.error.message}${at}\n`);
  if (obj.error.code === "internal_error" && io.env.PROMPTCTX_DEBUG && err instanceof Error) {
    io.error.write(`${err.stack ?? err.message}\n`);
  }
  return exitCodeFor(err);
}
