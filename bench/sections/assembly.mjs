/**
 * Section `assembly`: one `react` assembly (docs/assembler.md) over in-memory sources, tokenizer
 * o200k_base, and the same assembly through a runtime session (docs/session-and-cache.md).
 *
 * Sources (built once, untimed; shared by the runs as an agent keeps them, so the built-in
 * sources whose data is unchanged are not fetched again — docs/assembler.md): constraints (5 pinned
 * rules: pinned items must fit the slot's 280 chars or the assembly fails closed, so
 * 1,000 rules would not be a workload), planner (one task state → its 2 items: the
 * source serves a single state), and 1,000 items each from task memory
 * (`TaskMemoryBuffer(1000)`), tool state (200 tools + 800 recent calls), profile,
 * recall, and a `staticSource` for a caller-defined `kb` slot added to a copy of the
 * `react` schema (`createSchemaRegistry().register`). Item texts are 40–300 chars of
 * English, CJK (Chinese with kana) and code.
 *
 * Variants, interleaved:
 * - cold: `assemble(...)` with a fresh o200k_base counter per run (empty counter memo, no
 *   layer memo); the sources are the shared ones.
 * - session first: a new `Session` (fresh counter) and its first `assemble`.
 * - session unchanged: `session.assemble` again with the same query and clock, no event
 *   (the cached assembly comes back); timed as a batch, reported per call.
 * - session new turn: `beginTurn` after one new observation and one tool call (every
 *   slot is refetched; the session's layer memo repacks the two whose sources changed and
 *   reuses the others; its counter is warm from earlier turns).
 *
 * Every run above follows a forced GC (with --expose-gc). Cold and new turn are then
 * measured again in steady state — no forced GC, more warm-up — see `steady` in run().
 */
import { measure, round3 } from "../lib/measure.mjs";
import { importDist } from "../lib/modules.mjs";
import { createRng, sentence, textOfLength } from "../lib/prng.mjs";
import { heading, int, judge, ms, table, targetTable } from "../lib/report.mjs";

export const meta = {
  name: "assembly",
  order: 30,
  title: "Context assembly (assemble, react) and the runtime session",
};

const TOKENIZER = "o200k_base";
const ITEMS = 1_000;
const TOOLS = 200;
const NOW = "2026-11-30T09:00:00Z";
const NOW_MS = Date.parse(NOW);
const SCOPE = "user-42";
const QUERY = "why does the staging deploy fail after the migration? 部署失败 `npm run build`";
/** Unchanged-session calls per timed run (each is far below timer resolution). */
const REPEAT_BATCH = 10_000;
const KB_SLOT = { kind: "kb", title: "Knowledge base", filter: { charBudget: 600, topK: 4 } };
/** Targets of issue 15 (wall-clock medians, milliseconds). */
const TARGET_COLD_MS = 15;
const TARGET_TURN_MS = 10;
const SCHEMA_BUDGET_CHARS = 3_200;
/**
 * Forced-GC rounds: this many times the section's runs, after at least this many warm-ups
 * (a run takes ~10 ms: more rounds cost little and steady the median; a few more warm-ups
 * let the JIT settle, as it has in an agent's long-running process).
 */
const FORCED_RUNS_FACTOR = 2;
const FORCED_WARMUP = 5;
/** Steady-state rounds: this many times the section's runs, after this many warm-ups. */
const STEADY_RUNS_FACTOR = 3;
const STEADY_WARMUP = 10;

const HOUR_MS = 3_600_000;
const TWO_YEARS_MS = 2 * 365 * 24 * HOUR_MS;

/** 40–300 chars: prose, CJK, code or mixed. */
function itemText(r, min = 40, max = 300) {
  const kind = r.weighted({ prose: 45, cjk: 20, code: 20, mixed: 15 });
  return textOfLength(r, kind, r.int(min, max));
}

function isoAgo(ms) {
  return new Date(NOW_MS - ms).toISOString().replace(".000Z", "Z");
}

function score(r) {
  return Math.round(r.float() * 1000) / 1000;
}

function pad(n) {
  return String(n).padStart(4, "0");
}

const CONSTRAINTS = [
  { id: "no-rm", level: "forbid", text: "no rm -rf outside the workspace" },
  { id: "no-secrets", level: "forbid", text: "never print secrets or tokens" },
  { id: "tests", level: "require", text: "run the tests before a commit" },
  { id: "prod", level: "warn", text: "ask before touching production" },
  { id: "lang", level: "require", text: "answer in the user's language" },
];

