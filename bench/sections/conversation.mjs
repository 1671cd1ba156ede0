/**
 * Section `conversation`: the conversation planner (docs/conversation.md) in an agent loop, against
 * LangChain's `trimMessages` (@langchain/core) and the AI SDK's `pruneMessages` (`ai`)
 * on the same histories and budget.
 *
 * Workload (seeded): turns of a user ask, 0–2 tool exchanges (one or two parallel calls,
 * one tool message per result, outputs of 20 to 20,000 o200k_base tokens, heavy-tailed)
 * and an answer, until 10,000 messages (about a third in tool exchanges); prose, code and
 * CJK. Each turn is planned once, after its tool results and before its answer, under
 * 100,000 tokens, as the conversation grows. Every contender sees the same message
 * objects every turn (built once per format, untimed) and has its own o200k_base counter
 * (memoized by content, as ours), reused for the whole loop; messages cost
 * 4 + their parts' tokens for everyone.
 *
 * - promptctx: one `createConversationPlanner()` for the loop; policy lowWaterRatio 0.7,
 *   anchor = the previous `firstKeptId`, no transforms (as the peers, which have none).
 *   For reference, `planConversation` (stateless: validates and lays out every message
 *   every turn) on the sampled turns.
 * - AI SDK: `pruneMessages({toolCalls: "before-last-40-messages", emptyMessages:
 *   "remove"})`, then the longest suffix that fits the budget (counted from the end).
 * - LangChain: `trimMessages({strategy: "last", startOn: "human", maxTokens})` with a
 *   token counter that sums per-message counts (memoized per message object). Its search
 *   counts one more dropped message per step (quadratic), so it runs on a sample of
 *   turns only.
 *
 * Timing: every turn of the loop for promptctx and the AI SDK, interleaved in
 * alternating order, steady state (no forced GC between turns); figures are medians
 * over turns. Ratios are judged on the last 60 turns (about 10,000 messages), paired per
 * turn. Also reported: orphans (a tool result without its call or a call without its
 * result) in any output, and the fraction of turns after the first overflow whose
 * request does not start with the previous turn's request byte for byte (a provider's
 * prompt cache breaks there).
 */
import { performance } from "node:perf_hooks";
import { median, pairedRatio, round3 } from "../lib/measure.mjs";
import { importDist, peerVersion, requirePeer } from "../lib/modules.mjs";
import { cjkSentence, codeSnippet, createRng, sentence } from "../lib/prng.mjs";
import { heading, int, ms, ratio, table, verdict } from "../lib/report.mjs";

export const meta = {
  name: "conversation",
  order: 35,
  title:
    "Conversation planner (createConversationPlanner) vs LangChain trimMessages and AI SDK pruneMessages",
};

const MESSAGES = 10_000;
const BUDGET = 100_000;
const TOKENIZER = "o200k_base";
const SAMPLE_TURNS = 60;
const LANGCHAIN_TURNS = 4;
const TARGET_SPEEDUP = 10;
const MAX_PREFIX_CHANGES = 1 / 5;

/** Text of about `tokens` o200k tokens: lines of code, prose or CJK. */
function textOf(r, tokens) {
  const chars = tokens * 4;
  const lines = [];
  let n = 0;
  while (n < chars) {
    const kind = r.weighted({ code: 50, prose: 35, cjk: 15 });
    const line = kind === "code" ? codeSnippet(r) : kind === "prose" ? sentence(r) : cjkSentence(r);
    lines.push(line);
    n += line.length + 1;
  }
  return lines.join("\n");
}

function outputTokens(r) {
  const size = r.weighted({ small: 80, medium: 17, large: 3 });
  if (size === "small") return r.int(20, 300);
  if (size === "medium") return r.int(300, 3000);
  return r.int(3000, 20_000);
}

/** The turns of the workload, as neutral messages: `{ask: [...], answer}` per turn. */
export function makeTurns(seed = 0xc0de, messages = MESSAGES) {
  const r = createRng(seed);
  const turns = [];
  let count = 0;
  let k = 0;
  while (count < messages) {
    const t = turns.length;
    const ask = [
      {
        id: `u${t}`,
        role: "user",
        content: [
          { type: "text", text: r.chance(0.3) ? cjkSentence(r, 10, 60) : sentence(r, 8, 60) },
        ],
      },
    ];
    const exchanges = r.weighted({ 0: 60, 1: 30, 2: 10 });
    for (let e = 0; e < Number(exchanges); e++) {
      const calls = Array.from({ length: r.chance(0.2) ? 2 : 1 }, () => ({
        type: "tool_call",
        callId: `call_${k++}`,
        name: r.pick(["read_file", "grep", "run_tests", "search"]),
        input: { path: `src/${r.pick(["a", "b", "c"])}/${r.int(1, 999)}.ts`, limit: r.int(1, 500) },
      }));
      ask.push({ id: `a${t}_${e}`, role: "assistant", content: calls });
      for (const c of calls) {
        const output = textOf(r, outputTokens(r));
        const part = {
          type: "tool_result",
          callId: c.callId,
          output,
          ...(r.chance(0.05) ? { isError: true } : {}),
        };
        ask.push({ id: `t_${c.callId}`, role: "tool", content: [part] });
      }
    }
    const answer = {
      id: `r${t}`,
      role: "assistant",
      content: [{ type: "text", text: sentence(r, 10, 80) }],
    };
    turns.push({ ask, answer });
    count += ask.length + 1;
  }
  return turns;
}

