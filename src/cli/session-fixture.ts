/**
 * The fixture behind `promptctx repl`: a runtime session (spec 05) over the demo's text.
 * Schema slots come from in-memory sources (constraints policy, per-user profiles,
 * planner, task observations, tool state; recall through the session); the other layers
 * are session segments, each rebuilt only when the state it depends on changes. Fixed
 * data and fixed timestamps: the same commands print the same bytes on every machine.
 */
import { createSession, type Session, type SessionSegment } from "../assemble/index.js";
import { versionId } from "../cache/index.js";
import type { SlotRenderer } from "../render/index.js";
import {
  type ConstraintPolicy,
  type ContextSource,
  constraintsSource,
  type ProfileEntry,
  plannerSource,
  profileSource,
  TaskMemoryBuffer,
  type TaskState,
  ToolState,
  taskMemorySource,
  toolStateSource,
} from "../sources/index.js";
import { compareCodePoints } from "../text/index.js";
import type { TokenCounter } from "../tokens/index.js";
import {
  BASE_RULES,
  CONNECTORS,
  connectorsLine,
  DEMO_USER,
  EXPERTS,
  IDENTITY,
  PROJECT_CONTEXT,
  REGIONAL_CONVENTIONS,
  SKILLS,
  skillsSummary,
  TOOLS,
  WORKING_MODE_TEXT,
} from "./demo-fixture.js";

/** The repl's clock starts here and advances one minute per reassembly. */
export const REPL_START = "2026-11-30T09:00:00Z";
/** The query every repl assembly answers until `query TEXT` replaces it. */
export const REPL_QUERY = "Add a nullable currency column to invoices and backfill it.";

/** The sandbox policy behind the constraints slot. */
export const REPL_POLICY: ConstraintPolicy = {
  rules: [
    { id: "forbid-rm-rf", level: "forbid", text: "no rm -rf" },
    { id: "warn-network", level: "warn", text: "network needs approval" },
  ],
};

/** Profiles by user scope; a scope without one gets an empty profile slot. */
export const REPL_PROFILES: Readonly<Record<string, readonly ProfileEntry[]>> = {
  [DEMO_USER]: [
    { key: "name", value: "Dana", category: "identity" },
    { key: "city", value: "Berlin", category: "identity" },
    { key: "language", value: "en", category: "preference" },
    { key: "review_style", value: "small commits with tests", category: "preference" },
  ],
  "user-7": [
    { key: "name", value: "Kai", category: "identity" },
    { key: "language", value: "de", category: "preference" },
  ],
};

/** Importance shown on recall lines for the demo candidates. */
export const REPL_IMPORTANCE: Readonly<Record<string, number>> = {
  "mem-default-lang": 0.4,
  "mem-workspace-lang": 0.6,
  "mem-turn-lang": 0.9,
  "mem-tests": 0.7,
  "mem-weak": 0.1,
  "mem-other-user": 0.8,
};

/** The planner's task state (used by the `react` schema). */
export const REPL_TASK: TaskState = {
  taskId: "T-12",
  status: "in_progress",
  phase: "implement",
  done: 2,
  total: 5,
  nextStep: "run the migration tests",
  nextTool: "run",
};

const sorted = (names: Iterable<string>) => [...names].sort(compareCodePoints);

/** The profile slot of the querying user only: another user's profile never shows. */
function scopedProfileSource(profiles: Readonly<Record<string, readonly ProfileEntry[]>>) {
  const byScope = new Map(
    Object.entries(profiles).map(([scope, entries]) => [scope, profileSource(entries)]),
  );
  const source: ContextSource = {
    id: "profile",
    supports: (kind) => kind === "profile",
    fetch: (slot, query, signal) => byScope.get(query.userScope)?.fetch(slot, query, signal) ?? [],
  };
  return source;
}

/** The expert segment: the current expert's text (no segment without an expert). */
function expertSegment(): SessionSegment {
  return {
    name: "expert",
    priority: 50,
    budgetPriority: 50,
    cacheTier: "session",
    provenance: "experts",
    deps: ["expert"],
    build: (s) =>
      s.expert === null
        ? null
        : {
            content: EXPERTS[s.expert] ?? `Expert: ${s.expert}.`,
            sourceRefs: [`expert:${s.expert}`],
          },
  };
}

/** The skills segment: the loaded skills' summary line, then each body (no segment without one). */
function skillsSegment(): SessionSegment {
  return {
    name: "skills",
    priority: 60,
    budgetPriority: 40,
    cacheTier: "session",
    provenance: "skills",
    deps: ["skills"],
    build: (s) => {
      const names = sorted(s.skills.keys());
      const head = skillsSummary(names);
      if (head === null) return null;
      const bodies = names.map((n) => `- ${n}: ${s.skills.get(n)}`);
      return {
        content: [head, ...bodies].join("\n"),
        sourceRefs: names.map((n) => `skill:${n}@${versionId(s.skills.get(n) ?? "")}`),
      };
    },
  };
}

