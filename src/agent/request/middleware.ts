/**
 * An AI SDK language-model middleware (for `wrapLanguageModel` from `ai`): on every model
 * call it assembles the system prompt and plans the messages under the model's window
 * (docs/conversation.md "the whole request"), converting the AI SDK prompt to the neutral model and
 * back. `ai` is only imported for its types.
 */
import type { JSONValue, LanguageModelMiddleware } from "ai";
import type { ConversationPolicyInput, Message } from "../../conversation/index.js";
import {
  type AiSdkConversationBody,
  type ConversationRenderOptions,
  fromAiSdkMessages,
  type ProviderInput,
} from "../../render/index.js";
import { resolveTokenCounter, type TokenCounter, tokenizerForModel } from "../../tokens/index.js";
import { type PlannedRequest, planAgentRequest } from "./request.js";

type TransformParams = NonNullable<LanguageModelMiddleware["transformParams"]>;
type CallOptions = Parameters<TransformParams>[0]["params"];
type WrappedModel = Parameters<TransformParams>[0]["model"];
type GenerateResult = Awaited<ReturnType<NonNullable<LanguageModelMiddleware["wrapGenerate"]>>>;
type StreamResult = Awaited<ReturnType<NonNullable<LanguageModelMiddleware["wrapStream"]>>>;
type StreamPart = StreamResult["stream"] extends ReadableStream<infer T> ? T : never;

/**
 * The response reserve of a call without `maxOutputTokens` in a window of the agent
 * defaults' smallest share (kept for callers that read it): such calls now take the agent
 * default of their window ({@link agentDefaults}), the one table every surface uses.
 */
export const MIDDLEWARE_RESPONSE_RESERVE = 4096;

/** What the middleware reports for every call (also under `providerMetadata.promptctx`). */
export interface ContextReport {
  callType: "generate" | "stream";
  modelId: string;
  request: PlannedRequest<"ai-sdk-anthropic" | "ai-sdk-openai">;
}

/** The anchor state carried from one call to the next (one per conversation). */
export interface ConversationState {
  anchor: string | null;
  clearBeforeTurn: number | null;
}

/** Options of {@link promptctxMiddleware}. */
export interface PromptctxMiddlewareOptions {
  /**
   * The system side of this call: an assembly (`assemble()`, a session's `beginTurn()`) or
   * a prompt plan, given the current turn's text and the whole conversation.
   */
  system: (turn: {
    query: string;
    messages: readonly Message[];
  }) => Promise<ProviderInput> | ProviderInput;
  /** Request shape: `"anthropic"` (tiers + cacheControl) or `"openai"`; default from the model's provider. */
  provider?: "anthropic" | "openai";
  /** Default: the table's window for the model id. */
  contextWindow?: number;
  /** Default: the call's `maxOutputTokens`, else the agent default of the window. */
  responseReserve?: number;
  tailReserve?: number;
  /** Default: the model's counter (memoized across calls). */
  tokenizer?: TokenCounter | string;
  /** The packing policy; `anchor` and `clearBeforeTurn` come from {@link state}. */
  policy?: Omit<ConversationPolicyInput, "anchor" | "clearBeforeTurn">;
  /** Pin the conversation's first user message (default false). */
  pinFirstUserMessage?: boolean;
  render?: Omit<ConversationRenderOptions, "model" | "toolsTokens" | "tokenCounter" | "query">;
  /**
   * Carry the window start from call to call (`anchor`, `clearBeforeTurn`). Absent (the
   * default): every call is planned from the conversation alone, like `assembleRequest`
   * (the window on its grid, clearing derived from the history); the report still says
   * where the window started.
   */
  state?: ConversationState;
  /** Called with every call's report, before the model is called. */
  onContext?: (report: ContextReport) => void;
  /** Attach a JSON summary of the report as `providerMetadata.promptctx` (default true). */
  providerMetadata?: boolean;
}

const textOf = (m: Message) =>
  m.content.flatMap((p) => (p.type === "text" ? [p.text] : [])).join("\n");

function shapeOf(model: WrappedModel, options: PromptctxMiddlewareOptions) {
  const provider =
    options.provider ?? (model.provider.startsWith("anthropic") ? "anthropic" : "openai");
  return provider === "anthropic" ? "ai-sdk-anthropic" : "ai-sdk-openai";
}

/** The call's prompt with the assembled system side and the planned messages. */
function toParams(params: CallOptions, body: AiSdkConversationBody, own: string[]): CallOptions {
  const system =
    body.system === undefined
      ? []
      : typeof body.system === "string"
        ? [{ role: "system" as const, content: body.system }]
        : body.system;
  const prompt = [
    ...system,
    ...own.map((content) => ({ role: "system" as const, content })),
    ...body.messages,
  ] as CallOptions["prompt"];
  const providerOptions =
    body.providerOptions === undefined
      ? params.providerOptions
      : { ...params.providerOptions, ...body.providerOptions };
  return { ...params, prompt, ...(providerOptions !== undefined ? { providerOptions } : {}) };
}

/** The report as JSON for `providerMetadata` (no message text, only decisions and figures). */
export function contextMetadata(report: ContextReport): Record<string, JSONValue> {
  const r = report.request;
  const summary = {
    budget: r.budget,
    firstKeptId: r.conversation.firstKeptId,
    clearBeforeTurn: r.conversation.clearBeforeTurn,
    usedTokens: r.conversation.usedTokens,
    droppedMessageIds: r.conversation.droppedMessageIds,
    stablePrefix: r.stablePrefix,
    breakpoints: r.request.breakpoints,
    skipped: r.request.skipped,
    promptCacheKey: r.request.promptCacheKey,
    decisions: {
      conversation: r.decisions.conversation,
      segments: r.decisions.segments,
      memory: r.decisions.memory,
    },
  };
  return JSON.parse(JSON.stringify(summary)) as Record<string, JSONValue>;
}

