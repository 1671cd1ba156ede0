/**
 * Shared fixtures of the assembler tests: a full `react` world built from the real
 * in-memory sources, recall candidates, deferred promises, a start barrier, and helpers
 * that assert an error's class, code and path.
 */
import { expect } from "vitest";
import {
  type AssembleInput,
  assemble,
  createSchemaRegistry,
  type ModeSchema,
  type SchemaRegistry,
} from "../../src/assemble/index.js";
import type { PromptctxError } from "../../src/errors/index.js";
import type { CandidateInput } from "../../src/memory/index.js";
import { DEFAULT_CACHE_BOUNDARY, SEGMENT_SEPARATOR } from "../../src/plan/index.js";
import {
  type ContextSource,
  constraintsSource,
  plannerSource,
  profileSource,
  type RecallExtras,
  recallSource,
  type SlotFilter,
  type SourceItem,
  staticSource,
  TaskMemoryBuffer,
  type TaskState,
  ToolState,
  taskMemorySource,
  toolStateSource,
} from "../../src/sources/index.js";
import type { LayerManifest } from "../../src/trace/index.js";

export const NOW = "2026-08-17T10:00:00Z";
export const QUERY = { text: "what is the weather API?", userScope: "u1" };

/** `hours` before {@link NOW}, as an ISO-8601 instant. */
export function hoursAgo(hours: number, now = NOW): string {
  return new Date(Date.parse(now) - hours * 3_600_000).toISOString();
}

/** A docs/memory-selection.md recall candidate. */
export function cand(
  memoryId: string,
  text: string,
  opts: {
    score?: number;
    userScope?: string;
    sourceRank?: number;
    capturedAt?: string;
    conflictKey?: string;
  } = {},
): CandidateInput {
  const c: CandidateInput = {
    memoryId,
    text,
    userScope: opts.userScope ?? "u1",
    score: opts.score ?? 0.8,
    sourceRank: opts.sourceRank ?? 1,
    provenance: {
      sourceId: `chat-${memoryId}`,
      sourceType: "chat",
      title: `conversation ${memoryId}`,
      capturedAt: opts.capturedAt ?? hoursAgo(48),
    },
  };
  if (opts.conflictKey !== undefined) c.conflictKey = opts.conflictKey;
  return c;
}

// Policy order (not id order) is the rendered order.
export const RULES = [
  { id: "net", level: "warn", text: "network needs approval" },
  { id: "no-rm", level: "forbid", text: "no rm -rf" },
];

export const TASK: TaskState = {
  taskId: "T-12",
  status: "in_progress",
  phase: "implement",
  done: 2,
  total: 5,
  nextStep: "run the migration tests",
  nextTool: "run_tests",
};

export const RECALL: CandidateInput[] = [
  cand("m1", "上次问过天气API", { score: 0.82 }),
  cand("m2", "prefers pytest over unittest", { score: 0.75 }),
  cand("m3", "third memory, cut by topK", { score: 0.6 }),
  cand("m4", "other user's secret", { score: 0.99, userScope: "u2" }),
];
export const RECALL_EXTRAS: RecallExtras = {
  importance: { m1: 0.7, m2: 0.5 },
  categories: { m1: "episodic", m2: "fact", m3: "general", m4: "fact" },
};

/** Everything the `react` mode reads, from the real in-memory sources. */
export interface ReactWorld {
  rules: typeof RULES;
  task: TaskState | null;
  buffer: TaskMemoryBuffer;
  tools: ToolState;
  profile: Parameters<typeof profileSource>[0];
  recall: CandidateInput[];
  extras: RecallExtras;
}

export function reactWorld(): ReactWorld {
  const buffer = new TaskMemoryBuffer(8);
  buffer.add({ text: "tests fail in db/migrate", createdAt: hoursAgo(2) });
  buffer.add({ text: "migration 0042 adds a NOT NULL column", createdAt: hoursAgo(1) });
  buffer.add({ text: "stale note from yesterday morning", createdAt: hoursAgo(30) });
  const tools = new ToolState([
    { name: "run_tests", description: "Run the test suite", requiredArgs: ["path"] },
    { name: "read_file", description: "", requiredArgs: ["path"] },
  ]);
  tools.recordCall({ tool: "run_tests", ok: false, summary: "3 failed", at: hoursAgo(0.5) });
  return {
    rules: RULES.map((r) => ({ ...r })),
    task: { ...TASK },
    buffer,
    tools,
    profile: [
      { key: "city", value: "Beijing", category: "identity" },
      { key: "language", value: "zh", category: "preference" },
      { key: "mood", value: "tired", category: "state" },
    ],
    recall: RECALL.map((c) => ({ ...c })),
    extras: RECALL_EXTRAS,
  };
}

