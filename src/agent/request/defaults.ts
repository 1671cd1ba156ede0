/**
 * The agent loop's defaults (docs/conversation.md "the agent loop with defaults"): every
 * budget of a whole request scaled from the model's context window, in one place, so a
 * conversation policy or a caller can read them and override any one.
 */
import {
  CLOCK_SLOT,
  createSchemaRegistry,
  DEFAULT_SCHEMAS,
  type ModeSchema,
  type SchemaRegistry,
} from "../../assemble/index.js";
import { MIN_TOOL_RESULT_MAX_TOKENS } from "../../conversation/index.js";
import { InvalidInputError } from "../../errors/index.js";
import { type ContextSource, type SlotSpec, staticSource } from "../../sources/index.js";
import { deepFreeze } from "../../text/index.js";

/** Token budgets of the system side's slots (tokens of the request's counter). */
export interface AgentSlotBudgets {
  /** The whole system side (the assembler's global budget). */
  system: number;
  /** Recalled memory. */
  recall: number;
  /** Knowledge-base chunks. */
  kb: number;
  /** Task memory, tool state and the profile, each. */
  perSlot: number;
}

/** The defaults of a whole agent request for one context window. */
export interface AgentDefaults {
  contextWindow: number;
  /** `max_tokens` of the request: 1/20 of the window, in [1024, 16384]. */
  responseReserve: number;
  tailReserve: number;
  /**
   * The conversation policy: the window moves down to `lowWaterRatio` of its room when it
   * must move (then holds for `(1 − lowWaterRatio)` of the room of growth):
   * {@link AGENT_WORKING_SET_TOKENS} of the room, within {@link AGENT_LOW_WATER_BOUNDS}
   * (0.74 at 64k, 0.4 at 200k and above). A move costs one cache write of what is kept,
   * and that cost does not depend on the window while reads grow with it: a large window
   * moves in big steps, a small one keeps its working set. One tool result never takes
   * more than a tenth of the window.
   */
  policy: {
    lowWaterRatio: number;
    toolResultMaxTokens: number;
    /**
     * Clearing under pressure, on at 0.8 of the room: a request without an anchor derives
     * what it clears from the conversation on the window's grid (nothing while it fits
     * under the trigger; then largest results first, each step freeing at least
     * `clearAtLeastTokens` — one window step — and sparing the last
     * `keepRecentToolResults` tool results). Measured on the agent study (16 seeds): at
     * 200k 0.30–0.42× the hand-built cost (0.33–0.46× without), every fact kept; at 64k
     * 0.51–0.67× (0.52–0.66× without), facts at least the hand-built loop's on every seed.
     * `null` turns it off.
     */
    clearTrigger: number | null;
    clearAtLeastTokens: number;
    /**
     * Batch clearing, before any pressure: old tool results (before the current turn and
     * the last `keepRecentToolResults`) are cleared, oldest first, in runs freeing at
     * least this many tokens — a quarter of the window ({@link AGENT_WINDOW_SHARES}).
     */
    clearBatchTokens: number | null;
    keepRecentToolResults: number;
  };
  /**
   * Grid of the stateless window start (tokens of history from the conversation's first
   * message): without an anchor from the caller, the window starts at the first user
   * message past the first grid line at or after the oldest start that fits (or at that
   * start, when it is a held start on the grid: `gridWindowStart`), so requests over a
   * growing conversation share a start until it must move.
   */
  windowStepTokens: number;
  /**
   * Room kept at the window's start for a digest of the turns the last move dropped
   * (asks, commands, errors, the lines quoting ids and numbers): 1/32 of the window, in
   * [256, 8,000]. It changes only when the window moves, so it costs no extra cache break.
   */
  digestTokens: number;
  /** System-side budgets, in tokens (recall and KB sized for real prompts). */
  slots: AgentSlotBudgets;
  /** Recalled memories and KB chunks at most. */
  recallTopK: number;
  kbTopK: number;
  /** Renderer options: every layer of the dynamic tier is sent after the last cached block. */
  render: { dynamicPlacement: "user" };
}

/**
 * History the window keeps at least after a move (when the room allows): an agent's last
 * several turns, so the facts it is working with survive the move.
 */
export const AGENT_WORKING_SET_TOKENS = 40_000;
/** Bounds of the low-water ratio: move at least a quarter of the room, keep at least 40 %. */
export const AGENT_LOW_WATER_BOUNDS = [0.4, 0.75] as const;

