/**
 * The tool-state source of docs/sources.md: a fixed tool registry and a bounded list of
 * recent calls, served as one item per tool and per call.
 */
import { z } from "zod";
import { InvalidInputError } from "../errors/index.js";
import { deepFreeze, isBlank, isoTimestamp, nonBlankString, textString } from "../text/index.js";
import { parse, rejectDuplicate, singleKindSource } from "./single-kind.js";
import type { ContextSource, SourceItem } from "./types.js";

const nonBlank = nonBlankString;
const timestamp = isoTimestamp;

export const ToolSpecSchema = z.object({
  name: nonBlank,
  description: textString,
  requiredArgs: z.array(nonBlank),
});
/** A registered tool. */
export type ToolSpec = z.infer<typeof ToolSpecSchema>;

export const ToolCallSchema = z.object({
  tool: nonBlank,
  ok: z.boolean(),
  summary: textString,
  at: timestamp,
});
/** One recorded tool call (`at` is an ISO-8601 instant given by the caller). */
export type ToolCall = z.infer<typeof ToolCallSchema>;
/** A recorded call with its sequence id (`call-1`, `call-2`, …). */
export type RecordedToolCall = ToolCall & { id: string };

/** What a recorded call's item is made of besides its rank. */
interface CallPart {
  text: string;
  data: NonNullable<SourceItem["data"]>;
}

let toolStateItems: (state: ToolState) => SourceItem[];
let toolStateVersion: (state: ToolState) => object;

/**
 * Tool registry (fixed at construction; names unique) plus a bounded list of recent
 * calls (`maxCalls`, default 20; oldest evicted). Calls get ids `call-1`, `call-2`, …
 */
export class ToolState {
  readonly maxCalls: number;
  readonly #tools: ToolSpec[];
  /** Each tool's item, built once and frozen: tools are fixed at construction. */
  readonly #toolItems: SourceItem[];
  #calls: RecordedToolCall[] = [];
  /**
   * Each held call's line and data, built when it was recorded (calls never change; the
   * data is frozen and shared by every fetch — only a call's rank moves as calls come in).
   */
  #callParts: CallPart[] = [];
  #counter = 0;
  /** A new token on every change of the recent calls (see `markValidated`). */
  #version = {};

  static {
    toolStateItems = (state) => state.#sourceItems();
    toolStateVersion = (state) => state.#version;
  }

  constructor(tools: readonly ToolSpec[], options: { maxCalls?: number } = {}) {
    this.#tools = parse(z.array(ToolSpecSchema), tools, ["tools"]);
    const seen = new Set<string>();
    this.#tools.forEach((t, i) => {
      rejectDuplicate(seen, t.name, "tool name", ["tools", i, "name"]);
    });
    const maxCalls = options.maxCalls ?? 20;
    if (!Number.isInteger(maxCalls) || maxCalls < 0) {
      throw new InvalidInputError(`maxCalls must be an integer ≥ 0, got ${maxCalls}`, "maxCalls");
    }
    this.maxCalls = maxCalls;
    this.#toolItems = this.#tools.map(toolItem);
  }

  /** Records a call (validated; path `call.…`) and returns a copy with its id. */
  recordCall(call: ToolCall): RecordedToolCall {
    const c = parse(ToolCallSchema, call, ["call"]);
    const recorded: RecordedToolCall = { ...c, id: `call-${++this.#counter}` };
    this.#calls.push(recorded);
    this.#callParts.push({
      text: toolCallLine(recorded),
      data: deepFreeze({ type: "call", tool: c.tool, ok: c.ok, summary: c.summary }),
    });
    while (this.#calls.length > this.maxCalls) {
      this.#calls.shift();
      this.#callParts.shift();
    }
    this.#version = {};
    return { ...recorded };
  }

  // Tools in registration order, then recent calls newest first (see toolStateSource).
  #sourceItems(): SourceItem[] {
    const tools = this.#toolItems.length;
    const calls = this.#calls.length;
    // Plain loops, no closures per call: see "Object shapes" in docs/performance.md.
    const items: SourceItem[] = new Array(tools + calls);
    for (let i = 0; i < tools; i++) items[i] = this.#toolItems[i] as SourceItem;
    for (let k = 0; k < calls; k++) {
      const j = calls - 1 - k;
      const c = this.#calls[j] as RecordedToolCall;
      const part = this.#callParts[j] as CallPart;
      items[tools + k] = {
        id: c.id,
        text: part.text,
        category: "call",
        createdAt: c.at,
        rank: tools + k,
        data: part.data,
      };
    }
    return items;
  }

  /** Copies of the registered tools, in registration order. */
  tools(): ToolSpec[] {
    return this.#tools.map((t) => ({ ...t, requiredArgs: [...t.requiredArgs] }));
  }

  /** Copies of the recent calls, oldest first. */
  recentCalls(): RecordedToolCall[] {
    return this.#calls.map((c) => ({ ...c }));
  }

  /** Forgets the recent calls (ids keep counting up). */
  clearCalls(): void {
    this.#calls = [];
    this.#callParts = [];
    this.#version = {};
  }
}

// A registered tool as its item (rank = registration order), frozen.
function toolItem(t: ToolSpec, rank: number): SourceItem {
  return deepFreeze({
    id: `tool:${t.name}`,
    text: toolLine(t),
    category: "tool",
    rank,
    data: {
      type: "tool",
      name: t.name,
      description: t.description,
      requiredArgs: [...t.requiredArgs],
    },
  });
}

/** `name(arg1, arg2) — description` (no dash part when the description is blank). */
export function toolLine(tool: ToolSpec): string {
  const head = `${tool.name}(${tool.requiredArgs.join(", ")})`;
  return isBlank(tool.description) ? head : `${head} — ${tool.description}`;
}

/** `name → ok: summary` / `name → failed: summary` (no `: summary` when it is blank). */
export function toolCallLine(call: ToolCall): string {
  const head = `${call.tool} → ${call.ok ? "ok" : "failed"}`;
  return isBlank(call.summary) ? head : `${head}: ${call.summary}`;
}

/**
 * Tool state at fetch time: one item per tool in registration order (id `tool:NAME`,
 * category `tool`), then one per recent call **newest first** (id `call-N`, category
 * `call`, createdAt = `at`), so a top-k cut keeps the latest calls. `rank` carries this
 * order into the assembler's item ranking. Tool items and every item's `data` are built
 * once and frozen (shared by every fetch); a call's item is new on each fetch, as its
 * rank moves with every call recorded after it.
 */
export function toolStateSource(state: ToolState, id = "tool_state"): ContextSource {
  return singleKindSource(id, "tool_state", () => toolStateItems(state), true, {
    current: () => toolStateVersion(state),
    upfront: true,
  });
}
