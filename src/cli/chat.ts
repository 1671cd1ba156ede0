/**
 * `promptctx chat`: a multi-turn agent loop over a workspace, calling Anthropic or OpenAI
 * through the official SDKs, running the workspace's tools, and checking every draft
 * against the red lines before the user sees it.
 *
 * How one user line is handled (decisions documented so peers can mirror them):
 * - Input: one user message per stdin line (blank lines skipped; `/exit` or `/quit`
 *   ends the chat). The prompt `you> ` is shown only when stdin is a terminal, so a
 *   script can pipe lines in. At most `--max-turns` lines are answered (default 8).
 * - Context: the workspace is loaded once (`loadWorkspace`: config, instruction files,
 *   skills, KB, the memory store) and a runtime `Session` (spec 05) reassembles it at every
 *   user line with `beginTurn`: every slot is refetched (memory recalled with the line as
 *   the query, skills matched against it, the tool state as it is now) while unchanged
 *   segments are reused. The one piece of state carried
 *   between turns is the {@link ToolState} (passed as `toolState`): every tool call is
 *   recorded in it (`read_file → ok: AGENTS.md (312 bytes)`), so the next turn's
 *   tool-state layer shows it. Within a turn the system prompt is frozen (spec 05: the
 *   prefix is frozen per loop turn, which also keeps the provider cache warm); tool
 *   results travel as `tool_result` blocks / `tool` messages. The conversation history
 *   (user lines, replies, tool calls and results) is kept for the whole chat.
 * - Clock: `--now` pins the first turn; turn k runs at `--now` + (k − 1) minutes, so a
 *   scripted chat replays byte for byte. Without `--now` each turn reads the current
 *   time. Tool calls are recorded at their turn's time.
 * - Request: the plan rendered by `toAnthropicRequest` (system blocks per cache tier
 *   with `cache_control`, the tool definitions counted into the cached prefix) or
 *   `toOpenAIChatRequest` (system message + `prompt_cache_key`), plus the workspace
 *   config's tools as provider tool definitions (all arguments strings; `requiredArgs`
 *   required). The model must be named by `MODEL_ID`; the key is `ANTHROPIC_API_KEY` or
 *   `OPENAI_API_KEY` (`--provider` picks; default: Anthropic when its key is set). The
 *   base URL comes from `ANTHROPIC_BASE_URL` / `OPENAI_BASE_URL` (the SDKs read the same
 *   variables; the CLI passes them explicitly from its environment). No other network.
 * - Tools: run from the workspace registry (see `tools.ts`), at most
 *   `--max-tool-rounds` rounds per user line (default 5). When the model still asks for
 *   tools after the last round, those calls are answered with an error result ("not run:
 *   tool round limit") that opens the next user message, and the turn ends.
 * - Red lines: every assistant text (final draft, or text sent alongside tool calls) is
 *   checked with `checkDraft` against the red lines of the skills matched this turn
 *   (selected or capped), ids namespaced `skill:id`. The workspace config has no field
 *   for identity/soul boundaries, so none are added from it. Violations are printed with
 *   id, severity and excerpt; `review` ones are flagged for review; a `block` one, or a
 *   check that could not cover the whole draft (fail closed), withholds the draft: its
 *   text is not printed (`draft withheld: red line X`, or `… red-line check incomplete
 *   (draft_too_long)`) and the history keeps a placeholder in its place, so
 *   the model never sees its own withheld text again. A skill red line the checker
 *   rejects at load is reported and skipped.
 * - Output: text lines for people, or `--json`: one event object per line (`turn`,
 *   `tool`, `reply`, `limit`, `end`).
 * - Errors: missing keys or model → `invalid_input` naming `env.ANTHROPIC_API_KEY`,
 *   `env.OPENAI_API_KEY` or `env.MODEL_ID`, exit 2 (checked before anything is read); a
 *   provider failure → exit 1 with the provider's status and message.
 */
