/**
 * A wider seeded coding-agent session (the `agent-wide` section and
 * test/agent/agent-wide.test.ts): the defaults are measured on sessions whose shape the
 * seed draws, not on the one shape of bench/lib/agent-session.mjs they were tuned on.
 * Per seed (`profileOf`):
 *
 * - session length: 50–300 user turns;
 * - share of turns that use tools (35–95 %), tool rounds per such turn (1 up to 2–6) and
 *   parallel calls (up to 3 in a round);
 * - tool result kinds in seed-drawn weights: code, logs, grep matches, JSON, tables and
 *   prose; result sizes from 180 to 72,000 characters (50–20,000 tokens at 3.6 characters
 *   a token; claude_estimate counts ~1.4× that on this text), the weights of small / medium / large
 *   drawn per seed;
 * - where a fact sits in a result: near its head, near its tail, or anywhere, in a line of
 *   the result's own kind (a log line, a JSON field, a table cell, a grep match, a comment);
 * - how far back facts are needed: a reach of 2–60 turns, distances uniform or weighted
 *   toward the recent, asked on a turn's first request and on later tool rounds.
 *
 * The same shape as makeAgentSession's (`{instructions, rules, memories, kb, turns}`), its
 * stable side and pools taken from makeAgentSession with the same seed, so the same loops,
 * `sessionRequests` and cache simulator run it. Facts come from `makeFact`.
 */
import { makeAgentSession, makeFact, toolResultMessage } from "./agent-session.mjs";
import { codeSnippet, createRng, sentence } from "./prng.mjs";

const START_MS = Date.parse("2026-12-02T09:00:00Z");
const TOOLS = ["read_file", "grep", "run_tests", "bash", "list_dir", "query_db", "http_get"];
export const KINDS = ["code", "log", "grep", "json", "table", "prose"];
export const PLACES = ["head", "tail", "anywhere"];

/** Sizes are drawn in tokens of 3.6 characters (an average for prose and code). */
const CHARS_PER_TOKEN = 3.6;

const hex = (r, n) => Array.from({ length: n }, () => "0123456789abcdef"[r.int(0, 15)]).join("");
const stamp = (r) => `${r.int(10, 23)}:${r.int(10, 59)}:${r.int(10, 59)}`;
const path = (r) => `src/${r.pick(["api", "db", "ui", "core", "cli"])}/${r.int(1, 400)}.ts`;

/**
 * The seed's profile: every knob of the session the seed draws. Exposed so the section
 * can print it and the test can check its ranges.
 */
export function profileOf(seed) {
  const r = createRng((seed ^ 0x3d1de) >>> 0);
  const weights = (keys, lo, hi) => Object.fromEntries(keys.map((k) => [k, r.int(lo, hi)]));
  return {
    turns: r.int(50, 300),
    toolTurnShare: r.int(35, 95) / 100,
    maxRounds: r.int(2, 6),
    parallelShare: r.int(0, 30) / 100,
    kinds: weights(KINDS, 1, 10),
    sizes: { small: r.int(4, 10), medium: r.int(1, 6), large: r.int(0, 3) },
    places: weights(PLACES, 1, 10),
    needShare: r.int(30, 80) / 100,
    roundNeedShare: r.int(0, 30) / 100,
    needReach: r.int(2, 60),
    recentBias: r.chance(0.5),
    instructionsChars: r.int(3_000, 16_000),
  };
}

/** Result size in characters: small 50–1,500 tokens, medium 1.5–6k, large 6–20k. */
function resultChars(r, p) {
  const size = r.weighted(p.sizes);
  const tokens =
    size === "small"
      ? r.int(50, 1_500)
      : size === "medium"
        ? r.int(1_500, 6_000)
        : r.int(6_000, 20_000);
  return Math.round(tokens * CHARS_PER_TOKEN);
}

/** One line of `kind` output; `fact`, when given, is carried in the line the way that kind would. */
function line(r, kind, i, fact) {
  switch (kind) {
    case "code":
      return fact === undefined ? codeSnippet(r) : `// ${fact}`;
    case "log":
      return `[${stamp(r)}] ${r.pick(["INFO", "WARN", "ERROR", "DEBUG"])} ${fact ?? sentence(r, 4, 10)}`;
    case "grep":
      return `${path(r)}:${r.int(1, 900)}: ${fact === undefined ? codeSnippet(r) : `/* ${fact} */`}`;
    case "json":
      return `  {"id": ${i}, "name": "${hex(r, 6)}", "status": "${r.pick(["ok", "failed", "skipped"])}", "detail": "${fact ?? sentence(r, 3, 8).replace(/"/g, "")}"},`;
    case "table":
      return `| ${i} | ${fact ?? sentence(r, 2, 4)} | ${r.int(0, 100)} % | ${r.pick(["yes", "no"])} |`;
    default:
      return fact === undefined ? sentence(r, 8, 24) : `Note that the ${fact}.`;
  }
}

/** The lines before and after a result's body (JSON brackets, table header). */
function frame(kind) {
  if (kind === "json")
    return [
      ["{", '  "items": ['],
      ["  ]", "}"],
    ];
  if (kind === "table") return [["| # | item | share | ok |", "|---|---|---|---|"], []];
  return [[], []];
}

