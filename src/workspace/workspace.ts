/**
 * The main job over a real workspace (docs/sources.md layout, docs/surfaces.md `assemble`): instruction
 * files, skills, KB chunks, the memory store, and tools/constraints/planner from the
 * workspace config, assembled through the schema of the requested mode. I/O lives here
 * and in files.ts (the workspace's files); everything it feeds is a pure stage.
 */
import { existsSync } from "node:fs";
import { join, resolve } from "node:path";
// The assembler's modules themselves, not the stage's index (its chat and request layers
// are not needed here, and `promptctx assemble` should not load them).
import { assemble } from "../assemble/assemble.js";
import type { AssembleSegment, Assembly, ModeSchema, SchemaRegistry } from "../assemble/index.js";
import { createSchemaRegistry } from "../assemble/schema.js";
import { InvalidInputError } from "../errors/index.js";
import {
  type ContextSource,
  type InstructionChain,
  type KbIssue,
  type SkillCatalog,
  type SkillSelection,
  type SlotFilter,
  type SlotSpec,
  selectSkills,
  type ToolState,
} from "../sources/index.js";
import type { MemoryStore, OpenedStore } from "../store/index.js";
import { deepFreeze } from "../text/index.js";
import { resolveTokenCounter, type TokenCounter, tokenizerForModel } from "../tokens/index.js";
import type { TraceOptions } from "../trace/index.js";
import type { WorkspaceConfig } from "./config.js";
import { workspaceFilePath } from "./confined.js";
import {
  readWorkspaceFiles,
  WORKSPACE_PATHS,
  type WorkspaceFiles,
  workspaceSources,
} from "./files.js";

/** Default global budget of a workspace assembly (the config's `budgets.chars` overrides). */
export const WORKSPACE_BUDGET_CHARS = 12000;

// Caller-defined slots a workspace adds to every mode's schema (frozen, like the defaults:
// a slot spec frozen all the way down is resolved once).
const WORKSPACE_SLOTS: readonly SlotSpec[] = deepFreeze([
  {
    kind: "instructions",
    priority: 0.5,
    cacheTier: "session",
    title: "Project instructions",
    itemStyle: "block",
  },
  { kind: "skill_catalog", priority: 6, cacheTier: "session", title: "Skills available" },
  {
    kind: "skills",
    priority: 6.5,
    cacheTier: "session",
    title: "Active skills",
    itemStyle: "block",
    filter: { topK: 3 },
  },
  {
    kind: "kb",
    priority: 7,
    cacheTier: "dynamic",
    title: "Knowledge base",
    filter: { charBudget: 2000 },
  },
]);

/** The recall slot's filter in a workspace (the reference `react` one allows 200 chars, 2 hits). */
export const WORKSPACE_RECALL_FILTER: SlotFilter = deepFreeze({
  categories: ["episodic", "fact", "general", "tool_failure"],
  topK: 4,
  minScore: 0.3,
  charBudget: 800,
});

/** What `assemble --workspace` takes. `now` is required: the caller owns the clock. */
export interface WorkspaceAssembleOptions {
  workspace: string;
  query: string;
  now: string;
  mode?: string;
  user?: string;
  tokenizer?: string;
  model?: string;
  tokenCounter?: TokenCounter;
  budgetChars?: number | null;
  budgetTokens?: number | null;
  /**
   * Memory store: a file path (default `WORKSPACE/.promptctx/memory.db`; a missing file
   * means no memory) or a `postgres://` URL (the shared store; it must exist).
   */
  store?: string;
  /**
   * Recall by meaning over the workspace's own SQLite store: an `--embedder` value; wins
   * over the config's `memory.embedder`.
   */
  embedder?: string;
  /** The embedder when neither `embedder` nor the config names one (the CLI: `PROMPTCTX_EMBEDDER`). */
  embedderDefault?: string;
  /** The environment a remote embedder reads (base URL, key; the CLI passes its own). */
  embedderEnv?: Readonly<Record<string, string | undefined>>;
  /** An already-open store (the HTTP service shares one); wins over `store`. */
  openStore?: MemoryStore;
  /** Instruction-walk start (default: config `cwd`, else the workspace). */
  cwd?: string;
  renderer?: "en" | "zh-CN" | "tagged";
  timeoutMs?: number;
  /** User-level instruction files (the CLI passes `~/.config/promptctx/AGENTS.md` when present). */
  userFiles?: string[];
  /** Where user files may be read besides the workspace (the chain's `userRoots`; replay: `[]`). */
  userRoots?: string[];
  home?: string;
  /**
   * A tool state kept by the caller across assemblies (the `chat` loop records each call
   * in it, so the next turn's tool-state layer shows it). Default: a fresh state of the
   * config's `tools`, with no calls.
   */
  toolState?: ToolState;
  /** OpenTelemetry options of the assembly (docs/traces.md); `model` defaults to `model` above. */
  trace?: TraceOptions;
}

