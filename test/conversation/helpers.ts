/**
 * Shared fixtures of the conversation tests: message builders, an independent recount
 * (docs/conversation.md's formula written again here), a reference of units and orphans, a checker of
 * the output's tool-call pairing, and fast-check generators of agent conversations with
 * tool exchanges, parallel calls, errors, huge outputs, CJK and emoji.
 */
import fc from "fast-check";
import { countTokens as gptO200k } from "gpt-tokenizer/encoding/o200k_base";
import type {
  ConversationPlan,
  ConversationPolicyInput,
  MessageInput,
} from "../../src/conversation/index.js";
import { createTokenCounter, type TokenCounter } from "../../src/tokens/index.js";

export const user = (id: string, text: string): MessageInput => ({
  id,
  role: "user",
  content: [{ type: "text", text }],
});

export const say = (id: string, text: string): MessageInput => ({
  id,
  role: "assistant",
  content: [{ type: "text", text }],
});

/** An assistant message calling tools: `[callId, name, input]` each. */
export const calls = (id: string, ...list: [string, string, unknown][]): MessageInput => ({
  id,
  role: "assistant",
  content: list.map(([callId, name, input]) => ({
    type: "tool_call" as const,
    callId,
    name,
    input: input as never,
  })),
});

/** A tool message answering one or more calls: `[callId, output]` each. */
export const results = (id: string, ...list: [string, string][]): MessageInput => ({
  id,
  role: "tool",
  content: list.map(([callId, output]) => ({ type: "tool_result" as const, callId, output })),
});

/** A counter whose count is the text's length in UTF-16 units: totals are easy to read. */
export const lengthCounter = (): TokenCounter => createTokenCounter("length", (t) => t.length);

// --- The independent recount -------------------------------------------------------

const byCodePoint = (a: string, b: string): number => {
  const x = [...a].map((c) => c.codePointAt(0) as number);
  const y = [...b].map((c) => c.codePointAt(0) as number);
  for (let i = 0; i < Math.min(x.length, y.length); i++) {
    if (x[i] !== y[i]) return (x[i] as number) - (y[i] as number);
  }
  return x.length - y.length;
};