export function reactSources(w: ReactWorld): ContextSource[] {
  return [
    constraintsSource({ rules: w.rules }),
    plannerSource(() => w.task),
    taskMemorySource(w.buffer),
    toolStateSource(w.tools),
    profileSource(w.profile),
    recallSource(() => w.recall, w.extras),
  ];
}

export function reactInput(
  w: ReactWorld = reactWorld(),
  extra: Partial<AssembleInput> = {},
): AssembleInput {
  return { mode: "react", query: QUERY, now: NOW, sources: reactSources(w), ...extra };
}

/** A registry with one extra mode `t` holding the given slots. */
export function schemaWith(
  slots: ModeSchema["slots"],
  extra: Partial<ModeSchema> = {},
): SchemaRegistry {
  return createSchemaRegistry().register({ mode: "t", slots, ...extra });
}

/** Assembles one optional `kb` slot with `filter` over `items` from one static source. */
export async function assembleKb(
  filter: SlotFilter,
  items: readonly SourceItem[],
  extra: Partial<AssembleInput> = {},
) {
  const a = await assemble({
    mode: "t",
    query: QUERY,
    now: NOW,
    schemas: schemaWith([{ kind: "kb", filter }], { budgetChars: null }),
    sources: [staticSource("kb-src", ["kb"], items)],
    ...extra,
  });
  return { ...a, layer: layer(a.manifest.layers, "kb") };
}

export function layer(layers: readonly LayerManifest[], id: string): LayerManifest {
  const l = layers.find((x) => x.id === id);
  if (l === undefined) throw new Error(`no layer ${id}`);
  return l;
}

/** `[id, reason]` of every item decision, in manifest order. */
export function reasons(l: LayerManifest): Array<[string, string]> {
  return l.items.map((d) => [d.id, d.reason]);
}

/** Asserts `promise` rejects with `cls`, `code` and `path`; returns the error. */
export async function rejectsWith<E extends PromptctxError>(
  promise: Promise<unknown>,
  cls: new (...args: never[]) => E,
  code: string,
  path: string | null,
): Promise<E> {
  let caught: unknown;
  try {
    await promise;
  } catch (e) {
    caught = e;
  }
  expect(caught).toBeInstanceOf(cls);
  const err = caught as E;
  expect(err.code).toBe(code);
  expect(err.path).toBe(path);
  return err;
}

/** A promise with its resolve function exposed. */
export interface Deferred<T> {
  promise: Promise<T>;
  resolve(value: T): void;
}

export function deferred<T>(): Deferred<T> {
  let resolve!: (value: T) => void;
  const promise = new Promise<T>((r) => {
    resolve = r;
  });
  return { promise, resolve };
}

/**
 * A start barrier: `arrive()` counts a started fetch and returns a promise that resolves
 * only once `n` fetches have arrived. Sequential fetching would wait forever.
 */
export function barrier(n: number) {
  let count = 0;
  const all = deferred<void>();
  return {
    get count() {
      return count;
    },
    arrive(): Promise<void> {
      count++;
      if (count === n) all.resolve();
      return all.promise;
    },
  };
}

/** Lets every pending promise job (and one macrotask turn) run. */
export const flush = () => new Promise<void>((r) => setImmediate(r));

/** The included layers' rendered contents, cut back out of the prompt in display order. */
export function contentsOf(prompt: string, boundary = DEFAULT_CACHE_BOUNDARY): string[] {
  if (prompt === "") return [];
  return prompt.split(boundary).flatMap((tier) => tier.split(SEGMENT_SEPARATOR));
}

/** An ISO timestamp of `ms`. */
export const iso = (ms: number) => new Date(ms).toISOString();

/** Words for item texts: prose, CJK, shell, a secret-looking phrase, an emoji. */
export const WORDS = [
  "deploy",
  "migration",
  "天气",
  "tests fail",
  "rm -rf",
  "API key",
  "🚀",
  "index",
];

/** An assembly as compared byte for byte: everything but the wall-clock timings. */
export function comparable(a: Awaited<ReturnType<typeof assemble>>): string {
  const { timings: _t, ...manifest } = a.manifest;
  return JSON.stringify({ ...a, manifest });
}
