/**
 * A chat over a loaded workspace: the runtime session (docs/session-and-cache.md) that reassembles it at
 * every user turn, the red lines of the skills the turn matched, and one user turn run
 * through a provider conversation.
 */

import {
  type ChatEvent,
  type ChatToolRunner,
  type Conversation,
  runToolRounds,
} from "../agent/index.js";
import { createSession, type Session } from "../assemble/index.js";
import type { ToolState } from "../sources/index.js";
import { type CompiledRedLines, compileRedLines, redLinesFromSkills } from "../trace/index.js";
import type { WorkspaceConfig } from "./config.js";
import { type WorkspaceAssembly, type WorkspaceContext, workspaceReport } from "./workspace.js";

/**
 * The session a chat reassembles the workspace with: the workspace's segments (built
 * once, no state dependencies), its sources, and the config's working mode, expert and
 * identity.
 *
 * @example const session = createChatSession(await loadWorkspace({ workspace, toolState }), config);
 */
export function createChatSession(ws: WorkspaceContext, config: WorkspaceConfig): Session {
  return createSession({
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
}

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

/** A chat over a workspace: what every user turn reads, runs and reports to. */
export interface WorkspaceChat {
  ws: WorkspaceContext;
  session: Session;
  conversation: Conversation;
  /** The state carried between turns: every tool call is recorded in it. */
  toolState: ToolState;
  maxToolRounds: number;
  runTool: ChatToolRunner;
  emit: (event: ChatEvent) => void;
  /**
   * Called with each turn's assembly before the model is asked (the tool state still as
   * it was when the turn began): `chat --record` writes its line here.
   */
  onAssembly?: (out: WorkspaceAssembly, turn: { text: string; turn: number; now: string }) => void;
}

/**
 * Runs one user turn at `now`: the session refetches every slot (tool state, memory
 * recalled for this line, the skills it triggers) and reuses the segments no event
 * changed; the reassembled context becomes the conversation's system side (frozen for
 * the turn), then the tool rounds run with the matched skills' red lines.
 *
 * @example await runChatTurn(chat, "add a currency column", 1, "2026-11-30T09:00:00Z");
 */
export async function runChatTurn(
  chat: WorkspaceChat,
  text: string,
  turn: number,
  now: string,
): Promise<void> {
  const assembly = await chat.session.beginTurn({ text, now });
  const out: WorkspaceAssembly = { ...assembly, workspace: workspaceReport(chat.ws, text) };
  chat.onAssembly?.(out, { text, turn, now });
  const red = turnRedLines(out);
  const cache = chat.conversation.beginTurn(out, text);
  chat.emit({
    event: "turn",
    turn,
    now,
    provider: chat.conversation.provider,
    model: chat.conversation.model,
    skills: out.workspace.skills.selection.matched.map((m) => m.name),
    redLines: red.ids,
    redLineProblems: red.problems,
    promptVersion: out.manifest.promptVersion,
    cacheKeys: out.manifest.cacheKeys,
    ...cache,
  });
  await runToolRounds({
    conversation: chat.conversation,
    turn,
    now,
    redLines: red.compiled,
    maxToolRounds: chat.maxToolRounds,
    toolState: chat.toolState,
    runTool: chat.runTool,
    emit: chat.emit,
  });
}