// --- The peers' message formats (built once per message, untimed) -------------------

function toAiSdk(m, names) {
  if (m.role === "user") return { role: "user", content: m.content[0].text };
  if (m.role === "tool") {
    return {
      role: "tool",
      content: m.content.map((p) => ({
        type: "tool-result",
        toolCallId: p.callId,
        toolName: names.get(p.callId),
        output: { type: "text", value: p.output },
      })),
    };
  }
  return {
    role: "assistant",
    content: m.content.map((p) =>
      p.type === "text"
        ? { type: "text", text: p.text }
        : { type: "tool-call", toolCallId: p.callId, toolName: p.name, input: p.input },
    ),
  };
}

function toLangChain(lc, m) {
  if (m.role === "user") return new lc.HumanMessage({ content: m.content[0].text, id: m.id });
  if (m.role === "tool") {
    const p = m.content[0];
    return new lc.ToolMessage({ content: p.output, tool_call_id: p.callId, id: m.id });
  }
  const text = m.content
    .filter((p) => p.type === "text")
    .map((p) => p.text)
    .join("");
  const toolCalls = m.content
    .filter((p) => p.type === "tool_call")
    .map((p) => ({ id: p.callId, name: p.name, args: p.input, type: "tool_call" }));
  return new lc.AIMessage({ content: text, tool_calls: toolCalls, id: m.id });
}

/** `{role, calls, results}` of a message in any of the three formats. */
function shape(m) {
  const role = m.role ?? { human: "user", ai: "assistant", tool: "tool" }[m.getType?.()];
  if (typeof m.getType === "function") {
    return {
      role,
      calls: (m.tool_calls ?? []).map((c) => c.id),
      results: m.tool_call_id ? [m.tool_call_id] : [],
    };
  }
  const parts = Array.isArray(m.content) ? m.content : [];
  const ids = (t1, t2) =>
    parts.filter((p) => p.type === t1 || p.type === t2).map((p) => p.callId ?? p.toolCallId);
  return { role, calls: ids("tool_call", "tool-call"), results: ids("tool_result", "tool-result") };
}

/** Tool results without their call, or calls without their result, in a request. */
export function countOrphans(sent) {
  let orphans = 0;
  let open = new Set();
  let inTools = false;
  for (const m of sent.map(shape)) {
    if (m.role === "tool" && inTools) {
      for (const id of m.results) if (!open.delete(id)) orphans++;
      continue;
    }
    orphans += open.size + (m.role === "tool" ? m.results.length : 0);
    open = new Set(m.calls);
    inTools = m.calls.length > 0;
  }
  return orphans + open.size;
}

// Whether `now` starts with `before`, message for message, byte for byte.
function startsWith(now, before, json) {
  if (now.length < before.length) return false;
  for (let i = 0; i < before.length; i++) {
    if (now[i] !== before[i] && json(now[i]) !== json(before[i])) return false;
  }
  return true;
}

function jsonMemo() {
  const memo = new WeakMap();
  return (m) => {
    let s = memo.get(m);
    if (s === undefined) {
      s = JSON.stringify(m, (k, v) =>
        k === "lc_kwargs" || k === "lc_serializable" ? undefined : v,
      );
      memo.set(m, s);
    }
    return s;
  };
}

/** Per-contender record of the loop: times per turn, orphans, prefix changes. */
function tracker(label) {
  const json = jsonMemo();
  let prev = null;
  return {
    label,
    times: new Map(),
    orphans: 0,
    overflowTurns: 0,
    prefixChanges: 0,
    record(turn, ms, sent, overflow) {
      this.times.set(turn, ms);
      this.orphans += countOrphans(sent);
      if (prev !== null && overflow) {
        this.overflowTurns++;
        if (!startsWith(sent, prev, json)) this.prefixChanges++;
      }
      prev = sent;
    },
  };
}

function timeIt(run) {
  const t0 = performance.now();
  const out = run();
  return { out, ms: performance.now() - t0 };
}

async function timeItAsync(run) {
  const t0 = performance.now();
  const out = await run();
  return { out, ms: performance.now() - t0 };
}

