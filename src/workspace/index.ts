/** The main job over a workspace directory (spec 06 layout). */
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
export {
  assembleWorkspace,
  loadWorkspace,
  loadWorkspaceConfig,
  WORKSPACE_BUDGET_CHARS,
  WORKSPACE_PATHS,
  type WorkspaceAssembleOptions,
  type WorkspaceAssembly,
  type WorkspaceContext,
  type WorkspaceReport,
  workspaceReport,
} from "./workspace.js";
