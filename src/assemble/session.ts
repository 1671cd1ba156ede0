/**
 * The runtime session of docs/session-and-cache.md: it keeps the state that feeds the prompt and the last
 * assembly. Each event invalidates only the segments it affects; an unchanged state
 * reuses the cached assembly (same object, nothing refetched or recounted). Memory is
 * stored as candidates, never as a rendered string, and is cleared when the query ends
 * or the user scope changes. The prefix is frozen per loop turn: buffers updated during
 * a turn show up in the next turn's prefix.
 */
import { z } from "zod";
import { InvalidInputError, invalidFromZod } from "../errors/index.js";
import {
  type CandidateInput,
  CandidateSchema,
  DEFAULT_POLICY,
  type MemoryPlan,
  type PolicyInput,
  PolicySchema,
} from "../memory/index.js";
import type { CacheTier } from "../plan/index.js";
import {
  type ContextSource,
  createSourceRegistry,
  type SlotFilter,
  type SourceItem,
  type SourceRegistry,
} from "../sources/index.js";
import { trimWs } from "../text/index.js";
import { resolveTokenCounter, type TokenCounter } from "../tokens/index.js";
import { type AssembleInput, type AssembleSegment, type Assembly, assemble } from "./assemble.js";
import { createLayerMemo } from "./memo/index.js";
import { createSchemaRegistry, type SchemaRegistry } from "./schema.js";

/** Working modes of the agent loop (docs/session-and-cache.md). */
export const WORKING_MODES = ["craft", "plan", "ask"] as const;
export type WorkingMode = (typeof WORKING_MODES)[number];

/** The state that feeds the prompt. */
export interface SessionState {
  userScope: string;
  /** Schema mode (`chat`, `react`, …). */
  mode: string;
  workingMode: WorkingMode;
  expert: string | null;
  /** Loaded skills by name → body. */
  skills: ReadonlyMap<string, string>;
  /** Connector name → online. */
  connectors: ReadonlyMap<string, boolean>;
  identity: string;
}

/** What an event invalidates (docs/session-and-cache.md table). */
export type Dependency =
  | "memory"
  | "skills"
  | "expert"
  | "workingMode"
  | "connectors"
  | "identity"
  | "scope"
  | "mode";

/** A segment rebuilt only when one of its dependencies changed. */
export interface SessionSegment {
  name: string;
  priority?: number;
  budgetPriority?: number;
  required?: boolean;
  cacheTier?: CacheTier;
  neverTruncate?: boolean;
  provenance?: string;
  deps: readonly Dependency[];
  build(state: SessionState): { content: string | null; sourceRefs?: string[] } | string | null;
}

/** Recalled memory as stored: candidates plus how to select them. */
interface RecallState {
  candidates: readonly CandidateInput[];
  policy: PolicyInput | undefined;
  importance: Readonly<Record<string, number>>;
}

/** Options of {@link createSession}. */
export interface SessionOptions {
  state: Omit<SessionState, "skills" | "connectors"> & {
    skills?: ReadonlyMap<string, string>;
    connectors?: ReadonlyMap<string, boolean>;
  };
  segments: readonly SessionSegment[];
  sources?: readonly ContextSource[];
  /** Everything else `assemble` takes (renderer, budgets, tokenizer, schemas, timeouts). */
  assemble?: Omit<AssembleInput, "mode" | "query" | "now" | "sources" | "segments">;
  tokenCounter?: TokenCounter;
}

/**
 * The selection policy a session's recall slot runs under, and where it came from:
 * `call` (fields given to `setRecalledMemory`, the rest from the schema or the defaults),
 * `schema` (the recall slot of the schemas the session was given), or `defaults`
 * (no schema says otherwise: docs/memory-selection.md's minScore 0.35, topK 5, 3000 chars, 800 tokens).
 * `topK`/`maxChars`/`maxTokens` null = unbounded.
 */
export interface SessionMemoryPolicy {
  policy: {
    minScore: number;
    topK: number | null;
    maxChars: number | null;
    maxTokens: number | null;
  };
  from: "call" | "schema" | "defaults";
}

/** What happened in the last `assemble` call, for people and tests. */
export interface ReassemblyReport {
  reused: boolean;
  rebuilt: string[];
  refetched: boolean;
}

/**
 * A stateful session over {@link assemble}.
 *
 * @example
 * const session = createSession({ state: { userScope: "u1", mode: "chat", workingMode: "craft", expert: null, identity: "…" }, segments });
 * const turn1 = await session.beginTurn({ text: "hi", now: "2026-11-30T09:00:00Z" });
 * session.loadSkill("sql-review", "Check migrations for locks.");
 * const turn2 = await session.beginTurn({ text: "next", now: "2026-11-30T09:01:00Z" }); // only the skills segment was rebuilt
 */
