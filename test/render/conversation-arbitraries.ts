/**
 * fast-check generators of valid neutral conversations (spec 09) with tool exchanges:
 * parallel calls, results in one or several tool messages, error results, huge outputs,
 * CJK and emoji text, any JSON as tool input.
 */
import fc from "fast-check";
import type { Message, Part } from "../../src/conversation/index.js";

const piece = fc.constantFrom(
  "a",
  "word",
  "Hello",
  "世界",
  "数据库",
  "🚀",
  "👩‍👩‍👧",
  "é",
  " ",
  "\n",
  "\r\n",
  "\t",
  '"',
  "\\",
  "<tool_result>",
  "error",
  ":",
  "{}",
  "\u0000",
);

/** Text, possibly empty, with CJK, emoji, control and JSON-ish characters. */
export const text = fc.array(piece, { maxLength: 10 }).map((p) => p.join(""));

/** A tool output: usually short, sometimes huge; never starting with OpenAI's error prefix. */
const output = fc
  .oneof(
    { weight: 6, arbitrary: text },
    {
      weight: 1,
      arbitrary: fc.tuple(piece, fc.integer({ min: 200, max: 3000 })).map(([p, n]) => p.repeat(n)),
    },
  )
  .filter((s) => !s.startsWith("error: "));

const toolName = fc.constantFrom("read_file", "run", "search", "工具", "write_file");

interface Draft {
  role: Message["role"];
  content: Part[];
}

interface Round {
  lead: string | undefined;
  trail: string | undefined;
  calls: { name: string; input: unknown }[];
  results: { output: string; isError: boolean | undefined }[];
  split: boolean;
}

/** One round: an assistant message with 1–3 calls, then their results (one or several tool messages). */
const round: fc.Arbitrary<Round> = fc.record({
  lead: fc.option(text, { nil: undefined }),
  trail: fc.option(text, { nil: undefined }),
  calls: fc.array(fc.record({ name: toolName, input: fc.jsonValue({ maxDepth: 3 }) }), {
    minLength: 1,
    maxLength: 3,
  }),
  results: fc.array(fc.record({ output, isError: fc.constantFrom(undefined, true, false) }), {
    minLength: 3,
    maxLength: 3,
  }),
  split: fc.boolean(),
});

const turn = fc.record({
  user: fc.array(text, { minLength: 1, maxLength: 2 }),
  rounds: fc.array(round, { maxLength: 3 }),
  answer: fc.option(fc.array(text, { minLength: 1, maxLength: 2 }), { nil: undefined }),
});

function roundDrafts(rr: Round, next: () => string): Draft[] {
  const ids = rr.calls.map(() => next());
  const call: Part[] = rr.calls.map((c, k) => ({
    type: "tool_call",
    callId: ids[k] as string,
    name: c.name,
    // As JSON carries it (-0 becomes 0).
    input: JSON.parse(JSON.stringify(c.input)) as never,
  }));
  const content: Part[] = [
    ...(rr.lead !== undefined ? [{ type: "text" as const, text: rr.lead }] : []),
    ...call,
    ...(rr.trail !== undefined ? [{ type: "text" as const, text: rr.trail }] : []),
  ];
  const results: Part[] = ids.map((callId, k) => {
    const res = rr.results[k] as { output: string; isError: boolean | undefined };
    return {
      type: "tool_result",
      callId,
      output: res.output,
      ...(res.isError !== undefined ? { isError: res.isError } : {}),
    };
  });
  const tools: Draft[] = rr.split
    ? results.map((p) => ({ role: "tool", content: [p] }))
    : [{ role: "tool", content: results }];
  return [{ role: "assistant", content }, ...tools];
}

/** A valid conversation: 1–5 turns, each a user message, tool rounds and maybe an answer. */
export const conversation = fc.array(turn, { minLength: 1, maxLength: 5 }).map((turns) => {
  let calls = 0;
  const next = () => `call_${++calls}`;
  const drafts: Draft[] = [];
  for (const t of turns) {
    drafts.push({ role: "user", content: t.user.map((x) => ({ type: "text", text: x })) });
    for (const r of t.rounds) drafts.push(...roundDrafts(r, next));
    if (t.answer !== undefined) {
      drafts.push({ role: "assistant", content: t.answer.map((x) => ({ type: "text", text: x })) });
    }
  }
  return drafts.map((d, i): Message => ({ id: `m${i}`, ...d }));
});
