/** The main job over a workspace directory (spec 06 layout). */
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