export class Session {
  private state: SessionState;
  private readonly segmentDefs: readonly SessionSegment[];
  private readonly built = new Map<string, AssembleSegment>();
  private readonly dirty = new Set<Dependency>();
  private recall: RecallState | null = null;
  private readonly baseSources: readonly ContextSource[];
  private readonly options: SessionOptions;
  private cached: { key: string; assembly: Assembly } | null = null;
  private frozen: Assembly | null = null;
  private lastReport: ReassemblyReport = { reused: false, rebuilt: [], refetched: false };
  private usedPolicy: SessionMemoryPolicy | null = null;
  // One counter and layer memo per session: a turn repacks only slots whose sources changed.
  private counter: TokenCounter | null = null;
  private readonly layerMemo = createLayerMemo();
  /** Builder calls per segment name (for stats and tests). */
  readonly builderCalls = new Map<string, number>();

  constructor(options: SessionOptions) {
    const names = new Set<string>();
    options.segments.forEach((s, i) => {
      if (names.has(s.name))
        throw new InvalidInputError(`duplicate segment name "${s.name}"`, ["segments", i, "name"]);
      names.add(s.name);
    });
    this.options = options;
    this.segmentDefs = options.segments;
    this.baseSources = options.sources ?? [];
    checkWorkingMode(options.state.workingMode, "state.workingMode");
    this.state = {
      ...options.state,
      userScope: this.checkScope(options.state.userScope),
      skills: new Map(options.state.skills ?? []),
      connectors: new Map(options.state.connectors ?? []),
    };
    for (const dep of [
      "memory",
      "skills",
      "expert",
      "workingMode",
      "connectors",
      "identity",
      "scope",
      "mode",
    ] as const) {
      this.dirty.add(dep);
    }
  }

  private checkScope(scope: string): string {
    const trimmed = trimWs(scope);
    if (trimmed === "") throw new InvalidInputError("userScope must not be blank", "userScope");
    return trimmed;
  }

  private touch(...deps: Dependency[]): void {
    for (const d of deps) this.dirty.add(d);
  }

  /** The current state (read-only snapshot). */
  get current(): Readonly<SessionState> {
    return this.state;
  }

  /** Whether recalled memory is installed. */
  get hasMemory(): boolean {
    return this.recall !== null;
  }

  /** What the last `assemble`/`beginTurn` did. */
  get report(): ReassemblyReport {
    return this.lastReport;
  }

  /**
   * A new query installs recall candidates (stored as candidates; reselected on
   * reassembly). Candidates are validated as in docs/memory-selection.md (path `candidates[i].…`). The
   * fields given in `policy` override the recall slot's filter of the current schema on
   * every reassembly while this memory is installed (`minScore`, `topK`, `maxChars` →
   * char budget, `maxTokens` → token budget of the slot as rendered; `null` = unbounded);
   * omitted fields keep the schema's when the session was given schemas, else take the
   * docs/memory-selection.md defaults. `memoryPolicy` says which policy ran. `topK: 0` is rejected: use
   * `clearRecalledMemory()`.
   */
  setRecalledMemory(
    candidates: readonly CandidateInput[],
    options: { policy?: PolicyInput; importance?: Readonly<Record<string, number>> } = {},
  ): void {
    const parsed = z.array(CandidateSchema).safeParse(candidates);
    if (!parsed.success) throw invalidFromZod(parsed.error, ["candidates"]);
    const seen = new Set<string>();
    parsed.data.forEach((c, i) => {
      if (seen.has(c.memoryId)) {
        throw new InvalidInputError(`duplicate memoryId "${c.memoryId}"`, [
          "candidates",
          i,
          "memoryId",
        ]);
      }
      seen.add(c.memoryId);
    });
    if (options.policy !== undefined) {
      const policy = PolicySchema.safeParse(options.policy);
      if (!policy.success) throw invalidFromZod(policy.error, ["policy"]);
      if (options.policy.topK === 0) {
        throw new InvalidInputError(
          "topK 0 would select no memory; use clearRecalledMemory()",
          "policy.topK",
        );
      }
    }
    this.recall = {
      candidates: parsed.data,
      policy: options.policy === undefined ? undefined : { ...options.policy },
      importance: { ...options.importance },
    };
    this.touch("memory");
  }

  /** Makes the memory segment inactive. */
  clearRecalledMemory(): void {
    if (this.recall !== null) {
      this.recall = null;
      this.touch("memory");
    }
  }