/** Plans one call: the system side for its current turn, then the whole request. */
async function planCall(
  options: PromptctxMiddlewareOptions,
  state: ConversationState,
  tokens: TokenCounter,
  type: "generate" | "stream",
  params: CallOptions,
  model: WrappedModel,
): Promise<ContextReport & { ownSystem: string[] }> {
  const read = fromAiSdkMessages(params.prompt);
  const turn = read.messages.findLast((m) => m.role === "user");
  const query = turn === undefined ? "" : textOf(turn);
  const system = await options.system({ query, messages: read.messages });
  const firstUser = read.messages.find((m) => m.role === "user");
  const pinned = [
    ...(options.policy?.pinned ?? []),
    ...(options.pinFirstUserMessage === true && firstUser !== undefined ? [firstUser.id] : []),
  ];
  // The same path and defaults as assembleRequest (planAgentRequest): clearing, the grid
  // start and the digest. Stateless unless the caller carries an anchor in `state`.
  const carried = options.state !== undefined;
  const responseReserve = options.responseReserve ?? params.maxOutputTokens;
  const request = planAgentRequest({
    provider: shapeOf(model, options),
    model: model.modelId,
    system,
    messages: read.messages,
    ...(responseReserve !== undefined ? { responseReserve } : {}),
    ...(options.tailReserve !== undefined ? { tailReserve: options.tailReserve } : {}),
    ...(options.contextWindow !== undefined ? { contextWindow: options.contextWindow } : {}),
    toolsTokens: params.tools === undefined ? 0 : tokens.count(JSON.stringify(params.tools)),
    otherTokens: read.system.reduce((sum, s) => sum + tokens.count(s), 0),
    tokenizer: tokens,
    policy: {
      ...options.policy,
      pinned,
      ...(carried ? { anchor: state.anchor, clearBeforeTurn: state.clearBeforeTurn } : {}),
    },
    ...(options.render !== undefined ? { render: options.render } : {}),
  });
  state.anchor = request.conversation.firstKeptId;
  state.clearBeforeTurn = request.conversation.clearBeforeTurn;
  return { callType: type, modelId: model.modelId, request, ownSystem: read.system };
}

/**
 * An AI SDK middleware that owns the context of every call of a wrapped model: the
 * caller's `system` becomes the assembled system side (`options.system`, called with the
 * current turn's text), the prompt's messages are read into the neutral model
 * ({@link fromAiSdkMessages}), planned in the room the system side, tools
 * (their JSON), the caller's own system text, the response reserve (`maxOutputTokens`)
 * and the tail reserve leave in the model's window, and written back — Anthropic-bound
 * calls with one system message per tier and `cacheControl` at the end of the stable
 * history prefix, OpenAI-bound calls with `promptCacheKey`. The anchor is carried from
 * call to call (`state`), so use one middleware per conversation. Every call's report
 * goes to `onContext` and, as JSON, to the result's `providerMetadata.promptctx`.
 *
 * @example
 * const model = wrapLanguageModel({ model: anthropic("claude-sonnet-4-6"),
 *   middleware: promptctxMiddleware({ system: ({ query }) => assemble({ ...base, query: { text: query, userScope } }),
 *     policy: { lowWaterRatio: 0.7 }, onContext: (r) => log(r.request.decisions) }) });
 * await generateText({ model, messages });
 */
export function promptctxMiddleware(options: PromptctxMiddlewareOptions): LanguageModelMiddleware {
  const state = options.state ?? { anchor: null, clearBeforeTurn: null };
  const reports = new WeakMap<object, ContextReport>();
  let counter: TokenCounter | null = null;
  const counterFor = (modelId: string) => {
    counter ??= resolveTokenCounter(options.tokenizer ?? tokenizerForModel(modelId), "tokenizer");
    return counter;
  };
  const attach = options.providerMetadata !== false;
  return {
    specificationVersion: "v3",
    transformParams: async ({ type, params, model }) => {
      const report = await planCall(options, state, counterFor(model.modelId), type, params, model);
      options.onContext?.(report);
      const out = toParams(params, report.request.body, report.ownSystem);
      reports.set(out, report);
      return out;
    },
    wrapGenerate: async ({ doGenerate, params }): Promise<GenerateResult> => {
      const result = await doGenerate();
      const report = reports.get(params);
      if (!attach || report === undefined) return result;
      return {
        ...result,
        providerMetadata: { ...result.providerMetadata, promptctx: contextMetadata(report) },
      };
    },
    wrapStream: async ({ doStream, params }): Promise<StreamResult> => {
      const result = await doStream();
      const report = reports.get(params);
      if (!attach || report === undefined) return result;
      const meta = contextMetadata(report);
      const stream = result.stream.pipeThrough(
        new TransformStream<StreamPart, StreamPart>({
          transform(part, controller) {
            controller.enqueue(
              part.type === "finish"
                ? { ...part, providerMetadata: { ...part.providerMetadata, promptctx: meta } }
                : part,
            );
          },
        }),
      );
      return { ...result, stream };
    },
  };
}