/** The per-message count every contender uses: 4 + its parts' tokens. */
function messageCounter(counter, partsOf) {
  const memo = new WeakMap();
  return (m) => {
    let n = memo.get(m);
    if (n === undefined) {
      n = 4;
      for (const t of partsOf(m)) n += counter.count(t);
      memo.set(m, n);
    }
    return n;
  };
}

const aiParts = (m) =>
  typeof m.content === "string"
    ? [m.content]
    : m.content.flatMap((p) =>
        p.type === "text"
          ? [p.text]
          : p.type === "tool-call"
            ? [p.toolName, JSON.stringify(p.input)]
            : [p.output.value],
      );

const lcParts = (m) => [
  typeof m.content === "string" ? m.content : "",
  ...(m.tool_calls ?? []).flatMap((c) => [c.name, JSON.stringify(c.args)]),
];

function summary(t, turns) {
  const xs = turns.map((k) => t.times.get(k)).filter((x) => x !== undefined);
  const sorted = [...xs].sort((a, b) => a - b);
  return {
    turns: xs.length,
    medianMs: xs.length === 0 ? null : round3(median(xs)),
    p95Ms: xs.length === 0 ? null : round3(sorted[Math.floor(0.95 * (sorted.length - 1))]),
    samplesMs: xs.map(round3),
  };
}

const paired = (a, b, turns) => {
  const both = turns.filter((k) => a.times.has(k) && b.times.has(k));
  return pairedRatio(
    both.map((k) => a.times.get(k)),
    both.map((k) => b.times.get(k)),
  );
};

/** The loop: promptctx and the AI SDK every turn; the others on the last turns. */
async function loop(turns, libs) {
  const { tokens, conv, ai, lc } = libs;
  const counter = () => tokens.getTokenCounter(TOKENIZER);
  const neutral = [];
  const aiMsgs = [];
  const lcMsgs = [];
  const names = new Map();
  const t = {
    ours: tracker("promptctx createConversationPlanner"),
    stateless: tracker("promptctx planConversation (stateless)"),
    aiSdk: tracker("AI SDK pruneMessages + suffix"),
    langChain: tracker("LangChain trimMessages"),
  };
  const planner = conv.createConversationPlanner();
  const ourCounter = counter();
  const statelessCounter = counter();
  const aiCount = messageCounter(counter(), aiParts);
  const lcCount = messageCounter(counter(), lcParts);
  const sampleFrom = turns.length - SAMPLE_TURNS;
  const lcFrom = turns.length - LANGCHAIN_TURNS;
  let prev = null;
  let firstOverflow = -1;
  const policy = () => ({ lowWaterRatio: 0.7, anchor: prev?.firstKeptId ?? null });
  const plain = () => ({
    messages: neutral,
    budgetTokens: BUDGET,
    tokenizer: ourCounter,
    policy: policy(),
  });
  const runOurs = () => timeIt(() => planner.plan(plain()));
  const runAi = () =>
    timeIt(() => {
      const pruned = ai.pruneMessages({
        messages: aiMsgs,
        toolCalls: "before-last-40-messages",
        emptyMessages: "remove",
      });
      let used = 0;
      let start = pruned.length;
      while (start > 0 && used + aiCount(pruned[start - 1]) <= BUDGET)
        used += aiCount(pruned[--start]);
      return pruned.slice(start);
    });
  for (let k = 0; k < turns.length; k++) {
    for (const m of turns[k].ask) {
      for (const p of m.content) if (p.type === "tool_call") names.set(p.callId, p.name);
      neutral.push(m);
      aiMsgs.push(toAiSdk(m, names));
      lcMsgs.push(toLangChain(lc, m));
    }
    const stateless = { ...plain(), tokenizer: statelessCounter };
    if (k === sampleFrom - 1) conv.planConversation(stateless); // warms its counter, untimed
    const results = {};
    for (const name of k % 2 === 0 ? ["ours", "aiSdk"] : ["aiSdk", "ours"]) {
      results[name] = name === "ours" ? runOurs() : runAi();
    }
    prev = results.ours.out;
    if (firstOverflow < 0 && prev.droppedMessageIds.length > 0) firstOverflow = k;
    const overflow = firstOverflow >= 0 && k > firstOverflow;
    t.ours.record(k, results.ours.ms, prev.messages, overflow);
    t.aiSdk.record(k, results.aiSdk.ms, results.aiSdk.out, overflow);
    if (k >= sampleFrom) {
      const s = timeIt(() => conv.planConversation(stateless));
      t.stateless.record(k, s.ms, s.out.messages, overflow);
    }
    if (k >= lcFrom) {
      const l = await timeItAsync(() =>
        lc.trimMessages(lcMsgs, {
          maxTokens: BUDGET,
          strategy: "last",
          startOn: "human",
          tokenCounter: (msgs) => msgs.reduce((s, m) => s + lcCount(m), 0),
        }),
      );
      t.langChain.record(k, l.ms, l.out, overflow);
    }
    for (const m of [turns[k].answer]) {
      neutral.push(m);
      aiMsgs.push(toAiSdk(m, names));
      lcMsgs.push(toLangChain(lc, m));
    }
  }
  return { t, firstOverflow, messages: neutral.length, last: prev };
}

