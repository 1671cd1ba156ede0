/** The main job over a workspace directory (spec 06 layout). */
export {
  type WorkspaceConfig,
  WorkspaceConfigSchema,
  workspaceConfigJsonSchema,
} from "./config.js";
export {
  assembleWorkspace,
  loadWorkspaceConfig,
  WORKSPACE_BUDGET_CHARS,
  WORKSPACE_PATHS,
  type WorkspaceAssembleOptions,
  type WorkspaceAssembly,
  type WorkspaceReport,
} from "./workspace.js";
