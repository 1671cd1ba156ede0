/**
 * Compaction without a model: a deterministic, structured summary of the messages that
 * leave the window — what the user asked (verbatim), files touched, commands run and how
 * they ended, errors, what the assistant said, ids and numbers quoted in tool results,
 * open tasks — under a token budget. It is a {@link Summarize}, so it plugs into
 * `compactConversation` where an LLM summarizer would.
 */
import { resolveTokenCounter, type TokenCounter } from "../tokens/index.js";
import type { Summarize } from "./compact.js";
import { canonicalJson } from "./count.js";
import { parseMessage } from "./fast-parse.js";
import { clipQuote, quotedLines } from "./quotes.js";
import type { Message, MessageInput } from "./schema.js";

/**
 * Validates messages one by one (`invalid_input` at `messages[i]…`), for the steps that
 * take messages outside a plan (summarizers).
 *
 * @example parseMessages([{ id: "u1", role: "user", content: [{ type: "text", text: "hi" }] }])[0].role // "user"
 */
export function parseMessages(messages: readonly MessageInput[]): Message[] {
  return messages.map((m, i) => parseMessage(m, ["messages", i]));
}

/** Options of {@link createDigestSummarizer}. */
export interface DigestOptions {
  /** Tokens the summary may take (default 2,000). */
  maxTokens?: number;
  /** Counts the summary (default `estimate`). */
  tokenizer?: TokenCounter | string;
}

/** Characters one quoted line keeps (asks are verbatim up to this many). */
const LINE_CHARS = 600;
const PATH =
  /(?:[\w.-]+\/)+[\w.-]+|\b[\w-]+\.(?:ts|tsx|js|mjs|cjs|json|md|py|rs|go|java|c|h|cpp|sh|ya?ml|toml|sql|css|html)\b/g;
const EXIT = /\bexit(?:ed)?(?: with)?(?: code| status)?[:= ]+(\d+)/i;
const TASK = /^\s*(?:[-*] \[ \]|TODO\b|todo:)(.*)$/;
const COMMAND_KEYS = ["command", "cmd", "script"];

const clip = (s: string): string => {
  const line = s.replace(/\s+/g, " ").trim();
  return line.length <= LINE_CHARS ? line : `${line.slice(0, LINE_CHARS - 1)}…`;
};

interface Sections {
  asks: string[];
  files: Set<string>;
  commands: string[];
  errors: string[];
  said: string[];
  /** Lines quoting ids, mixed tokens, only numbers (each in conversation order). */
  quoted: [Set<string>, Set<string>, Set<string>];
  tasks: string[];
}

// The command a call ran, when its input names one.
function commandOf(input: unknown): string | null {
  if (input === null || typeof input !== "object") return null;
  const record = input as Record<string, unknown>;
  const key = COMMAND_KEYS.find((k) => typeof record[k] === "string");
  return key === undefined ? null : (record[key] as string);
}

function collectText(s: Sections, role: string, text: string): void {
  if (role === "user") s.asks.push(clip(text));
  else s.said.push(clip(text));
  for (const line of text.split("\n")) {
    const task = TASK.exec(line);
    if (task) s.tasks.push(clip(task[1] ?? ""));
  }
  for (const f of text.match(PATH) ?? []) s.files.add(f);
}

function collect(messages: readonly Message[]): Sections {
  const s: Sections = {
    asks: [],
    files: new Set(),
    commands: [],
    errors: [],
    said: [],
    quoted: [new Set(), new Set(), new Set()],
    tasks: [],
  };
  const calls = new Map<string, { name: string; command: string | null }>();
  for (const m of messages) {
    for (const p of m.content) {
      if (p.type === "text") collectText(s, m.role, p.text);
      else if (p.type === "tool_call") {
        calls.set(p.callId, { name: p.name, command: commandOf(p.input) });
        for (const f of canonicalJson(p.input).match(PATH) ?? []) s.files.add(f);
      } else {
        const call = calls.get(p.callId);
        const exit = EXIT.exec(p.output)?.[1];
        const status = p.isError === true ? "error" : "ok";
        const ended = exit === undefined ? status : `${status}, exit ${exit}`;
        if (call?.command != null) s.commands.push(clip(`${call.command} → ${ended}`));
        if (p.isError === true) {
          s.errors.push(clip(`${call?.name ?? "tool"} (call ${p.callId}): ${p.output}`));
        }
        // The whole line, not the bare id: "build b-1f2e failed" says what the id is.
        for (const q of quotedLines(p.output)) {
          s.quoted[q.tier].add(clipQuote(clip(p.output.slice(q.start, q.end))));
        }
      }
    }
  }
  return s;
}

/** A section of the digest: its items in the order they are shown, and which go first. */
interface Section {
  readonly title: string;
  readonly items: readonly string[];
  readonly style: "list" | "inline";
  /**
   * Weight of the section in the first round: it may take `weight / (sum of the weights)`
   * of the budget before every section had its turn (the first round's caps add up to the
   * budget, never more).
   */
  readonly weight: number;
  /** Item indexes, most wanted first (default: shown order). */
  readonly priority?: readonly number[];
}

