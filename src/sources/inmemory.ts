/**
 * In-memory sources of docs/assembler.md, docs/sources.md ("Others"): constraints, planner, task memory,
 * profile and recall (tool state is in tool-state.ts, the generic static source in static.ts). Each is a {@link ContextSource}
 * testable alone. All are deterministic: no clock reads (timestamps come from callers),
 * ids are assigned from counters, and every fetch returns fresh copies.
 */
import { z } from "zod";
import { InvalidInputError } from "../errors/index.js";
import type { CandidateInput } from "../memory/index.js";
import { deepFreeze, isoTimestamp, nonBlankString, textString } from "../text/index.js";
import { parse, rejectDuplicate, singleKindSource } from "./single-kind.js";
import type { ContextSource, SourceItem } from "./types.js";

const nonBlank = nonBlankString;
const timestamp = isoTimestamp;
const unitScore = z.number().min(0).max(1);

// ---------------------------------------------------------------------------------------
// constraints

export const ConstraintRuleSchema = z.object({
  id: nonBlank,
  /** `forbid`, `warn`, `require`, or a caller-defined level. */
  level: nonBlank,
  text: nonBlank,
});
export type ConstraintRule = z.infer<typeof ConstraintRuleSchema>;
export interface ConstraintPolicy {
  rules: ReadonlyArray<{
    id: string;
    level: "forbid" | "warn" | "require" | (string & {});
    text: string;
  }>;
}

/**
 * Policy snapshot → pinned items (taken when the source is built): one item per rule,
 * id = rule id, text `[level] text`, category = level.
 *
 * @example constraintsSource({ rules: [{ id: "no-rm", level: "forbid", text: "no rm -rf" }] })
 * // fetch → [{ id: "no-rm", text: "[forbid] no rm -rf", category: "forbid", pinned: true, rank: 0 }]
 */
export function constraintsSource(policy: ConstraintPolicy, id = "constraints"): ContextSource {
  const rules = parse(z.array(ConstraintRuleSchema), policy?.rules, ["policy", "rules"]);
  const seen = new Set<string>();
  rules.forEach((r, i) => {
    rejectDuplicate(seen, r.id, "rule id", ["policy", "rules", i, "id"]);
  });
  const version = {}; // the rules are fixed when the source is built
  return singleKindSource(
    id,
    "constraints",
    () =>
      rules.map((r, i) => ({
        id: r.id,
        text: `[${r.level}] ${r.text}`,
        category: r.level,
        pinned: true,
        data: { type: "constraint", level: r.level, text: r.text },
        // Policy order is meaningful: keep it through the assembler's ranking.
        rank: i,
      })),
    true,
    { current: () => version, upfront: true },
  );
}

// ---------------------------------------------------------------------------------------
// planner

export const TaskStateSchema = z
  .object({
    taskId: nonBlank,
    status: nonBlank,
    phase: nonBlank,
    done: z.number().int().min(0),
    total: z.number().int().min(0),
    nextStep: nonBlank.optional(),
    nextTool: nonBlank.optional(),
  })
  .refine((s) => s.done <= s.total, { message: "must not exceed total", path: ["done"] });
/** The planner's task state (docs/assembler.md `planner` slot). */
export type TaskState = z.infer<typeof TaskStateSchema>;

/**
 * Task state → at most two items, read at fetch time (`null` → no items):
 * `task` — `task T-12 · in_progress · phase implement · progress 2/5` (category `status`);
 * `next` — `next: run the migration tests (tool run_tests)`, `next: STEP` or
 * `next tool: TOOL` (category `next`), only when a next step or tool is known.
 * An invalid state throws `InvalidInputError` (path `taskState.…`), failing the slot.
 */
export function plannerSource(getState: () => TaskState | null, id = "planner"): ContextSource {
  // The same state in a row keeps its version token (see `markValidated`).
  let last: { key: string; version: object } = { key: "", version: {} };
  const track = (key: string) => {
    if (last.key !== key) last = { key, version: {} };
  };
  const produce = (): SourceItem[] => {
    const raw = getState();
    if (raw === null || raw === undefined) {
      track("null");
      return [];
    }
    const s = parse(TaskStateSchema, raw, ["taskState"]);
    track(JSON.stringify(s));
    const items: SourceItem[] = [
      {
        id: "task",
        text: `task ${s.taskId} · ${s.status} · phase ${s.phase} · progress ${s.done}/${s.total}`,
        category: "status",
        rank: 0,
        data: {
          type: "task",
          taskId: s.taskId,
          status: s.status,
          phase: s.phase,
          done: s.done,
          total: s.total,
        },
      },
    ];
    let next: string | null = null;
    if (s.nextStep !== undefined && s.nextTool !== undefined) {
      next = `next: ${s.nextStep} (tool ${s.nextTool})`;
    } else if (s.nextStep !== undefined) {
      next = `next: ${s.nextStep}`;
    } else if (s.nextTool !== undefined) {
      next = `next tool: ${s.nextTool}`;
    }
    if (next !== null) {
      const data: SourceItem["data"] = { type: "next" };
      if (s.nextStep !== undefined) data.nextStep = s.nextStep;
      if (s.nextTool !== undefined) data.nextTool = s.nextTool;
      items.push({ id: "next", text: next, category: "next", rank: 1, data });
    }
    return items;
  };
  // The token is settled by reading the state, which only a fetch does.
  return singleKindSource(id, "planner", produce, true, {
    current: () => last.version,
    upfront: false,
  });
}

