/**
 * A seeded coding-agent session (the `agent-study` section and test/agent/study.test.ts):
 * instruction files and red lines (the stable system prompt), a memory pool and a KB
 * recalled per turn, and `turns` user turns, each with 0–4 tool rounds (one or two
 * parallel calls) whose results are prose, code and logs of varied sizes (heavy-tailed)
 * with facts embedded — ids and numbers — that later turns ask about.
 *
 * Shape: `{instructions, rules, memories, kb, turns: [{index, ask, now, recall, kb, rounds:
 * [{call, results}], answer, needs}]}` where `ask`, `call`, each result and `answer` are
 * neutral messages (docs/conversation.md) with ids; `recall` / `kb` are the ids of the
 * memories and chunks recalled for the turn; `needs` are fact strings from earlier tool
 * results the turn's first request must still carry.
 */
import { codeSnippet, createRng, sentence } from "./prng.mjs";

const START_MS = Date.parse("2026-11-30T09:00:00Z");
const TOOLS = ["read_file", "grep", "run_tests", "bash", "list_dir"];

/** Text of about `chars` characters: code, prose and log lines. */
function bodyText(r, chars) {
  const lines = [];
  let n = 0;
  while (n < chars) {
    const kind = r.weighted({ code: 55, prose: 25, log: 20 });
    const line =
      kind === "code"
        ? codeSnippet(r)
        : kind === "prose"
          ? sentence(r, 8, 24)
          : `[${r.int(10, 23)}:${r.int(10, 59)}:${r.int(10, 59)}] ${r.pick(["INFO", "WARN", "ERROR"])} ${sentence(r, 4, 10)}`;
    lines.push(line);
    n += line.length + 1;
  }
  return lines.join("\n");
}

/** Result sizes in characters: mostly small, some medium, a few large. */
function resultChars(r, scale) {
  const size = r.weighted({ small: 55, medium: 33, large: 12 });
  const chars =
    size === "small"
      ? r.int(600, 3_000)
      : size === "medium"
        ? r.int(3_000, 14_000)
        : r.int(14_000, 40_000);
  return Math.round(chars * scale);
}

const hex = (r, n) => Array.from({ length: n }, () => "0123456789abcdef"[r.int(0, 15)]).join("");

/** A fact as it appears in a tool result: an id or a number a later turn needs. */
export function makeFact(r) {
  const kind = r.pick(["build", "error", "port", "commit", "count"]);
  if (kind === "build") return `build id b-${hex(r, 8)}`;
  if (kind === "error") return `error code E${r.int(10_000, 99_999)}-${hex(r, 4)}`;
  if (kind === "port") return `listening on port ${r.int(20_000, 65_000)}${hex(r, 3)}`;
  if (kind === "commit") return `commit ${hex(r, 12)}`;
  return `${r.int(1_000, 99_999)} tests passed (run ${hex(r, 6)})`;
}

/** Puts the facts at random line boundaries of `text`. */
function embed(r, text, facts) {
  const lines = text.split("\n");
  for (const f of facts) lines.splice(r.int(0, lines.length), 0, `note: ${f}`);
  return lines.join("\n");
}

function instructionsText(r, chars) {
  const parts = ["# AGENTS.md", ""];
  let n = 0;
  while (n < chars) {
    const line = r.chance(0.3) ? `- ${sentence(r, 8, 20)}` : sentence(r, 12, 30);
    parts.push(line);
    n += line.length + 1;
  }
  return parts.join("\n");
}

function pools(r) {
  const memories = Array.from({ length: 60 }, (_, i) => ({
    id: `mem-${i}`,
    text: sentence(r, 14, 40),
    createdAt: new Date(START_MS - r.int(1, 500) * 3_600_000).toISOString(),
  }));
  const kb = Array.from({ length: 80 }, (_, i) => ({
    id: `kb-${i}`,
    text: Array.from({ length: r.int(3, 6) }, () => sentence(r, 12, 30)).join(" "),
  }));
  return { memories, kb };
}

/** Draws `k` distinct indexes below `n`. */
function sample(r, n, k) {
  return r.shuffle(Array.from({ length: n }, (_, i) => i)).slice(0, k);
}

/**
 * Calls per tool round, per turn: round counts drawn in fixed shares (26 % of turns none,
 * 40 % one, 21 % two, 9 % three, 4 % four, scaled to `turns`), then parallel rounds (two
 * calls) added until the session holds `results` tool results.
 */