import { existsSync } from "node:fs";
import { homedir } from "node:os";
import { join, resolve } from "node:path";
import { createInterface } from "node:readline";
import type Anthropic from "@anthropic-ai/sdk";
import { type Command, Option } from "commander";
import type OpenAI from "openai";
import { createSession } from "../assemble/index.js";
import { InvalidInputError, PromptctxError, toErrorObject } from "../errors/index.js";
import { toAnthropicRequest, toOpenAIChatRequest } from "../render/index.js";
import { type ToolSpec, ToolState } from "../sources/index.js";
import { instantMillis } from "../text/index.js";
import { getTokenCounter } from "../tokens/index.js";
import {
  type CompiledRedLines,
  checkDraft,
  compileRedLines,
  type DraftCheck,
  redLinesFromSkills,
} from "../trace/index.js";
import {
  loadWorkspace,
  loadWorkspaceConfig,
  type WorkspaceAssembly,
  workspaceReport,
} from "../workspace/index.js";
import { intFlag } from "./assemble-cmd.js";
import { exitCodeFor } from "./io.js";
import { BUILTIN_ARGS, executeTool, isBuiltin, type ToolOutcome } from "./tools.js";

/** Default `--max-turns`. */
export const CHAT_MAX_TURNS = 8;
/** Default `--max-tool-rounds`. */
export const CHAT_MAX_TOOL_ROUNDS = 5;
/** `max_tokens` of each Anthropic request. */
export const CHAT_MAX_TOKENS = 4096;
/** Minutes the pinned clock advances per turn. */
export const CHAT_CLOCK_STEP_MS = 60_000;
/** What a withheld draft is replaced with in the history. */
export const WITHHELD_PLACEHOLDER = "[draft withheld by the red-line check]";

/** The providers `chat` can call. */
export const CHAT_PROVIDERS = ["anthropic", "openai"] as const;
export type ChatProvider = (typeof CHAT_PROVIDERS)[number];

/** Where `chat` reads and writes (the process by default; tests inject their own). */
export interface ChatIO {
  env: Readonly<Record<string, string | undefined>>;
  input: NodeJS.ReadableStream;
  output: { write(chunk: string): unknown };
  error: { write(chunk: string): unknown };
  /** Show the `you> ` prompt (stdin is a terminal). */
  interactive: boolean;
  home: string;
}

interface ChatFlags {
  workspace: string;
  user?: string;
  mode?: string;
  maxTurns?: string;
  maxToolRounds?: string;
  now?: string;
  allowRun?: boolean;
  provider?: ChatProvider;
  json?: boolean;
  store?: string;
  budget?: string;
  userFiles: boolean;
}

/** Provider, key, model and base URL taken from the environment. */
export interface ChatCredentials {
  provider: ChatProvider;
  apiKey: string;
  model: string;
  baseURL: string | undefined;
}

const KEY_VAR: Record<ChatProvider, string> = {
  anthropic: "ANTHROPIC_API_KEY",
  openai: "OPENAI_API_KEY",
};
const BASE_VAR: Record<ChatProvider, string> = {
  anthropic: "ANTHROPIC_BASE_URL",
  openai: "OPENAI_BASE_URL",
};

function envValue(env: ChatIO["env"], name: string): string | undefined {
  const v = env[name];
  return v === undefined || v.trim() === "" ? undefined : v.trim();
}

/**
 * Picks the provider and reads its key and `MODEL_ID`, or throws `invalid_input` saying
 * exactly what is missing (path `env.VAR`).
 *
 * @example chatCredentials({ ANTHROPIC_API_KEY: "sk-…", MODEL_ID: "claude-sonnet-4-5" })
 */
