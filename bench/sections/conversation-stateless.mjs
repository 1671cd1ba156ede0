/**
 * Section `conversation-stateless`: one warm stateless `planConversation` call — what
 * `/v1/plan-conversation`, `/v1/assemble`, `chat` and the JSON verbs make on every
 * request — at 11,500 messages, against `JSON.parse` of its own request body.
 *
 * Workload: the `conversation` section's seeded history (tool outputs of 20 to 20,000
 * o200k_base tokens, heavy-tailed) grown to 11,500 messages, planned under 100,000 tokens
 * with lowWaterRatio 0.7. Each run gets a fresh `JSON.parse` of the body (untimed), as a
 * server does per request, so no message object is seen twice; the o200k_base counter is
 * named in the body ("o200k_base"), as a new user names it: it resolves to the process's
 * shared memoizing counter (issue 34), so it is warm from the second call on. Variants, interleaved:
 * `JSON.parse` of the body; the call with `toolResultMaxTokens` 2,000 (truncation on);
 * the same call without truncation. Targets: truncation on ≤ 3× the parse and ≤ 2× the
 * call without truncation (medians, paired per round). Also shown, without a target: a
 * whole `planRequest` of the same history in a 200,000-token window with the agent
 * defaults (history dropped: the window planned, then planned again from its grid start
 * with the digest in place). Then the first call of a process: fresh `node` processes
 * (medians of several per variant, interleaved) parse the body and make one call (BPE
 * tables loaded and counter memo empty), against their own parse. The tokenizer is
 * named, so the call prices only what a window can reach (older decisions `counted:
 * false`): O(window) beyond the parse.
 */
import { spawnSync } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { hasGc, measure, pairedRatio, round3 } from "../lib/measure.mjs";
import { importDist } from "../lib/modules.mjs";
import { heading, int, judge, ms, ratio, table, targetTable } from "../lib/report.mjs";
import { makeTurns } from "./conversation.mjs";

export const meta = {
  name: "conversation-stateless",
  order: 36,
  title: "Stateless planConversation at 11,500 messages vs JSON.parse of its body",
};

const MESSAGES = 11_500;
const BUDGET = 100_000;
const TOOL_RESULT_MAX_TOKENS = 2_000;
const MAX_VS_PARSE = 3;
const MAX_VS_PLAIN = 2;

function bodyOf(messages, truncate) {
  return JSON.stringify({
    messages,
    budgetTokens: BUDGET,
    tokenizer: "o200k_base",
    policy: {
      lowWaterRatio: 0.7,
      ...(truncate ? { toolResultMaxTokens: TOOL_RESULT_MAX_TOKENS } : {}),
    },
  });
}

