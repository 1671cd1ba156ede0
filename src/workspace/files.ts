import { isAbsolute, join, resolve } from "node:path";
import { InvalidInputError, invalidFromZod } from "../errors/index.js";
import {
  type ContextSource,
  constraintsSource,
  discoverSkills,
  type InstructionChain,
  type InstructionChainOptions,
  instructionChainSource,
  type KbLoad,
  kbSource,
  loadInstructionChain,
  loadKbDir,
  memoryStoreSource,
  plannerSource,
  profileSource,
  type SkillCatalog,
  skillsSource,
  ToolState,
  toolStateSource,
} from "../sources/index.js";
import type { MemoryStore } from "../store/index.js";
import { strictSchema } from "../text/index.js";
import { type WorkspaceConfig, WorkspaceConfigSchema } from "./config.js";
import { readWorkspaceText } from "./confined.js";

/** Where a workspace keeps its files, relative to its root. */
export const WORKSPACE_PATHS = {
  config: ".promptctx/config.json",
  kb: ".promptctx/kb",
  store: ".promptctx/memory.db",
  skillRoots: [".promptctx/skills", ".agents/skills", ".claude/skills"],
} as const;

/** Where the instruction walk starts (`cwd`), and the user-level files it adds. */
export interface WorkspaceWalkOptions {
  /** Instruction-walk start (default: config `cwd`, else the workspace). */
  cwd?: string;
  /** User-level instruction files. */
  userFiles?: string[];
  /** Where user files may be read besides the workspace (the chain's `userRoots`; replay: `[]`). */
  userRoots?: string[];
  home?: string;
}

/**
 * Reads and validates `.promptctx/config.json` (absent → `{}`).
 *
 * @example const config = await loadWorkspaceConfig("/repo");
 */
export async function loadWorkspaceConfig(root: string): Promise<WorkspaceConfig> {
  const text = await readWorkspaceText(join(root, WORKSPACE_PATHS.config), root, "config");
  if (text === null) return {};
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch (err) {
    const why = err instanceof Error ? err.message : String(err);
    throw new InvalidInputError(`${WORKSPACE_PATHS.config} is not valid JSON: ${why}`, "config");
  }
  const parsed = strictSchema(WorkspaceConfigSchema).safeParse(raw);
  if (!parsed.success) throw invalidFromZod(parsed.error, ["config"]);
  return parsed.data;
}

/** Where the instruction walk starts and stops, and the user-level files it adds. */
function instructionChainOptions(
  options: WorkspaceWalkOptions,
  config: WorkspaceConfig,
  root: string,
): InstructionChainOptions {
  const cwdOption = options.cwd ?? config.cwd;
  const cwd =
    cwdOption === undefined ? root : isAbsolute(cwdOption) ? cwdOption : resolve(root, cwdOption);
  return {
    cwd,
    stopDir: root,
    ...(options.userFiles ? { userFiles: options.userFiles } : {}),
    ...(options.userRoots ? { userRoots: options.userRoots } : {}),
    ...(options.home ? { home: options.home } : {}),
  };
}

/** A workspace's files, read once: what depends neither on the query nor on the settings. */
export interface WorkspaceFiles {
  root: string;
  config: WorkspaceConfig;
  instructions: InstructionChain;
  /** Where the instruction walk ran: the directories from the root down to its start. */
  instructionOptions: InstructionChainOptions;
  catalog: SkillCatalog;
  /** The skill roots searched, absolute, in order. */
  skillRoots: string[];
  kb: KbLoad;
  kbDir: string;
}

/**
 * Reads a workspace's files: the config, the instruction chain, the skills and the KB.
 *
 * @example const files = await readWorkspaceFiles("/repo", {});
 */
export async function readWorkspaceFiles(
  root: string,
  options: WorkspaceWalkOptions,
): Promise<WorkspaceFiles> {
  const config = await loadWorkspaceConfig(root);
  const instructionOptions = instructionChainOptions(options, config, root);
  const instructions = await loadInstructionChain(instructionOptions);
  const skillRoots = (config.skills?.roots ?? WORKSPACE_PATHS.skillRoots).map((r) =>
    resolve(root, r),
  );
  const catalog = await discoverSkills({ roots: skillRoots, allowed: [root] });
  const kbDir = join(root, WORKSPACE_PATHS.kb);
  const kb = await loadKbDir(kbDir, [root]);
  return { root, config, instructions, instructionOptions, catalog, skillRoots, kb, kbDir };
}

/**
 * The sources of a workspace's files over `store` (none: `null`) and `tools` (the
 * config's tools, no calls, when not given).
 */
export function workspaceSources(
  files: WorkspaceFiles,
  store: MemoryStore | null,
  options: { userFiles?: string[]; toolState?: ToolState } = {},
): ContextSource[] {
  const { config } = files;
  const cap = config.skills?.cap;
  const tools = options.toolState ?? new ToolState(config.tools ?? []);
  const sources: ContextSource[] = [
    instructionChainSource(files.instructions, options.userFiles ?? []),
    skillsSource(files.catalog, "skills", {
      root: files.root,
      ...(cap === undefined ? {} : { cap }),
    }),
    kbSource(files.kb.chunks),
    constraintsSource({ rules: config.constraints ?? [] }),
    toolStateSource(tools),
    plannerSource(() => config.planner ?? null),
  ];
  if (config.profile !== undefined) sources.push(profileSource(config.profile, "config-profile"));
  if (store !== null) sources.push(memoryStoreSource(store));
  return sources;
}
