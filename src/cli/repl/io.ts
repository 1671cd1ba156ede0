/**
 * The terminal side of `promptctx repl`: command lines read from a stream (stdin), each run
 * by a {@link Repl}, its output written back; the exit code says whether input or output
 * failed.
 */
import { fstatSync } from "node:fs";
import { createInterface } from "node:readline";
import type { Readable, Writable } from "node:stream";
import { EXIT } from "../io.js";
import { fitText } from "../table.js";
import type { Repl } from "./repl.js";

/** Where the repl reads and writes (process streams by default). */
export interface ReplIo {
  input: Readable;
  output: Writable;
  /** Show the `promptctx> ` prompt (stdin is a terminal). */
  interactive: boolean;
  color: boolean;
  /** The input's file descriptor, checked before reading (Node reads a directory as empty). */
  fd?: number;
}

function unreadable(fd: number | undefined): Error | null {
  if (fd === undefined) return null;
  try {
    return fstatSync(fd).isDirectory() ? new Error("stdin is a directory") : null;
  } catch (err) {
    return err instanceof Error ? err : new Error(String(err));
  }
}

/**
 * Runs the repl until `quit`, `exit` or end of input; returns the exit code: 0, or 2 when
 * the input could not be read. Command errors print `error: <code>: <message>` and the
 * repl continues. Without a terminal each command is echoed as `> COMMAND` so a
 * transcript reads like a session. A reader that goes away (EPIPE) ends the repl quietly.
 */
export async function runRepl(repl: Repl, io: ReplIo): Promise<number> {
  const failure: { input: Error | null; output: Error | null } = {
    input: unreadable(io.fd),
    output: null,
  };
  if (failure.input !== null) {
    process.stderr.write(`promptctx repl: cannot read input: ${failure.input.message}\n`);
    return EXIT.invalid;
  }
  const rl = createInterface({
    input: io.input,
    ...(io.interactive ? { output: io.output, prompt: "promptctx> ", terminal: true } : {}),
    crlfDelay: Number.POSITIVE_INFINITY,
  });
  io.input.on("error", (err: Error) => {
    failure.input = err;
    rl.close();
  });
  io.output.on("error", (err: Error) => {
    failure.output = err;
    rl.close();
  });
  const write = (text: string) => {
    if (text !== "" && failure.output === null) {
      io.output.write(text.endsWith("\n") ? text : `${text}\n`);
    }
  };
  if (io.interactive) {
    write('promptctx repl — type "help" for the commands, "quit" to leave.');
    rl.prompt();
  }
  try {
    for await (const line of rl) {
      if (!io.interactive && line.trim() !== "") write(`> ${line.trim()}`);
      const { output, quit } = await repl.execute(line);
      write(fitText(output, repl.style));
      if (quit || failure.output !== null) break;
      if (io.interactive) rl.prompt();
      else if (output !== "") write("\n");
    }
  } catch (err) {
    failure.input = err instanceof Error ? err : new Error(String(err));
  } finally {
    rl.close();
  }
  if (failure.input !== null) {
    process.stderr.write(`promptctx repl: cannot read input: ${failure.input.message}\n`);
    return EXIT.invalid;
  }
  const out = failure.output as (Error & { code?: string }) | null;
  if (out !== null && out.code !== "EPIPE") {
    process.stderr.write(`promptctx repl: cannot write output: ${out.message}\n`);
    return EXIT.internal;
  }
  return EXIT.ok;
}