/** Share of the room above which a request clears under pressure (agent defaults). */
export const AGENT_CLEAR_TRIGGER = 0.8;

/**
 * Tool results clearing spares (the agent's current working set): the last four tool
 * messages, about the last tool round or two. Every spared result is reread by each
 * request until it is cleared; measured on the wider agent study (agent-wide, seed 10 at
 * 200k, with batches of a quarter of the window): 8 cost 0.56× the hand-built loop, 4
 * 0.48×, 3 no less than 4.
 */
export const AGENT_KEEP_RECENT_TOOL_RESULTS = 4;

/** One budget scaled from the context window: its share, clamped, and why it is that. */
export interface WindowShare {
  /** Share of the window as a fraction `[numerator, denominator]` (floor of window × n / d). */
  readonly share: readonly [number, number];
  readonly minimum: number;
  readonly maximum: number;
  readonly reason: string;
}

/**
 * Every budget {@link agentDefaults} scales from the context window, one row each: the
 * share, its bounds, and the reason for the share. The one place to read or change them.
 */
export const AGENT_WINDOW_SHARES = {
  responseReserve: {
    share: [1, 20],
    minimum: 1024,
    maximum: 16_384,
    reason:
      "max_tokens: room for one long answer or a tool call carrying a file, leaving 95 % of the window to the context; never under a short reply's worth, never over what one turn emits",
  },
  system: {
    share: [1, 10],
    minimum: 1000,
    maximum: 40_000,
    reason:
      "the system side (instructions, memory, KB, clock): a tenth keeps the conversation the largest part, which is what an agent loop grows",
  },
  toolResultMaxTokens: {
    share: [1, 10],
    minimum: MIN_TOOL_RESULT_MAX_TOKENS,
    maximum: 8000,
    reason:
      "one tool result never takes more than a tenth of the window: a log dump cannot push out the turns around it; and never more than 8,000 tokens (the head, the tail and the elided part's lines quoting ids and numbers are kept): every later request rereads it, and each window move rewrites it. Measured on agent-wide at 200k: sessions of 5–6 large results a turn read 91–93 % of their input from the cache with 20,000, 93.7–95 % with 8,000",
  },
  clearBatch: {
    share: [1, 4],
    minimum: 1000,
    maximum: 250_000,
    reason:
      "batch clearing: old tool results are cleared, oldest first, each time those not cleared yet free a quarter of the window. A batch rewrites the cache from its first result on, reads grow with what is kept: a quarter keeps the history small without rewriting often. Measured on agent-wide seed 10 at 200k (a session that never fills the window): without batches 0.76× the hand-built cost; a fifth 0.50× (93.7 % read from the cache), a quarter 0.48× (94.2 %), two fifths 0.60× (95.6 %)",
  },
  digestTokens: {
    share: [1, 32],
    minimum: 256,
    maximum: 8000,
    reason:
      "the digest of what the last window move dropped: enough for the asks, commands, errors and quoted ids of a few turns, small enough to fit the moved window's start",
  },
  recall: {
    share: [1, 50],
    minimum: 200,
    maximum: 16_000,
    reason: "recalled memories: about a dozen real memories at 200k, a few at small windows",
  },
  kb: {
    share: [1, 33],
    minimum: 300,
    maximum: 24_000,
    reason:
      "knowledge-base chunks: larger than recall (a chunk is a paragraph, not a sentence), about eight real chunks at 200k",
  },
  perSlot: {
    share: [1, 100],
    minimum: 100,
    maximum: 8000,
    reason:
      "task memory, tool state and the profile, each: short structured lists that need little room",
  },
} as const satisfies Readonly<Record<string, WindowShare>>;

/** A row of {@link AGENT_WINDOW_SHARES} applied to a window: its share, floored and clamped. */
function windowShare(contextWindow: number, row: WindowShare): number {
  const [n, d] = row.share;
  const x = Math.floor((contextWindow * n) / d);
  return Math.min(row.maximum, Math.max(row.minimum, x));
}

/**
 * The defaults of a whole agent request for a context window of `contextWindow` tokens:
 * response reserve, conversation policy, the stateless window grid and the system side's
 * token budgets, each a share of the window ({@link AGENT_WINDOW_SHARES}; see
 * {@link AgentDefaults}).
 *
 * @example agentDefaults(200_000).slots.recall // 4000
 */