export async function run(ctx) {
  heading(meta.title);
  const conv = await importDist("conversation/index.js");
  const agent = await importDist("agent/index.js");
  const { planPrompt } = await importDist("plan/index.js");
  const messages = makeTurns(0xc0de, MESSAGES).flatMap((t) => [...t.ask, t.answer]);
  const truncated = bodyOf(messages, true);
  const plain = bodyOf(messages, false);
  const call = (body) => {
    const request = JSON.parse(body);
    // The name as sent: planConversation resolves it to the shared counter.
    return () => conv.planConversation(request);
  };
  console.log(
    `  ${int(messages.length)} messages, body ${(truncated.length / 1e6).toFixed(1)} MB; budget ${int(BUDGET)} o200k_base tokens; toolResultMaxTokens ${int(TOOL_RESULT_MAX_TOKENS)}`,
  );
  const system = planPrompt({
    budgetChars: null,
    segments: [{ name: "rules", content: "Be careful. ".repeat(300), cacheTier: "static" }],
  });
  const defaults = agent.agentDefaults(200_000);
  const request = () => {
    const { messages: history } = JSON.parse(truncated);
    return () =>
      agent.planRequest({
        provider: "anthropic",
        model: "claude-sonnet-4-6",
        system,
        messages: history,
        contextWindow: 200_000,
        tokenizer: "o200k_base",
        responseReserve: defaults.responseReserve,
        policy: { ...defaults.policy, toolResultMaxTokens: TOOL_RESULT_MAX_TOKENS },
        windowStepTokens: defaults.windowStepTokens,
        digestTokens: defaults.digestTokens,
      });
  };
  // Warm: the server's counter and caches have seen this conversation once.
  call(truncated)();
  call(plain)();
  request()();
  const runs = Math.max(ctx.runs, 5);
  const { timings } = await measure(
    {
      parse: { run: () => JSON.parse(truncated) },
      truncated: { setup: () => call(truncated), run: (f) => f() },
      plain: { setup: () => call(plain), run: (f) => f() },
      request: { setup: request, run: (f) => f() },
    },
    { runs, warmup: ctx.warmup, forceGc: hasGc },
  );
  const [p, t, n, q] = [timings.parse, timings.truncated, timings.plain, timings.request];
  const vsParse = pairedRatio(t.samplesMs, p.samplesMs);
  const vsPlain = pairedRatio(t.samplesMs, n.samplesMs);
  table([
    ["variant", "median", "min", "max"],
    ["JSON.parse of the body", ms(p.medianMs), ms(p.minMs), ms(p.maxMs)],
    ["planConversation, truncation on", ms(t.medianMs), ms(t.minMs), ms(t.maxMs)],
    ["planConversation, no truncation", ms(n.medianMs), ms(n.minMs), ms(n.maxMs)],
    ["planRequest, 200k window, defaults", ms(q.medianMs), ms(q.minMs), ms(q.maxMs)],
  ]);
  const kept = t.result.messages.length;
  const cut = t.result.decisions.filter((d) =>
    d.transforms.some((x) => x.kind === "tool_result_truncated"),
  ).length;
  console.log(`  the plan keeps ${int(kept)} messages; ${int(cut)} decisions record a truncation`);
  const sent = q.result.conversation;
  console.log(
    `  planRequest keeps ${int(sent.messages.length)} messages from ${sent.firstKeptId} (${int(sent.droppedMessageIds.length)} dropped)`,
  );
  const first = firstCalls(truncated, plain, Math.max(3, Math.min(ctx.runs, 5)));
  table([
    ["first call of a process", "JSON.parse", "call", "call / parse"],
    ...first.map((f) => [f.variant, ms(f.parseMs), ms(f.callMs), ratio(f.callVsParse)]),
  ]);
  const firstVsParse = first[0].callVsParse;
  const firstVsPlain = first[0].callMs / first[1].callMs;
  targetTable([
    judge(meta.name, {
      check: "first call of a process: truncation on / JSON.parse",
      figure: firstVsParse,
      shown: ratio(firstVsParse),
      op: "<=",
      limit: MAX_VS_PARSE,
      shownLimit: `${MAX_VS_PARSE}×`,
      baseline: `parse ${ms(first[0].parseMs)}`,
    }),
    judge(meta.name, {
      check: "first call of a process: truncation on / no truncation",
      figure: firstVsPlain,
      shown: ratio(firstVsPlain),
      op: "<=",
      limit: MAX_VS_PLAIN,
      shownLimit: `${MAX_VS_PLAIN}×`,
      baseline: `no truncation ${ms(first[1].callMs)}`,
    }),
    judge(meta.name, {
      check: "truncation on / JSON.parse (paired)",
      figure: vsParse,
      shown: ratio(vsParse),
      op: "<=",
      limit: MAX_VS_PARSE,
      shownLimit: `${MAX_VS_PARSE}×`,
      baseline: `parse ${ms(p.medianMs)}`,
    }),
    judge(meta.name, {
      check: "truncation on / no truncation (paired)",
      figure: vsPlain,
      shown: ratio(vsPlain),
      op: "<=",
      limit: MAX_VS_PLAIN,
      shownLimit: `${MAX_VS_PLAIN}×`,
      baseline: `no truncation ${ms(n.medianMs)}`,
    }),
  ]);
  return {
    messages: messages.length,
    bodyBytes: truncated.length,
    budget: BUDGET,
    toolResultMaxTokens: TOOL_RESULT_MAX_TOKENS,
    parse: p,
    truncated: { ...t, result: undefined },
    plain: { ...n, result: undefined },
    request: { ...q, result: undefined },
    firstCalls: first,
    firstVsParse: round3(firstVsParse),
    firstVsPlain: round3(firstVsPlain),
    truncatedVsParse: round3(vsParse),
    truncatedVsPlain: round3(vsPlain),
    pass: { vsParse: vsParse <= MAX_VS_PARSE, vsPlain: vsPlain <= MAX_VS_PLAIN },
  };
}

const FIRST_CALL = `
const [dist, file] = process.argv.slice(1);
const { readFileSync } = await import("node:fs");
const { pathToFileURL } = await import("node:url");
const conv = await import(pathToFileURL(dist + "conversation/index.js").href);
const body = readFileSync(file, "utf8");
let t = performance.now();
const request = JSON.parse(body);
const parseMs = performance.now() - t;
t = performance.now();
conv.planConversation(request);
const callMs = performance.now() - t;
process.stdout.write(JSON.stringify({ parseMs, callMs }));
`;

/**
 * Fresh `node` processes, `runs` per variant, interleaved: the first `planConversation` of
 * a process, with the tokenizer named in the body (tables loaded on this call, memo
 * empty). Medians of the parse and of the call (one process is one sample: a busy
 * machine makes a single one meaningless).
 */
function firstCalls(truncated, plain, runs) {
  const dir = mkdtempSync(join(tmpdir(), "promptctx-first-call-"));
  const dist = fileURLToPath(new URL("../../dist/", import.meta.url));
  const variants = [
    ["truncation on", truncated, join(dir, "truncated.json")],
    ["no truncation", plain, join(dir, "plain.json")],
  ];
  try {
    for (const [, body, file] of variants) writeFileSync(file, body);
    const samples = variants.map(() => []);
    for (let r = 0; r < runs; r++) {
      variants.forEach(([, , file], v) => {
        const out = spawnSync(
          process.execPath,
          ["--input-type=module", "-e", FIRST_CALL, dist, file],
          { encoding: "utf8", maxBuffer: 1 << 20 },
        );
        if (out.status !== 0) throw new Error(`first-call child failed: ${out.stderr}`);
        samples[v].push(JSON.parse(out.stdout));
      });
    }
    const median = (xs) => [...xs].sort((a, b) => a - b)[xs.length >> 1];
    return variants.map(([variant], v) => ({
      variant,
      runs,
      parseMs: median(samples[v].map((x) => x.parseMs)),
      callMs: median(samples[v].map((x) => x.callMs)),
      callVsParse: median(samples[v].map((x) => x.callMs / x.parseMs)),
    }));
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
