/**
 * Shared by the inspector's browser tests: a recording to show (the committed example
 * session plus one turn with a conversation plan), the built CLI's `inspect` running on
 * it, and Debian's chromium driven by playwright-core.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { createHash } from "node:crypto";
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { type Browser, chromium, type Page } from "playwright-core";
import { type MessageInput, planConversation } from "../../src/conversation/index.js";
import {
  type AssemblyResponse,
  isErrorResponse,
  parseRecording,
} from "../../src/workspace/index.js";
import { BIN } from "../cli/run-cli.js";

export const ROOT = fileURLToPath(new URL("../../", import.meta.url));
export const FIXTURE = join(ROOT, "test/fixtures/recordings/example.jsonl");
/** Screenshots of each view go here (gitignored). */
export const OUTPUT = join(ROOT, "test-output");

export const CHROMIUM = {
  executablePath: "/usr/bin/chromium",
  args: ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking"],
};

export const sha16 = (text: string): string =>
  createHash("sha256").update(text, "utf8").digest("hex").slice(0, 16);

/** The conversation of the extra turn: a tool call and its result, two user turns. */
const MESSAGES: MessageInput[] = [
  {
    id: "u1",
    role: "user",
    content: [{ type: "text", text: "add a currency column to invoices" }],
  },
  {
    id: "a1",
    role: "assistant",
    content: [
      { type: "text", text: "I will read the billing service's instructions first." },
      {
        type: "tool_call",
        callId: "c1",
        name: "read_file",
        input: { path: "services/billing/AGENTS.md" },
      },
    ],
  },
  {
    id: "t1",
    role: "tool",
    content: [
      {
        type: "tool_result",
        callId: "c1",
        output: "# billing service\n- Money is an integer number of cents.\n".repeat(6),
      },
    ],
  },
  {
    id: "a2",
    role: "assistant",
    content: [{ type: "text", text: "Added `currency char(3) not null default 'EUR'`." }],
  },
  { id: "u2", role: "user", content: [{ type: "text", text: "now write the migration for it" }] },
  {
    id: "a3",
    role: "assistant",
    content: [
      {
        type: "tool_call",
        callId: "c2",
        name: "write_file",
        input: { path: "db/migrations/0042_currency.sql" },
      },
    ],
  },
  {
    id: "t2",
    role: "tool",
    content: [{ type: "tool_result", callId: "c2", output: "ok: 212 bytes written" }],
  },
  { id: "u3", role: "user", content: [{ type: "text", text: "and the release note" }] },
];

/**
 * How a hybrid recall found the added turn's first two memories (the example session recalled by
 * words only): one by both paths, one by meaning alone.
 */
export const MATCHES = [
  {
    path: "both",
    lexicalRank: 2,
    semanticRank: 1,
    similarity: 0.612345,
    semantic: 0.58,
    fused: 0.7,
    rrf: 0.032522,
  },
  {
    path: "semantic",
    lexicalRank: null,
    semanticRank: 2,
    similarity: 0.55,
    semantic: 0.51,
    fused: 0.51,
    rrf: 0.016129,
  },
] as const;

/**
 * Writes the recording the browser tests load: the example session, then one
 * `assemble-context` turn (a kind this build does not rerun) carrying a conversation plan
 * next to turn 6's assembly, its first two memory decisions with a hybrid recall's
 * `match` ({@link MATCHES}). Returns its path and lines.
 */
export function writeSession(dir: string): {
  file: string;
  lines: ReturnType<typeof parseRecording>;
} {
  const text = readFileSync(FIXTURE, "utf8");
  const last = parseRecording(text)[5];
  if (last === undefined || isErrorResponse(last.response)) throw new Error("fixture line 6");
  const conversationPlan = planConversation({
    messages: MESSAGES,
    budgetTokens: 90,
    tokenizer: "estimate",
  });
  const line = {
    recordVersion: 1,
    at: "2026-11-30T09:40:00.500Z",
    kind: "assemble-context",
    request: { query: "and the release note", now: "2026-11-30T09:40:00Z" },
    response: { ...last.response, conversationPlan, memoryPlan: withMatches(last.response) },
  };
  const file = join(dir, "session.jsonl");
  writeFileSync(file, `${text}${JSON.stringify(line)}\n`);
  return { file, lines: parseRecording(readFileSync(file, "utf8"), { anyKind: true }) };
}

/** The response's memory plan, its first decisions carrying {@link MATCHES}. */
function withMatches(r: AssemblyResponse): AssemblyResponse["memoryPlan"] {
  const plan = r.memoryPlan;
  if (plan === null || plan.decisions.length < MATCHES.length) throw new Error("fixture line 6");
  const decisions = plan.decisions.map((d, i) =>
    i < MATCHES.length ? { ...d, match: { ...MATCHES[i]! } } : d,
  );
  return { ...plan, decisions };
}

/** The assembly of turn `n` (from 1). */
export function assemblyAt(lines: ReturnType<typeof parseRecording>, n: number): AssemblyResponse {
  const r = lines[n - 1]?.response;
  if (r === undefined || isErrorResponse(r)) throw new Error(`turn ${n} is not an assembly`);
  return r;
}

/** `promptctx inspect FILE --port 0` (the built CLI), resolved once it prints its URL. */
export function startInspect(file: string): Promise<{ child: ChildProcess; url: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [BIN, "inspect", file, "--port", "0"], {
      stdio: ["ignore", "pipe", "pipe"],
    });
    let out = "";
    let err = "";
    child.stderr?.setEncoding("utf8").on("data", (s: string) => (err += s));
    child.stdout?.setEncoding("utf8").on("data", (s: string) => {
      out += s;
      const m = /inspector on (http:\/\/127\.0\.0\.1:\d+\/inspect)\n/.exec(out);
      if (m?.[1] !== undefined) resolve({ child, url: m[1] });
    });
    child.on("exit", (code) => reject(new Error(`inspect exited ${code}: ${err}${out}`)));
  });
}

/** Stops a child started by {@link startInspect} and waits for it to end. */
export function stop(child: ChildProcess): Promise<void> {
  return new Promise((resolve) => {
    if (child.exitCode !== null) return resolve();
    child.removeAllListeners("exit");
    child.once("exit", () => resolve());
    child.kill("SIGTERM");
  });
}

/** Chromium, headless, and a page that records every URL it asks for. */
export async function openBrowser(): Promise<{
  browser: Browser;
  page: Page;
  requested: string[];
}> {
  const browser = await chromium.launch(CHROMIUM);
  const page = await browser.newPage({ viewport: { width: 1400, height: 900 } });
  const requested: string[] = [];
  page.on("request", (r) => requested.push(r.url()));
  return { browser, page, requested };
}

/** Writes `test-output/inspector-NAME.png`. */
export async function screenshot(page: Page, name: string): Promise<string> {
  mkdirSync(OUTPUT, { recursive: true });
  const path = join(OUTPUT, `inspector-${name}.png`);
  await page.screenshot({ path, fullPage: true });
  return path;
}