/** Canonical JSON written from the spec's words: keys by code point, no whitespace. */
export function referenceJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(referenceJson).join(",")}]`;
  if (value !== null && typeof value === "object") {
    const entries = Object.entries(value as Record<string, unknown>).sort(([a], [b]) =>
      byCodePoint(a, b),
    );
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${referenceJson(v)}`).join(",")}}`;
  }
  return JSON.stringify(value);
}

/** `tokens(message) = 4 + Σ tokens(part)`, with `count` for each text. */
export function recount(message: MessageInput, count: (text: string) => number): number {
  let total = 4;
  for (const p of message.content) {
    if (p.type === "text") total += count(p.text);
    else if (p.type === "tool_call") total += count(p.name) + count(referenceJson(p.input));
    else total += count(p.output);
  }
  return total;
}

const AS_TEXT = { allowedSpecial: new Set<string>(), disallowedSpecial: new Set<string>() };
/** gpt-tokenizer's o200k_base count, special-token literals counted as text. */
export const o200kReference = (text: string): number => gptO200k(text, AS_TEXT);

// --- Reference units and orphans ----------------------------------------------------

const callIds = (m: MessageInput): string[] =>
  m.content.flatMap((p) => (p.type === "tool_call" ? [p.callId] : []));
const resultIds = (m: MessageInput): string[] =>
  m.content.flatMap((p) => (p.type === "tool_result" ? [p.callId] : []));

/** docs/conversation.md's units, written again: index lists, and whether each is an orphan. */
export function referenceUnits(given: readonly MessageInput[]) {
  const messages = withoutStrayResults(given);
  const units: { members: number[]; orphan: boolean }[] = [];
  let i = 0;
  while (i < messages.length) {
    const m = messages[i] as MessageInput;
    if (m.role === "assistant" && callIds(m).length > 0) {
      const open = new Set(callIds(m));
      const members = [i++];
      while (i < messages.length && messages[i]?.role === "tool") {
        const answers = resultIds(messages[i] as MessageInput);
        if (!answers.every((id) => open.has(id))) break;
        for (const id of answers) open.delete(id);
        members.push(i++);
      }
      // Unanswered calls beside answered ones are removed as stray parts: not an orphan.
      units.push({ members, orphan: open.size > 0 && open.size === callIds(m).length });
    } else {
      units.push({ members: [i], orphan: m.role === "tool" });
      i += 1;
    }
  }
  return units;
}

/**
 * docs/conversation.md's stray results, written again: a tool message answering a call
 * made before it loses its results for calls never made.
 */
export function withoutStrayResults(messages: readonly MessageInput[]): MessageInput[] {
  const made = new Set<string>();
  return messages.map((m) => {
    const ids = resultIds(m);
    const stray = ids.filter((id) => !made.has(id));
    for (const id of callIds(m)) made.add(id);
    if (stray.length === 0 || stray.length === ids.length) return m;
    return {
      ...m,
      content: m.content.filter((p) => p.type !== "tool_result" || made.has(p.callId)),
    } as MessageInput;
  });
}

/**
 * Throws unless the sent messages pair every call with its result: each assistant
 * message with calls is followed, before anything else, by tool messages answering
 * exactly those calls, and no tool message stands anywhere else.
 */
export function assertNoOrphans(sent: readonly MessageInput[]): void {
  let i = 0;
  while (i < sent.length) {
    const m = sent[i] as MessageInput;
    if (m.role === "tool") throw new Error(`tool message ${m.id} answers no call before it`);
    i += 1;
    const open = new Set(callIds(m));
    if (open.size === 0) continue;
    while (i < sent.length && sent[i]?.role === "tool") {
      for (const id of resultIds(sent[i] as MessageInput)) {
        if (!open.delete(id)) throw new Error(`result ${id} in ${sent[i]?.id} has no call`);
      }
      i += 1;
    }
    if (open.size > 0) throw new Error(`call ${[...open][0]} of ${m.id} has no result`);
  }
}

// --- Generators ---------------------------------------------------------------------

const piece = fc.constantFrom(
  "a",
  "word",
  "Hello",
  " the ",
  "123",
  "世界",
  "日本語のテキスト",
  "한국어",
  "🚀",
  "😀👍🏽",
  "👨‍👩‍👧",
  "é",
  " ",
  "\n",
  "\n\n",
  "\t",
  ".",
  ",",
  "{",
  '"',
  "</x>",
  "&",
  "fn main() {}",
);

export const text = fc.array(piece, { maxLength: 12 }).map((ps) => ps.join(""));
const nonEmptyText = fc.array(piece, { minLength: 1, maxLength: 12 }).map((ps) => ps.join(""));
// A huge tool output: a few hundred to a few thousand characters.
const hugeText = fc
  .tuple(nonEmptyText, fc.integer({ min: 40, max: 300 }))
  .map(([t, n]) => t.repeat(n));

const TOOL_NAMES = ["read_file", "grep", "run_tests", "search"] as const;

const jsonInput: fc.Arbitrary<unknown> = fc.oneof(
  fc.record({ path: text, line: fc.integer({ min: 0, max: 999 }) }),
  fc.record({ query: text, flags: fc.array(fc.constantFrom("i", "w", "😀"), { maxLength: 3 }) }),
  fc.dictionary(fc.constantFrom("z", "a", "é", "日", "b1"), fc.oneof(text, fc.boolean())),
  fc.constant(null),
);

interface CallSpec {
  name: string;
  input: unknown;
  output: string;
  isError: boolean;
}

/** One step of a turn: an answer, a tool exchange (maybe defective), or a stray result. */
type Step =
  | { kind: "say"; text: string }
  | { kind: "tools"; calls: CallSpec[]; joined: boolean; drop: number | null }
  | { kind: "stray"; output: string };

const callSpec = fc.record({
  name: fc.constantFrom(...TOOL_NAMES),
  input: jsonInput,
  output: fc.oneof({ weight: 4, arbitrary: text }, { weight: 1, arbitrary: hugeText }),
  isError: fc.boolean(),
});

const step: fc.Arbitrary<Step> = fc.oneof(
  { weight: 3, arbitrary: fc.record({ kind: fc.constant("say" as const), text }) },
  {
    weight: 4,
    arbitrary: fc.record({
      kind: fc.constant("tools" as const),
      calls: fc.array(callSpec, { minLength: 1, maxLength: 3 }),
      joined: fc.boolean(),
      // Sometimes one result never comes (the exchange is an orphan).
      drop: fc.oneof(
        { weight: 7, arbitrary: fc.constant(null) },
        { weight: 1, arbitrary: fc.integer({ min: 0, max: 2 }) },
      ),
    }),
  },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant("stray" as const), output: text }) },
);

const turn = fc.record({ ask: text, steps: fc.array(step, { maxLength: 4 }) });

function toolMessages(s: Extract<Step, { kind: "tools" }>, next: () => string): MessageInput[] {
  const ids = s.calls.map(() => next());
  const out: MessageInput[] = [
    {
      id: next(),
      role: "assistant",
      content: s.calls.map((c, k) => ({
        type: "tool_call" as const,
        callId: `call_${ids[k]}`,
        name: c.name,
        input: c.input as never,
      })),
    },
  ];
  const answered = s.calls
    .map((c, k) => ({
      type: "tool_result" as const,
      callId: `call_${ids[k]}`,
      output: c.output,
      ...(c.isError ? { isError: true } : {}),
    }))
    .filter((_, k) => s.drop === null || k !== s.drop % s.calls.length);
  if (s.joined && answered.length > 0) out.push({ id: next(), role: "tool", content: answered });
  else for (const r of answered) out.push({ id: next(), role: "tool", content: [r] });
  return out;
}

/** Builds the messages of a generated conversation (ids `m0`, `m1`, …; calls `call_…`). */
export function buildConversation(
  turns: readonly { ask: string; steps: readonly Step[] }[],
  prelude: readonly Step[] = [],
): MessageInput[] {
  let n = 0;
  const next = () => `m${n++}`;
  const out: MessageInput[] = [];
  const emit = (s: Step) => {
    if (s.kind === "say") out.push(say(next(), s.text));
    else if (s.kind === "stray") out.push(results(next(), [`stray_${n}`, s.output]));
    else out.push(...toolMessages(s, next));
  };
  prelude.forEach(emit);
  for (const t of turns) {
    out.push(user(next(), t.ask));
    t.steps.forEach(emit);
  }
  return out;
}

/** A conversation of 1–8 turns, sometimes with messages before the first user message. */
export const conversation = fc
  .tuple(fc.array(turn, { minLength: 1, maxLength: 8 }), fc.array(step, { maxLength: 1 }))
  .map(([turns, prelude]) => buildConversation(turns, prelude));

/**
 * A policy over `messages`: pinned ids, transforms, pressure clearing (in about two in
 * three), low-water ratio, anchor, boundary.
 */
export function policyFor(
  messages: readonly MessageInput[],
): fc.Arbitrary<ConversationPolicyInput> {
  const ids = messages.map((m) => m.id);
  const callIds = messages.flatMap((m) =>
    m.content.flatMap((p) => (p.type === "tool_result" ? [p.callId] : [])),
  );
  return fc.record({
    clearTrigger: fc.option(fc.double({ min: 0.2, max: 1, noNaN: true }), { freq: 3 }),
    clearAtLeastTokens: fc.integer({ min: 0, max: 400 }),
    keepRecentToolResults: fc.integer({ min: 0, max: 3 }),
    keepCallIds: fc.subarray(callIds, { maxLength: Math.min(2, callIds.length) }),
    pinned: fc.subarray(ids, { maxLength: Math.min(2, ids.length) }),
    toolResultMaxTokens: fc.option(fc.integer({ min: 32, max: 300 }), { freq: 2 }),
    clearToolResultsAfterTurns: fc.option(fc.integer({ min: 1, max: 4 }), { freq: 2 }),
    keepToolResults: fc.subarray([...TOOL_NAMES]),
    lowWaterRatio: fc.oneof(fc.constant(1), fc.double({ min: 0.05, max: 1, noNaN: true })),
    anchor: fc.option(fc.constantFrom(...ids, "no-such-id"), { freq: 2 }),
    clearBeforeTurn: fc.option(fc.integer({ min: 0, max: 8 }), { freq: 2 }),
  });
}

/** A conversation, a policy over it and a budget (often too small for all of it). */
export const planInput = conversation.chain((messages) =>
  fc.record({
    messages: fc.constant(messages),
    policy: policyFor(messages),
    budgetTokens: fc.integer({ min: 0, max: 1000 }),
  }),
);

/** The plan as comparable JSON, or the error's code when it throws a promptctx error. */
export function outcome(run: () => ConversationPlan): string {
  try {
    return JSON.stringify(run());
  } catch (err) {
    const code = (err as { code?: unknown }).code;
    if (typeof code !== "string") throw err;
    return JSON.stringify({ code, path: (err as { path?: unknown }).path ?? null });
  }
}

/**
 * Strays planted at part level in a copy of `clean` (issue 34 item 6): per plant `[at,
 * result]`, a result for a call never made in a tool message (`result`), or a call never
 * answered in an assistant message whose calls are all answered — only in messages
 * `keptIds` holds (the clean plan kept them). Returns the copy and the planted call ids
 * by message id.
 */
export function plantStrays(
  clean: readonly MessageInput[],
  keptIds: ReadonlySet<string>,
  plants: readonly (readonly [number, boolean])[],
): { dirty: MessageInput[]; planted: Map<string, string[]> } {
  const dirty = clean.map((m) => ({ ...m, content: [...m.content] }) as MessageInput);
  const planted = new Map<string, string[]>();
  const answered = new Set(
    clean.flatMap((m) => m.content.flatMap((q) => (q.type === "tool_result" ? [q.callId] : []))),
  );
  plants.forEach(([at, result], n) => {
    const m = dirty[at % dirty.length] as MessageInput;
    if (!keptIds.has(m.id)) return;
    const callId = `planted_${n}`;
    const content = m.content as MessageInput["content"][number][];
    if (result && m.role === "tool") {
      content.splice(n % (content.length + 1), 0, {
        type: "tool_result",
        callId,
        output: "stray output",
      });
    } else if (
      !result &&
      m.role === "assistant" &&
      content.some((q) => q.type === "tool_call") &&
      content.every((q) => q.type !== "tool_call" || answered.has(q.callId))
    ) {
      content.splice(n % (content.length + 1), 0, {
        type: "tool_call",
        callId,
        name: "stray_tool",
        input: {},
      });
    } else return;
    planted.set(m.id, [...(planted.get(m.id) ?? []), callId]);
  });
  return { dirty, planted };
}
