/**
 * Modes and schemas of docs/assembler.md: a mode selects a schema (a table of slots). Schemas are
 * data; the four defaults carry the reference budgets, callers register their own.
 */
import { InvalidInputError } from "../errors/index.js";
import { type CacheTier, DEFAULT_CACHE_TIER } from "../plan/index.js";
import type { SlotSpec } from "../sources/index.js";
import { deepFreeze } from "../text/index.js";

/** The six cognitive slot kinds with their default global priority (lower = kept longer). */
export const DEFAULT_SLOT_PRIORITY: Readonly<Record<string, number>> = {
  constraints: 0,
  planner: 1,
  task_memory: 2,
  tool_state: 3,
  profile: 4,
  recall_memory: 5,
  clock: 6,
};

/** Default cache tier per kind: policy is stable, the profile per session, the rest per turn. */
export const DEFAULT_SLOT_TIER: Readonly<Record<string, CacheTier>> = {
  constraints: "static",
  profile: "session",
  planner: "dynamic",
  task_memory: "dynamic",
  tool_state: "dynamic",
  recall_memory: "dynamic",
  // Changes every request: renderers that send the dynamic tier last keep it out of the cache.
  clock: "dynamic",
};

/** Priority given to caller-defined kinds that name none. */
export const CUSTOM_SLOT_PRIORITY = 10;

/** A mode's schema: its slots and its global budget. */
export interface ModeSchema {
  mode: string;
  slots: readonly SlotSpec[];
  /** Global char budget (default 2400); null = unbounded. */
  budgetChars?: number | null;
  budgetTokens?: number | null;
}

/** Global budget of every default schema. */
export const DEFAULT_GLOBAL_BUDGET_CHARS = 2400;

// Reference slot definitions (docs/assembler.md, `react` budgets), shared by every default schema.
const REFERENCE: Readonly<Record<string, SlotSpec>> = {
  constraints: { kind: "constraints", filter: { charBudget: 280 } },
  planner: { kind: "planner", filter: { charBudget: 300 } },
  task_memory: { kind: "task_memory", filter: { charBudget: 350, topK: 8, maxAgeHours: 24 } },
  tool_state: { kind: "tool_state", filter: { charBudget: 350, topK: 8 } },
  profile: {
    kind: "profile",
    filter: { charBudget: 250, categories: ["identity", "preference"], topK: 6 },
  },
  recall_memory: {
    kind: "recall_memory",
    filter: {
      charBudget: 200,
      categories: ["episodic", "fact", "general", "tool_failure"],
      topK: 2,
      minScore: 0.5,
    },
  },
};

function slot(kind: string, required = false): SlotSpec {
  const ref = REFERENCE[kind] as SlotSpec;
  return required ? { ...ref, required: true } : ref;
}

/** The four default schemas of docs/assembler.md (frozen: shared by every registry). */
export const DEFAULT_SCHEMAS: readonly ModeSchema[] = deepFreeze([
  { mode: "chat", slots: [slot("constraints"), slot("profile"), slot("recall_memory")] },
  {
    mode: "tool",
    slots: [slot("constraints"), slot("profile"), slot("tool_state", true), slot("recall_memory")],
  },
  { mode: "rag", slots: [slot("constraints"), slot("profile"), slot("recall_memory")] },
  {
    mode: "react",
    slots: [
      slot("constraints", true),
      slot("profile"),
      slot("planner", true),
      slot("task_memory"),
      slot("tool_state", true),
      slot("recall_memory"),
    ],
  },
]);

/**
 * The per-request clock slot (one item: the agent stage's `clockSource` fills it). Not in
 * {@link DEFAULT_SCHEMAS}, whose slot lists recordings and manifests pin; the agent
 * schemas (`agentSchemas` in the agent stage) add it to every mode.
 */
export const CLOCK_SLOT: SlotSpec = deepFreeze({ kind: "clock", filter: { topK: 1 } });

/** Mode every unknown mode falls back to (recorded as `fallbackFrom`). */
export const FALLBACK_MODE = "chat";

/** A resolved schema and, when the requested mode was unknown, what was asked for. */
export interface ResolvedSchema {
  schema: ModeSchema;
  fallbackFrom: string | null;
}