export function chatCredentials(env: ChatIO["env"], provider?: ChatProvider): ChatCredentials {
  const model = envValue(env, "MODEL_ID");
  const chosen: ChatProvider | undefined =
    provider ??
    (envValue(env, KEY_VAR.anthropic) !== undefined
      ? "anthropic"
      : envValue(env, KEY_VAR.openai) !== undefined
        ? "openai"
        : undefined);
  const apiKey = chosen === undefined ? undefined : envValue(env, KEY_VAR[chosen]);
  if (apiKey === undefined || chosen === undefined) {
    const keyVar = chosen === undefined ? KEY_VAR.anthropic : KEY_VAR[chosen];
    const keys = chosen === undefined ? `${KEY_VAR.anthropic} (or ${KEY_VAR.openai})` : keyVar;
    throw new InvalidInputError(
      `set ${keys}${model === undefined ? " and MODEL_ID" : ""}`,
      `env.${keyVar}`,
    );
  }
  if (model === undefined) {
    throw new InvalidInputError("set MODEL_ID (the model to call)", "env.MODEL_ID");
  }
  return { provider: chosen, apiKey, model, baseURL: envValue(env, BASE_VAR[chosen]) };
}

// ---------------------------------------------------------------------------------------
// Tool definitions

/** JSON schema of a tool's input: every argument a string, `requiredArgs` required. */
function inputSchema(tool: ToolSpec): {
  type: "object";
  properties: Record<string, { type: "string"; description?: string }>;
  required: string[];
} {
  const docs: Readonly<Record<string, string>> = isBuiltin(tool.name)
    ? BUILTIN_ARGS[tool.name]
    : {};
  const properties: Record<string, { type: "string"; description?: string }> = {};
  for (const arg of [...tool.requiredArgs, ...Object.keys(docs)]) {
    if (properties[arg] !== undefined) continue;
    const doc = docs[arg];
    properties[arg] = doc === undefined ? { type: "string" } : { type: "string", description: doc };
  }
  return { type: "object", properties, required: [...tool.requiredArgs] };
}

/** The registry as Anthropic tool definitions (`{name, description, input_schema}`). */
export function anthropicTools(tools: readonly ToolSpec[]): Anthropic.Tool[] {
  return tools.map((t) => ({
    name: t.name,
    ...(t.description.trim() !== "" ? { description: t.description } : {}),
    input_schema: inputSchema(t),
  }));
}

/** The registry as OpenAI Chat Completions tools (`{type: "function", function}`). */
export function openAITools(tools: readonly ToolSpec[]): OpenAI.Chat.ChatCompletionFunctionTool[] {
  return tools.map((t) => ({
    type: "function",
    function: {
      name: t.name,
      ...(t.description.trim() !== "" ? { description: t.description } : {}),
      parameters: inputSchema(t),
    },
  }));
}

// ---------------------------------------------------------------------------------------
// Conversations

interface ToolCallRequest {
  id: string;
  name: string;
  input: unknown;
  /** OpenAI: the arguments as sent (echoed back in the history). */
  raw?: string;
  /** The arguments could not be parsed. */
  inputError?: string;
}

interface ModelReply {
  text: string;
  toolCalls: ToolCallRequest[];
  stopReason: string | null;
  usage: Record<string, number>;
}

interface ToolResult {
  id: string;
  content: string;
  isError: boolean;
}

/** One provider conversation: the history plus the system side of the current turn. */
interface Conversation {
  /** A new user turn: the freshly assembled system side, then the user's line. */
  beginTurn(out: WorkspaceAssembly, text: string): Record<string, unknown>;
  complete(): Promise<ModelReply>;
  /** Appends the assistant's reply, its text replaced by `shownText` when given. */
  pushAssistant(reply: ModelReply, shownText?: string): void;
  pushToolResults(results: readonly ToolResult[]): void;
}

function providerFailure(provider: ChatProvider, err: unknown): PromptctxError {
  const why = err instanceof Error ? err.message : String(err);
  return new PromptctxError("internal_error", `${provider} request failed: ${why}`, "provider");
}

function numbers(obj: object | null | undefined): Record<string, number> {
  const out: Record<string, number> = {};
  for (const [k, v] of Object.entries(obj ?? {})) if (typeof v === "number") out[k] = v;
  return out;
}

class AnthropicConversation implements Conversation {
  private system: Anthropic.TextBlockParam[] = [];
  private readonly messages: Anthropic.MessageParam[] = [];
  private readonly tools: Anthropic.Tool[];
  private readonly toolsTokens: number;

