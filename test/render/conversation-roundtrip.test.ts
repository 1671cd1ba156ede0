/**
 * Round trips between the neutral message model (spec 09) and each provider's shape
 * (property tests over generated conversations with tool exchanges): the wire form is a
 * fixed point (write → JSON → read → write gives the same bytes), a conversation read
 * back holds the same parts in the same order (up to what the provider cannot say), ids
 * are deterministic, and the result plans like the original.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { type Message, type Part, planConversation } from "../../src/conversation/index.js";
import {
  fromAiSdkMessages,
  fromAnthropicMessages,
  fromOpenAIChatMessages,
  fromOpenAIResponsesInput,
  type ReadConversation,
  toAiSdkMessages,
  toAnthropicMessages,
  toOpenAIChatMessages,
  toOpenAIResponsesInput,
} from "../../src/render/index.js";
import { conversation } from "./conversation-arbitraries.js";

interface Shape {
  name: string;
  write: (m: readonly Message[]) => unknown[];
  read: (wire: unknown[]) => ReadConversation;
  /** What the provider cannot say, applied to the parts of the original. */
  normalize: (m: readonly Message[]) => [Message["role"], Part][];
}

const wire = (x: unknown): unknown[] => JSON.parse(JSON.stringify(x)) as unknown[];

/** Each part with its message's role, in order (message boundaries do not matter). */
const parts = (m: readonly Message[]): [Message["role"], Part][] =>
  m.flatMap((msg) => msg.content.map((p): [Message["role"], Part] => [msg.role, p]));

const noFalseError = (p: Part): Part => {
  if (p.type !== "tool_result" || p.isError !== false) return p;
  const { isError: _drop, ...rest } = p;
  return rest;
};

// Chat Completions: an assistant message's text comes before its calls.
const textsFirst = (m: readonly Message[]): Message[] =>
  m.map((msg) =>
    msg.role !== "assistant"
      ? msg
      : {
          ...msg,
          content: [
            ...msg.content.filter((p) => p.type === "text"),
            ...msg.content.filter((p) => p.type !== "text"),
          ],
        },
  );

const SHAPES: Shape[] = [
  {
    name: "Anthropic messages",
    write: (m) => toAnthropicMessages(m),
    read: (w) => fromAnthropicMessages(w as never),
    normalize: parts,
  },
  {
    name: "OpenAI Chat Completions",
    write: (m) => toOpenAIChatMessages(m),
    read: (w) => fromOpenAIChatMessages(w),
    normalize: (m) => parts(textsFirst(m)).map(([r, p]) => [r, noFalseError(p)]),
  },
  {
    name: "OpenAI Responses input",
    write: (m) => toOpenAIResponsesInput(m),
    read: (w) => fromOpenAIResponsesInput(w),
    normalize: (m) => parts(m).map(([r, p]) => [r, noFalseError(p)]),
  },
  {
    name: "AI SDK ModelMessage",
    write: (m) => toAiSdkMessages(m),
    read: (w) => fromAiSdkMessages(w),
    normalize: (m) => parts(m).map(([r, p]) => [r, noFalseError(p)]),
  },
];

describe.each(SHAPES)("$name ↔ neutral messages", (shape) => {
  it("the wire form is a fixed point of write → JSON → read → write", () => {
    fc.assert(
      fc.property(conversation, (conv) => {
        const first = wire(shape.write(conv));
        const again = wire(shape.write(shape.read(first).messages));
        expect(again).toEqual(first);
      }),
      { numRuns: 150 },
    );
  });

  it("a conversation read back holds the same parts in the same order", () => {
    fc.assert(
      fc.property(conversation, (conv) => {
        const read = shape.read(wire(shape.write(conv)));
        expect(read.system).toEqual([]);
        expect(parts(read.messages)).toEqual(shape.normalize(conv));
      }),
      { numRuns: 150 },
    );
  });

  it("ids are unique and deterministic, and the read conversation plans like the original", () => {
    fc.assert(
      fc.property(conversation, (conv) => {
        const w = wire(shape.write(conv));
        const a = shape.read(w).messages;
        const b = shape.read(wire(w)).messages;
        expect(b.map((m) => m.id)).toEqual(a.map((m) => m.id));
        expect(new Set(a.map((m) => m.id)).size).toBe(a.length);
        const plan = (messages: readonly Message[]) =>
          planConversation({ messages, budgetTokens: 1e9, tokenizer: "estimate" });
        expect(parts(plan(a).messages)).toEqual(shape.normalize(plan(conv).messages));
      }),
      { numRuns: 60 },
    );
  });
});