/** Asks in priority order: the first (the task) and then the newest. */
const firstThenNewest = (n: number): number[] =>
  n === 0 ? [] : [0, ...Array.from({ length: n - 1 }, (_, i) => n - 1 - i)];

function sectionsOf(s: Sections): Section[] {
  return [
    {
      title: "User asked:",
      items: s.asks,
      style: "list",
      weight: 30,
      priority: firstThenNewest(s.asks.length),
    },
    { title: "Open tasks:", items: s.tasks, style: "list", weight: 10 },
    { title: "Errors:", items: s.errors, style: "list", weight: 15 },
    { title: "Commands:", items: s.commands, style: "list", weight: 15 },
    { title: "Files:", items: [...s.files].sort(), style: "inline", weight: 10 },
    // Ids, then mixed tokens, then bare numbers, each newest first: what the budget cuts is
    // the oldest noise. The heaviest section: the ids and numbers later turns need are
    // what a digest is for.
    {
      title: "Quoted ids and numbers:",
      items: s.quoted.flatMap((lines) => [...lines].reverse()),
      style: "list",
      weight: 100,
    },
    { title: "Assistant said:", items: s.said, style: "list", weight: 15 },
  ];
}

/** The text of the chosen items (`chosen[k]`: item indexes of section k), in shown order. */
function render(sections: readonly Section[], chosen: readonly Set<number>[]): string {
  const out: string[] = [];
  sections.forEach((sec, k) => {
    const items = sec.items.filter((_, i) => chosen[k]?.has(i));
    if (items.length === 0) return;
    out.push(
      sec.style === "list"
        ? `${sec.title}\n- ${items.join("\n- ")}`
        : `${sec.title} ${items.join(", ")}`,
    );
  });
  return out.join("\n");
}

/**
 * The summary text of `messages` under `maxTokens`: sections (asks, open tasks, errors,
 * commands, files, lines of tool results quoting ids and numbers, what the assistant
 * said) take items in two rounds — first each up to its weight's share of the budget (asks the
 * first and the newest, quotes ids first and newest first), then the rest in the same
 * order while the whole still fits — so a long run of asks never crowds out the ids, and
 * the text is never over budget. Deterministic.
 *
 * @example digestConversation([{ id: "u1", role: "user", content: [{ type: "text", text: "fix src/a.ts" }] }], getTokenCounter("estimate"), 200) // "User asked:\n- fix src/a.ts\nFiles: src/a.ts"
 */
export function digestConversation(
  messages: readonly MessageInput[],
  counter: TokenCounter,
  maxTokens: number,
): string {
  const sections = sectionsOf(collect(parseMessages(messages)));
  const chosen = sections.map(() => new Set<number>());
  // Items are counted one by one (counting the whole text again per item is quadratic);
  // counts are nearly additive, and the final check takes the last chosen off until it fits.
  const order: [number, number][] = [];
  const costs = sections.map(() => new Map<number, number>());
  const costOf = (k: number, i: number): number => {
    const memo = costs[k] as Map<number, number>;
    let c = memo.get(i);
    if (c === undefined) {
      c = counter.count(`\n- ${(sections[k] as Section).items[i] as string}`);
      memo.set(i, c);
    }
    return c;
  };
  let used = 0;
  const weights = sections.reduce((sum, sec) => sum + sec.weight, 0);
  for (const round of [0, 1]) {
    sections.forEach((sec, k) => {
      const cap = round === 0 ? Math.floor((sec.weight * maxTokens) / weights) : maxTokens;
      const set = chosen[k] as Set<number>;
      let own = 0;
      for (const i of sec.priority ?? sec.items.keys()) {
        // No item costs less than a token: stop once the room is gone.
        if (own >= cap || used >= maxTokens) break;
        if (set.has(i)) continue;
        const title = set.size === 0 ? counter.count(`\n${sec.title}`) : 0;
        const cost = title + costOf(k, i);
        if (own + cost > cap || used + cost > maxTokens) continue;
        set.add(i);
        order.push([k, i]);
        own += cost;
        used += cost;
      }
    });
  }
  let out = render(sections, chosen);
  while (order.length > 0 && counter.count(out) > maxTokens) {
    const [k, i] = order.pop() as [number, number];
    chosen[k]?.delete(i);
    out = render(sections, chosen);
  }
  return out;
}

/**
 * A {@link Summarize} that needs no model: {@link digestConversation} under
 * `maxTokens` (default 2,000).
 *
 * @example
 * const done = await compactConversation({ messages, plan, thresholdTokens: 20_000,
 *   summarize: createDigestSummarizer({ maxTokens: 2000, tokenizer: "o200k_base" }) });
 */
export function createDigestSummarizer(options: DigestOptions = {}): Summarize {
  const counter = resolveTokenCounter(options.tokenizer, "tokenizer");
  const maxTokens = options.maxTokens ?? 2000;
  return (messages) => digestConversation(messages, counter, maxTokens);
}