  constructor(
    private readonly client: Anthropic,
    private readonly model: string,
    registry: readonly ToolSpec[],
  ) {
    this.tools = anthropicTools(registry);
    this.toolsTokens =
      this.tools.length === 0
        ? 0
        : getTokenCounter("claude_estimate").count(JSON.stringify(this.tools));
  }

  beginTurn(out: WorkspaceAssembly, text: string): Record<string, unknown> {
    const req = toAnthropicRequest(out, {
      model: this.model,
      tokenCounter: getTokenCounter("claude_estimate"),
      toolsTokens: this.toolsTokens,
    });
    this.system = req.body.system;
    const last = this.messages.at(-1);
    if (last?.role === "user" && Array.isArray(last.content)) {
      last.content.push({ type: "text", text });
    } else {
      this.messages.push({ role: "user", content: text });
    }
    return { breakpoints: req.breakpoints, skipped: req.skipped };
  }

  async complete(): Promise<ModelReply> {
    let res: Anthropic.Message;
    try {
      res = await this.client.messages.create({
        model: this.model,
        max_tokens: CHAT_MAX_TOKENS,
        system: this.system,
        messages: this.messages,
        ...(this.tools.length > 0 ? { tools: this.tools } : {}),
      });
    } catch (err) {
      throw providerFailure("anthropic", err);
    }
    const text: string[] = [];
    const toolCalls: ToolCallRequest[] = [];
    for (const block of res.content) {
      if (block.type === "text") text.push(block.text);
      else if (block.type === "tool_use") {
        toolCalls.push({ id: block.id, name: block.name, input: block.input });
      }
    }
    return {
      text: text.join(""),
      toolCalls,
      stopReason: res.stop_reason,
      usage: numbers(res.usage),
    };
  }

  pushAssistant(reply: ModelReply, shownText?: string): void {
    const content: Anthropic.ContentBlockParam[] = [];
    const text = shownText ?? reply.text;
    if (text !== "") content.push({ type: "text", text });
    for (const c of reply.toolCalls) {
      content.push({ type: "tool_use", id: c.id, name: c.name, input: c.input });
    }
    if (content.length === 0) content.push({ type: "text", text: "(no reply)" });
    this.messages.push({ role: "assistant", content });
  }

  pushToolResults(results: readonly ToolResult[]): void {
    this.messages.push({
      role: "user",
      content: results.map((r) => ({
        type: "tool_result",
        tool_use_id: r.id,
        content: r.content,
        ...(r.isError ? { is_error: true } : {}),
      })),
    });
  }
}

class OpenAIConversation implements Conversation {
  private system: OpenAI.Chat.ChatCompletionMessageParam[] = [];
  private cacheKey: string | undefined;
  private readonly messages: OpenAI.Chat.ChatCompletionMessageParam[] = [];
  private readonly tools: OpenAI.Chat.ChatCompletionFunctionTool[];

  constructor(
    private readonly client: OpenAI,
    private readonly model: string,
    registry: readonly ToolSpec[],
  ) {
    this.tools = openAITools(registry);
  }

  beginTurn(out: WorkspaceAssembly, text: string): Record<string, unknown> {
    const req = toOpenAIChatRequest(out, { model: this.model });
    this.system = req.body.messages.map((m) => ({
      role: m.role === "developer" ? "developer" : "system",
      content: typeof m.content === "string" ? m.content : m.content.map((p) => p.text).join(""),
    }));
    this.cacheKey = req.body.prompt_cache_key;
    this.messages.push({ role: "user", content: text });
    return { promptCacheKey: req.promptCacheKey };
  }