/**
 * A tool result of `kind` of about `chars` characters with `facts` placed at the seed's
 * places: `head` in the first tenth of its lines, `tail` in the last tenth, `anywhere`
 * (a tenth of the generated lines: a code line may span a few output lines).
 * Returns the output and where each fact went (`{fact, place, line}`; line 0-based).
 */
export function resultText(r, p, kind, chars, facts) {
  const body = [];
  let n = 0;
  while (n < chars || body.length === 0) {
    const l = line(r, kind, body.length);
    body.push(l);
    n += l.length + 1;
  }
  const placed = [];
  for (const fact of facts) {
    const place = r.weighted(p.places);
    const tenth = Math.max(1, Math.floor(body.length / 10));
    const at =
      place === "head"
        ? r.int(0, tenth)
        : place === "tail"
          ? r.int(body.length - tenth, body.length)
          : r.int(0, body.length);
    body.splice(at, 0, line(r, kind, at, fact));
    placed.push({ fact, place });
  }
  const [before, after] = frame(kind);
  const output = [...before, ...body, ...after].join("\n");
  // A code line may span several lines: count lines in the output itself.
  const lines = output.split("\n");
  for (const x of placed) x.line = lines.findIndex((l) => l.includes(x.fact));
  return { output, placed };
}

/** A fact to need at turn `t`: one of an earlier turn within reach, nearer ones likelier when biased. */
function pickNeed(r, p, facts, t) {
  const older = facts.filter((f) => f.turn < t && f.turn >= t - p.needReach);
  if (older.length === 0) return null;
  if (!p.recentBias) return r.pick(older);
  // Distance weighted 1/d: a fact from the turn before is ~d times likelier than one d back.
  const weights = older.map((f) => 1 / (t - f.turn));
  let x = r.float() * weights.reduce((a, b) => a + b, 0);
  for (let i = 0; i < older.length; i++) {
    x -= weights[i];
    if (x < 0) return older[i];
  }
  return older[older.length - 1];
}

function makeRound(r, p, t, k, facts) {
  const n = r.chance(p.parallelShare) ? r.int(2, 3) : 1;
  const calls = Array.from({ length: n }, (_, c) => ({
    type: "tool_call",
    callId: `toolu_${t}_${k}_${c}`,
    name: r.pick(TOOLS),
    input: { path: path(r) },
  }));
  const call = {
    id: `a${t}_${k}`,
    role: "assistant",
    content: [{ type: "text", text: sentence(r, 4, 14) }, ...calls],
  };
  const results = calls.map((c) => {
    const kind = r.weighted(p.kinds);
    const own = Array.from({ length: r.int(1, 2) }, () => makeFact(r));
    const { output, placed } = resultText(r, p, kind, resultChars(r, p), own);
    for (const x of placed) facts.push({ turn: t, round: k, kind, ...x });
    return toolResultMessage(r, c.callId, output);
  });
  return { call, results };
}

/**
 * The session of `seed` (its profile from {@link profileOf}); `turns` overrides the drawn
 * length (the test's small sessions). Besides the shared shape, the session carries its
 * `profile`, every fact placed (`facts`: `{turn, round, kind, fact, place, line}`) and every
 * need (`needed`: `{turn, round, fact, from}`; round -1 is the turn's first request).
 */
export function makeWideSession({ seed = 1, turns } = {}) {
  const p = { ...profileOf(seed), ...(turns === undefined ? {} : { turns }) };
  const r = createRng((seed ^ 0x71de5) >>> 0);
  const base = makeAgentSession({
    seed,
    turns: 1,
    toolResults: 1,
    instructionsChars: p.instructionsChars,
  });
  const facts = [];
  const needed = [];
  const need = (t, round) => {
    const f = pickNeed(r, p, facts, t);
    if (f === null) return [];
    needed.push({ turn: t, round, fact: f.fact, from: f.turn });
    return [f.fact];
  };
  const out = [];
  for (let t = 1; t <= p.turns; t++) {
    const needs = r.chance(p.needShare) ? need(t, -1) : [];
    const ask = {
      id: `u${t}`,
      role: "user",
      content: [
        {
          type: "text",
          text: `${sentence(r, 8, 30)}${needs.length > 0 ? ` Use the ${needs[0].split(" ")[0]} value you saw earlier.` : ""}`,
        },
      ],
    };
    const count = r.chance(p.toolTurnShare) ? r.int(1, p.maxRounds) : 0;
    const rounds = [];
    for (let k = 0; k < count; k++) {
      // A later round may need an earlier turn's fact (the request that makes round k).
      const roundNeeds = k > 0 && r.chance(p.roundNeedShare) ? need(t, k) : [];
      rounds.push({ ...makeRound(r, p, t, k, facts), needs: roundNeeds });
    }
    const answer = {
      id: `r${t}`,
      role: "assistant",
      content: [
        {
          type: "text",
          text: Array.from({ length: r.int(1, 4) }, () => sentence(r, 10, 30)).join(" "),
        },
      ],
    };
    out.push({
      index: t,
      ask,
      now: new Date(START_MS + t * 90_000).toISOString(),
      recall: sample(r, base.memories, 6),
      kb: sample(r, base.kb, 4),
      rounds,
      answer,
      needs,
    });
  }
  return { ...base, turns: out, profile: p, facts, needed };
}

/** The ids of `k` distinct items of `items`. */
function sample(r, items, k) {
  return r.shuffle(items.map((x) => x.id)).slice(0, k);
}
