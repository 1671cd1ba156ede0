/**
 * Every verb's people output fits the terminal, measured through a real pseudo-terminal
 * (util-linux `script`): at 60, 80, 100 and 120 columns no line is wider than the
 * terminal; piped, the width is COLUMNS or 80; `--wide` prints full text and `--json` is
 * the same bytes whatever the terminal. Runs the built CLI (`npm run build` first).
 */
import { spawnSync } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { displayWidth } from "../../src/text/index.js";
import { planRequest, selectRequest } from "../fixtures/requests.js";
import { BIN, runCli } from "./run-cli.js";

const ROOT = fileURLToPath(new URL("../../", import.meta.url));
const WIDTHS = [60, 80, 100, 120] as const;
const NOW = "2026-11-30T09:00:00Z";
const SGR = new RegExp(`${String.fromCharCode(27)}\\[[0-9;]*m`, "g");

let dir: string;
let verbs: Record<string, string>;

const quote = (s: string) => `'${s.replaceAll("'", "'\\''")}'`;

/** Runs `promptctx ARGS [< stdin]` with stdout on a pseudo-terminal `cols` wide. */
function onTerminal(cols: number, args: string[], stdin?: string): string {
  const cmd = [process.execPath, BIN, ...args].map(quote).join(" ");
  const redirect = stdin === undefined ? "" : ` < ${quote(stdin)}`;
  const r = spawnSync(
    "script",
    ["-qec", `stty cols ${cols} rows 50; ${cmd}${redirect}`, "/dev/null"],
    {
      encoding: "utf8",
      env: { ...process.env, NO_COLOR: "", COLUMNS: "" },
      cwd: ROOT,
      maxBuffer: 64 * 1024 * 1024,
    },
  );
  if (r.error) throw r.error;
  // check-draft exits 4 when a block-severity line is crossed; the output is what counts.
  expect([0, 4], `${args.join(" ")}: ${r.stdout.slice(0, 400)}`).toContain(r.status);
  return r.stdout.replaceAll("\r\n", "\n").replace(SGR, "");
}

const tooWide = (text: string, cols: number) =>
  text.split("\n").filter((line) => displayWidth(line) > cols);

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), "promptctx-pty-"));
  const store = join(dir, "m.db");
  const imported = runCli([
    "memory",
    "import",
    "--store",
    store,
    "examples/workspace/memories.jsonl",
  ]);
  expect(imported.code).toBe(0);
  writeFileSync(
    join(dir, "rl.json"),
    JSON.stringify([
      { id: "share-the-password-red-line", severity: "block", literal: "share the password" },
      { id: "token", severity: "warn", pattern: "sk-[A-Za-z0-9]{8,}" },
    ]),
  );
  writeFileSync(
    join(dir, "draft.txt"),
    `Sure — I will share the password with the whole team, and here is the key sk-${"A".repeat(60)} for the deployment pipeline of the billing service.\n`,
  );
  writeFileSync(join(dir, "repl.txt"), "skill load sql-review\nshow\nstats\n");
  verbs = {
    demo: "demo",
    "demo --segments": "demo --segments",
    assemble: `assemble --workspace examples/workspace --query ${quote("add an index on invoices.created_at in a new migration")} --now ${NOW}`,
    "memory recall": `memory recall --store ${store} --user user-42 --query ${quote("index migration language")} --now ${NOW}`,
    replay: "replay test/fixtures/recordings/example.jsonl",
    "check-draft": `check-draft --red-lines ${join(dir, "rl.json")} --input ${join(dir, "draft.txt")}`,
    repl: "repl",
  };
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

// The argument vector of a verb line (paths and quoted queries as one argument each).
const argv = (line: string): string[] =>
  (line.match(/'(?:[^']|'\\'')*'|\S+/g) ?? []).map((a) =>
    a.startsWith("'") ? a.slice(1, -1).replaceAll("'\\''", "'") : a,
  );

describe("people output on a real terminal", () => {
  for (const cols of WIDTHS) {
    it(`at ${cols} columns no line of any verb is wider`, () => {
      for (const [name, line] of Object.entries(verbs)) {
        const stdin = name === "repl" ? join(dir, "repl.txt") : undefined;
        const out = onTerminal(cols, argv(line), stdin);
        expect(out.length, name).toBeGreaterThan(200);
        expect(tooWide(out, cols), `${name} at ${cols}`).toEqual([]);
        // The terminal's width is the one used (the layout fills it, not a default).
        const widest = Math.max(...out.split("\n").map(displayWidth));
        expect(widest, `${name} at ${cols}`).toBeGreaterThan(name === "demo" ? cols - 20 : 40);
        expect(out, name).not.toContain("…".repeat(2));
      }
    }, 120_000);
  }

  it("key columns stay whole: every segment name, status and reason on its row", () => {
    const out = onTerminal(60, ["demo"]);
    expect(out).toMatch(/^skill_catalog +included +fits_budget +290 +58$/m);
    expect(out).toMatch(/^task_memory +inactive +inactive/m);
    expect(out).toMatch(/^2 +mem-lang-workspace +rejected +authority_loser +0\.332836/m);
  });

  it("select-memory and plan-prompt answer the same JSON on any terminal (--json unchanged)", () => {
    writeFileSync(join(dir, "select.json"), JSON.stringify(selectRequest));
    writeFileSync(join(dir, "plan.json"), JSON.stringify(planRequest));
    for (const verb of ["select-memory", "plan-prompt"]) {
      const input = join(dir, verb === "plan-prompt" ? "plan.json" : "select.json");
      const piped = runCli([verb, "--input", input]).stdout;
      expect(onTerminal(60, [verb, "--input", input])).toBe(piped);
    }
    // The same JSON but for the manifest's wall-clock timings.
    const parsed = (text: string) => {
      const j = JSON.parse(text);
      delete j.manifest.timings;
      return j;
    };
    const piped = parsed(runCli(["demo", "--json"]).stdout);
    expect(parsed(onTerminal(60, ["demo", "--json"]))).toEqual(piped);
    expect(piped.prompt).toContain("## Constraints");
  });
});

describe("piped output", () => {
  it("fits 80 columns by default and COLUMNS when set; --wide prints every cell whole", () => {
    const piped = runCli(["demo"], { env: { COLUMNS: "" } }).stdout;
    expect(tooWide(piped, 80)).toEqual([]);
    const at120 = runCli(["demo"], { env: { COLUMNS: "120" } }).stdout;
    expect(tooWide(at120, 120)).toEqual([]);
    expect(tooWide(at120, 100).length).toBeGreaterThan(0);
    const wide = runCli(["demo", "--wide"], { env: { COLUMNS: "60" } }).stdout;
    expect(wide).toMatch(
      /^instructions +session +included +fits_budget +686 +142 +\S+ +AGENTS\.md#\S+ docs\/review-checklist\.md#\S+ services\/billing\/AGENTS\.md#\S+ services\/billing\/CLAUDE\.local\.md#\S+ +fits: prompt at 1309 chars of 6000$/m,
    );
    expect(wide).toMatch(/^- \[doc:review-2026-09 chunk:c7\] Correction: .{100,}$/m);
  });
});
