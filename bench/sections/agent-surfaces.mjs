/**
 * Section `agent-surfaces`: one cost, any surface (issue 34 item 3). The agent-study's
 * sessions (bench/lib/agent-session.mjs, 60 turns a seed) are built request by request
 * through four surfaces, at a 200k and a 64k context window:
 *
 * - library: `planAgentRequest` (the one function behind `assembleRequest`) with the
 *   system side `planPrompt({ segments })`;
 * - http: `POST /v1/request` of a real `promptctx serve` (child process, 127.0.0.1, a free
 *   port), with the same messages as JSON and `system: { segments }`;
 * - cli: `promptctx request --jsonl` (one child process per seed and window), the same JSON
 *   one request a line;
 * - middleware: the AI SDK middleware (`promptctxMiddleware`, stateless) given the
 *   conversation as the AI SDK prompt `generateText` passes (`toAiSdkMessages`); its
 *   prompt is compared with the library's `ai-sdk-anthropic` body (system messages, then
 *   messages) of the same neutral messages, as test/agent/surfaces-bytes.test.ts does.
 *
 * The system side is the study's, as segments (what `POST /v1/request` takes; the study's
 * own promptctx loop assembles inline sources, which cannot travel as JSON): the
 * instructions and the red lines (static tier) and the turn's recalled memory, KB and
 * clock (dynamic tier), the texts the hand-built loop sends.
 *
 * Judged: every body byte-equal to the library's (`JSON.stringify`), per surface and
 * window, and the library's `anthropic` and `ai-sdk-anthropic` conversation plans equal. The cost and facts figures (cache simulator as in `agent-study`) are printed for
 * the library's, the HTTP and the CLI bodies; the middleware's prompt is an AI SDK prompt, not an
 * Anthropic body, so its figures are the library's by construction when its prompt is
 * byte-equal and the library's `anthropic` and `ai-sdk-anthropic` plans are equal (two
 * renderings of one plan).
 *
 * Seeds: `--seed 1,2` (or `AGENT_SURFACES_SEEDS=1,2`); default 1, 2, 3.
 * Turns: `AGENT_SURFACES_TURNS` (default 60).
 */
import { spawnSync } from "node:child_process";
import { createHash } from "node:crypto";
import { fileURLToPath } from "node:url";
import { createMeter, MODEL, perTurnText, systemText } from "../lib/agent-loops.mjs";
import { makeAgentSession, sessionRequests } from "../lib/agent-session.mjs";
import { importDist } from "../lib/modules.mjs";
import { heading, int, judge, ratio, seedsOf, table, targetTable } from "../lib/report.mjs";
import { startServe } from "../lib/serve-child.mjs";

export const meta = {
  name: "agent-surfaces",
  order: 37,
  title:
    "One cost, any surface: agent-study requests through the library, POST /v1/request, promptctx request and the AI SDK middleware",
};

const BIN = fileURLToPath(new URL("../../bin/promptctx.js", import.meta.url));
const WINDOWS = [200_000, 64_000];
const DEFAULT_SEEDS = [1, 2, 3];
const pct = (x) => `${(x * 100).toFixed(1)} %`;

/**
 * The study's system side of one turn as a `/v1/plan-prompt` request: the same object is
 * planned by the library and sent as `system`. `budgetChars: null` because the window's
 * token budget is the limit here (the plan-prompt default, 12,000 chars, would drop the
 * per-turn context behind the 9,000-char instructions — on every surface alike).
 */
function systemOf(session, turn) {
  return {
    budgetChars: null,
    segments: [
      { name: "system", content: systemText(session), cacheTier: "static", required: true },
      { name: "context", content: perTurnText(session, turn), cacheTier: "dynamic" },
    ],
  };
}

async function postRequest(base, body) {
  const res = await fetch(`${base}/v1/request`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify(body),
  });
  const text = await res.text();
  if (res.status !== 200) throw new Error(`POST /v1/request: ${res.status} ${text.slice(0, 500)}`);
  return JSON.parse(text);
}

const digest = (text) => createHash("sha256").update(text).digest("hex");

