/**
 * `promptctx chat`: a multi-turn agent loop over a workspace, calling Anthropic or OpenAI
 * through the official SDKs, running the workspace's tools, and checking every draft
 * against the red lines before the user sees it. This module is the command's edge (flags,
 * stdin lines, printing); the provider conversations and the tool rounds are in
 * src/agent/loop/, one user turn over a workspace in src/workspace/agent.ts.
 *
 * How one user line is handled (decisions documented so peers can mirror them):
 * - Input: one user message per stdin line (blank lines skipped; `/exit` or `/quit`
 *   ends the chat; `/context` prints where the model's window goes — see below). The prompt `you> ` is shown only when stdin is a terminal, so a
 *   script can pipe lines in. At most `--max-turns` lines are answered (default 8).
 * - Context: the workspace is loaded once (`loadWorkspace`: config, instruction files,
 *   skills, KB, the memory store) and a runtime `Session` (docs/session-and-cache.md) reassembles it at every
 *   user line with `beginTurn`: every slot is refetched (memory recalled with the line as
 *   the query, skills matched against it, the tool state as it is now) while unchanged
 *   segments are reused. The one piece of state carried
 *   between turns is the {@link ToolState} (passed as `toolState`): every tool call is
 *   recorded in it (`read_file → ok: AGENTS.md (312 bytes)`), so the next turn's
 *   tool-state layer shows it. Within a turn the system prompt is frozen (docs/session-and-cache.md: the
 *   prefix is frozen per loop turn, which also keeps the provider cache warm); tool
 *   results travel as `tool_result` blocks / `tool` messages.
 * - History (docs/conversation.md): the conversation (user lines, replies, tool calls and results) is
 *   kept in the neutral message model and planned against the model's window before
 *   every request: `window − system side − tool definitions − response reserve (max
 *   tokens)`, the window from `--context-window` or the model table. The first user line
 *   is pinned; the window moves in batches (`lowWaterRatio` 0.7) with the previous
 *   request's first kept message as the anchor, so the cached prefix stays put; Anthropic
 *   requests get a breakpoint at the end of the stable history prefix. When the run the
 *   window left behind holds `--compact-threshold` tokens (default 20000; 0: never), the
 *   provider summarizes it (same model, official client) into one pinned message in its
 *   place (`compaction` event). `/context` prints the last request's (or the next one's)
 *   window use — system layers per tier, tool definitions, history and its tool results,
 *   reserves, free — the cache breakpoints, and the conversation and segment decisions.
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
import { createInterface } from "node:readline";
import { type Command, Option } from "commander";
import { CHAT_PROVIDERS, openConversation } from "../../agent/index.js";
import { type RecordedToolCall, type ToolCall, ToolState } from "../../sources/index.js";
import {
  type ChatRecordRequest,
  createChatSession,
  loadWorkspace,
  loadWorkspaceConfig,
  type Recorder,
  runChatTurn,
  storeTarget,
  type WorkspaceChat,
  type WorkspaceContext,
} from "../../workspace/index.js";
import { budgetCharsOption, formerBudgetOption } from "../io.js";
import { createStoreIfAbsent } from "../new-store.js";
import { recorderFor } from "../record.js";
import { fitText, type TableStyle } from "../table.js";
import { stdoutStyle } from "../terminal.js";
import { executeTool } from "../tools.js";
import { summaryOf } from "../verbs.js";
import { builtinArgDocs } from "./builtin-tools.js";
import { contextText, contextUsage } from "./context.js";
import { type ChatIO, processIO, reportChatError } from "./io.js";
import { type ChatEndReason, Printer } from "./output.js";
import {
  CHAT_MAX_TOOL_ROUNDS,
  CHAT_MAX_TURNS,
  type ChatFlags,
  type ChatSettings,
  chatSettings,
  turnNow,
  userInstructionFiles,
} from "./settings.js";

/** What every turn's recorded request shares: the workspace and the flags' overrides. */
type ChatRequestBase = Omit<ChatRecordRequest, "query" | "now" | "turn" | "toolCalls">;

function chatRequestBase(flags: ChatFlags, settings: ChatSettings, home: string): ChatRequestBase {
  const userFiles = flags.userFiles ? userInstructionFiles(home) : [];
  return {
    workspace: settings.root,
    ...(flags.mode !== undefined ? { mode: flags.mode } : {}),
    ...(flags.user !== undefined ? { user: flags.user } : {}),
    ...(flags.store !== undefined ? { store: { path: storeTarget(flags.store) } } : {}),
    ...(settings.budget !== undefined ? { budgetChars: settings.budget } : {}),
    ...(userFiles.length > 0 ? { userFiles, home } : {}),
  };
}

/** Loads the workspace once, with the flags' overrides; a runtime session reassembles it every turn. */
function loadChatWorkspace(base: ChatRequestBase, toolState: ToolState): Promise<WorkspaceContext> {
  const storePath = base.store !== undefined && "path" in base.store ? base.store.path : undefined;
  return loadWorkspace({
    workspace: base.workspace,
    toolState,
    ...(base.mode !== undefined ? { mode: base.mode } : {}),
    ...(base.user !== undefined ? { user: base.user } : {}),
    ...(storePath !== undefined ? { store: storePath } : {}),
    ...(base.budgetChars !== undefined ? { budgetChars: base.budgetChars } : {}),
    ...(base.userFiles !== undefined ? { userFiles: base.userFiles, home: base.home } : {}),
    // A remote embedder named by the workspace config reads its base URL and key here.
    embedderEnv: process.env,
  });
}