export async function run() {
  heading(meta.title);
  const tokens = await importDist("tokens/index.js");
  const conv = await importDist("conversation/index.js");
  const lc = requirePeer("@langchain/core/messages");
  const ai = await import("ai");
  const versions = {
    langchain: peerVersion("@langchain/core"),
    ai:
      (await import("ai/package.json", { with: { type: "json" } }).catch(() => null))?.default
        ?.version ?? "installed",
  };
  const turns = makeTurns();
  const countAll = tokens.getTokenCounter(TOKENIZER);
  let historyTokens = 0;
  for (const turn of turns) {
    for (const m of [...turn.ask, turn.answer]) {
      for (const p of m.content) historyTokens += countAll.count(p.text ?? p.output ?? p.name);
    }
  }
  console.log(
    `  ${int(turns.length)} turns, ${int(turns.reduce((n, x) => n + x.ask.length + 1, 0))} messages, ` +
      `~${int(historyTokens)} ${TOKENIZER} tokens of text; budget ${int(BUDGET)} tokens`,
  );
  if (globalThis.gc) globalThis.gc();
  const { t, firstOverflow, messages, last } = await loop(turns, { tokens, conv, ai, lc });
  const all = turns.map((_, k) => k);
  const sample = all.slice(-SAMPLE_TURNS);
  const rows = [
    [
      "contender",
      "turns timed",
      "median/turn (all)",
      `median/turn (last ${SAMPLE_TURNS})`,
      "p95 (last)",
      "orphans",
      "prefix changed",
    ],
  ];
  const figures = {};
  for (const [key, x] of Object.entries(t)) {
    const whole = summary(x, all);
    const recent = summary(x, sample);
    const changed = x.overflowTurns === 0 ? null : x.prefixChanges / x.overflowTurns;
    figures[key] = {
      label: x.label,
      all: whole,
      last: recent,
      orphans: x.orphans,
      prefixChanges: x.prefixChanges,
      overflowTurns: x.overflowTurns,
      prefixChangedFraction: changed === null ? null : round3(changed),
    };
    rows.push([
      x.label,
      int(whole.turns),
      key === "ours" || key === "aiSdk" ? ms(whole.medianMs) : "",
      ms(recent.medianMs),
      ms(recent.p95Ms),
      int(x.orphans),
      changed === null
        ? ""
        : `${x.prefixChanges}/${x.overflowTurns} (${(100 * changed).toFixed(1)}%)`,
    ]);
  }
  table(rows);
  const vsAi = paired(t.aiSdk, t.ours, sample);
  const vsLc = paired(t.langChain, t.ours, sample);
  const faster = vsAi <= vsLc ? "aiSdk" : "langChain";
  const speedup = Math.min(vsAi, vsLc);
  const ours = figures.ours;
  const checks = {
    speedup: speedup >= TARGET_SPEEDUP,
    orphans: ours.orphans === 0,
    prefixChanges:
      ours.prefixChangedFraction !== null && ours.prefixChangedFraction <= MAX_PREFIX_CHANGES,
  };
  console.log("");
  console.log(
    `  first overflow at turn ${firstOverflow}; ${int(messages)} messages at the end; last plan keeps ${int(last.messages.length)} messages, ${int(last.usedTokens)} tokens`,
  );
  console.log(`  peers: @langchain/core ${versions.langchain}, ai ${versions.ai}`);
  console.log(
    `  speed-up on the last turns (paired): ${ratio(vsAi)} vs AI SDK, ${ratio(vsLc)} vs LangChain; vs the faster peer (${faster}): ${ratio(speedup)} (target ≥ ${TARGET_SPEEDUP}×) ${verdict(checks.speedup)}`,
  );
  console.log(`  orphans in promptctx's requests: ${ours.orphans} ${verdict(checks.orphans)}`);
  console.log(
    `  promptctx prefix changed after the first overflow: ${ours.prefixChanges}/${ours.overflowTurns} (target ≤ 1 in 5) ${verdict(checks.prefixChanges)}`,
  );
  return {
    budget: BUDGET,
    tokenizer: TOKENIZER,
    turns: turns.length,
    messages,
    historyTokens,
    firstOverflow,
    contenders: figures,
    speedupVsAiSdk: round3(vsAi),
    speedupVsLangChain: round3(vsLc),
    speedupVsFasterPeer: round3(speedup),
    pass: checks,
    versions,
  };
}