// ---------------------------------------------------------------------------------------
// task memory

export const ObservationInputSchema = z.object({
  text: nonBlank,
  createdAt: timestamp,
  id: nonBlank.optional(),
  category: textString.optional(),
  tags: z.array(textString).optional(),
  score: unitScore.optional(),
});
/** What {@link TaskMemoryBuffer.add} takes. */
export type ObservationInput = z.infer<typeof ObservationInputSchema>;
/** A buffered observation (its id assigned). */
export type Observation = ObservationInput & { id: string };

function copyObservation(o: Observation): Observation {
  return o.tags === undefined ? { ...o } : { ...o, tags: [...o.tags] };
}

let observationItems: (buffer: TaskMemoryBuffer) => SourceItem[];
let observationsVersion: (buffer: TaskMemoryBuffer) => object;

// An observation as a task-memory item (tags copied: the buffer keeps its own), frozen: the
// buffer hands the same item out on every fetch while it holds the observation.
function observationItem(o: Observation): SourceItem {
  const item: SourceItem = {
    id: o.id,
    text: o.text,
    createdAt: o.createdAt,
    category: o.category ?? "observation",
  };
  if (o.tags !== undefined) item.tags = [...o.tags];
  if (o.score !== undefined) item.score = o.score;
  return deepFreeze(item);
}

/**
 * A bounded buffer of step observations for the current task. When full, the oldest is
 * evicted. Ids are `obs-1`, `obs-2`, … from a counter that never goes back (not even on
 * `clear()`), skipping ids already held; an explicit `id` is kept as given.
 *
 * @example
 * const buf = new TaskMemoryBuffer(8);
 * buf.add({ text: "tests fail in db/migrate", createdAt: "2026-08-17T09:00:00Z" }).id // "obs-1"
 */
export class TaskMemoryBuffer {
  readonly capacity: number;
  #items: Observation[] = [];
  /** Each held observation's item, built when it was added (observations never change). */
  #sourceItems: SourceItem[] = [];
  #counter = 0;
  /** A new token on every change of the held observations (see `markValidated`). */
  #version = {};

  static {
    // The source hands out the held observations' items: an unchanged observation is the
    // same frozen item on every fetch, so what the assembler made of it (its instant, its
    // line size) holds on the next turn.
    observationItems = (buffer) => buffer.#sourceItems.slice();
    observationsVersion = (buffer) => buffer.#version;
  }

  constructor(capacity = 32) {
    if (!Number.isInteger(capacity) || capacity < 1) {
      throw new InvalidInputError(`capacity must be an integer ≥ 1, got ${capacity}`, "capacity");
    }
    this.capacity = capacity;
  }

  /** Number of observations held. */
  get size(): number {
    return this.#items.length;
  }

