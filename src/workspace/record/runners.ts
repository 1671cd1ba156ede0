/**
 * How each kind of recorded line is rerun: its request schema and the job that answers
 * it. The surfaces run their own requests through the same functions (CLI `assemble` and
 * `demo` call `runAssembleRequest`, assemble-runner.ts), so what a line records is what ran.
 *
 * A new kind is one entry in {@link REPLAY_RUNNERS}; its surface then records with
 * `recorder.recordLine("kind", request, response)`.
 */
import { resolve } from "node:path";
import type { z } from "zod";
import type { Assembly } from "../../assemble/index.js";
import type { ConversationPlan } from "../../conversation/index.js";
import { type FieldPath, invalidFromZod } from "../../errors/index.js";
import { ToolState } from "../../sources/index.js";
import { createChatSession } from "../agent.js";
import { loadWorkspaceConfig } from "../files.js";
import { loadWorkspace, type WorkspaceAssembly, workspaceReport } from "../workspace.js";
import {
  confineRecorded,
  recordedOptions,
  runAssembleRequest,
  withRecordedStore,
} from "./assemble-runner.js";
import {
  AssembleRecordRequestSchema,
  type ChatRecordRequest,
  ChatRecordRequestSchema,
} from "./schema.js";

export {
  type AssembleRequestFields,
  assembleRequestFields,
  confineRecorded,
  recordedOptions,
  runAssembleRequest,
  storeTarget,
  withoutStorePassword,
  withRecordedStore,
} from "./assemble-runner.js";

/** What a runner answers: an assembly, and the conversation plan when the kind plans one. */
export type Replayable = Assembly & { conversationPlan?: ConversationPlan };

/** One kind: checks its recorded request and reruns it. `Req` is the request's type. */
export interface ReplayRunner<Req> {
  /** The request, checked (typed error naming `path` + the field). */
  check(request: unknown, path: FieldPath): Req;
  /** Reruns the request; relative paths in it resolve against `dir`. */
  run(request: unknown, dir: string): Promise<Replayable>;
}

function defineRunner<S extends z.ZodType>(
  schema: S,
  run: (request: z.output<S>, dir: string) => Promise<Replayable>,
): ReplayRunner<z.output<S>> {
  const check = (request: unknown, path: FieldPath): z.output<S> => {
    const parsed = schema.safeParse(request);
    if (!parsed.success) throw invalidFromZod(parsed.error, path);
    return parsed.data;
  };
  return { check, run: (request, dir) => run(check(request, ["request"]), dir) };
}

/**
 * Runs a `chat` request: the workspace loaded with a tool state rebuilt from the calls
 * made before the turn, and the turn assembled by a chat session, as `chat` does.
 */
export function runChatRequest(
  request: ChatRecordRequest,
  dir: string,
  confined = false,
): Promise<WorkspaceAssembly> {
  return withRecordedStore(request.store, dir, async (storePath) => {
    const options = recordedOptions(request, dir, storePath, confined);
    const config = await loadWorkspaceConfig(resolve(options.workspace));
    const toolState = new ToolState(config.tools ?? []);
    for (const call of request.toolCalls) toolState.recordCall(call);
    const ws = await loadWorkspace({ ...options, toolState });
    try {
      const session = createChatSession(ws, config);
      const assembly = await session.beginTurn({ text: request.query, now: request.now });
      return { ...assembly, workspace: workspaceReport(ws, request.query) };
    } finally {
      await ws.close();
    }
  });
}

/**
 * A rerun that reads nothing the recording names outside its workspace: the paths are
 * confined first ({@link confineRecorded}), then user files are read only inside it.
 */
function replayed<R extends z.output<typeof AssembleRecordRequestSchema>>(
  run: (request: R, dir: string, confined: boolean) => Promise<Replayable>,
): (request: R, dir: string) => Promise<Replayable> {
  return async (request, dir) => {
    await confineRecorded(request, dir);
    return run(request, dir, true);
  };
}

/** The kinds a recording may hold, and how each is rerun. */
export const REPLAY_RUNNERS = {
  assemble: defineRunner(AssembleRecordRequestSchema, replayed(runAssembleRequest)),
  chat: defineRunner(ChatRecordRequestSchema, replayed(runChatRequest)),
} as const;

/** A kind of recorded line. */
export type RecordKind = keyof typeof REPLAY_RUNNERS;

/** The request type of a kind. */
export type RecordRequestOf<K extends RecordKind> =
  (typeof REPLAY_RUNNERS)[K] extends ReplayRunner<infer R> ? R : never;

/** True when `kind` has a runner. */
export function isRecordKind(kind: string): kind is RecordKind {
  return Object.hasOwn(REPLAY_RUNNERS, kind);
}
