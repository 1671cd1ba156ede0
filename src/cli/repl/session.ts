/**
 * The session behind `promptctx repl`: a runtime session (docs/session-and-cache.md) over
 * the demo's data (examples/demo/, read by ../demo/data.ts).
 * Schema slots come from in-memory sources (constraints policy, per-user profiles,
 * planner, task observations, tool state; recall through the session); the other layers
 * are session segments, each rebuilt only when the state it depends on changes. Fixed
 * data and fixed timestamps: the same commands print the same bytes on every machine.
 */
import { createSession, type Session, type SessionSegment } from "../../assemble/index.js";
import { versionId } from "../../cache/index.js";
import type { SlotRenderer } from "../../render/index.js";
import {
  type ContextSource,
  constraintsSource,
  type ProfileEntry,
  plannerSource,
  profileSource,
  TaskMemoryBuffer,
  ToolState,
  taskMemorySource,
  toolStateSource,
} from "../../sources/index.js";
import { compareCodePoints } from "../../text/index.js";
import type { TokenCounter } from "../../tokens/index.js";
import { type DemoData, demoData, replData } from "../demo/data.js";
import { connectorsLine, skillsSummary } from "../demo/segments.js";

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
function expertSegment(data: DemoData): SessionSegment {
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
            content: data.experts[s.expert] ?? `Expert: ${s.expert}.`,
            sourceRefs: [`expert:${s.expert}`],
          },
  };
}

/** The skills segment: the loaded skills' summary line, then each body (no segment without one). */
function skillsSegment(data: DemoData): SessionSegment {
  return {
    name: "skills",
    priority: 60,
    budgetPriority: 40,
    cacheTier: "session",
    provenance: "skills",
    deps: ["skills"],
    build: (s) => {
      const names = sorted(s.skills.keys());
      const head = skillsSummary(data, names);
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
function connectorsSegment(data: DemoData): SessionSegment {
  return {
    name: "connectors",
    priority: 70,
    budgetPriority: 30,
    cacheTier: "session",
    provenance: "mcp",
    deps: ["connectors"],
    build: (s) => {
      const online = sorted([...s.connectors].filter(([, on]) => on).map(([n]) => n));
      const line = connectorsLine(data, online);
      return line === null
        ? null
        : { content: line, sourceRefs: online.map((n) => `connector:${n}`) };
    },
  };
}

/**
 * The nine session segments. Static: base rules, identity, tools, regional conventions;
 * session: project context, expert, skills, connectors; dynamic: working mode. Each
 * names the state it depends on (docs/session-and-cache.md table), so an event rebuilds only its segment.
 */
export function replSegments(data: DemoData = demoData()): SessionSegment[] {
  return [
    {
      name: "base_rules",
      priority: 0,
      budgetPriority: 100,
      required: true,
      cacheTier: "static",
      provenance: "builtin",
      deps: [],
      build: () => data.text.baseRules,
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
      build: () => data.text.projectContext,
    },
    {
      name: "tools",
      priority: 40,
      budgetPriority: 90,
      required: true,
      cacheTier: "static",
      provenance: "tool-registry",
      deps: [],
      build: () => data.text.tools,
    },
    expertSegment(data),
    skillsSegment(data),
    connectorsSegment(data),
    {
      name: "regional_conventions",
      priority: 80,
      budgetPriority: 20,
      cacheTier: "static",
      provenance: "locale",
      deps: [],
      build: () => data.text.regionalConventions,
    },
    {
      name: "working_mode",
      priority: 90,
      budgetPriority: 95,
      required: true,
      cacheTier: "dynamic",
      provenance: "session",
      deps: ["workingMode"],
      build: (s) => data.workingModes[s.workingMode],
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
 * await session.assemble({ text: replData().query, now: replData().start });
 */
export function createReplSession(options: ReplSessionOptions = {}): ReplFixture {
  const data = demoData();
  const repl = replData();
  const observations = new TaskMemoryBuffer(8);
  for (const o of repl.observations) observations.add(o);
  const toolState = new ToolState(repl.tools);
  for (const call of repl.toolCalls) toolState.recordCall(call);
  const session = createSession({
    state: {
      userScope: options.userScope ?? data.user,
      mode: options.mode ?? "chat",
      workingMode: "craft",
      expert: null,
      identity: data.text.identity,
      connectors: new Map(sorted(Object.keys(data.connectors)).map((n) => [n, false])),
    },
    segments: replSegments(data),
    sources: [
      constraintsSource(repl.policy),
      scopedProfileSource(repl.profiles),
      plannerSource(() => repl.task),
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
  const { skills } = demoData();
  return Object.hasOwn(skills, name) ? skills[name]?.body : undefined;
}
