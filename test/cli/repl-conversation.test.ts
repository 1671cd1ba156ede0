/**
 * The repl's conversation events (docs/conversation.md): user turns, replies, tool calls and results
 * added one command at a time, each followed by the whole request planned over the
 * session's current assembly. In process through `Repl.execute`, and one transcript
 * through the built CLI.
 */
import { describe, expect, it } from "vitest";
import { Repl } from "../../src/cli/repl/repl.js";
import { runCli } from "./run-cli.js";

async function run(lines: string[]): Promise<string[]> {
  const repl = new Repl({}, { color: false, width: null });
  const out: string[] = [];
  for (const line of lines) out.push((await repl.execute(line)).output);
  return out;
}

/** The decision row of `id` in an output: [message, turn, status, reason, …]. */
function decision(out: string, id: string): string[] {
  const line = out.split("\n").find((l) => l.startsWith(`${id} `));
  expect(line, `row ${id}`).toBeDefined();
  return (line as string).trim().split(/\s{2,}/);
}

const words = (n: number) => Array.from({ length: n }, (_, i) => `w${i}`).join(" ");

describe("repl conversation events", () => {
  it("a pending call is an orphan until its result arrives; parallel calls share one message", async () => {
    const out = await run([
      "turn list the migrations",
      'call list_files {"dir":"db"}',
      'call read_file {"path":"db/001.sql"}',
      "result 001.sql 002.sql",
      "result --error permission denied",
    ]);
    expect(out[0]).toContain("added u1 (user)");
    expect(out[1]).toContain("added a2 (assistant calls list_files, call_1)");
    expect(decision(out[1] as string, "a2").slice(2, 4)).toEqual(["dropped", "orphan_removed"]);
    expect(out[2]).toContain("a2 also calls read_file (call_2)");
    expect(decision(out[3] as string, "t3").slice(2, 4)).toEqual(["dropped", "orphan_removed"]);
    expect(out[4]).toContain("added t4 (result of call_2, error)");
    for (const id of ["u1", "a2", "t3", "t4"]) {
      expect(decision(out[4] as string, id).slice(2, 4)).toEqual(["kept", "required"]);
    }
  });

  it("old turns leave the window whole; context shows where the window goes and the segments", async () => {
    const lines = ["window 2000"];
    for (let t = 1; t <= 6; t++) {
      lines.push(
        `turn question ${t}`,
        "call read_file {}",
        `result ${words(300)}`,
        `reply answer ${t}`,
      );
    }
    lines.push("context");
    const out = await run(lines);
    expect(out[0]).toBe(
      "context window 2000 tokens\n(no turn yet: `turn TEXT` starts the conversation)",
    );
    const last = out.at(-1) as string;
    expect(decision(last, "u1").slice(2, 4)).toEqual(["dropped", "history_window"]);
    expect(decision(last, "a2").slice(2, 4)).toEqual(["dropped", "history_window"]);
    expect(decision(last, "t3").slice(2, 4)).toEqual(["dropped", "history_window"]);
    expect(decision(last, "u21").slice(2, 4)).toEqual(["kept", "required"]);
    for (const piece of [
      "Context — claude-sonnet-4-6: window 2000 tokens (given), tokenizer estimate",
      "system: static",
      "  of which tool results",
      "response reserve           1024",
      "Prompt plan — budget",
    ]) {
      expect(last).toContain(piece);
    }
  });

  it("refuses events out of order, with a usage line", async () => {
    const out = await run(["reply hi", "result x", "turn go", "call", "window 0", "call f {oops"]);
    expect(out[0]).toBe("error: invalid_input: usage: turn TEXT (before reply) (at command)");
    expect(out[1]).toBe(
      "error: invalid_input: usage: result [--error] TEXT (after a call) (at command)",
    );
    expect(out[3]).toBe("error: invalid_input: usage: call NAME [JSON] (at command)");
    expect(out[4]).toBe("error: invalid_input: usage: window TOKENS (at command)");
    expect(out[5]).toContain("error: invalid_input: tool input must be JSON");
  });

  it("through the built CLI: a transcript of turns and tool results", () => {
    const r = runCli(["repl"], {
      input: [
        "turn hello",
        'call run {"command":"ls"}',
        "result a b",
        "reply two files",
        "quit",
        "",
      ].join("\n"),
    });
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain("> result a b\nadded t3 (result of call_1)");
    expect(r.stdout).toContain("added a4 (assistant)");
  });
});