  async complete(): Promise<ModelReply> {
    let res: OpenAI.Chat.ChatCompletion;
    try {
      res = await this.client.chat.completions.create({
        model: this.model,
        messages: [...this.system, ...this.messages],
        ...(this.tools.length > 0 ? { tools: this.tools } : {}),
        ...(this.cacheKey !== undefined ? { prompt_cache_key: this.cacheKey } : {}),
      });
    } catch (err) {
      throw providerFailure("openai", err);
    }
    const choice = res.choices[0];
    if (choice === undefined)
      throw providerFailure("openai", new Error("no choices in the response"));
    const toolCalls: ToolCallRequest[] = [];
    for (const call of choice.message.tool_calls ?? []) {
      if (call.type !== "function") continue;
      const raw = call.function.arguments;
      let input: unknown = null;
      let inputError: string | undefined;
      try {
        input = raw.trim() === "" ? {} : JSON.parse(raw);
      } catch {
        inputError = `${call.function.name}: arguments are not valid JSON`;
      }
      toolCalls.push({
        id: call.id,
        name: call.function.name,
        input,
        raw,
        ...(inputError !== undefined ? { inputError } : {}),
      });
    }
    const usage = numbers(res.usage);
    const cached = res.usage?.prompt_tokens_details?.cached_tokens;
    if (typeof cached === "number") usage.cached_tokens = cached;
    return {
      text: choice.message.content ?? "",
      toolCalls,
      stopReason: choice.finish_reason,
      usage,
    };
  }

  pushAssistant(reply: ModelReply, shownText?: string): void {
    const text = shownText ?? reply.text;
    this.messages.push({
      role: "assistant",
      content: text === "" && reply.toolCalls.length > 0 ? null : text,
      ...(reply.toolCalls.length > 0
        ? {
            tool_calls: reply.toolCalls.map((c) => ({
              id: c.id,
              type: "function" as const,
              function: { name: c.name, arguments: c.raw ?? JSON.stringify(c.input) },
            })),
          }
        : {}),
    });
  }

  pushToolResults(results: readonly ToolResult[]): void {
    for (const r of results) {
      this.messages.push({
        role: "tool",
        tool_call_id: r.id,
        content: r.isError ? `error: ${r.content}` : r.content,
      });
    }
  }
}

async function openConversation(
  creds: ChatCredentials,
  registry: readonly ToolSpec[],
): Promise<Conversation> {
  if (creds.provider === "anthropic") {
    const { default: AnthropicClient } = await import("@anthropic-ai/sdk");
    const client = new AnthropicClient({
      apiKey: creds.apiKey,
      ...(creds.baseURL !== undefined ? { baseURL: creds.baseURL } : {}),
    });
    return new AnthropicConversation(client, creds.model, registry);
  }
  const { default: OpenAIClient } = await import("openai");
  const client = new OpenAIClient({
    apiKey: creds.apiKey,
    ...(creds.baseURL !== undefined ? { baseURL: creds.baseURL } : {}),
  });
  return new OpenAIConversation(client, creds.model, registry);
}

// ---------------------------------------------------------------------------------------
// Red lines

/**
 * The red lines of the skills matched this turn (selected or capped), compiled; a line
 * the checker rejects is left out and reported in `problems`.
 */
export function turnRedLines(out: WorkspaceAssembly): {
  compiled: CompiledRedLines;
  ids: string[];
  problems: string[];
} {
  const { selection, catalog } = out.workspace.skills;
  const names = new Set([...selection.matched.map((m) => m.name), ...selection.capped]);
  const lines = redLinesFromSkills(catalog.skills.filter((s) => names.has(s.name)));
  const good: typeof lines = [];
  const problems: string[] = [];
  for (const line of lines) {
    try {
      compileRedLines([line]);
      good.push(line);
    } catch (err) {
      problems.push(`${line.id}: ${err instanceof Error ? err.message : String(err)}`);
    }
  }
  return { compiled: compileRedLines(good), ids: good.map((l) => l.id), problems };
}

// ---------------------------------------------------------------------------------------
// The loop

function nowBase(value: string | undefined): number | null {
  if (value === undefined) return null;
  const ms = instantMillis(value);
  if (ms === null) {
    throw new InvalidInputError(
      `--now must be an ISO-8601 timestamp, got ${JSON.stringify(value)}`,
      "--now",
    );
  }
  return ms;
}