  /** Adds an observation (validated; path `observation.…`) and returns a copy of it. */
  add(input: ObservationInput): Observation {
    const obs = parse(ObservationInputSchema, input, ["observation"]);
    const held = new Set(this.#items.map((o) => o.id));
    let id = obs.id;
    if (id === undefined) {
      do id = `obs-${++this.#counter}`;
      while (held.has(id));
    } else if (held.has(id)) {
      throw new InvalidInputError(`duplicate observation id "${id}"`, ["observation", "id"]);
    }
    const stored: Observation = copyObservation({ ...obs, id });
    this.#items.push(stored);
    this.#sourceItems.push(observationItem(stored));
    while (this.#items.length > this.capacity) {
      this.#items.shift();
      this.#sourceItems.shift();
    }
    this.#version = {};
    return copyObservation(stored);
  }

  /** A copy of the held observations, oldest first. */
  snapshot(): Observation[] {
    return this.#items.map(copyObservation);
  }

  /** Drops every observation (ids keep counting up). */
  clear(): void {
    this.#items = [];
    this.#sourceItems = [];
    this.#version = {};
  }
}

/**
 * Task observations from the buffer's snapshot at fetch time, oldest first: id, text,
 * createdAt, tags, score, category (default `observation`). Each observation's item is
 * built once and frozen; every fetch returns a new array of them.
 */
export function taskMemorySource(buffer: TaskMemoryBuffer, id = "task_memory"): ContextSource {
  return singleKindSource(id, "task_memory", () => observationItems(buffer), true, {
    current: () => observationsVersion(buffer),
    upfront: true,
  });
}

// ---------------------------------------------------------------------------------------
// profile

export const ProfileEntrySchema = z.object({
  key: nonBlank,
  value: nonBlank,
  category: textString.optional(),
  score: unitScore.optional(),
  updatedAt: timestamp.optional(),
});
/** One profile fact (`identity`, `preference` or a caller-defined category). */
export type ProfileEntry = z.infer<typeof ProfileEntrySchema>;

// A profile entry as an item.
function profileItem(e: ProfileEntry): SourceItem {
  const item: SourceItem = {
    id: e.key,
    text: `${e.key}: ${e.value}`,
    data: { type: "profile", key: e.key, value: e.value },
  };
  if (e.category !== undefined) item.category = e.category;
  if (e.score !== undefined) item.score = e.score;
  if (e.updatedAt !== undefined) item.createdAt = e.updatedAt;
  return item;
}

/**
 * Profile entries (copied and validated when built; keys unique) → items in the given
 * order: id = key, text `key: value`, category, score, createdAt = updatedAt.
 *
 * @example profileSource([{ key: "city", value: "Beijing", category: "identity" }])
 */
export function profileSource(entries: readonly ProfileEntry[], id = "profile"): ContextSource {
  const list = parse(z.array(ProfileEntrySchema), entries, ["entries"]);
  const seen = new Set<string>();
  list.forEach((e, i) => {
    rejectDuplicate(seen, e.key, "profile key", ["entries", i, "key"]);
  });
  const version = {}; // the entries are fixed when the source is built
  return singleKindSource(id, "profile", () => list.map(profileItem), true, {
    current: () => version,
    upfront: true,
  });
}

// ---------------------------------------------------------------------------------------
// recall

/** Facts about recalled memories that docs/memory-selection.md candidates do not carry, by memory id. */
export interface RecallExtras {
  /** Shown on recall lines (`importance=0.70`). */
  importance?: Readonly<Record<string, number>>;
  /** Item category (slot filters select e.g. `episodic`, `fact`, `general`, `tool_failure`). */
  categories?: Readonly<Record<string, string>>;
  tags?: Readonly<Record<string, readonly string[]>>;
}

function own<T>(map: Readonly<Record<string, T>> | undefined, key: string): T | undefined {
  return map !== undefined && Object.hasOwn(map, key) ? map[key] : undefined;
}

// A recall candidate as an item (provenance and tags copied: they are the caller's).
function recallItem(c: CandidateInput, extras: RecallExtras): SourceItem {
  const memory: NonNullable<SourceItem["memory"]> = {
    userScope: c.userScope,
    sourceRank: c.sourceRank,
    provenance: { ...c.provenance },
  };
  if (c.conflictKey !== undefined) memory.conflictKey = c.conflictKey;
  if (c.authority !== undefined) memory.authority = c.authority;
  const item: SourceItem = {
    id: c.memoryId,
    text: c.text,
    score: c.score,
    createdAt: c.provenance?.capturedAt,
    sourceRef: c.provenance?.sourceId,
    memory,
  };
  const importance = own(extras.importance, c.memoryId);
  if (importance !== undefined) item.importance = importance;
  const category = own(extras.categories, c.memoryId);
  if (category !== undefined) item.category = category;
  const tags = own(extras.tags, c.memoryId);
  if (tags !== undefined) item.tags = [...tags];
  return item;
}

/**
 * Recall candidates (docs/memory-selection.md), read at fetch time, → items in the given order:
 * id = memoryId, text, score, createdAt = provenance.capturedAt, sourceRef =
 * provenance.sourceId, `memory` = {userScope, sourceRank, provenance, conflictKey,
 * authority}, plus importance/category/tags from `extras`. It does not filter by scope:
 * the assembler's selection gates do, so the decision log explains every drop.
 */
export function recallSource(
  getCandidates: () => readonly CandidateInput[],
  extras: RecallExtras = {},
  id = "recall",
): ContextSource {
  return singleKindSource(
    id,
    "recall_memory",
    () => {
      // A loop over a module-level function, not a closure per fetch: see "Object
      // shapes" in docs/performance.md.
      const candidates = getCandidates();
      const items: SourceItem[] = new Array(candidates.length);
      for (let i = 0; i < candidates.length; i++) {
        items[i] = recallItem(candidates[i] as CandidateInput, extras);
      }
      return items;
    },
    // Candidates are read as given at fetch time: the assembler validates them.
    false,
  );
}