/** The connectors segment: the connectors online (no segment when all are offline). */
function connectorsSegment(): SessionSegment {
  return {
    name: "connectors",
    priority: 70,
    budgetPriority: 30,
    cacheTier: "session",
    provenance: "mcp",
    deps: ["connectors"],
    build: (s) => {
      const online = sorted([...s.connectors].filter(([, on]) => on).map(([n]) => n));
      const line = connectorsLine(online);
      return line === null
        ? null
        : { content: line, sourceRefs: online.map((n) => `connector:${n}`) };
    },
  };
}

/**
 * The nine session segments. Static: base rules, identity, tools, regional conventions;
 * session: project context, expert, skills, connectors; dynamic: working mode. Each
 * names the state it depends on (spec 05 table), so an event rebuilds only its segment.
 */
export function replSegments(): SessionSegment[] {
  return [
    {
      name: "base_rules",
      priority: 0,
      budgetPriority: 100,
      required: true,
      cacheTier: "static",
      provenance: "builtin",
      deps: [],
      build: () => BASE_RULES,
    },
    {
      name: "identity",
      priority: 10,
      budgetPriority: 80,
      cacheTier: "static",
      provenance: "identity.md",
      deps: ["identity"],
      build: (s) => ({ content: s.identity, sourceRefs: [`identity.md@${versionId(s.identity)}`] }),
    },
    {
      name: "project_context",
      priority: 30,
      budgetPriority: 70,
      cacheTier: "session",
      provenance: "AGENTS.md",
      deps: [],
      build: () => PROJECT_CONTEXT,
    },
    {
      name: "tools",
      priority: 40,
      budgetPriority: 90,
      required: true,
      cacheTier: "static",
      provenance: "tool-registry",
      deps: [],
      build: () => TOOLS,
    },
    expertSegment(),
    skillsSegment(),
    connectorsSegment(),
    {
      name: "regional_conventions",
      priority: 80,
      budgetPriority: 20,
      cacheTier: "static",
      provenance: "locale",
      deps: [],
      build: () => REGIONAL_CONVENTIONS,
    },
    {
      name: "working_mode",
      priority: 90,
      budgetPriority: 95,
      required: true,
      cacheTier: "dynamic",
      provenance: "session",
      deps: ["workingMode"],
      build: (s) => WORKING_MODE_TEXT[s.workingMode],
    },
  ];
}

/** What {@link createReplSession} takes (all optional). */
export interface ReplSessionOptions {
  /** Initial schema mode (default `chat`). */
  mode?: string;
  renderer?: SlotRenderer | string;
  tokenCounter?: TokenCounter;
  /** Global char budget (default: the schema's, 2400). */
  budgetChars?: number;
  userScope?: string;
}

/** The session plus the buffers its dynamic slots read (for callers that record steps). */
export interface ReplFixture {
  session: Session;
  observations: TaskMemoryBuffer;
  toolState: ToolState;
}

/**
 * The repl's session: user `user-42`, working mode `craft`, no expert, no skill loaded,
 * every known connector offline, no recalled memory.
 *
 * @example
 * const { session } = createReplSession();
 * await session.assemble({ text: REPL_QUERY, now: REPL_START });
 */
export function createReplSession(options: ReplSessionOptions = {}): ReplFixture {
  const observations = new TaskMemoryBuffer(8);
  observations.add({
    text: "db/migrations has 41 files; the newest is 0041_invoice_status.sql",
    createdAt: "2026-11-30T08:50:00Z",
  });
  observations.add({
    text: "invoices has 12M rows in staging",
    createdAt: "2026-11-30T08:55:00Z",
  });
  const toolState = new ToolState([
    { name: "read_file", description: "read a workspace file", requiredArgs: ["path"] },
    {
      name: "write_file",
      description: "write a workspace file",
      requiredArgs: ["path", "content"],
    },
    {
      name: "run",
      description: "run a command (network needs approval)",
      requiredArgs: ["command"],
    },
  ]);
  toolState.recordCall({
    tool: "run",
    ok: true,
    summary: "npm test: 212 passed",
    at: "2026-11-30T08:56:00Z",
  });
  const session = createSession({
    state: {
      userScope: options.userScope ?? DEMO_USER,
      mode: options.mode ?? "chat",
      workingMode: "craft",
      expert: null,
      identity: IDENTITY,
      connectors: new Map(sorted(Object.keys(CONNECTORS)).map((n) => [n, false])),
    },
    segments: replSegments(),
    sources: [
      constraintsSource(REPL_POLICY),
      scopedProfileSource(REPL_PROFILES),
      plannerSource(() => REPL_TASK),
      taskMemorySource(observations),
      toolStateSource(toolState),
    ],
    assemble: {
      ...(options.renderer !== undefined ? { renderer: options.renderer } : {}),
      ...(options.budgetChars !== undefined ? { budgetChars: options.budgetChars } : {}),
    },
    ...(options.tokenCounter !== undefined ? { tokenCounter: options.tokenCounter } : {}),
  });
  return { session, observations, toolState };
}

/** Skill bodies the repl can load, by name. */
export function skillBody(name: string): string | undefined {
  return Object.hasOwn(SKILLS, name) ? SKILLS[name]?.body : undefined;
}