/** `/context`: the last request's window use and decisions (or the next request's, before one). */
function printContext(chat: WorkspaceChat, printer: Printer, style: TableStyle): void {
  const r = chat.conversation.lastRequest ?? chat.conversation.preview();
  if (r === null) {
    printer.report({ event: "context", request: null }, "context: no turn yet");
    return;
  }
  const u = contextUsage(r);
  printer.report(
    {
      event: "context",
      provider: chat.conversation.provider,
      model: r.model,
      usage: u,
      breakpoints: r.request.breakpoints,
      skipped: r.request.skipped,
      promptCacheKey: r.request.promptCacheKey,
      stablePrefix: r.stablePrefix,
      decisions: { conversation: r.decisions.conversation, segments: r.decisions.segments },
    },
    fitText(contextText(r, style), style),
  );
}

/** A tool state that also keeps every call in order: a recorded turn carries the calls before it. */
class LoggedToolState extends ToolState {
  readonly log: ToolCall[] = [];
  override recordCall(call: ToolCall): RecordedToolCall {
    const recorded = super.recordCall(call);
    this.log.push({
      tool: recorded.tool,
      ok: recorded.ok,
      summary: recorded.summary,
      at: recorded.at,
    });
    return recorded;
  }
}

/** `--record`: each turn's line, written before the model is asked. */
function turnRecorder(
  recorder: Recorder | null,
  base: ChatRequestBase,
  toolState: LoggedToolState,
): WorkspaceChat["onAssembly"] {
  if (recorder === null) return undefined;
  return (out, t) => {
    const request = {
      ...base,
      query: t.text,
      now: t.now,
      turn: t.turn,
      toolCalls: [...toolState.log],
    };
    recorder.recordLine("chat", request, out);
  };
}

/** Answers stdin's lines, one user turn each, until input ends, `/exit` or `--max-turns`. */
async function answerLines(
  chat: WorkspaceChat,
  settings: ChatSettings,
  io: ChatIO,
  printer: Printer,
): Promise<{ turns: number; reason: ChatEndReason }> {
  const rl = createInterface({
    input: io.input,
    crlfDelay: Number.POSITIVE_INFINITY,
    terminal: false,
  });
  const lines = rl[Symbol.asyncIterator]();
  let turn = 0;
  try {
    for (;;) {
      if (turn >= settings.maxTurns) return { turns: turn, reason: "max_turns" };
      if (io.interactive) io.output.write("you> ");
      const next = await lines.next();
      if (next.done) return { turns: turn, reason: "end_of_input" };
      const text = next.value.trim();
      if (text === "") continue;
      if (text === "/exit" || text === "/quit") return { turns: turn, reason: "exit" };
      if (text === "/context") {
        // Fitted to the terminal when printing to the process's stdout; an injected output
        // gets every cell whole.
        const style = io.output === process.stdout ? stdoutStyle() : { color: false, width: null };
        printContext(chat, printer, style);
        continue;
      }
      turn += 1;
      await runChatTurn(chat, text, turn, turnNow(settings.base, turn));
    }
  } finally {
    rl.close();
  }
}

async function runChat(flags: ChatFlags, io: ChatIO): Promise<number> {
  const settings = chatSettings(flags, io.env);
  if (flags.store !== undefined) await createStoreIfAbsent(flags.store, "chat");
  const recorder = recorderFor(flags.record);
  const config = await loadWorkspaceConfig(settings.root);
  const toolState = new LoggedToolState(config.tools ?? []);
  const registry = toolState.tools();
  const conversation = await openConversation(
    settings.creds,
    registry,
    builtinArgDocs,
    settings.context,
  );
  const printer = new Printer(io, flags.json === true);
  conversation.onCompact = (event) => printer.event(event);
  const base = chatRequestBase(flags, settings, io.home);
  const ws = await loadChatWorkspace(base, toolState);
  const chat: WorkspaceChat = {
    ws,
    session: createChatSession(ws, config),
    conversation,
    toolState,
    maxToolRounds: settings.maxRounds,
    runTool: (call) =>
      executeTool(call.name, call.input, registry, {
        root: settings.root,
        allowRun: flags.allowRun === true,
        env: io.env,
      }),
    emit: (event) => printer.event(event),
    onAssembly: turnRecorder(recorder, base, toolState),
  };
  let end: { turns: number; reason: ChatEndReason };
  try {
    end = await answerLines(chat, settings, io, printer);
  } finally {
    await ws.close();
  }
  printer.end(end.turns, end.reason, settings.maxTurns);
  return 0;
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
    .description(summaryOf("chat"))
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
    .option(
      "--store <path|url>",
      "memory store: an SQLite file or postgres://… (default: WORKSPACE/.promptctx/memory.db)",
    )
    .addOption(budgetCharsOption("global char budget (default: config, else 12000)"))
    .addOption(formerBudgetOption())
    .option(
      "--context-window <tokens>",
      "the model's context window (default: the model table; required for a model it does not know)",
    )
    .option(
      "--compact-threshold <tokens>",
      "summarize the history the window dropped once it holds this many tokens (default 20000; 0: never)",
    )
    .option(
      "--tool-result-max-tokens <n>",
      "cut tool results over this many tokens to head + notice + tail (default: never)",
    )
    .option("--no-user-files", "ignore ~/.config/promptctx/AGENTS.md and ~/.claude/CLAUDE.md")
    .option(
      "--record <file>",
      "append each turn's request (the tool calls before it included) and assembly to FILE",
    )
    .addHelpText(
      "after",
      [
        "",
        "Environment:",
        "  ANTHROPIC_API_KEY or OPENAI_API_KEY  the provider's key",
        "  MODEL_ID                             the model to call",
        "  ANTHROPIC_BASE_URL / OPENAI_BASE_URL another endpoint (e.g. a proxy)",
        "",
        "One user message per stdin line; `/exit` ends, `/context` shows where the window goes.",
        "A `block` red line withholds the draft.",
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