/** `promptctx request --jsonl` over `lines` (one child process); its answers, in order. */
function runCli(lines) {
  const out = spawnSync(process.execPath, [BIN, "request", "--jsonl"], {
    input: `${lines.join("\n")}\n`,
    encoding: "utf8",
    maxBuffer: 1 << 30,
  });
  if (out.status !== 0) {
    throw new Error(`promptctx request --jsonl exited ${out.status}: ${out.stderr.slice(0, 500)}`);
  }
  const answers = out.stdout
    .split("\n")
    .filter((l) => l !== "")
    .map((l) => JSON.parse(l));
  if (answers.length !== lines.length || answers.some((a) => a.body === undefined)) {
    const bad = answers.find((a) => a.body === undefined);
    throw new Error(
      `promptctx request --jsonl: ${answers.length} answers to ${lines.length} requests${bad ? `, e.g. ${JSON.stringify(bad).slice(0, 300)}` : ""}`,
    );
  }
  return answers;
}

/** The wrapped model the middleware sees (only its provider and id are read). */
const AI_MODEL = {
  specificationVersion: "v3",
  provider: "anthropic.messages",
  modelId: MODEL,
  supportedUrls: {},
};

/** One seed at one window: every request through the four surfaces, bodies compared. */
async function runWindow(pc, base, session, window) {
  let system = null;
  const middleware = pc.promptctxMiddleware({
    system: () => pc.planPrompt(system),
    contextWindow: window,
    providerMetadata: false,
  });
  const lib = createMeter(pc, "library", window);
  const http = createMeter(pc, "http", window);
  const r = { requests: 0, http: 0, cli: 0, middleware: 0, samePlan: 0, firstDiff: {} };
  // `promptctx request --jsonl` runs once over all of them: its lines and the library's
  // body digests, in order.
  const lines = [];
  const wants = [];
  const reqs = [];
  for (const req of sessionRequests(session)) {
    system = systemOf(session, req.turn);
    const plan = (provider, messages) =>
      pc.planAgentRequest({
        provider,
        model: MODEL,
        system: pc.planPrompt(system),
        messages,
        contextWindow: window,
      });
    const want = plan("anthropic", req.messages);
    r.requests++;
    lib.add(req, want.body, want.budget.responseReserve);

    const json = {
      provider: "anthropic",
      model: MODEL,
      messages: req.messages,
      system,
      contextWindow: window,
    };
    const answer = await postRequest(base, json);
    lines.push(JSON.stringify(json));
    wants.push(digest(JSON.stringify(want.body)));
    reqs.push(req);
    if (JSON.stringify(answer.body) === JSON.stringify(want.body)) r.http++;
    else r.firstDiff.http ??= r.requests;
    http.add(req, answer.body, answer.budget.responseReserve);

    const prompt = pc.toAiSdkMessages(req.messages);
    const out = await middleware.transformParams({
      type: "generate",
      params: { prompt },
      model: AI_MODEL,
    });
    const aiPlan = plan("ai-sdk-anthropic", req.messages);
    if (JSON.stringify(aiPlan.conversation) === JSON.stringify(want.conversation)) r.samePlan++;
    const ai = aiPlan.body;
    const sys = Array.isArray(ai.system) ? ai.system : [];
    if (JSON.stringify(out.prompt) === JSON.stringify([...sys, ...ai.messages])) r.middleware++;
    else r.firstDiff.middleware ??= r.requests;
  }
  const cli = createMeter(pc, "cli", window);
  runCli(lines).forEach((answer, i) => {
    if (digest(JSON.stringify(answer.body)) === wants[i]) r.cli++;
    else r.firstDiff.cli ??= i + 1;
    cli.add(reqs[i], answer.body, answer.budget.responseReserve);
  });
  return { ...r, library: lib.done(), httpFigures: http.done(), cliFigures: cli.done() };
}

function figuresRow(name, m, base) {
  return [
    name,
    int(m.requests),
    `${(m.input / 1e6).toFixed(2)} M`,
    ratio(m.cost / base.cost),
    pct(m.readShare),
    String(m.breaks),
    String(m.overWindow),
    `${m.factsKept}/${m.needs} (${pct(m.factShare)})`,
  ];
}