function roundPlan(r, turns, results) {
  const shares = [
    [0, 0.26],
    [1, 0.4],
    [2, 0.21],
    [3, 0.09],
    [4, 0.04],
  ];
  const counts = shares.flatMap(([n, share]) => Array(Math.round(share * turns)).fill(n));
  while (counts.length < turns) counts.push(1);
  const plan = r
    .shuffle(counts)
    .slice(0, turns)
    .map((n) => Array(n).fill(1));
  const rounds = plan.flatMap((p, t) => p.map((_, k) => [t, k]));
  r.shuffle(rounds);
  let total = rounds.length;
  for (const [t, k] of rounds) {
    if (total >= results) break;
    plan[t][k] = 2;
    total++;
  }
  return plan;
}

/** One tool round of turn `t` with `n` calls: the call message and its result messages, with facts. */
/** A tool message answering `callId` (one in twenty an error, drawn from `r`). */
export function toolResultMessage(r, callId, output) {
  return {
    id: `t_${callId}`,
    role: "tool",
    content: [
      { type: "tool_result", callId, output, ...(r.chance(0.05) ? { isError: true } : {}) },
    ],
  };
}

function makeRound(r, t, k, n, scale, facts) {
  const calls = Array.from({ length: n }, (_, c) => ({
    type: "tool_call",
    callId: `toolu_${t}_${k}_${c}`,
    name: r.pick(TOOLS),
    input: { path: `src/${r.pick(["api", "db", "ui", "core"])}/${r.int(1, 400)}.ts` },
  }));
  const call = {
    id: `a${t}_${k}`,
    role: "assistant",
    content: [{ type: "text", text: sentence(r, 4, 14) }, ...calls],
  };
  const results = calls.map((c) => {
    const own = Array.from({ length: r.int(1, 2) }, () => makeFact(r));
    for (const f of own) facts.push({ turn: t, fact: f });
    const output = embed(r, bodyText(r, resultChars(r, scale)), own);
    return toolResultMessage(r, c.callId, output);
  });
  return { call, results };
}

/**
 * The session. Options: seed, turns (100), toolResults (145), scale (1: sizes of results),
 * instructionsChars (9,000), needShare (0.5 of turns ask about an earlier fact), needReach
 * (at most this many turns back, 18).
 */
/** The seed of the session the bench reports by default. */
export const DEFAULT_SEED = 0x5e55;

export function makeAgentSession({
  seed = DEFAULT_SEED,
  turns = 100,
  toolResults = 145,
  scale = 1.22,
  instructionsChars = 9_000,
  needShare = 0.5,
  needReach = 18,
} = {}) {
  const r = createRng(seed);
  const { memories, kb } = pools(r);
  const out = [];
  const facts = [];
  const plan = roundPlan(r, turns, toolResults);
  for (let t = 1; t <= turns; t++) {
    const needs = [];
    const older = facts.filter((f) => f.turn < t && f.turn >= t - needReach);
    if (older.length > 0 && r.chance(needShare)) needs.push(r.pick(older).fact);
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
    const rounds = plan[t - 1].map((n, k) => makeRound(r, t, k, n, scale, facts));
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
      recall: sample(r, memories.length, 6).map((i) => memories[i].id),
      kb: sample(r, kb.length, 4).map((i) => kb[i].id),
      rounds,
      answer,
      needs,
    });
  }
  const rules = [
    { id: "no-rm", level: "forbid", text: "no rm -rf outside the workspace" },
    { id: "tests", level: "require", text: "run the tests before a commit" },
    { id: "secrets", level: "forbid", text: "never print secrets or tokens" },
  ];
  return { instructions: instructionsText(r, instructionsChars), rules, memories, kb, turns: out };
}

/**
 * The requests of the session in order: for each turn, one request per tool round and
 * one for the answer (none for a turn whose `answer` is null: the next ask follows its last
 * round, as in bench/lib/long-task.mjs), each with the conversation so far (`messages`, the
 * current turn last), the turn it belongs to (`first`: the turn's first request) and the
 * facts it must carry (`needs`: the turn's on its first request, a round's own `needs`, the
 * turn's `answerNeeds` on the answer's).
 */
export function* sessionRequests(session) {
  const history = [];
  for (const turn of session.turns) {
    history.push(turn.ask);
    const last = turn.answer === null ? turn.rounds.length - 1 : turn.rounds.length;
    for (let k = 0; k <= last; k++) {
      const round = turn.rounds[k];
      const needs = [
        ...(k === 0 ? turn.needs : []),
        ...(round?.needs ?? []),
        ...(round === undefined ? (turn.answerNeeds ?? []) : []),
      ];
      yield { turn, messages: history.slice(), first: k === 0, needs };
      if (round !== undefined) history.push(round.call, ...round.results);
    }
    if (turn.answer !== null) history.push(turn.answer);
  }
}
