/**
 * Three agent loops over one session (bench/lib/agent-session.mjs), each request sent to
 * the prompt-cache simulator (bench/lib/cache-sim.mjs), with what every loop is measured
 * on: cost, cache reads, breaks, requests over the window, orphans, requests starting on
 * an assistant message, and the facts later turns need still present.
 *
 * - naive: the whole history every request; the system prompt cached (one breakpoint),
 *   the per-turn context (recalled memory, KB, clock) in a second system block.
 * - hand-built (careful): the system prompt cached; a breakpoint on the last history block
 *   and the per-turn context after it; the oldest whole turns trimmed until it fits.
 * - promptctx: `assembleRequest` with only the context window given.
 *
 * `pc` is promptctx's module (the build's `dist/index.js` in the bench, `src/index.ts` in
 * the tests). Every loop reserves the same response tokens (the agent default of the window).
 */

import { sessionRequests } from "./agent-session.mjs";
import { anthropicBlocks, anthropicOrphans, createCacheSim } from "./cache-sim.mjs";

export const MODEL = "claude-sonnet-4-5";
const USER = "dev";

function memoryById(session) {
  return new Map(session.memories.map((m) => [m.id, m]));
}

/** The per-turn context as a hand-built loop writes it: memory, KB chunks, the clock. */
export function perTurnText(session, turn) {
  const mem = memoryById(session);
  const kb = new Map(session.kb.map((c) => [c.id, c]));
  return [
    "Relevant memory:",
    ...turn.recall.map((id) => `- ${mem.get(id).text}`),
    "",
    "Knowledge base:",
    ...turn.kb.map((id) => kb.get(id).text),
    "",
    `Current time: ${turn.now}`,
  ].join("\n");
}

/** The stable system prompt as one text: the instructions and the red lines. */
export function systemText(session) {
  const rules = session.rules.map((x) => `- [${x.level}] ${x.text}`).join("\n");
  return `${session.instructions}\n\nRules:\n${rules}`;
}

/** The sources of one turn for the assembler: instructions, red lines, recall, KB. */
function sourcesFor(pc, session, turn) {
  const mem = memoryById(session);
  const candidates = turn.recall.map((id, i) => ({
    memoryId: id,
    text: mem.get(id).text,
    userScope: USER,
    score: 0.95 - i * 0.05,
    sourceRank: i + 1,
    provenance: {
      sourceId: id,
      sourceType: "memory",
      title: "memory",
      capturedAt: mem.get(id).createdAt,
    },
  }));
  const kb = new Map(session.kb.map((c) => [c.id, c]));
  const categories = Object.fromEntries(turn.recall.map((id) => [id, "fact"]));
  return [
    pc.staticSource(
      "instructions",
      ["instructions"],
      [{ id: "AGENTS.md", text: session.instructions }],
    ),
    pc.constraintsSource({ rules: session.rules }),
    pc.recallSource(() => candidates, { categories }),
    pc.staticSource(
      "kb",
      ["kb"],
      turn.kb.map((id, i) => ({ id, text: kb.get(id).text, score: 0.9 - i * 0.1 })),
    ),
  ];
}

/** Each request of the naive loop: `{body, reserve}`. */
function naiveRequest(pc, session, req, reserve) {
  const body = {
    system: [
      { type: "text", text: systemText(session), cache_control: { type: "ephemeral" } },
      { type: "text", text: perTurnText(session, req.turn) },
    ],
    messages: pc.toAnthropicMessages(req.messages),
  };
  return { body, reserve };
}

/** Drops the oldest whole turns until the messages fit `room` (the current turn always stays). */
function trimmed(pc, messages, room, counter) {
  const tokens = messages.map((m) => pc.messageTokens(m, counter));
  let total = tokens.reduce((a, b) => a + b, 0);
  let start = 0;
  const current = messages.findLastIndex((m) => m.role === "user");
  while (total > room && start < current) {
    let next = start + 1;
    while (next < current && messages[next].role !== "user") next++;
    for (let i = start; i < next; i++) total -= tokens[i];
    start = next;
  }
  return messages.slice(start);
}