export function agentDefaults(contextWindow: number): AgentDefaults {
  if (!Number.isInteger(contextWindow) || contextWindow < 1) {
    throw new InvalidInputError(
      `contextWindow must be a positive integer, got ${String(contextWindow)}`,
      "contextWindow",
    );
  }
  const w = AGENT_WINDOW_SHARES;
  const of = (row: WindowShare) => windowShare(contextWindow, row);
  const responseReserve = of(w.responseReserve);
  const system = of(w.system);
  const room = Math.max(1, contextWindow - responseReserve - system);
  const [lo, hi] = AGENT_LOW_WATER_BOUNDS;
  const lowWaterRatio =
    Math.round(Math.min(hi, Math.max(lo, AGENT_WORKING_SET_TOKENS / room)) * 100) / 100;
  const windowStepTokens = Math.max(1, Math.floor((1 - lowWaterRatio) * room));
  return {
    contextWindow,
    responseReserve: Math.min(responseReserve, Math.floor(contextWindow / 2)),
    tailReserve: 0,
    policy: {
      lowWaterRatio,
      toolResultMaxTokens: of(w.toolResultMaxTokens),
      clearTrigger: AGENT_CLEAR_TRIGGER,
      clearAtLeastTokens: windowStepTokens,
      clearBatchTokens: of(w.clearBatch),
      keepRecentToolResults: AGENT_KEEP_RECENT_TOOL_RESULTS,
    },
    windowStepTokens,
    digestTokens: of(w.digestTokens),
    slots: {
      system,
      recall: of(w.recall),
      kb: of(w.kb),
      perSlot: of(w.perSlot),
    },
    recallTopK: 12,
    kbTopK: 8,
    render: { dynamicPlacement: "user" },
  };
}

/** Slots the agent schemas add to every mode (instructions per session, KB and clock per request). */
const AGENT_EXTRA: readonly SlotSpec[] = [
  {
    kind: "instructions",
    priority: 0.5,
    cacheTier: "session",
    title: "Project instructions",
    itemStyle: "block",
  },
  { kind: "kb", priority: 7, cacheTier: "dynamic", title: "Knowledge base" },
  CLOCK_SLOT,
];

function sized(spec: SlotSpec, d: AgentDefaults): SlotSpec {
  const { charBudget: _chars, ...filter } = spec.filter ?? {};
  // Policy and the clock are whole or nothing: no budget of their own.
  if (spec.kind === "constraints" || spec.kind === "instructions" || spec.kind === "clock") {
    return spec.filter === undefined ? spec : { ...spec, filter };
  }
  const recall = spec.kind === "recall_memory";
  const kb = spec.kind === "kb";
  const tokenBudget = recall ? d.slots.recall : kb ? d.slots.kb : d.slots.perSlot;
  const topK = recall ? d.recallTopK : kb ? d.kbTopK : filter.topK;
  return {
    ...spec,
    filter: { ...filter, tokenBudget, ...(topK !== undefined ? { topK } : {}) },
  };
}

/**
 * The default schemas sized for an agent's window: every mode of {@link DEFAULT_SCHEMAS}
 * plus project instructions, a KB slot and the per-request clock; char budgets replaced
 * by token budgets from {@link agentDefaults}; the global budget in tokens.
 *
 * @example agentSchemas(agentDefaults(200_000)).resolve("react").schema.budgetTokens // 20000
 */
export function agentSchemas(d: AgentDefaults): SchemaRegistry {
  const schemas: ModeSchema[] = DEFAULT_SCHEMAS.map((s) => ({
    mode: s.mode,
    slots: [...s.slots, ...AGENT_EXTRA.filter((x) => !s.slots.some((y) => y.kind === x.kind))].map(
      (slot) => sized(slot, d),
    ),
    budgetChars: null,
    budgetTokens: d.slots.system,
  }));
  return createSchemaRegistry(deepFreeze(schemas));
}

/**
 * The per-request clock as a source of the `clock` slot: one item, `Current time: <now>`
 * (the assembly's `now`, never the system clock).
 *
 * @example clockSource() // serves { id: "clock", text: "Current time: 2026-11-30T09:00:00Z" }
 */
export function clockSource(id = "clock"): ContextSource {
  return staticSource(id, ["clock"], (_slot, query) => [
    { id: "clock", text: `Current time: ${query.now}` },
  ]);
}