  /** The query ended: its memory must not leak into the next one. */
  endQuery(): void {
    this.clearRecalledMemory();
  }

  /** A user-scope switch clears memory (no leak into another user). */
  setUserScope(scope: string): void {
    const next = this.checkScope(scope);
    if (next === this.state.userScope) return;
    this.state = { ...this.state, userScope: next };
    this.recall = null;
    this.touch("scope", "memory");
  }

  loadSkill(name: string, body: string): void {
    const skills = new Map(this.state.skills);
    if (skills.get(name) === body) return;
    skills.set(name, body);
    this.state = { ...this.state, skills };
    this.touch("skills");
  }

  unloadSkill(name: string): void {
    if (!this.state.skills.has(name)) return;
    const skills = new Map(this.state.skills);
    skills.delete(name);
    this.state = { ...this.state, skills };
    this.touch("skills");
  }

  switchExpert(expert: string | null): void {
    if (this.state.expert === expert) return;
    this.state = { ...this.state, expert };
    this.touch("expert");
  }

  setWorkingMode(mode: WorkingMode): void {
    checkWorkingMode(mode, "workingMode");
    if (this.state.workingMode === mode) return;
    this.state = { ...this.state, workingMode: mode };
    this.touch("workingMode");
  }

  /** Switches the schema mode (`chat`, `react`, …). */
  setMode(mode: string): void {
    if (this.state.mode === mode) return;
    this.state = { ...this.state, mode };
    this.touch("mode");
  }

  setConnector(name: string, online: boolean): void {
    if (this.state.connectors.get(name) === online) return;
    const connectors = new Map(this.state.connectors);
    connectors.set(name, online);
    this.state = { ...this.state, connectors };
    this.touch("connectors");
  }

  setIdentity(identity: string): void {
    if (this.state.identity === identity) return;
    this.state = { ...this.state, identity };
    this.touch("identity");
  }

  private rebuildSegments(): string[] {
    const rebuilt: string[] = [];
    for (const def of this.segmentDefs) {
      const stale = !this.built.has(def.name) || def.deps.some((d) => this.dirty.has(d));
      if (!stale) continue;
      this.builderCalls.set(def.name, (this.builderCalls.get(def.name) ?? 0) + 1);
      const out = def.build(this.state);
      const content = typeof out === "string" || out === null ? out : out.content;
      const refs = typeof out === "object" && out !== null ? out.sourceRefs : undefined;
      const seg: AssembleSegment = {
        name: def.name,
        content,
        ...(def.priority !== undefined ? { priority: def.priority } : {}),
        ...(def.budgetPriority !== undefined ? { budgetPriority: def.budgetPriority } : {}),
        ...(def.required !== undefined ? { required: def.required } : {}),
        ...(def.cacheTier !== undefined ? { cacheTier: def.cacheTier } : {}),
        ...(def.neverTruncate !== undefined ? { neverTruncate: def.neverTruncate } : {}),
        ...(def.provenance !== undefined ? { provenance: def.provenance } : {}),
        ...(refs !== undefined ? { sourceRefs: refs } : {}),
      };
      this.built.set(def.name, seg);
      rebuilt.push(def.name);
    }
    return rebuilt;
  }

  // The recall slot is served from the stored candidates, reselected under the current scope.
  private recallSource(): ContextSource | null {
    const recall = this.recall;
    if (recall === null) return null;
    return {
      id: "session-recall",
      supports: (kind) => kind === "recall_memory",
      fetch: (): SourceItem[] =>
        recall.candidates.map((c) => ({
          id: c.memoryId,
          text: c.text,
          score: c.score,
          category: "general",
          createdAt: c.provenance.capturedAt,
          ...(recall.importance[c.memoryId] !== undefined
            ? { importance: recall.importance[c.memoryId] }
            : {}),
          memory: {
            userScope: c.userScope,
            sourceRank: c.sourceRank,
            provenance: c.provenance,
            conflictKey: c.conflictKey ?? null,
            ...(c.authority !== undefined ? { authority: c.authority } : {}),
          },
        })),
    };
  }

