/**
 * A loopback provider for the whole-request, summarizer and middleware tests: an HTTP
 * server on 127.0.0.1 (port 0) that records every request body and answers the
 * Anthropic Messages, OpenAI Chat Completions and Responses routes with a scripted or a
 * minimal valid reply (Chat Completions also as an SSE stream when `stream` is set). The
 * official SDKs reach it through `baseURL`; every assertion is on what arrived.
 */
import { createServer, type IncomingMessage, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, beforeEach } from "vitest";

export interface Recorded {
  path: string;
  headers: IncomingMessage["headers"];
  // biome-ignore lint/suspicious/noExplicitAny: a parsed wire body, inspected field by field
  body: any;
}

/** A scripted reply: the text to answer with, or tool calls to ask for. */
export type Scripted =
  | { text: string }
  | { toolCalls: { id: string; name: string; input: Record<string, unknown> }[] };

function anthropicReply(model: string, s: Scripted) {
  const content =
    "text" in s
      ? [{ type: "text", text: s.text }]
      : s.toolCalls.map((c) => ({ type: "tool_use", id: c.id, name: c.name, input: c.input }));
  return {
    id: "msg_loop",
    type: "message",
    role: "assistant",
    model,
    content,
    stop_reason: "text" in s ? "end_turn" : "tool_use",
    stop_sequence: null,
    usage: {
      input_tokens: 10,
      output_tokens: 1,
      cache_creation_input_tokens: 0,
      cache_read_input_tokens: 0,
    },
  };
}

function chatMessage(s: Scripted) {
  return "text" in s
    ? { role: "assistant", content: s.text, refusal: null }
    : {
        role: "assistant",
        content: null,
        refusal: null,
        tool_calls: s.toolCalls.map((c) => ({
          id: c.id,
          type: "function",
          function: { name: c.name, arguments: JSON.stringify(c.input) },
        })),
      };
}

const USAGE = {
  prompt_tokens: 10,
  completion_tokens: 1,
  total_tokens: 11,
  prompt_tokens_details: { cached_tokens: 0 },
};

function chatReply(model: string, s: Scripted) {
  return {
    id: "chatcmpl-loop",
    object: "chat.completion",
    created: 1_790_000_000,
    model,
    choices: [
      {
        index: 0,
        message: chatMessage(s),
        logprobs: null,
        finish_reason: "text" in s ? "stop" : "tool_calls",
      },
    ],
    usage: USAGE,
  };
}

/** The same reply as Chat Completions stream chunks (SSE lines). */
function chatStream(model: string, s: Scripted): string {
  const base = {
    id: "chatcmpl-loop",
    object: "chat.completion.chunk",
    created: 1_790_000_000,
    model,
  };
  const delta =
    "text" in s
      ? { role: "assistant", content: s.text }
      : {
          role: "assistant",
          content: null,
          tool_calls: s.toolCalls.map((c, index) => ({
            index,
            id: c.id,
            type: "function",
            function: { name: c.name, arguments: JSON.stringify(c.input) },
          })),
        };
  const chunks = [
    { ...base, choices: [{ index: 0, delta, finish_reason: null }] },
    {
      ...base,
      choices: [{ index: 0, delta: {}, finish_reason: "text" in s ? "stop" : "tool_calls" }],
    },
    { ...base, choices: [], usage: USAGE },
  ];
  return `${chunks.map((c) => `data: ${JSON.stringify(c)}\n\n`).join("")}data: [DONE]\n\n`;
}

function responsesReply(model: string, s: Scripted) {
  const text = "text" in s ? s.text : "";
  return {
    id: "resp_loop",
    object: "response",
    created_at: 1_790_000_000,
    status: "completed",
    error: null,
    incomplete_details: null,
    model,
    output: [
      {
        type: "message",
        id: "msg_loop",
        status: "completed",
        role: "assistant",
        content: [{ type: "output_text", text, annotations: [] }],
      },
    ],
    usage: {
      input_tokens: 10,
      input_tokens_details: { cached_tokens: 0 },
      output_tokens: 1,
      output_tokens_details: { reasoning_tokens: 0 },
      total_tokens: 11,
    },
  };
}

/** A running loopback provider. */
export interface Loopback {
  base: string;
  recorded: Recorded[];
  /** Replies used in order; when exhausted, every request gets `{text: "ok"}`. */
  script: Scripted[];
  /** Answers a request before the script does (return null to leave it to the script). */
  route: ((body: Recorded["body"]) => Scripted | null) | null;
  close(): Promise<void>;
}

/**
 * Starts a loopback provider on 127.0.0.1; `loop` (default: a new one) is the object it
 * records into and reads its script and route from.
 */
export async function startLoopback(loop: Loopback = idleLoopback()): Promise<Loopback> {
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      const raw = Buffer.concat(chunks).toString("utf8");
      const body = raw === "" ? null : JSON.parse(raw);
      const path = (req.url ?? "").split("?")[0] as string;
      loop.recorded.push({ path, headers: req.headers, body });
      const s = loop.route?.(body) ?? loop.script.shift() ?? { text: "ok" };
      const model = body?.model ?? "unknown";
      if (path === "/v1/chat/completions" && body?.stream === true) {
        res.writeHead(200, { "content-type": "text/event-stream" });
        res.end(chatStream(model, s));
        return;
      }
      const reply =
        path === "/v1/messages"
          ? anthropicReply(model, s)
          : path === "/v1/chat/completions"
            ? chatReply(model, s)
            : path === "/v1/responses"
              ? responsesReply(model, s)
              : null;
      res.writeHead(reply === null ? 404 : 200, { "content-type": "application/json" });
      res.end(JSON.stringify(reply ?? { error: { message: `no route ${path}` } }));
    });
  });
  await new Promise<void>((done) => server.listen(0, "127.0.0.1", done));
  loop.base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  loop.close = async () => {
    server.closeAllConnections();
    await new Promise<void>((done) => server.close(() => done()));
  };
  return loop;
}

function idleLoopback(): Loopback {
  return { base: "", recorded: [], script: [], route: null, close: async () => {} };
}

/**
 * The loopback provider of a test file: started before its tests, closed after them, its
 * recorded requests and script emptied before each test. Call at the top of the file; the
 * fields are valid inside tests (`base` is set once the server listens).
 */
export function useLoopback(): Loopback {
  const loop = idleLoopback();
  beforeAll(async () => {
    await startLoopback(loop);
  });
  afterAll(async () => {
    await loop.close();
  });
  beforeEach(() => {
    loop.recorded.length = 0;
    loop.script.length = 0;
  });
  return loop;
}

/** Every `cache_control` object anywhere in a wire body, with the path to it. */
export function cacheControls(x: unknown, path = ""): { path: string; value: unknown }[] {
  if (Array.isArray(x)) return x.flatMap((v, i) => cacheControls(v, `${path}[${i}]`));
  if (typeof x !== "object" || x === null) return [];
  return Object.entries(x).flatMap(([k, v]) =>
    k === "cache_control" ? [{ path, value: v }] : cacheControls(v, `${path}.${k}`),
  );
}
