/**
 * `promptctx check-draft` end to end: the tests spawn the built `bin/promptctx.js`
 * (`npm run build` first).
 */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { EXIT_BLOCKED } from "../../src/cli/check-draft-cmd.js";
import { type CliResult, runCli } from "./run-cli.js";

function checkDraftCli(args: string[], input = ""): CliResult {
  return runCli(["check-draft", ...args], { input });
}

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), "promptctx-check-draft-"));
});
afterEach(() => {
  rmSync(dir, { recursive: true, force: true });
});

function file(name: string, content: unknown): string {
  const path = join(dir, name);
  writeFileSync(path, typeof content === "string" ? content : JSON.stringify(content));
  return path;
}

const RED_LINES = [
  { id: "share-pw", severity: "block", literal: "share the password" },
  { id: "promise", severity: "review", literal: "guaranteed returns" },
  { id: "token", severity: "warn", pattern: "sk-[A-Za-z0-9]{8,}" },
];

function noStack(text: string) {
  expect(text).not.toMatch(/\n\s+at .+:\d+:\d+/);
}

describe("check-draft CLI (bin/promptctx.js)", () => {
  it("exits 0 with a clean draft from stdin and says so", async () => {
    const r = await checkDraftCli(["--red-lines", file("rl.json", RED_LINES)], "All good here.\n");
    expect(r.code).toBe(0);
    expect(r.stdout).toBe("no red-line violations (checked 15 chars)\n");
  });

  it("exits 4 on a block violation and prints a table", async () => {
    const draft = file("draft.txt", "🚀 Sure, I will SHARE the password: sk-ABCDEFGH12\n");
    // --wide: one line per violation (piped output is otherwise fitted to 80 columns).
    const r = await checkDraftCli([
      "--red-lines",
      file("rl.json", RED_LINES),
      "--input",
      draft,
      "--wide",
    ]);
    expect(r.code).toBe(EXIT_BLOCKED);
    expect(EXIT_BLOCKED).toBe(4);
    const lines = r.stdout.trimEnd().split("\n");
    expect(lines[0]).toMatch(/^SEVERITY\s+RED LINE\s+SPAN\s+FLAG\s+EXCERPT$/);
    expect(lines[2]).toMatch(/^block\s+share-pw\s+15-33\s+.*SHARE the password/);
    expect(lines[3]).toMatch(/^warn\s+token\s+35-48\s/);
    expect(lines.at(-1)).toBe("2 violations (1 block, 1 warn, 0 review); checked 49 chars");
    expect(r.stdout).not.toContain("\u001b[");
  });

  it("--json prints the check result; warn and review only exit 0, review flagged", async () => {
    const r = await checkDraftCli(
      ["--red-lines", file("rl.json", RED_LINES), "--json"],
      "Guaranteed returns with key sk-abcdefgh1!",
    );
    expect(r.code).toBe(0);
    const out = JSON.parse(r.stdout);
    expect(out).toMatchObject({
      blocked: false,
      flagged: true,
      truncated: false,
      redLineIds: ["promise", "token"],
      checkedChars: 41,
    });
    expect(out.violations[0]).toMatchObject({
      redLineId: "promise",
      severity: "review",
      span: { start: 0, end: 18 },
      flagged: true,
    });
  });

  it("--max-draft-chars: a longer draft is withheld unchecked, exit 4 (fail closed)", async () => {
    const r = await checkDraftCli(
      ["--red-lines", file("rl.json", RED_LINES), "--json", "--max-draft-chars", "10"],
      "0123456789 nothing wrong here",
    );
    expect(r.code).toBe(EXIT_BLOCKED);
    expect(JSON.parse(r.stdout)).toMatchObject({
      truncated: true,
      incomplete: "draft_too_long",
      blocked: true,
      flagged: true,
      checkedChars: 0,
      violations: [],
    });
    const text = await checkDraftCli(
      ["--red-lines", file("rl.json", RED_LINES), "--max-draft-chars", "10"],
      "0123456789 nothing wrong here",
    );
    expect(text.code).toBe(EXIT_BLOCKED);
    expect(text.stdout).toContain(
      "withheld: the draft could not be checked in full (draft_too_long)",
    );
  });

  it("exits 2 with the error object for a pattern RE2 cannot run, naming redLines[i].pattern", async () => {
    const bad = [...RED_LINES, { id: "evil", severity: "block", pattern: "(a)\\1" }];
    const r = await checkDraftCli(["--red-lines", file("bad.json", bad)], "aaaa");
    expect(r.code).toBe(2);
    const obj = JSON.parse(r.stdout);
    expect(obj.error.code).toBe("unsupported_pattern");
    expect(obj.error.path).toBe("redLines[3].pattern");
    expect(obj.error.message).toMatch(/^\/\(a\)\\1\/: backreference \\1 is not supported/);
    expect(r.stderr).toMatch(
      /^promptctx check-draft: unsupported_pattern: .*\(at redLines\[3\]\.pattern\)\n$/,
    );
    noStack(r.stdout + r.stderr);
  });

  it("exits 2 on an unreadable or non-JSON red-lines file, a bad flag, a missing flag", async () => {
    let r = await checkDraftCli(["--red-lines", join(dir, "missing.json")], "x");
    expect(r.code).toBe(2);
    expect(JSON.parse(r.stdout).error.path).toBe("--red-lines");
    r = await checkDraftCli(["--red-lines", file("x.json", "{oops")], "x");
    expect(r.code).toBe(2);
    expect(JSON.parse(r.stdout).error.message).toMatch(/not valid JSON/);
    r = await checkDraftCli(["--red-lines", file("o.json", { redLines: [] })], "x");
    expect(r.code).toBe(2);
    expect(JSON.parse(r.stdout).error.path).toBe("redLines");
    r = await checkDraftCli([
      "--red-lines",
      file("rl.json", RED_LINES),
      "--input",
      join(dir, "nope"),
    ]);
    expect(r.code).toBe(2);
    expect(JSON.parse(r.stdout).error.path).toBe("--input");
    r = await checkDraftCli(
      ["--red-lines", file("rl.json", RED_LINES), "--max-draft-chars", "0"],
      "x",
    );
    expect(r.code).toBe(2);
    expect(JSON.parse(r.stdout).error.path).toBe("--max-draft-chars");
    r = await checkDraftCli([], "x");
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/--red-lines/);
  });

  it("--help exits 0 and documents the exit codes", async () => {
    const r = await checkDraftCli(["--help"]);
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/--red-lines <file>/);
    expect(r.stdout).toMatch(/4 block violation/);
  });
});
