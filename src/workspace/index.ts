/**
 * The main job over a workspace directory (docs/sources.md): config, instruction chain,
 * skills, KB and store wired into one assembly, the chat turn over it, and recordings of
 * assemblies and their replay (docs/inspector.md). May import every
 * stage below it (errors … assemble); does file I/O.
 */
export {
  createChatSession,
  runChatTurn,
  turnRedLines,
  type WorkspaceChat,
} from "./agent.js";
export {
  type WorkspaceConfig,
  WorkspaceConfigSchema,
  workspaceConfigJsonSchema,
} from "./config.js";
export {
  loadWorkspaceConfig,
  readWorkspaceFiles,
  WORKSPACE_PATHS,
  type WorkspaceFiles,
  type WorkspaceWalkOptions,
  workspaceSources,
} from "./files.js";
export {
  type ByteChange,
  byteChange,
  compareResponses,
  type DecisionChange,
  type DecisionTable,
  type LayerChange,
  type ResponseDiff,
} from "./record/diff.js";
export {
  createRecorder,
  type ParsedLine,
  parseRecording,
  type Recorder,
  toRecordResponse,
} from "./record/recorder.js";
export {
  formatReplay,
  type ReplayLineReport,
  type ReplayReport,
  replayRecording,
  rerunLine,
} from "./record/replay.js";
export {
  type AssembleRequestFields,
  assembleRequestFields,
  confineRecorded,
  isRecordKind,
  REPLAY_RUNNERS,
  type RecordKind,
  type RecordRequestOf,
  type Replayable,
  type ReplayRunner,
  recordedOptions,
  runAssembleRequest,
  runChatRequest,
  storeTarget,
  withoutStorePassword,
  withRecordedStore,
} from "./record/runners.js";
export {
  type AssembleRecordRequest,
  AssembleRecordRequestSchema,
  type AssemblyResponse,
  type ChatRecordRequest,
  ChatRecordRequestSchema,
  type ErrorResponse,
  isErrorResponse,
  RECORD_VERSION,
  type RecordLine,
  type RecordResponse,
  type StoreSpec,
} from "./record/schema.js";
export { type LayerSpan, layerSpans } from "./record/spans.js";
export { type Arrival, type WarmAssembleOptions, WarmWorkspaces } from "./warm.js";
export {
  assembleWorkspace,
  loadWorkspace,
  WORKSPACE_BUDGET_CHARS,
  type WorkspaceAssembleOptions,
  type WorkspaceAssembly,
  type WorkspaceContext,
  type WorkspaceReport,
  workspaceContext,
  workspaceReport,
} from "./workspace.js";