function handBuiltRequest(pc, session, req, reserve, window, counter) {
  const system = [
    { type: "text", text: systemText(session), cache_control: { type: "ephemeral" } },
  ];
  const context = perTurnText(session, req.turn);
  const room = window - reserve - counter.count(system[0].text) - counter.count(context) - 4;
  const kept = trimmed(pc, req.messages, room, counter);
  const messages = pc.toAnthropicMessages(kept, {
    cacheAfter: kept.length - 1,
    cacheControl: { type: "ephemeral" },
  });
  const last = messages[messages.length - 1];
  const content =
    typeof last.content === "string" ? [{ type: "text", text: last.content }] : last.content;
  messages[messages.length - 1] = {
    ...last,
    content: [...content, { type: "text", text: context }],
  };
  return { body: { system, messages }, reserve };
}

/**
 * Anthropic's server-side context editing (`clear_tool_uses_20250919`) applied to a
 * hand-built body: once the input passes `trigger` tokens, every tool result but the last
 * `keep` is replaced by a short placeholder, oldest first (the client keeps and resends its
 * whole history; the server edits it before the model and the cache see it).
 */
const CLEARED = "[tool result cleared]";
function serverCleared(body, count, trigger, keep = 3) {
  const blocks = [];
  for (const m of body.messages) {
    if (typeof m.content === "string") continue;
    for (const b of m.content) if (b.type === "tool_result") blocks.push(b);
  }
  let total = count(JSON.stringify(body.system));
  for (const m of body.messages) {
    total += count(typeof m.content === "string" ? m.content : JSON.stringify(m.content));
  }
  if (total <= trigger) return body;
  const clear = new Set(blocks.slice(0, Math.max(0, blocks.length - keep)));
  const messages = body.messages.map((m) =>
    typeof m.content === "string" || !m.content.some((b) => clear.has(b))
      ? m
      : { ...m, content: m.content.map((b) => (clear.has(b) ? { ...b, content: CLEARED } : b)) },
  );
  return { ...body, messages };
}

function serverClearedRequest(pc, session, req, reserve, window, counter) {
  const { body } = handBuiltRequest(pc, session, req, reserve, window, counter);
  // The API's default trigger (100k input tokens), or 80 % of the room in a smaller window.
  const trigger = Math.min(100_000, Math.round(0.8 * (window - reserve)));
  return { body: serverCleared(body, (t) => counter.count(t), trigger), reserve };
}

async function promptctxRequest(pc, session, req, window, counter, overrides, prev) {
  const stateful = overrides.stateful === true;
  const { stateful: _, ...rest } = overrides;
  const policy =
    stateful && prev !== null
      ? {
          ...(rest.policy ?? {}),
          anchor: prev.conversation.firstKeptId,
          clearBeforeTurn: prev.conversation.clearBeforeTurn,
        }
      : rest.policy;
  const r = await pc.assembleRequest({
    ...rest,
    ...(policy === undefined ? {} : { policy }),
    provider: "anthropic",
    model: MODEL,
    contextWindow: window,
    // One counter for the whole conversation, as docs/conversation.md asks (it memoizes).
    tokenizer: counter,
    assemble: {
      mode: "chat",
      query: { text: req.turn.ask.content[0].text, userScope: USER },
      now: req.turn.now,
      sources: sourcesFor(pc, session, req.turn),
    },
    messages: req.messages,
  });
  return { body: r.body, reserve: r.budget.responseReserve, planned: r };
}