describe("provider shapes, by example", () => {
  const conv: Message[] = [
    { id: "u1", role: "user", content: [{ type: "text", text: "list the files 📁" }] },
    {
      id: "a1",
      role: "assistant",
      content: [
        { type: "text", text: "Looking." },
        { type: "tool_call", callId: "c1", name: "ls", input: { dir: "." } },
        { type: "tool_call", callId: "c2", name: "cat", input: { path: "数据.txt" } },
      ],
    },
    { id: "t1", role: "tool", content: [{ type: "tool_result", callId: "c1", output: "a b" }] },
    {
      id: "t2",
      role: "tool",
      content: [{ type: "tool_result", callId: "c2", output: "denied", isError: true }],
    },
    { id: "u2", role: "user", content: [{ type: "text", text: "thanks" }] },
  ];

  it("Anthropic: tool_use on the assistant side, results and the next line merged on the user side", () => {
    expect(
      toAnthropicMessages(conv, { cacheAfter: 3, cacheControl: { type: "ephemeral", ttl: "1h" } }),
    ).toEqual([
      { role: "user", content: "list the files 📁" },
      {
        role: "assistant",
        content: [
          { type: "text", text: "Looking." },
          { type: "tool_use", id: "c1", name: "ls", input: { dir: "." } },
          { type: "tool_use", id: "c2", name: "cat", input: { path: "数据.txt" } },
        ],
      },
      {
        role: "user",
        content: [
          { type: "tool_result", tool_use_id: "c1", content: "a b" },
          {
            type: "tool_result",
            tool_use_id: "c2",
            content: "denied",
            is_error: true,
            cache_control: { type: "ephemeral", ttl: "1h" },
          },
          { type: "text", text: "thanks" },
        ],
      },
    ]);
  });

  it("OpenAI Chat: tool_calls with JSON arguments, one tool message per result, errors prefixed", () => {
    expect(toOpenAIChatMessages(conv)).toEqual([
      { role: "user", content: "list the files 📁" },
      {
        role: "assistant",
        content: "Looking.",
        tool_calls: [
          { id: "c1", type: "function", function: { name: "ls", arguments: '{"dir":"."}' } },
          {
            id: "c2",
            type: "function",
            function: { name: "cat", arguments: '{"path":"数据.txt"}' },
          },
        ],
      },
      { role: "tool", tool_call_id: "c1", content: "a b" },
      { role: "tool", tool_call_id: "c2", content: "error: denied" },
      { role: "user", content: "thanks" },
    ]);
  });

  it("Responses: function_call and function_call_output items in part order", () => {
    expect(toOpenAIResponsesInput(conv)).toEqual([
      { role: "user", content: "list the files 📁" },
      { role: "assistant", content: "Looking." },
      { type: "function_call", call_id: "c1", name: "ls", arguments: '{"dir":"."}' },
      { type: "function_call", call_id: "c2", name: "cat", arguments: '{"path":"数据.txt"}' },
      { type: "function_call_output", call_id: "c1", output: "a b" },
      { type: "function_call_output", call_id: "c2", output: "error: denied" },
      { role: "user", content: "thanks" },
    ]);
  });

  it("AI SDK: tool-call / tool-result parts, error-text, cacheControl as a provider option", () => {
    const out = toAiSdkMessages(conv, { cacheAfter: 1 });
    expect(out[1]?.content.at(-1)).toEqual({
      type: "tool-call",
      toolCallId: "c2",
      toolName: "cat",
      input: { path: "数据.txt" },
      providerOptions: { anthropic: { cacheControl: { type: "ephemeral" } } },
    });
    expect(out[3]).toEqual({
      role: "tool",
      content: [
        {
          type: "tool-result",
          toolCallId: "c2",
          toolName: "cat",
          output: { type: "error-text", value: "denied" },
        },
      ],
    });
  });

  it("readers refuse what the neutral model cannot hold, naming the path", () => {
    const image = [
      { role: "user", content: [{ type: "image", source: { type: "url", url: "x" } }] },
    ];
    expect(() => fromAnthropicMessages(image)).toThrow(
      expect.objectContaining({ code: "invalid_input", path: "messages[0].content[0].type" }),
    );
    expect(() =>
      fromAiSdkMessages([{ role: "assistant", content: [{ type: "reasoning", text: "hm" }] }]),
    ).toThrow(expect.objectContaining({ path: "messages[0].content[0].type" }));
    expect(() => fromOpenAIResponsesInput([{ type: "reasoning", summary: [] }])).toThrow(
      expect.objectContaining({ path: "input[0].type" }),
    );
    expect(() =>
      fromOpenAIChatMessages([
        { role: "user", content: "hi" },
        { role: "system", content: "late" },
      ]),
    ).toThrow(expect.objectContaining({ path: "messages[1]" }));
  });

  it("readers collect leading system text and keep unparseable arguments as a string", () => {
    const read = fromOpenAIChatMessages([
      { role: "developer", content: "be brief" },
      { role: "user", content: "go" },
      {
        role: "assistant",
        content: null,
        tool_calls: [{ id: "x", type: "function", function: { name: "f", arguments: "{oops" } }],
      },
      { role: "tool", tool_call_id: "x", content: "error: bad args" },
    ]);
    expect(read.system).toEqual(["be brief"]);
    expect(read.messages.map((m) => m.content)).toEqual([
      [{ type: "text", text: "go" }],
      [{ type: "tool_call", callId: "x", name: "f", input: "{oops" }],
      [{ type: "tool_result", callId: "x", output: "bad args", isError: true }],
    ]);
    expect(read.messages[0]?.id).toMatch(/^user:[0-9a-f]{16}$/);
  });
});