  /**
   * The recall slot of the current schema with the installed memory's policy: the fields
   * given to `setRecalledMemory` override the slot's filter; without caller schemas, the
   * docs/memory-selection.md defaults stand in for the rest (the reference budgets of the default schemas
   * are for a whole `react` prompt, not what a session installs memory for).
   */
  private recallFilter(): {
    schemas: SchemaRegistry | undefined;
    used: SessionMemoryPolicy | null;
  } {
    const base = this.options.assemble?.schemas;
    if (this.recall === null) return { schemas: base, used: null };
    const given = this.recall.policy ?? {};
    const fields: PolicyInput = base === undefined ? { ...DEFAULT_POLICY, ...given } : given;
    const registry = base ?? createSchemaRegistry();
    const { schema } = registry.resolve(this.state.mode);
    const slot = schema.slots.find((x) => x.kind === "recall_memory");
    const filter = withPolicy(slot?.filter ?? {}, fields);
    const from =
      Object.keys(given).length > 0 ? "call" : base === undefined ? "defaults" : "schema";
    const used: SessionMemoryPolicy = {
      policy: {
        minScore: filter.minScore ?? DEFAULT_POLICY.minScore,
        topK: filter.topK !== undefined && filter.topK > 0 ? filter.topK : null,
        maxChars: filter.charBudget ?? null,
        maxTokens: filter.tokenBudget ?? null,
      },
      from,
    };
    if (Object.keys(fields).length === 0) return { schemas: base, used };
    const schemas = registry.register({
      ...schema,
      slots: schema.slots.map((x) => (x.kind === "recall_memory" ? { ...x, filter } : x)),
    });
    return { schemas, used };
  }

  /** The policy the recall slot ran under in the last assembly (null without memory). */
  get memoryPolicy(): SessionMemoryPolicy | null {
    return this.usedPolicy;
  }

  private registry(): SourceRegistry {
    const recall = this.recallSource();
    return createSourceRegistry(recall ? [...this.baseSources, recall] : this.baseSources);
  }

  /**
   * Assembles with the current state for `query`. When nothing changed since the last
   * call (same query, same clock, no event, no new turn) the cached assembly is returned
   * as is; otherwise only dirty segments are rebuilt and the slots are refetched.
   */
  async assemble(query: { text: string; now: string }): Promise<Assembly> {
    const key = JSON.stringify([query.text, query.now]);
    if (this.cached !== null && this.cached.key === key && this.dirty.size === 0) {
      this.lastReport = { reused: true, rebuilt: [], refetched: false };
      return this.cached.assembly;
    }
    const rebuilt = this.rebuildSegments();
    const { schemas, used } = this.recallFilter();
    const given = this.options.assemble;
    this.counter ??=
      this.options.tokenCounter ?? given?.tokenCounter ?? resolveTokenCounter(given?.tokenizer);
    const assembly = await assemble({
      ...this.options.assemble,
      ...(schemas !== undefined ? { schemas } : {}),
      tokenCounter: this.counter,
      layerMemo: given?.layerMemo ?? this.layerMemo,
      mode: this.state.mode,
      query: { text: query.text, userScope: this.state.userScope },
      now: query.now,
      sources: this.registry(),
      segments: this.segmentDefs.map((d) => this.built.get(d.name) as AssembleSegment),
    });
    this.dirty.clear();
    this.usedPolicy = used;
    this.cached = { key, assembly };
    this.lastReport = { reused: false, rebuilt, refetched: true };
    return assembly;
  }

  /**
   * Starts a loop turn: assembles the prefix once and freezes it for the turn. Sources
   * read at this moment; buffer updates during the turn appear in the next turn.
   */
  async beginTurn(query: { text: string; now: string }): Promise<Assembly> {
    // A new turn refetches the slots even if no event fired: buffers may have changed.
    this.cached = null;
    this.frozen = await this.assemble(query);
    return this.frozen;
  }

  /** The prefix frozen at the start of the current turn (null before the first turn). */
  get turnPrefix(): Assembly | null {
    return this.frozen;
  }

  /** The memory plan of the last assembly, if the recall slot ran. */
  get memoryPlan(): MemoryPlan | null {
    return this.cached?.assembly.memoryPlan ?? null;
  }
}

function checkWorkingMode(mode: unknown, path: string): void {
  if (!(WORKING_MODES as readonly unknown[]).includes(mode)) {
    throw new InvalidInputError(`working mode must be one of ${WORKING_MODES.join(", ")}`, path);
  }
}

// docs/memory-selection.md policy fields → the recall slot's filter (only the fields the caller gave).
function withPolicy(filter: SlotFilter, policy: PolicyInput): SlotFilter {
  const out: SlotFilter = { ...filter };
  if (policy.minScore !== undefined) out.minScore = policy.minScore;
  if (policy.topK !== undefined) out.topK = policy.topK;
  if (policy.maxChars === null) delete out.charBudget;
  else if (policy.maxChars !== undefined) out.charBudget = policy.maxChars;
  if (policy.maxTokens === null) delete out.tokenBudget;
  else if (policy.maxTokens !== undefined) out.tokenBudget = policy.maxTokens;
  return out;
}

/** Creates a {@link Session}. */
export function createSession(options: SessionOptions): Session {
  return new Session(options);
}