/**
 * Runs one loop (`naive`, `hand-built`, `server-cleared`, `promptctx`) over the session at
 * `window` tokens. `overrides`: fields added to every `assembleRequest` call (to compare
 * other settings); `stateful: true` passes each plan's `firstKeptId` / `clearBeforeTurn`
 * back as the next request's anchor. A request promptctx refuses (`prompt_budget_exceeded`)
 * is counted in `refused` (the first message kept in `refusal`), sends nothing and keeps
 * none of its needed facts.
 */
export async function runLoop(pc, session, kind, window, overrides = {}) {
  const counter = pc.getTokenCounter("claude_estimate");
  const meter = createMeter(pc, kind, window);
  const reserve = pc.agentDefaults(window).responseReserve;
  let prev = null;
  for (const req of sessionRequests(session)) {
    let sent;
    try {
      sent =
        kind === "naive"
          ? naiveRequest(pc, session, req, reserve)
          : kind === "hand-built"
            ? handBuiltRequest(pc, session, req, reserve, window, counter)
            : kind === "server-cleared"
              ? serverClearedRequest(pc, session, req, reserve, window, counter)
              : await promptctxRequest(pc, session, req, window, counter, overrides, prev);
    } catch (err) {
      if (err?.code !== "prompt_budget_exceeded") throw err;
      meter.refuse(req, err);
      continue;
    }
    if (sent.planned !== undefined) prev = sent.planned;
    meter.add(req, sent.body, sent.reserve);
  }
  return meter.done();
}

/**
 * What every loop is measured on, request by request: `add(req, body, reserve)` sends an
 * Anthropic Messages body to a fresh cache simulator, `refuse(req, err)` counts a request
 * that was not sent, `done()` returns the figures (as {@link runLoop} reports them).
 */
export function createMeter(pc, kind, window) {
  const counter = pc.getTokenCounter("claude_estimate");
  const count = (t) => counter.count(t);
  const sim = createCacheSim({ minTokens: pc.minCacheableTokens(MODEL) });
  const m = {
    loop: kind,
    window,
    requests: 0,
    input: 0,
    read: 0,
    write: 0,
    cost: 0,
    steadyRead: 0,
    steadyInput: 0,
    breaks: 0,
    overWindow: 0,
    orphans: 0,
    assistantFirst: 0,
    needs: 0,
    factsKept: 0,
    refused: 0,
    refusal: null,
  };
  return {
    refuse(req, err) {
      m.refused++;
      m.refusal ??= err.message;
      m.needs += req.needs.length;
    },
    add(req, body, maxTokens) {
      const s = sim.request(anthropicBlocks(body, count));
      m.requests++;
      m.input += s.input;
      m.read += s.read;
      m.write += s.write;
      m.cost += s.cost;
      if (m.requests > 1) {
        m.steadyRead += s.read;
        m.steadyInput += s.input;
      }
      if (s.brokeCache) m.breaks++;
      if (s.input + maxTokens > window) m.overWindow++;
      m.orphans += anthropicOrphans(body);
      if (body.messages[0]?.role === "assistant") m.assistantFirst++;
      if (req.needs.length > 0) {
        const text = JSON.stringify(body);
        for (const f of req.needs) {
          m.needs++;
          if (text.includes(f)) m.factsKept++;
        }
      }
    },
    done() {
      m.readShare = m.steadyInput > 0 ? m.steadyRead / m.steadyInput : 0;
      m.factShare = m.needs > 0 ? m.factsKept / m.needs : 1;
      return m;
    },
  };
}

/** Tokens of the session's whole history at its end (claude_estimate, as the planner counts). */
export function historyTokens(pc, session) {
  const counter = pc.getTokenCounter("claude_estimate");
  let total = 0;
  let results = 0;
  for (const t of session.turns) {
    const msgs = [t.ask, ...t.rounds.flatMap((r) => [r.call, ...r.results]), t.answer];
    for (const m of msgs) total += pc.messageTokens(m, counter);
    for (const r of t.rounds) results += r.results.length;
  }
  return { tokens: total, toolResults: results };
}