function positiveFlag(value: string | undefined, flag: string, fallback: number): number {
  const n = intFlag(value, flag);
  if (n === undefined) return fallback;
  if (n < 1) throw new InvalidInputError(`${flag} must be at least 1, got ${n}`, flag);
  return n;
}

function userInstructionFiles(home: string): string[] {
  return [join(home, ".config/promptctx/AGENTS.md"), join(home, ".claude/CLAUDE.md")].filter((p) =>
    existsSync(p),
  );
}

function compact(value: unknown, max = 120): string {
  const s = JSON.stringify(value) ?? String(value);
  const cps = [...s];
  return cps.length <= max ? s : `${cps.slice(0, max - 1).join("")}…`;
}

/** Prints events as text lines or JSON lines. */
class Printer {
  constructor(
    private readonly io: ChatIO,
    private readonly json: boolean,
  ) {}

  event(obj: Record<string, unknown>, text: string | null): void {
    if (this.json) this.io.output.write(`${JSON.stringify(obj)}\n`);
    else if (text !== null) this.io.output.write(text.endsWith("\n") ? text : `${text}\n`);
  }
}

/** Checks a draft, prints it (or withholds it) with its violations; returns what the history keeps. */
function showDraft(
  printer: Printer,
  turn: number,
  draft: string,
  redLines: CompiledRedLines,
  final: boolean,
  usage: Record<string, number>,
): { shown: string; check: DraftCheck } {
  const check = checkDraft(draft, redLines);
  const blocking = check.violations.filter((v) => v.severity === "block");
  const withheld = check.blocked; // a block violation, or a draft not checkable in full
  const lines: string[] = [];
  if (!withheld && draft !== "") lines.push(`assistant: ${draft}`);
  for (const v of check.violations) {
    lines.push(
      `  red line ${v.redLineId} (${v.severity}) at ${v.span.start}-${v.span.end}: ${v.excerpt}${v.flagged ? "  [flagged for review]" : ""}`,
    );
  }
  if (withheld) {
    const ids = [...new Set(blocking.map((v) => v.redLineId))].join(", ");
    lines.push(
      check.incomplete !== null
        ? `draft withheld: red-line check incomplete (${check.incomplete})`
        : `draft withheld: red line ${ids}`,
    );
  } else if (check.flagged) {
    lines.push(`draft flagged for review: ${check.redLineIds.join(", ")}`);
  }
  printer.event(
    {
      event: "reply",
      turn,
      final,
      text: withheld ? null : draft,
      withheld,
      flagged: check.flagged,
      check,
      usage,
    },
    lines.length > 0 ? lines.join("\n") : null,
  );
  return { shown: withheld ? WITHHELD_PLACEHOLDER : draft, check };
}