/** Everything the workspace contributed besides the assembly. */
export interface WorkspaceReport {
  root: string;
  config: WorkspaceConfig;
  instructions: InstructionChain;
  skills: { catalog: SkillCatalog; selection: SkillSelection };
  kbIssues: KbIssue[];
  store: string | null;
}

/** The main job's result. */
export interface WorkspaceAssembly extends Assembly {
  workspace: WorkspaceReport;
}

export function workspaceSchema(mode: string): {
  schemas: ReturnType<typeof createSchemaRegistry>;
  mode: string;
} {
  const defaults = createSchemaRegistry();
  const { schema } = defaults.resolve(mode);
  const own = new Set(schema.slots.map((s) => s.kind));
  // Extends the schema that serves `mode` (chat for an unknown mode), so the registry still
  // falls back and the manifest records `fallbackFrom`.
  const extended: ModeSchema = deepFreeze({
    ...schema,
    slots: [
      // A workspace prompt is larger than the reference budgets assume: give recall room.
      ...schema.slots.map((s) =>
        s.kind === "recall_memory" ? { ...s, filter: WORKSPACE_RECALL_FILTER } : s,
      ),
      ...WORKSPACE_SLOTS.filter((s) => !own.has(s.kind)),
    ],
  });
  return { schemas: defaults.register(extended), mode };
}

/** A workspace loaded once: its sources, segments and schema, ready to assemble any query. */
export interface WorkspaceContext {
  root: string;
  config: WorkspaceConfig;
  mode: string;
  user: string;
  tokenCounter: TokenCounter;
  instructions: InstructionChain;
  catalog: SkillCatalog;
  kbIssues: KbIssue[];
  sources: ContextSource[];
  segments: AssembleSegment[];
  schemas: SchemaRegistry;
  renderer: "en" | "zh-CN" | "tagged";
  budgetChars: number | null;
  budgetTokens: number | null;
  store: string | null;
  /** The skills a query would trigger (for the report and for red lines). */
  selectSkills(query: string): SkillSelection;
  /** Closes the store this context opened (not a shared one). */
  close(): Promise<void>;
}

/** What the assemblies of a workspace run with: the options' settings, else the config's. */
export interface AssemblySettings {
  mode: string;
  user: string;
  tokenCounter: TokenCounter;
  renderer: "en" | "zh-CN" | "tagged";
  budgetChars: number | null;
  budgetTokens: number | null;
}

/**
 * Mode, user scope, token counter, renderer and budgets of the assemblies: the options',
 * else the config's, else the defaults (react, en, {@link WORKSPACE_BUDGET_CHARS}).
 *
 * @example assemblySettings({ workspace: "w", user: "u1" }, {}).budgetChars // 6000
 */
