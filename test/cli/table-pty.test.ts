/**
 * Every verb's people output fits the terminal, measured through a real pseudo-terminal
 * (util-linux `script`): at 60, 80, 100 and 120 columns no line is wider than the
 * terminal; piped, the width is COLUMNS or 80; `--wide` prints full text and `--json` is
 * the same bytes whatever the terminal. The JSON verbs print a report on a terminal and
 * their JSON, byte for byte the library's, when piped or with `--json`. Runs the built CLI
 * (`npm run build` first).
 */
import { spawnSync } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { assembleContext } from "../../src/assemble/index.js";
import { planConversation } from "../../src/conversation/index.js";
import { selectMemoryContext } from "../../src/memory/index.js";
import { planPrompt } from "../../src/plan/index.js";
import { displayWidth } from "../../src/text/index.js";
import { REFERENCE_PROMPT, referenceRequest } from "../fixtures/inline-context.js";
import { conversationRequest, planRequest, selectRequest } from "../fixtures/requests.js";
import { BIN, runCli } from "./run-cli.js";

const ROOT = fileURLToPath(new URL("../../", import.meta.url));
const WIDTHS = [60, 80, 100, 120] as const;
const NOW = "2026-11-30T09:00:00Z";
const SGR = new RegExp(`${String.fromCharCode(27)}\\[[0-9;]*m`, "g");

let dir: string;
let verbs: Record<string, string>;

const quote = (s: string) => `'${s.replaceAll("'", "'\\''")}'`;