async function runChat(flags: ChatFlags, io: ChatIO): Promise<number> {
  const maxTurns = positiveFlag(flags.maxTurns, "--max-turns", CHAT_MAX_TURNS);
  const maxRounds = positiveFlag(flags.maxToolRounds, "--max-tool-rounds", CHAT_MAX_TOOL_ROUNDS);
  const base = nowBase(flags.now);
  const budget = intFlag(flags.budget, "--budget");
  const creds = chatCredentials(io.env, flags.provider);
  const root = resolve(flags.workspace);
  if (!existsSync(root)) {
    throw new InvalidInputError(`workspace ${flags.workspace} does not exist`, "--workspace");
  }
  const config = await loadWorkspaceConfig(root);
  const toolState = new ToolState(config.tools ?? []);
  const registry = toolState.tools();
  const conversation = await openConversation(creds, registry);
  const printer = new Printer(io, flags.json === true);
  const userFiles = flags.userFiles ? userInstructionFiles(io.home) : [];

  // The workspace is loaded once; a runtime session (spec 05) reassembles it every turn.
  const ws = await loadWorkspace({
    workspace: root,
    toolState,
    ...(flags.mode !== undefined ? { mode: flags.mode } : {}),
    ...(flags.user !== undefined ? { user: flags.user } : {}),
    ...(flags.store !== undefined ? { store: flags.store } : {}),
    ...(budget !== undefined ? { budgetChars: budget } : {}),
    ...(userFiles.length > 0 ? { userFiles, home: io.home } : {}),
  });
  const session = createSession({
    state: {
      userScope: ws.user,
      mode: ws.mode,
      workingMode: config.workingMode ?? "craft",
      expert: config.expert ?? null,
      identity: config.identity ?? "",
    },
    segments: ws.segments.map((seg) => ({ ...seg, deps: [], build: () => seg.content })),
    sources: ws.sources,
    tokenCounter: ws.tokenCounter,
    assemble: {
      schemas: ws.schemas,
      renderer: ws.renderer,
      budgetChars: ws.budgetChars,
      budgetTokens: ws.budgetTokens,
    },
  });

  const rl = createInterface({
    input: io.input,
    crlfDelay: Number.POSITIVE_INFINITY,
    terminal: false,
  });
  const lines = rl[Symbol.asyncIterator]();
  let turn = 0;
  let reason = "end_of_input";
  try {
    for (;;) {
      if (turn >= maxTurns) {
        reason = "max_turns";
        break;
      }
      if (io.interactive) io.output.write("you> ");
      const next = await lines.next();
      if (next.done) break;
      const text = next.value.trim();
      if (text === "") continue;
      if (text === "/exit" || text === "/quit") {
        reason = "exit";
        break;
      }
      turn += 1;
      const now =
        base === null
          ? new Date().toISOString()
          : new Date(base + (turn - 1) * CHAT_CLOCK_STEP_MS).toISOString();
      // The session refetches every slot at a new turn (tool state, memory recall for this
      // line, the skills it triggers) and reuses the segments no event changed.
      const assembly = await session.beginTurn({ text, now });
      const out: WorkspaceAssembly = { ...assembly, workspace: workspaceReport(ws, text) };
      const red = turnRedLines(out);
      const cache = conversation.beginTurn(out, text);
      const skills = out.workspace.skills.selection.matched.map((m) => m.name);
      printer.event(
        {
          event: "turn",
          turn,
          now,
          provider: creds.provider,
          model: creds.model,
          skills,
          redLines: red.ids,
          redLineProblems: red.problems,
          promptVersion: out.manifest.promptVersion,
          cacheKeys: out.manifest.cacheKeys,
          ...cache,
        },
        [
          `── turn ${turn} · ${now} · skills: ${skills.join(", ") || "none"} · red lines: ${red.ids.length}`,
          ...red.problems.map((p) => `  red line skipped: ${p}`),
        ].join("\n"),
      );

      for (let round = 1; ; round++) {
        const reply = await conversation.complete();
        const final = reply.toolCalls.length === 0;
        const { shown } =
          reply.text === "" && !final
            ? { shown: "" }
            : showDraft(printer, turn, reply.text, red.compiled, final, reply.usage);
        conversation.pushAssistant(reply, shown);
        if (final) break;
        if (round > maxRounds) {
          const message = `not run: tool round limit (${maxRounds}) reached for this user message`;
          conversation.pushToolResults(
            reply.toolCalls.map((c) => ({ id: c.id, content: message, isError: true })),
          );
          printer.event(
            { event: "limit", turn, maxToolRounds: maxRounds, unanswered: reply.toolCalls.length },
            `tool round limit (${maxRounds}) reached: ${reply.toolCalls.length} call(s) not run`,
          );
          break;
        }
        const results: ToolResult[] = [];
        for (const call of reply.toolCalls) {
          const outcome: ToolOutcome =
            call.inputError !== undefined
              ? { ok: false, content: call.inputError, summary: call.inputError }
              : await executeTool(call.name, call.input, registry, {
                  root,
                  allowRun: flags.allowRun === true,
                  env: io.env,
                });
          toolState.recordCall({
            tool: call.name,
            ok: outcome.ok,
            summary: outcome.summary,
            at: now,
          });
          results.push({ id: call.id, content: outcome.content, isError: !outcome.ok });
          printer.event(
            {
              event: "tool",
              turn,
              round,
              id: call.id,
              name: call.name,
              input: call.input,
              ok: outcome.ok,
              summary: outcome.summary,
            },
            `  tool ${call.name} ${compact(call.input)} → ${outcome.ok ? "ok" : "failed"}: ${outcome.summary}`,
          );
        }
        conversation.pushToolResults(results);
      }
    }
  } finally {
    rl.close();
    await ws.close();
  }
  if (reason === "max_turns") {
    printer.event({ event: "end", turns: turn, reason }, `max turns reached (${maxTurns})`);
  } else {
    printer.event({ event: "end", turns: turn, reason }, null);
  }
  return 0;
}

