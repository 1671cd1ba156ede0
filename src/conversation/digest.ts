/**
 * Compaction without a model: a deterministic, structured summary of the messages that
 * leave the window — what the user asked (verbatim), files touched, commands run and how
 * they ended, errors, what the assistant said, ids and numbers quoted in tool results,
 * open tasks — under a token budget. It is a {@link Summarize}, so it plugs into
 * `compactConversation` where an LLM summarizer would.
 */
import { invalidFromZod } from "../errors/index.js";
import { resolveTokenCounter, type TokenCounter } from "../tokens/index.js";
import type { Summarize } from "./compact.js";
import { canonicalJson } from "./count.js";
import { type Message, type MessageInput, MessageSchema } from "./schema.js";

/**
 * Validates messages one by one (`invalid_input` at `messages[i]…`), for the steps that
 * take messages outside a plan (summarizers).
 *
 * @example parseMessages([{ id: "u1", role: "user", content: [{ type: "text", text: "hi" }] }])[0].role // "user"
 */
export function parseMessages(messages: readonly MessageInput[]): Message[] {
  return messages.map((m, i) => {
    const parsed = MessageSchema.safeParse(m);
    if (!parsed.success) throw invalidFromZod(parsed.error, ["messages", i]);
    return parsed.data;
  });
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
/** Characters a line quoting an id or a number from a tool result keeps. */
const QUOTE_CHARS = 200;
const PATH =
  /(?:[\w.-]+\/)+[\w.-]+|\b[\w-]+\.(?:ts|tsx|js|mjs|cjs|json|md|py|rs|go|java|c|h|cpp|sh|ya?ml|toml|sql|css|html)\b/g;
/**
 * A line quoting an id (ticket-like `AUTH-1234`, codes `E21206`, hex hashes) or, weaker, a
 * number of 3+ digits. Not global: `test` keeps no state between lines.
 */
const QUOTES_ID =
  /\b(?:[A-Za-z]+\d*[-_#][A-Za-z0-9_-]*\d[A-Za-z0-9_-]*|[A-Za-z]+\d{3,}[A-Za-z0-9_-]*|[0-9a-f]{7,40})\b/;
const QUOTES_NUMBER = /\b\d{3,}(?:\.\d+)?\b/;
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
  /** Lines quoting ids, then lines quoting only numbers (each in conversation order). */
  quoted: [Set<string>, Set<string>];
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
    quoted: [new Set(), new Set()],
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
        for (const line of p.output.split("\n")) {
          const tier = QUOTES_ID.test(line)
            ? s.quoted[0]
            : QUOTES_NUMBER.test(line)
              ? s.quoted[1]
              : null;
          tier?.add(clip(line).slice(0, QUOTE_CHARS));
        }
      }
    }
  }
  return s;
}

/**
 * The summary text of `messages` under `maxTokens`: sections in priority order (asks,
 * open tasks, errors, commands, files, lines of tool results quoting ids and numbers,
 * what the assistant said); lines are
 * added while the whole still fits, so it is never over budget. Deterministic.
 *
 * @example digestConversation([{ id: "u1", role: "user", content: [{ type: "text", text: "fix src/a.ts" }] }], getTokenCounter("estimate"), 200) // "User asked:\n- fix src/a.ts\nFiles: src/a.ts"
 */
export function digestConversation(
  messages: readonly MessageInput[],
  counter: TokenCounter,
  maxTokens: number,
): string {
  const s = collect(parseMessages(messages));
  const sections: [string, string[], string][] = [
    ["User asked:", s.asks, "list"],
    ["Open tasks:", s.tasks, "list"],
    ["Errors:", s.errors, "list"],
    ["Commands:", s.commands, "list"],
    ["Files:", [...s.files].sort(), "inline"],
    // Ids before bare numbers, newest first: what the budget cuts is the oldest noise.
    [
      "Quoted ids and numbers:",
      [...[...s.quoted[0]].reverse(), ...[...s.quoted[1]].reverse()],
      "list",
    ],
    ["Assistant said:", s.said, "list"],
  ];
  // Pieces are counted one by one (counting the whole text again per line is quadratic);
  // counts are nearly additive, and the final check takes pieces off until the whole fits.
  const pieces: string[] = [];
  let used = 0;
  for (const [title, items, style] of sections) {
    for (let i = 0; i < items.length; i++) {
      const item = items[i] as string;
      const sep = pieces.length === 0 ? "" : "\n";
      const piece =
        i === 0
          ? `${sep}${title}${style === "list" ? "\n- " : " "}${item}`
          : `${style === "list" ? "\n- " : ", "}${item}`;
      const cost = counter.count(piece);
      if (used + cost > maxTokens) break;
      pieces.push(piece);
      used += cost;
    }
  }
  let out = pieces.join("");
  while (pieces.length > 0 && counter.count(out) > maxTokens) {
    pieces.pop();
    out = pieces.join("");
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