/** Runs `promptctx ARGS [< stdin]` with stdout on a pseudo-terminal `cols` wide. */
function onTerminal(cols: number, args: string[], stdin?: string, codes = [0, 4]): string {
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
  expect(codes, `${args.join(" ")}: ${r.stdout.slice(0, 400)}`).toContain(r.status);
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

  it("select-memory and plan-prompt answer the same JSON on any terminal with --json", () => {
    writeFileSync(join(dir, "select.json"), JSON.stringify(selectRequest));
    writeFileSync(join(dir, "plan.json"), JSON.stringify(planRequest));
    for (const verb of ["select-memory", "plan-prompt"]) {
      const input = join(dir, verb === "plan-prompt" ? "plan.json" : "select.json");
      const piped = runCli([verb, "--input", input]).stdout;
      expect(onTerminal(60, [verb, "--json", "--input", input])).toBe(piped);
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

// The JSON verbs' requests (written once) and the library's answer to each, as the JSON line
// the CLI printed before it had a report: the bytes scripts and the HTTP parity tests read.
const JSON_VERBS = {
  "select-memory": {
    request: () => selectRequest,
    library: async () => selectMemoryContext(selectRequest as never),
  },
  "plan-prompt": { request: () => planRequest, library: async () => planPrompt(planRequest) },
  "plan-conversation": {
    request: () => conversationRequest,
    library: async () => planConversation(conversationRequest as never),
  },
  "assemble-context": {
    request: referenceRequest,
    library: async () => {
      const { prompt, manifest, memoryPlan, segmentPlan } = await assembleContext(
        referenceRequest(),
      );
      return { prompt, manifest, memoryPlan, segmentPlan };
    },
  },
} as const;
type JsonVerbName = keyof typeof JSON_VERBS;
const jsonVerbNames = Object.keys(JSON_VERBS) as JsonVerbName[];
const requestFile = (verb: JsonVerbName) => join(dir, `${verb}.request.json`);

// Every row's key columns (name, status, reason, numbers) whole on one line, at any width.
const KEY_ROWS: Record<JsonVerbName, RegExp[]> = {
  "select-memory": [
    /^1 +m2 +rejected +scope_mismatch +(?:user_default +)?0\.990000 +195 +68\b/m,
    /^2 +m1 +selected +selected +(?:user_default +)?0\.900000 +193 +66\b/m,
  ],
  "plan-prompt": [
    /^rules +0 +50 +(?:yes +)?included +required +8\b/m,
    /^extra +5 +50 +dropped +char_budget_exceeded +200\b/m,
  ],
  "plan-conversation": [
    /^u1 +user +1 +dropped +history_window +10\b/m,
    /^t2 +tool +2 +dropped +orphan_removed +7\b/m,
    /^u3 +user +3 +kept +required +8\b/m,
  ],
  "assemble-context": [
    /^constraints +static +(?:yes +)?included +required +42 +32\b/m,
    /^task_memory +dynamic +inactive +inactive\b/m,
    /^recall_memory +dynamic +included +fits_budget +38 +31\b/m,
    /^1 +m1 +selected +selected +(?:user_default +)?0\.820000 +31 +25\b/m,
    /^profile +4 +96 +included +fits_budget +32\b/m,
  ],
};

// The text each report ends with (the prompt or the memory block), whole once wrapping is undone.
const REPORT_TEXT: Record<JsonVerbName, () => Promise<string>> = {
  "select-memory": async () => selectMemoryContext(selectRequest as never).context,
  "plan-prompt": async () => planPrompt(planRequest).prompt,
  "plan-conversation": async () => "Totals — 3 of 8 messages kept",
  "assemble-context": async () => REFERENCE_PROMPT,
};

// The manifest's wall-clock timings are the only bytes that differ between two runs.
const untimed = (json: string) => json.replace(/"(\w*[mM]s)":[-+.\deE]+/g, '"$1":0');
const words = (text: string) => text.replace(/\s+/g, " ").trim();

describe("JSON verbs: a report on a terminal, JSON otherwise", () => {
  beforeAll(() => {
    for (const verb of jsonVerbNames)
      writeFileSync(requestFile(verb), JSON.stringify(JSON_VERBS[verb].request()));
  });

  for (const cols of WIDTHS) {
    it(`at ${cols} columns every report fits, key columns whole, its text whole`, async () => {
      for (const verb of jsonVerbNames) {
        const out = onTerminal(cols, [verb, "--input", requestFile(verb)]);
        expect(out.startsWith("{"), verb).toBe(false);
        expect(tooWide(out, cols), `${verb} at ${cols}`).toEqual([]);
        for (const row of KEY_ROWS[verb]) expect(out, `${verb} at ${cols}`).toMatch(row);
        expect(words(out), verb).toContain(words(await REPORT_TEXT[verb]()));
        expect(out, verb).not.toContain("…");
      }
    }, 120_000);
  }

  it("the width is the terminal's: the report at 60 columns differs from the one at 120", () => {
    const args = ["assemble-context", "--input", requestFile("assemble-context")];
    const narrow = onTerminal(60, args);
    const wide = onTerminal(120, args);
    expect(narrow).not.toBe(wide);
    expect(Math.max(...wide.split("\n").map(displayWidth))).toBeGreaterThan(100);
  });

  it("piped, and with --json on a terminal, the JSON line is the library's, byte for byte", async () => {
    for (const verb of jsonVerbNames) {
      const expected = `${JSON.stringify(await JSON_VERBS[verb].library())}\n`;
      const piped = runCli([verb, "--input", requestFile(verb)]);
      expect(piped.code, piped.stderr).toBe(0);
      expect(untimed(piped.stdout), verb).toBe(untimed(expected));
      const json = runCli([verb, "--json", "--input", requestFile(verb)]).stdout;
      expect(untimed(json), verb).toBe(untimed(expected));
      const terminal = onTerminal(80, [verb, "--json", "--input", requestFile(verb)]);
      expect(untimed(terminal), verb).toBe(untimed(expected));
      // Only the timings were normalised: the rest of the line is the same bytes.
      if (verb !== "assemble-context") expect(piped.stdout).toBe(expected);
    }
  });

  it("--jsonl batches are JSON lines on a terminal too", () => {
    const file = join(dir, "batch.jsonl");
    writeFileSync(file, `${JSON.stringify(selectRequest)}\n{"userScope":1}\n`);
    const piped = runCli(["select-memory", "--jsonl", "--input", file]).stdout;
    expect(piped.split("\n")).toHaveLength(3);
    expect(onTerminal(60, ["select-memory", "--jsonl", "--input", file])).toBe(
      `${piped}promptctx select-memory: 1 of 2 lines failed\n`,
    );
  });

  it("--wide prints the report at full width, piped or on a terminal", () => {
    const args = ["assemble-context", "--wide", "--input", requestFile("assemble-context")];
    const piped = runCli(args, { env: { COLUMNS: "60" } }).stdout;
    expect(piped).toMatch(
      /^constraints +static +yes +included +required +42 +32 +\S+ +constraints:c1 constraints:c2 +required: reserved before optional segments$/m,
    );
    expect(tooWide(piped, 100).length).toBeGreaterThan(0);
    expect(onTerminal(60, args)).toBe(piped);
    const conversation = runCli([
      "plan-conversation",
      "--wide",
      "--input",
      requestFile("plan-conversation"),
    ]);
    expect(conversation.stdout).toMatch(
      /^t2 +tool +2 +dropped +orphan_removed +7 +results for call c9 do not directly follow the message that made the call$/m,
    );
    // --json wins over --wide.
    const json = runCli(["plan-prompt", "--wide", "--json", "--input", requestFile("plan-prompt")]);
    expect(json.stdout).toBe(`${JSON.stringify(planPrompt(planRequest))}\n`);
  });

  it("errors are unchanged on a terminal: the error object, the stderr line, exit 2", () => {
    const bad = join(dir, "bad.json");
    writeFileSync(bad, JSON.stringify({ ...planRequest, segments: [{}] }));
    const piped = runCli(["plan-prompt", "--input", bad]);
    expect(piped.code).toBe(2);
    const out = onTerminal(80, ["plan-prompt", "--input", bad], undefined, [2]);
    expect(out).toContain(piped.stdout);
    expect(out).toContain(piped.stderr);
  });
});
