/**
 * A seeded single long task (the `agent-long` section): one user ask, then 100–300 tool
 * rounds of a coding agent working on it, with a short user nudge every `nudgeEvery`
 * rounds (0: none; the "a short user message every 5 rounds"), and one final
 * answer. Tool results are 1–20k tokens (mostly small, a heavy tail) of code, logs and
 * prose with facts — ids and numbers — embedded that requests 1–`needReach` rounds later
 * must still carry.
 *
 * The same shape as bench/lib/agent-session.mjs (`{instructions, rules, memories, kb,
 * turns}`), so the same loops and cache simulator run it: a nudge starts a new turn whose
 * `answer` is null (the agent goes on with tools); each round carries `needs`, the facts the
 * request that makes it (whose history ends just before it) must still carry, and the last
 * turn's `answerNeeds` those of the final request.
 */
import { DEFAULT_SEED, makeAgentSession, makeFact } from "./agent-session.mjs";
import { codeSnippet, createRng, sentence } from "./prng.mjs";

const START_MS = Date.parse("2026-12-01T09:00:00Z");
const TOOLS = ["read_file", "grep", "run_tests", "bash", "list_dir"];

/** About `chars` characters of one kind of tool output. */
function output(r, chars) {
  const kind = r.weighted({ code: 45, log: 30, prose: 15, table: 10 });
  const lines = [];
  let n = 0;
  while (n < chars) {
    const line =
      kind === "code"
        ? codeSnippet(r)
        : kind === "log"
          ? `[${r.int(10, 23)}:${r.int(10, 59)}:${r.int(10, 59)}] ${r.pick(["INFO", "WARN", "ERROR"])} ${sentence(r, 4, 10)}`
          : kind === "table"
            ? `| ${r.int(1, 9999)} | ${sentence(r, 2, 4)} | ${r.int(0, 100)} % |`
            : sentence(r, 8, 24);
    lines.push(line);
    n += line.length + 1;
  }
  return lines;
}

/** Result tokens in 1–20k: mostly small, some medium, a few large (about 3.6 chars a token). */
function resultChars(r) {
  const size = r.weighted({ small: 50, medium: 35, large: 15 });
  const tokens =
    size === "small"
      ? r.int(1_000, 3_000)
      : size === "medium"
        ? r.int(3_000, 9_000)
        : r.int(9_000, 20_000);
  return Math.round(tokens * 3.6);
}

/**
 * The task. Options: seed, requests (100–300, drawn from the seed when absent), nudgeEvery
 * (0), needShare (0.5 of requests ask about an earlier fact), needReach (40 rounds).
 */
export function makeLongTask({
  seed = DEFAULT_SEED,
  requests,
  nudgeEvery = 0,
  needShare = 0.5,
  needReach = 40,
} = {}) {
  const r = createRng(seed ^ 0x10a9);
  // The stable system side and pools of the ordinary session with the same seed.
  const base = makeAgentSession({ seed, turns: 1, toolResults: 1 });
  const rounds = requests ?? r.int(100, 300);
  const facts = []; // {round, fact}
  const needsAt = (k) => {
    const older = facts.filter((f) => f.round < k && f.round >= k - needReach);
    return older.length > 0 && r.chance(needShare) ? [r.pick(older).fact] : [];
  };
  const turns = [];
  let turn = null;
  const startTurn = (t, text, round) => {
    turn = {
      index: t,
      ask: { id: `u${t}`, role: "user", content: [{ type: "text", text }] },
      now: new Date(START_MS + round * 30_000).toISOString(),
      recall: base.turns[0].recall,
      kb: base.turns[0].kb,
      rounds: [],
      answer: null,
      needs: [],
    };
    turns.push(turn);
  };
  startTurn(1, `${sentence(r, 20, 40)} Work through it step by step with the tools.`, 0);
  for (let k = 0; k < rounds; k++) {
    if (nudgeEvery > 0 && k > 0 && k % nudgeEvery === 0) {
      startTurn(turns.length + 1, `Keep going. ${sentence(r, 3, 8)}`, k);
      turn.needs = needsAt(k);
    }
    const needs = turn.rounds.length === 0 && turn.needs.length > 0 ? [] : needsAt(k);
    const n = r.chance(0.12) ? 2 : 1;
    const calls = Array.from({ length: n }, (_, c) => ({
      type: "tool_call",
      callId: `toolu_${k}_${c}`,
      name: r.pick(TOOLS),
      input: { path: `src/${r.pick(["api", "db", "ui", "core"])}/${r.int(1, 400)}.ts` },
    }));
    const call = {
      id: `a${k}`,
      role: "assistant",
      content: [{ type: "text", text: sentence(r, 4, 14) }, ...calls],
    };
    const results = calls.map((c) => {
      const own = Array.from({ length: r.int(1, 2) }, () => makeFact(r));
      for (const f of own) facts.push({ round: k, fact: f });
      const lines = output(r, resultChars(r));
      for (const f of own) lines.splice(r.int(0, lines.length), 0, `note: ${f}`);
      return {
        id: `t_${c.callId}`,
        role: "tool",
        content: [{ type: "tool_result", callId: c.callId, output: lines.join("\n") }],
      };
    });
    turn.rounds.push({ call, results, needs });
  }
  turn.answer = {
    id: "r-final",
    role: "assistant",
    content: [{ type: "text", text: sentence(r, 20, 40) }],
  };
  turn.answerNeeds = needsAt(rounds);
  return { ...base, turns };
}