function reportChatError(err: unknown, io: ChatIO): number {
  const obj = toErrorObject(err);
  io.output.write(`${JSON.stringify(obj)}\n`);
  const at = obj.error.path ? ` (at ${obj.error.path})` : "";
  io.error.write(`promptctx chat: ${obj.error.code}: ${obj.error.message}${at}\n`);
  if (obj.error.code === "internal_error" && io.env.PROMPTCTX_DEBUG && err instanceof Error) {
    io.error.write(`${err.stack ?? err.message}\n`);
  }
  return exitCodeFor(err);
}

function processIO(): ChatIO {
  return {
    env: process.env,
    input: process.stdin,
    output: process.stdout,
    error: process.stderr,
    interactive: Boolean(process.stdin.isTTY),
    home: homedir(),
  };
}

/**
 * Registers `chat` on the program. `io` replaces the process's streams and environment
 * (tests drive the command in-process with it).
 *
 * @example registerChatCommand(program, (code) => { process.exitCode = code; });
 */
export function registerChatCommand(
  program: Command,
  setExit: (code: number) => void,
  io?: Partial<ChatIO>,
): void {
  program
    .command("chat")
    .description(
      "a multi-turn agent loop over a workspace: user lines from stdin, the context reassembled each turn, tools run, drafts checked against red lines",
    )
    .requiredOption("--workspace <dir>", "workspace directory")
    .option("--user <scope>", "user scope (default: config `user`)")
    .option("--mode <mode>", "schema mode: chat, tool, rag, react (default: config, else react)")
    .option("--max-turns <n>", `user lines answered at most (default ${CHAT_MAX_TURNS})`)
    .option(
      "--max-tool-rounds <n>",
      `tool rounds per user line at most (default ${CHAT_MAX_TOOL_ROUNDS})`,
    )
    .option(
      "--now <iso>",
      "clock of the first turn; each later turn is one minute later (default: the current time)",
    )
    .option("--allow-run", "let the model run shell commands with the `run` tool")
    .addOption(
      new Option(
        "--provider <name>",
        "provider (default: anthropic when ANTHROPIC_API_KEY is set)",
      ).choices([...CHAT_PROVIDERS]),
    )
    .option("--json", "one JSON event per line (turn, tool, reply, limit, end)")
    .option("--store <path>", "memory store (default: WORKSPACE/.promptctx/memory.db)")
    .option("--budget <chars>", "global char budget (default: config, else 12000)")
    .option("--no-user-files", "ignore ~/.config/promptctx/AGENTS.md and ~/.claude/CLAUDE.md")
    .addHelpText(
      "after",
      [
        "",
        "Environment:",
        "  ANTHROPIC_API_KEY or OPENAI_API_KEY  the provider's key",
        "  MODEL_ID                             the model to call",
        "  ANTHROPIC_BASE_URL / OPENAI_BASE_URL another endpoint (e.g. a proxy)",
        "",
        "One user message per stdin line; `/exit` ends. A `block` red line withholds the draft.",
      ].join("\n"),
    )
    .action(async (flags: ChatFlags) => {
      const chatIO: ChatIO = { ...processIO(), ...io };
      try {
        setExit(await runChat(flags, chatIO));
      } catch (err) {
        setExit(reportChatError(err, chatIO));
      }
    });
}