export function assemblySettings(
  options: Omit<WorkspaceAssembleOptions, "query" | "now">,
  config: WorkspaceConfig,
): AssemblySettings {
  const mode = options.mode ?? config.mode ?? "react";
  const user = options.user ?? config.user;
  if (user === undefined)
    throw new InvalidInputError("no user scope: pass --user or set `user` in the config", "user");
  if (options.tokenizer !== undefined && options.model !== undefined) {
    throw new InvalidInputError("give either a tokenizer or a model, not both", "tokenizer");
  }
  const tokenCounter =
    options.tokenCounter ??
    resolveTokenCounter(
      options.model !== undefined
        ? tokenizerForModel(options.model)
        : (options.tokenizer ?? config.tokenizer),
    );
  return {
    mode,
    user,
    tokenCounter,
    renderer: options.renderer ?? config.renderer ?? "en",
    budgetChars:
      options.budgetChars !== undefined
        ? options.budgetChars
        : (config.budgets?.chars ?? WORKSPACE_BUDGET_CHARS),
    budgetTokens:
      options.budgetTokens !== undefined ? options.budgetTokens : (config.budgets?.tokens ?? null),
  };
}

/**
 * The memory store of the assemblies: the shared one given, else the `postgres://` store
 * named, else the workspace's file when it exists (`opened`: the context closes it), else
 * none. `storePath` names it in reports (a URL without its password).
 */
async function workspaceStore(
  options: Omit<WorkspaceAssembleOptions, "query" | "now">,
  root: string,
): Promise<{ store: MemoryStore | null; opened: OpenedStore | null; storePath: string }> {
  const storePath = options.store ?? join(root, WORKSPACE_PATHS.store);
  const shared = options.openStore ?? null;
  if (shared !== null) return { store: shared, opened: null, storePath };
  // Its own store is confined to the workspace (confined.ts); one the caller names is not.
  const target = options.store ?? (await workspaceFilePath(storePath, root, "store"));
  // A missing file (and no URL) is no store: the store's code is loaded only for one to open.
  const none = { store: null, opened: null, storePath };
  if (target === null || (!target.includes("://") && !existsSync(target))) return none;
  const { isPostgresUrl, openStore, openStoreUrl } = await import("../store/index.js");
  if (isPostgresUrl(target)) {
    const opened = await openStoreUrl(target, { mustExist: true });
    return { store: opened, opened, storePath: opened.path };
  }
  if (!existsSync(target)) return none;
  const opened = openStore(target, { mustExist: true });
  return { store: opened, opened, storePath };
}

/**
 * The workspace's own store with recall by meaning when an embedder is named and the store
 * is one the workspace opened (an SQLite file, or PostgreSQL: pgvector, else by words and
 * a hint); a shared store is left as is.
 */
async function withEmbedder<
  T extends { store: MemoryStore | null; opened: OpenedStore | null; storePath: string },
>(
  ws: T,
  spec: string | undefined,
  env: Readonly<Record<string, string | undefined>> = {},
): Promise<{ store: MemoryStore | null; opened: MemoryStore | null; storePath: string }> {
  if (spec === undefined || ws.opened === null) return ws;
  const { SqliteMemoryStore, hybridStore, openHybrid } = await import("../store/index.js");
  const opened = ws.opened;
  try {
    const { chooseEmbedderSpec, createEmbedder } = await import("../embed/index.js");
    const embedder = await createEmbedder(chooseEmbedderSpec({ config: spec }), env);
    if (embedder === null) return ws;
    const hybrid =
      opened instanceof SqliteMemoryStore
        ? hybridStore(opened, embedder)
        : await openHybrid(opened, embedder);
    return { store: hybrid, opened: hybrid, storePath: ws.storePath };
  } catch (err) {
    await opened.close();
    throw err;
  }
}

/** The plain segments the config contributes: identity, expert, and the working mode. */
export function configSegments(config: WorkspaceConfig): AssembleSegment[] {
  const segments: AssembleSegment[] = [];
  if (config.identity) {
    segments.push({
      name: "identity",
      content: config.identity,
      priority: 0.2,
      budgetPriority: 99,
      cacheTier: "static",
      neverTruncate: true,
      provenance: WORKSPACE_PATHS.config,
    });
  }
  if (config.expert) {
    segments.push({
      name: "expert",
      content: `Expert: ${config.expert}`,
      priority: 6.8,
      budgetPriority: 60,
      cacheTier: "session",
      provenance: WORKSPACE_PATHS.config,
    });
  }
  segments.push({
    name: "working_mode",
    content: `Working mode: ${config.workingMode ?? "craft"}`,
    priority: 99,
    budgetPriority: 100,
    required: true,
    cacheTier: "dynamic",
    provenance: "runtime",
  });
  return segments;
}