/**
 * Deterministic workload data (plain values; sources are built from it per use so each
 * session can own mutable buffers).
 */
export function makeWorkload(seed = 0xa55e) {
  const r = createRng(seed);
  const observations = [];
  for (let i = 0; i < ITEMS; i++) {
    const o = {
      text: itemText(r),
      // Spread over 48 h: the react filter (maxAgeHours 24) keeps about half.
      createdAt: isoAgo(r.int(0, 48 * 60) * 60_000),
      category: r.weighted({ observation: 80, error: 15, note: 5 }),
      score: score(r),
    };
    if (r.chance(0.3)) o.tags = [r.pick(["db", "ci", "deploy", "api", "ui"])];
    observations.push(o);
  }
  const tools = [];
  for (let i = 0; i < TOOLS; i++) {
    tools.push({
      name: `tool_${pad(i + 1)}`,
      description: itemText(r, 40, 200),
      requiredArgs: Array.from({ length: r.int(0, 3) }, (_, j) => `arg${j + 1}`),
    });
  }
  const calls = [];
  for (let i = 0; i < ITEMS - TOOLS; i++) {
    calls.push({
      tool: `tool_${pad(r.int(1, TOOLS))}`,
      ok: r.chance(0.8),
      summary: itemText(r, 20, 260),
      at: isoAgo((ITEMS - TOOLS - i) * 30_000),
    });
  }
  const profile = [];
  for (let i = 0; i < ITEMS; i++) {
    const e = {
      key: `fact-${pad(i + 1)}`,
      value: itemText(r, 30, 290),
      category: r.weighted({ identity: 10, preference: 40, habit: 30, misc: 20 }),
      score: score(r),
    };
    if (r.chance(0.7)) e.updatedAt = isoAgo(r.int(0, TWO_YEARS_MS / 1000) * 1000);
    profile.push(e);
  }
  const candidates = [];
  const categories = {};
  const importance = {};
  for (let i = 0; i < ITEMS; i++) {
    const c = {
      memoryId: `mem-${pad(i + 1)}`,
      text: itemText(r),
      userScope: r.chance(0.9) ? SCOPE : r.pick(["user-7", "team-ops"]),
      score: score(r),
      sourceRank: i + 1,
      provenance: {
        sourceId: `src-${r.int(1, 50)}`,
        sourceType: r.pick(["chat", "note", "doc", "ticket"]),
        title: sentence(r, 2, 5),
        capturedAt: isoAgo(r.int(0, TWO_YEARS_MS / 1000) * 1000),
      },
    };
    if (r.chance(0.1)) {
      c.conflictKey = `preference:topic-${r.int(1, 30)}`;
      c.authority = r.pick(["current_turn", "workspace_override", "user_default"]);
    }
    candidates.push(c);
    categories[c.memoryId] = r.pick(["episodic", "fact", "general", "tool_failure", "chat"]);
    importance[c.memoryId] = Math.round(r.float() * 100) / 100;
  }
  const kb = [];
  for (let i = 0; i < ITEMS; i++) {
    kb.push({
      id: `kb-${pad(i + 1)}`,
      text: itemText(r),
      score: score(r),
      sourceRef: `docs/${r.pick(["deploy", "billing", "api", "onboarding"])}/${pad(i + 1)}.md`,
    });
  }
  const task = {
    taskId: "T-12",
    status: "in_progress",
    phase: "implement",
    done: 2,
    total: 5,
    nextStep: "run the migration tests",
    nextTool: "tool_0007",
  };
  const extra = createRng(seed ^ 0x7e57);
  return {
    observations,
    tools,
    calls,
    profile,
    candidates,
    categories,
    importance,
    kb,
    task,
    extra,
  };
}

/** The sources over fresh buffers (task memory and tool state are per instance). */
function buildSources(src, w) {
  const buffer = new src.TaskMemoryBuffer(ITEMS);
  for (const o of w.observations) buffer.add(o);
  const toolState = new src.ToolState(w.tools, { maxCalls: ITEMS - TOOLS });
  for (const c of w.calls) toolState.recordCall(c);
  const sources = [
    src.constraintsSource({ rules: CONSTRAINTS }),
    src.plannerSource(() => w.task),
    src.taskMemorySource(buffer),
    src.toolStateSource(toolState),
    src.profileSource(w.profile),
    src.recallSource(() => w.candidates, {
      categories: w.categories,
      importance: w.importance,
    }),
    src.staticSource("kb", ["kb"], w.kb),
  ];
  return { sources, buffer, toolState };
}

