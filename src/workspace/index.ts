/**
 * The main job over a workspace directory (docs/sources.md): config, instruction chain,
 * skills, KB and store wired into one assembly, and the chat turn over it. May import every
 * stage below it (errors … assemble); does file I/O.
 */
export {
  createChatSession,
  runChatTurn,
  turnRedLines,
  type WorkspaceChat,
} from "./chat.js";
export {
  type WorkspaceConfig,
  WorkspaceConfigSchema,
  workspaceConfigJsonSchema,
} from "./config.js";
export { type WarmAssembleOptions, WarmWorkspaces } from "./warm.js";
export {
  assembleWorkspace,
  loadWorkspace,
  loadWorkspaceConfig,
  readWorkspaceFiles,
  WORKSPACE_BUDGET_CHARS,
  WORKSPACE_PATHS,
  type WorkspaceAssembleOptions,
  type WorkspaceAssembly,
  type WorkspaceContext,
  type WorkspaceFiles,
  type WorkspaceReport,
  workspaceContext,
  workspaceReport,
  workspaceSources,
} from "./workspace.js";