export async function run(ctx) {
  heading(meta.title);
  const pc = await importDist("index.js");
  const seeds = seedsOf(ctx, "AGENT_SURFACES_SEEDS", DEFAULT_SEEDS);
  const turns = Number(process.env.AGENT_SURFACES_TURNS ?? 60);
  if (!Number.isInteger(turns) || turns < 1)
    throw new Error("AGENT_SURFACES_TURNS needs an integer ≥ 1");
  const server = startServe(["--port", "0", "--no-log", "--no-mcp"]);
  const base = await server.url;
  console.log(
    `  promptctx serve (child process) at ${base}; ${turns}-turn sessions, seeds ${seeds.join(", ")}`,
  );
  console.log(
    "  system side: the study's instructions, red lines and per-turn context as { segments } (not agent-study's inline sources: its figures differ)",
  );
  const totals = Object.fromEntries(
    WINDOWS.map((w) => [
      w,
      { requests: 0, http: 0, middleware: 0, cli: 0, samePlan: 0, figuresEqual: 0 },
    ]),
  );
  const bySeed = [];
  try {
    for (const seed of seeds) {
      const session = makeAgentSession({
        seed,
        turns,
        toolResults: Math.round((145 * turns) / 100),
      });
      const entry = { seed, windows: {} };
      for (const w of WINDOWS) {
        const r = await runWindow(pc, base, session, w);
        const asLibrary = (m) => JSON.stringify({ ...m, loop: "library" });
        const same =
          asLibrary(r.httpFigures) === asLibrary(r.library) &&
          asLibrary(r.cliFigures) === asLibrary(r.library);
        const t = totals[w];
        t.requests += r.requests;
        t.http += r.http;
        t.middleware += r.middleware;
        t.cli += r.cli;
        t.samePlan += r.samePlan;
        if (same) t.figuresEqual++;
        console.log("");
        console.log(
          `  seed ${seed}, window ${int(w)} tokens: ${r.requests} requests; the library's anthropic and ai-sdk-anthropic conversation plans equal on ${r.samePlan}/${r.requests}`,
        );
        table([
          [
            "surface",
            "requests",
            "input",
            "cost vs library",
            "read share",
            "breaks",
            "over",
            "facts",
          ],
          figuresRow("library", r.library, r.library),
          figuresRow("POST /v1/request", r.httpFigures, r.library),
          figuresRow("promptctx request", r.cliFigures, r.library),
        ]);
        table([
          ["surface", "bodies byte-equal to the library's", "first differing request"],
          ["POST /v1/request", `${r.http}/${r.requests}`, String(r.firstDiff.http ?? "—")],
          ["promptctx request", `${r.cli}/${r.requests}`, String(r.firstDiff.cli ?? "—")],
          [
            "AI SDK middleware",
            `${r.middleware}/${r.requests}`,
            String(r.firstDiff.middleware ?? "—"),
          ],
        ]);
        entry.windows[w] = {
          requests: r.requests,
          httpEqual: r.http,
          cliEqual: r.cli,
          middlewareEqual: r.middleware,
          samePlan: r.samePlan,
          figuresEqual: same,
          library: r.library,
        };
      }
      bySeed.push(entry);
    }
  } finally {
    await server.stop();
  }
  console.log("");
  console.log(
    "  The cost and facts figures of a surface whose bodies are all byte-equal are the library's by construction (the same bytes reach the cache).",
  );
  const rows = [];
  for (const w of WINDOWS) {
    const t = totals[w];
    for (const [name, key] of [
      ["POST /v1/request", "http"],
      ["promptctx request", "cli"],
      ["AI SDK middleware", "middleware"],
      ["ai-sdk-anthropic", "samePlan"],
    ]) {
      rows.push(
        judge(meta.name, {
          check:
            key === "samePlan"
              ? `${w / 1000}k library ${name} plan = anthropic plan`
              : `${w / 1000}k ${name} bodies byte-equal`,
          figure: t.requests > 0 ? t[key] / t.requests : 0,
          shown: `${t[key]}/${t.requests}`,
          op: ">=",
          limit: 1,
          shownLimit: `${t.requests}/${t.requests}`,
          baseline: "library",
        }),
      );
    }
  }
  targetTable(rows);
  return { turns, seeds: bySeed };
}