/** `react` plus a `kb` slot, under one global budget large enough to show every slot. */
function makeSchemas(asm) {
  const registry = asm.createSchemaRegistry();
  const { schema } = registry.resolve("react");
  return registry.register({
    ...schema,
    slots: [...schema.slots, KB_SLOT],
    budgetChars: SCHEMA_BUDGET_CHARS,
  });
}

const SEGMENTS = [
  {
    name: "identity",
    priority: 0,
    required: true,
    cacheTier: "static",
    deps: ["identity"],
    build: (s) => s.identity,
  },
  {
    name: "skills",
    priority: 60,
    deps: ["skills"],
    build: (s) =>
      s.skills.size === 0
        ? null
        : [...s.skills].map(([name, body]) => `### ${name}\n${body}`).join("\n\n"),
  },
];

function sessionState() {
  return {
    userScope: SCOPE,
    mode: "react",
    workingMode: "craft",
    expert: null,
    identity: "You are a careful coding agent working in the promptctx repository.",
    skills: new Map([["sql-review", "Check migrations for locks and long transactions."]]),
  };
}

export async function run(ctx) {
  heading(meta.title);
  const asm = await importDist("assemble/index.js");
  const src = await importDist("sources/index.js");
  const tokens = await importDist("tokens/index.js");
  const fresh = () => tokens.getTokenCounter(TOKENIZER);

  const w = makeWorkload();
  const schemas = makeSchemas(asm);
  const shared = buildSources(src, w);
  const query = { text: QUERY, now: NOW };
  const input = (counter) => ({
    mode: "react",
    query: { text: QUERY, userScope: SCOPE },
    now: NOW,
    sources: shared.sources,
    schemas,
    tokenizer: TOKENIZER,
    tokenCounter: counter,
  });
  const newSession = (sources, counter) =>
    asm.createSession({
      state: sessionState(),
      segments: SEGMENTS,
      sources,
      assemble: { schemas, tokenizer: TOKENIZER },
      tokenCounter: counter,
    });

  // The repeated-call session: assembled once before any timing.
  const repeatSession = newSession(shared.sources, fresh());
  const repeatFirst = await repeatSession.assemble(query);
  // The new-turn session owns its buffers: each turn adds one observation and one call.
  const turnOwn = buildSources(src, w);
  const turnSession = newSession(turnOwn.sources, fresh());
  await turnSession.beginTurn(query);
  let turnNo = 0;
  let repeatSame = true;

  console.log(
    `  mode react + caller-defined kb slot (charBudget ${KB_SLOT.filter.charBudget}, topK ` +
      `${KB_SLOT.filter.topK}) registered on a copy of react, global budget ` +
      `${int(SCHEMA_BUDGET_CHARS)} chars, tokenizer ${TOKENIZER}`,
  );
  console.log(
    "  items: constraints 5 pinned rules (pinned overflow fails closed), planner 2 (one task " +
      `state), ${int(ITEMS)} each from task_memory, tool_state (${TOOLS} tools + ` +
      `${ITEMS - TOOLS} calls), profile, recall, kb (staticSource)`,
  );
  console.log("  item texts 40–300 chars: English, CJK, code, mixed");
  const forced = {
    runs: ctx.runs * FORCED_RUNS_FACTOR,
    warmup: Math.max(ctx.warmup, FORCED_WARMUP),
  };
  console.log(
    `  median of ${forced.runs} interleaved runs after ${forced.warmup} warm-up (a forced ` +
      `GC before each); steady state: ${ctx.runs * STEADY_RUNS_FACTOR} after ${STEADY_WARMUP}`,
  );

  const variants = {
    cold: {
      setup: () => input(fresh()),
      run: (inp) => asm.assemble(inp),
    },
    // Sources built for this run alone (untimed): nothing a source object keeps between
    // fetches (the assembler's per-source validation memo) carries over.
    coldFresh: {
      setup: () => ({ ...input(fresh()), sources: buildSources(src, w).sources }),
      run: (inp) => asm.assemble(inp),
    },
    sessionFirst: {
      setup: () => newSession(shared.sources, fresh()),
      run: (session) => session.assemble(query),
    },
    sessionUnchanged: {
      run: async () => {
        let a;
        for (let i = 0; i < REPEAT_BATCH; i++) a = await repeatSession.assemble(query);
        if (a !== repeatFirst || !repeatSession.report.reused) repeatSame = false;
        return a;
      },
    },
    sessionTurn: {
      setup: () => {
        turnNo++;
        turnOwn.buffer.add({
          text: itemText(w.extra),
          createdAt: new Date(NOW_MS - 60_000 + turnNo).toISOString(),
          category: "observation",
        });
        turnOwn.toolState.recordCall({
          tool: "tool_0007",
          ok: true,
          summary: itemText(w.extra, 20, 120),
          at: new Date(NOW_MS - 30_000 + turnNo).toISOString(),
        });
      },
      run: () => turnSession.beginTurn(query),
    },
  };
  const { timings: m, runs, warmup } = await measure(variants, forced);
  // Steady state: the same cold and new-turn runs without a forced GC before each (a full
  // GC evicts caches and leaves background sweeping running into the next run; a
  // long-running service sees full GCs now and then, not before every assembly; see
  // docs/performance.md for the optimized code a full GC used to discard). Both are
  // printed and judged.
  const steady = (
    await measure(
      { cold: variants.cold, sessionTurn: variants.sessionTurn },
      { runs: ctx.runs * STEADY_RUNS_FACTOR, warmup: STEADY_WARMUP, forceGc: false },
    )
  ).timings;
  if (!repeatSame) {
    console.log("  warning: an unchanged-session assemble did not return the cached assembly");
  }
  if (!turnSession.report.refetched) {
    console.log("  warning: beginTurn did not refetch the slots");
  }

  const cold = m.cold.result;
  const counter = fresh();
  const promptTokens = counter.count(cold.prompt);
  const promptChars = [...cold.prompt].length;
  const sessionPrompt = m.sessionFirst.result.prompt;

  const perCall = (x) => x / REPEAT_BATCH;
  const unchanged = {
    medianMs: perCall(m.sessionUnchanged.medianMs),
    minMs: perCall(m.sessionUnchanged.minMs),
    maxMs: perCall(m.sessionUnchanged.maxMs),
    cpuMedianMs: perCall(m.sessionUnchanged.cpuMedianMs),
  };
  table([
    ["variant", "median", "min", "max", "cpu median"],
    ["cold assemble (fresh counter)", ...fmt(m.cold)],
    ["cold assemble (fresh counter, fresh sources)", ...fmt(m.coldFresh)],
    ["session: first assemble (fresh counter)", ...fmt(m.sessionFirst)],
    [`session: unchanged (per call, batches of ${int(REPEAT_BATCH)})`, ...fmt(unchanged, true)],
    ["session: new turn (beginTurn, refetch)", ...fmt(m.sessionTurn)],
    ["steady state (no forced GC): cold assemble", ...fmt(steady.cold)],
    ["steady state (no forced GC): new turn", ...fmt(steady.sessionTurn)],
  ]);

  console.log("");
  targetTable([
    judge("assembly", {
      check: "cold assemble, wall median",
      figure: m.cold.medianMs,
      shown: ms(m.cold.medianMs),
      op: "<=",
      limit: TARGET_COLD_MS,
      shownLimit: `${TARGET_COLD_MS} ms`,
    }),

    judge("assembly", {
      check: "new turn (beginTurn), wall median",
      figure: m.sessionTurn.medianMs,
      shown: ms(m.sessionTurn.medianMs),
      op: "<=",
      limit: TARGET_TURN_MS,
      shownLimit: `${TARGET_TURN_MS} ms`,
    }),

    judge("assembly", {
      check: "cold assemble, steady state, wall median",
      figure: steady.cold.medianMs,
      shown: ms(steady.cold.medianMs),
      op: "<=",
      limit: TARGET_COLD_MS,
      shownLimit: `${TARGET_COLD_MS} ms`,
    }),
    judge("assembly", {
      check: "new turn, steady state, wall median",
      figure: steady.sessionTurn.medianMs,
      shown: ms(steady.sessionTurn.medianMs),
      op: "<=",
      limit: TARGET_TURN_MS,
      shownLimit: `${TARGET_TURN_MS} ms`,
    }),
    judge("assembly", {
      check: "cold assemble, steady state, cpu median",
      figure: steady.cold.cpuMedianMs,
      shown: ms(steady.cold.cpuMedianMs),
      op: "<=",
      limit: TARGET_COLD_MS,
      shownLimit: `${TARGET_COLD_MS} ms`,
    }),
    judge("assembly", {
      check: "new turn, steady state, cpu median",
      figure: steady.sessionTurn.cpuMedianMs,
      shown: ms(steady.sessionTurn.cpuMedianMs),
      op: "<=",
      limit: TARGET_TURN_MS,
      shownLimit: `${TARGET_TURN_MS} ms`,
    }),
  ]);
  console.log(
    "  wall = elapsed time (the target); cpu = process CPU time of the run (all threads), shown",
  );
  console.log("  because other processes on a shared machine stretch wall time, not CPU time.");
  console.log(
    "  CPU is judged in steady state only: a run right after a forced GC also pays for the",
  );
  console.log(
    "  collector's helper threads finishing that GC (with --single-threaded-gc its cpu median",
  );
  console.log("  equals its wall median, and the wall median is unchanged).");

  // Per slot: what its sources returned and what the assembly kept.
  const layers = cold.manifest.layers;
  const rows = [["layer", "items", "selected", "status", "chars", "tokens"]];
  for (const l of layers) {
    rows.push([
      l.id,
      int(l.items.length),
      int(l.items.filter((d) => d.status === "selected").length),
      l.status,
      int(l.used.chars),
      int(l.used.tokens),
    ]);
  }
  console.log("");
  table(rows);
  const totalItems = layers.reduce((a, l) => a + l.items.length, 0);
  console.log(
    `  prompt ${int(promptChars)} chars, ${int(promptTokens)} ${TOKENIZER} tokens ` +
      `(manifest: ${int(cold.manifest.used.chars)} chars, ${int(cold.manifest.used.tokens)} tokens); ` +
      `${int(totalItems)} items fetched per assembly`,
  );
  console.log(
    `  session prompt ${int([...sessionPrompt].length)} chars (adds the identity and skills segments)`,
  );
  console.log(
    `  unchanged session = cached assembly returned (same object); cold / unchanged = ` +
      `${Math.round(m.cold.medianMs / unchanged.medianMs).toLocaleString("en-US")}×`,
  );

  return {
    workload: {
      mode: "react",
      customSlot: KB_SLOT,
      schemaBudgetChars: SCHEMA_BUDGET_CHARS,
      tokenizer: TOKENIZER,
      query: QUERY,
      now: NOW,
      itemsPerSource: {
        constraints: CONSTRAINTS.length,
        planner: 2,
        task_memory: ITEMS,
        tool_state: ITEMS,
        profile: ITEMS,
        recall: ITEMS,
        kb: ITEMS,
      },
      toolState: { tools: TOOLS, calls: ITEMS - TOOLS },
      itemTextChars: [40, 300],
      repeatBatch: REPEAT_BATCH,
    },
    runs,
    warmup,
    cold: strip(m.cold),
    coldFreshSources: strip(m.coldFresh),
    sessionFirst: strip(m.sessionFirst),
    sessionUnchangedPerCallUs: toMicros(unchanged),
    sessionUnchangedBatch: strip(m.sessionUnchanged),
    sessionTurn: strip(m.sessionTurn),
    steadyState: { cold: strip(steady.cold), sessionTurn: strip(steady.sessionTurn) },
    unchangedReturnsCached: repeatSame,
    prompt: {
      chars: promptChars,
      tokens: promptTokens,
      manifestChars: cold.manifest.used.chars,
      manifestTokens: cold.manifest.used.tokens,
      sessionChars: [...sessionPrompt].length,
    },
    layers: Object.fromEntries(
      layers.map((l) => [
        l.id,
        {
          items: l.items.length,
          selected: l.items.filter((d) => d.status === "selected").length,
          status: l.status,
          chars: l.used.chars,
          tokens: l.used.tokens,
        },
      ]),
    ),
  };
}

function fmt(t, micro = false) {
  const f = micro ? (x) => `${x.toFixed(4)} ms` : ms;
  return [f(t.medianMs), f(t.minMs), f(t.maxMs), f(t.cpuMedianMs)];
}

/** {medianMs: …} → {medianUs: …}, three decimals. */
function toMicros(o) {
  return Object.fromEntries(
    Object.entries(o).map(([k, v]) => [k.replace(/Ms$/, "Us"), round3(v * 1000)]),
  );
}

function strip(m) {
  const { result: _result, ...rest } = m;
  return rest;
}