/**
 * A workspace context from files already read: the settings of `options` (else the
 * config's), `sources` when given (else built over `store`).
 */
export function workspaceContext(
  files: WorkspaceFiles,
  options: Omit<WorkspaceAssembleOptions, "query" | "now">,
  store: { store: MemoryStore | null; opened: MemoryStore | null; label: string | null },
  sources?: ContextSource[],
): WorkspaceContext {
  const { root, config } = files;
  const settings = assemblySettings(options, config);
  const { mode } = settings;
  const cap = config.skills?.cap;
  return {
    root,
    config,
    ...settings,
    instructions: files.instructions,
    catalog: files.catalog,
    kbIssues: files.kb.issues,
    sources: sources ?? workspaceSources(files, store.store, options),
    segments: configSegments(config),
    schemas: workspaceSchema(mode).schemas,
    store: store.label,
    selectSkills: (query) =>
      selectSkills(files.catalog, { text: query, mode }, cap === undefined ? {} : { cap }),
    close: async () => {
      await store.opened?.close();
    },
  };
}

/**
 * Loads a workspace once (config, instruction chain, skills, KB, store, tools) into
 * sources and segments: the part of the main job that does not depend on the query, so a
 * session can reassemble turn after turn without re-reading it.
 *
 * @example const ws = await loadWorkspace({ workspace: "examples/workspace" }); try { … } finally { await ws.close(); }
 */
export async function loadWorkspace(
  options: Omit<WorkspaceAssembleOptions, "query" | "now">,
): Promise<WorkspaceContext> {
  const root = resolve(options.workspace);
  if (!existsSync(root))
    throw new InvalidInputError(`workspace ${options.workspace} does not exist`, "workspace");
  const files = await readWorkspaceFiles(root, options);
  // Settings are checked before the store is opened, so a bad one leaks nothing.
  assemblySettings(options, files.config);
  const opened0 = await workspaceStore(options, root);
  const spec = options.embedder ?? files.config.memory?.embedder ?? options.embedderDefault;
  const { store, opened, storePath } = await withEmbedder(opened0, spec, options.embedderEnv);
  const label = store === null ? null : options.openStore ? "(shared)" : storePath;
  return workspaceContext(files, options, { store, opened, label });
}

/** The report part of a workspace assembly for `query`. */
export function workspaceReport(ws: WorkspaceContext, query: string): WorkspaceReport {
  return {
    root: ws.root,
    config: ws.config,
    instructions: ws.instructions,
    skills: { catalog: ws.catalog, selection: ws.selectSkills(query) },
    kbIssues: ws.kbIssues,
    store: ws.store,
  };
}

/**
 * Assembles the prompt for `query` over a workspace directory.
 *
 * @example
 * const out = await assembleWorkspace({ workspace: "examples/workspace", query: "add an index", now: "2026-11-30T09:00:00Z" });
 * out.prompt; out.manifest; out.memoryPlan; out.segmentPlan;
 */
export async function assembleWorkspace(
  options: WorkspaceAssembleOptions,
): Promise<WorkspaceAssembly> {
  const ws = await loadWorkspace(options);
  try {
    const assembly = await assemble({
      mode: ws.mode,
      query: { text: options.query, userScope: ws.user },
      now: options.now,
      sources: ws.sources,
      segments: ws.segments,
      schemas: ws.schemas,
      tokenCounter: ws.tokenCounter,
      renderer: ws.renderer,
      budgetChars: ws.budgetChars,
      budgetTokens: ws.budgetTokens,
      ...(options.timeoutMs !== undefined ? { timeoutMs: options.timeoutMs } : {}),
      trace: { ...(options.model !== undefined ? { model: options.model } : {}), ...options.trace },
    });
    return { ...assembly, workspace: workspaceReport(ws, options.query) };
  } finally {
    await ws.close();
  }
}