/** An immutable set of schemas by mode. */
export interface SchemaRegistry {
  modes(): string[];
  resolve(mode: string): ResolvedSchema;
  /** A new registry with `schema` added (or replacing the one of the same mode). */
  register(schema: ModeSchema): SchemaRegistry;
}

function validateSchema(schema: ModeSchema): void {
  if (typeof schema.mode !== "string" || schema.mode.trim() === "") {
    throw new InvalidInputError("schema mode must be a non-blank string", "mode");
  }
  const kinds = new Set<string>();
  schema.slots.forEach((s, i) => {
    if (typeof s.kind !== "string" || s.kind.trim() === "") {
      throw new InvalidInputError("slot kind must be a non-blank string", ["slots", i, "kind"]);
    }
    if (kinds.has(s.kind)) {
      throw new InvalidInputError(`duplicate slot kind "${s.kind}"`, ["slots", i, "kind"]);
    }
    kinds.add(s.kind);
  });
}

/**
 * Creates a schema registry, by default holding `chat`, `tool`, `rag` and `react`.
 *
 * @example
 * const schemas = createSchemaRegistry().register({ mode: "review", slots: [{ kind: "constraints" }] });
 * schemas.resolve("nope").fallbackFrom; // "nope" (served by chat)
 */
export function createSchemaRegistry(
  schemas: readonly ModeSchema[] = DEFAULT_SCHEMAS,
): SchemaRegistry {
  const byMode = new Map<string, ModeSchema>();
  for (const s of schemas) {
    validateSchema(s);
    byMode.set(s.mode, s);
  }
  return {
    modes: () => [...byMode.keys()].sort(),
    resolve(mode) {
      const found = byMode.get(mode);
      if (found) return { schema: found, fallbackFrom: null };
      const fallback = byMode.get(FALLBACK_MODE);
      if (!fallback)
        throw new InvalidInputError(
          `unknown mode "${mode}" and no "${FALLBACK_MODE}" schema`,
          "mode",
        );
      return { schema: fallback, fallbackFrom: mode };
    },
    register(schema) {
      return createSchemaRegistry([...byMode.values(), schema]);
    },
  };
}

/** A slot with every default applied. */
export interface ResolvedSlot extends SlotSpec {
  required: boolean;
  priority: number;
  cacheTier: CacheTier;
  neverTruncate: boolean;
}

/** The resolved slot of each spec frozen all the way down (it cannot change): made once. */
const resolvedOfFrozen = new WeakMap<SlotSpec, ResolvedSlot>();

/**
 * Applies kind defaults: priority, tier, and neverTruncate for constraints (red lines).
 * A spec frozen with its filter (the default schemas', a warm workspace's) is resolved
 * once: the same frozen slot is returned every time, so an assembly's layer memo knows it
 * by identity.
 *
 * @example resolveSlot({ kind: "constraints" }).neverTruncate // true
 */
export function resolveSlot(spec: SlotSpec): ResolvedSlot {
  const frozen = frozenSpec(spec);
  if (frozen) {
    const known = resolvedOfFrozen.get(spec);
    if (known !== undefined) return known;
  }
  const resolved: ResolvedSlot = {
    ...spec,
    required: spec.required ?? false,
    priority: spec.priority ?? DEFAULT_SLOT_PRIORITY[spec.kind] ?? CUSTOM_SLOT_PRIORITY,
    cacheTier: spec.cacheTier ?? DEFAULT_SLOT_TIER[spec.kind] ?? DEFAULT_CACHE_TIER,
    neverTruncate: spec.neverTruncate ?? spec.kind === "constraints",
  };
  if (frozen) resolvedOfFrozen.set(spec, Object.freeze(resolved));
  return resolved;
}

// A spec, its filter and the filter's lists all frozen (what a slot spec holds).
function frozenSpec(spec: SlotSpec): boolean {
  if (!Object.isFrozen(spec)) return false;
  const filter = spec.filter;
  if (filter === undefined) return true;
  if (!Object.isFrozen(filter)) return false;
  for (const v of Object.values(filter)) {
    if (typeof v === "object" && v !== null && !Object.isFrozen(v)) return false;
  }
  return true;
}
