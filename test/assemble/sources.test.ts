/**
 * Concurrent fill (docs/assembler.md): failures and timeouts of optional and required slots,
 * missing sources, concurrency proven with a start barrier, output independent of
 * completion order, and input validation.
 */
import { describe, expect, it } from "vitest";
import { type AssembleInput, assemble } from "../../src/assemble/index.js";
import { InvalidInputError, SourceError } from "../../src/errors/index.js";
import {
  type ContextSource,
  constraintsSource,
  createSourceRegistry,
  profileSource,
  type SlotSpec,
  type SourceItem,
  type SourceQuery,
  staticSource,
} from "../../src/sources/index.js";
import { deterministicView } from "../../src/trace/index.js";
import {
  barrier,
  deferred,
  flush,
  layer,
  NOW,
  QUERY,
  RULES,
  reactInput,
  reactSources,
  reactWorld,
  rejectsWith,
  schemaWith,
} from "./helpers.js";

/** A source serving `kind` with a custom fetch. */
function source(id: string, kind: string, fetch: ContextSource["fetch"]): ContextSource {
  return { id, supports: (k) => k === kind, fetch };
}

/** Never resolves, but rejects with the signal's reason when aborted; records the signal. */
function hanging(id: string, kind: string) {
  const seen: AbortSignal[] = [];
  const src = source(
    id,
    kind,
    (_slot, _query, signal) =>
      new Promise<SourceItem[]>((_resolve, reject) => {
        seen.push(signal);
        signal.addEventListener("abort", () => reject(signal.reason));
      }),
  );
  return { src, seen };
}

const chatSources = (profile: ContextSource): ContextSource[] => [
  constraintsSource({ rules: RULES }),
  profile,
  staticSource("recall-none", ["recall_memory"], []),
];

const chat = (sources: readonly ContextSource[], extra: Partial<AssembleInput> = {}) =>
  assemble({ mode: "chat", query: QUERY, now: NOW, sources, ...extra });

const FAILING: Array<[string, ContextSource["fetch"], string]> = [
  [
    "throws synchronously",
    () => {
      throw new Error("profile store offline");
    },
    "broken: profile store offline",
  ],
  ["rejects", async () => Promise.reject(new Error("503 from graph")), "broken: 503 from graph"],
  ["rejects with a non-Error", () => Promise.reject("plain string"), "broken: plain string"],
  [
    "returns a non-array",
    () => ({ items: [] }) as unknown as SourceItem[],
    "broken: source broken returned object, not an array of items",
  ],
  [
    "returns undefined",
    () => undefined as unknown as SourceItem[],
    "broken: source broken returned undefined, not an array of items",
  ],
  [
    "returns an item with a blank text",
    () => [
      { id: "a", text: "ok" },
      { id: "b", text: "   " },
    ],
    "broken: invalid item items[1].text: must not be blank",
  ],
  [
    "returns an item with a score above 1",
    () => [{ id: "a", text: "ok", score: 1.5 }],
    "broken: invalid item items[0].score: Too big: expected number to be <=1",
  ],
  [
    "returns duplicate item ids",
    () => [
      { id: "a", text: "one" },
      { id: "a", text: "two" },
    ],
    'duplicate item id "a" from broken and broken',
  ],
];

describe("an optional source that fails", () => {
  it.each(FAILING)("%s → the slot is skipped, the rest assembles", async (_name, fetch, msg) => {
    const a = await chat(chatSources(source("broken", "profile", fetch)));
    const profile = layer(a.manifest.layers, "profile");
    expect(profile).toMatchObject({
      status: "skipped",
      reason: "source_failed",
      detail: msg,
      error: msg,
      sources: ["broken"],
      used: { chars: 0, tokens: 0 },
      items: [],
      sourceRefs: [],
    });
    expect(a.manifest.failures).toEqual([
      { slot: "profile", sourceId: "broken", reason: "source_failed", message: msg },
    ]);
    expect(a.prompt).toBe("## Constraints\n- [warn] network needs approval\n- [forbid] no rm -rf");
    expect(layer(a.manifest.layers, "constraints").status).toBe("included");
  });

  it("duplicate ids fail the slot on every assembly: a caller's items or a static source's", async () => {
    const dup = [
      { id: "a", text: "one" },
      { id: "a", text: "two" },
    ];
    const msg = (id: string) => `duplicate item id "a" from ${id} and ${id}`;
    // The same source object each time: what the assembler remembers of its last fetch
    // (validated items, kept parts) never lets a repeat pass.
    const caller = source("caller", "profile", () => dup.map((i) => ({ ...i })));
    const fixed = staticSource("fixed", ["profile"], dup);
    for (const [src, id] of [
      [caller, "caller"],
      [fixed, "fixed"],
    ] as const) {
      for (let round = 0; round < 3; round++) {
        const a = await chat(chatSources(src));
        expect(layer(a.manifest.layers, "profile")).toMatchObject({
          status: "skipped",
          reason: "source_failed",
          detail: msg(id),
        });
      }
    }
  });

  it("times out quickly, aborts its signal, and is skipped with source_timeout", async () => {
    const { src, seen } = hanging("slow", "profile");
    const started = performance.now();
    const a = await chat(chatSources(src), { timeoutMs: 50 });
    expect(performance.now() - started).toBeLessThan(2000);
    expect(seen).toHaveLength(1);
    expect(seen[0]?.aborted).toBe(true);
    const profile = layer(a.manifest.layers, "profile");
    expect(profile).toMatchObject({
      status: "skipped",
      reason: "source_timeout",
      error: "slow: timed out after 50 ms",
    });
    expect(a.manifest.failures).toEqual([
      {
        slot: "profile",
        sourceId: "slow",
        reason: "source_timeout",
        message: "slow: timed out after 50 ms",
      },
    ]);
    expect(a.prompt).toContain("## Constraints");
  });

  it("a slot's own timeoutMs overrides the assembly's", async () => {
    const { src, seen } = hanging("slow", "kb");
    const a = await assemble({
      mode: "t",
      query: QUERY,
      now: NOW,
      timeoutMs: 60_000,
      schemas: schemaWith([{ kind: "kb", timeoutMs: 30 }]),
      sources: [src],
    });
    expect(seen[0]?.aborted).toBe(true);
    expect(layer(a.manifest.layers, "kb").error).toBe("slow: timed out after 30 ms");
  });

  it("slots with the same timeout time out together; another timeout and fast sources are not touched", async () => {
    const slowKb = hanging("slow-kb", "kb");
    const slowProfile = hanging("slow-profile", "profile");
    const seenFast: AbortSignal[] = [];
    const fast = source("fast", "constraints", (_slot, _query, signal) => {
      seenFast.push(signal);
      return [{ id: "r", text: "no rm -rf" }];
    });
    const a = await assemble({
      mode: "t",
      query: QUERY,
      now: NOW,
      timeoutMs: 40,
      schemas: schemaWith([
        { kind: "constraints", timeoutMs: 60_000 },
        { kind: "kb" },
        { kind: "profile" },
      ]),
      sources: [fast, slowKb.src, slowProfile.src],
    });
    expect(slowKb.seen[0]?.aborted).toBe(true);
    expect(slowProfile.seen[0]?.aborted).toBe(true);
    expect(layer(a.manifest.layers, "kb").error).toBe("slow-kb: timed out after 40 ms");
    expect(layer(a.manifest.layers, "profile").error).toBe("slow-profile: timed out after 40 ms");
    expect(layer(a.manifest.layers, "constraints").status).toBe("included");
    expect(seenFast[0]?.aborted).toBe(false);
  });

  it("leaves no timer behind once every slot is filled", async () => {
    const timers = () => process.getActiveResourcesInfo().filter((r) => r === "Timeout").length;
    const before = timers();
    const a = await chat(chatSources(staticSource("p", ["profile"], [{ id: "x", text: "hi" }])), {
      timeoutMs: 600_000,
    });
    expect(a.manifest.failures).toEqual([]);
    expect(timers()).toBe(before);
  });

  it("fails the whole slot when one of its sources fails, naming that source", async () => {
    const good = staticSource(
      "good",
      ["profile"],
      [{ id: "g", text: "city: Beijing", category: "identity" }],
    );
    const bad = source("bad", "profile", () => {
      throw new Error("boom");
    });
    const a = await chat([constraintsSource({ rules: RULES }), good, bad]);
    expect(layer(a.manifest.layers, "profile")).toMatchObject({
      status: "skipped",
      reason: "source_failed",
      error: "bad: boom",
      sources: ["bad", "good"],
    });
    expect(a.prompt).not.toContain("Beijing");
  });

  it("reports several failed slots in schema order", async () => {
    const a = await chat([
      source("c-bad", "constraints", () => {
        throw new Error("c");
      }),
      source("p-bad", "profile", () => {
        throw new Error("p");
      }),
      source("r-bad", "recall_memory", () => {
        throw new Error("r");
      }),
    ]);
    expect(a.prompt).toBe("");
    expect(a.manifest.failures.map((f) => [f.slot, f.message])).toEqual([
      ["constraints", "c-bad: c"],
      ["profile", "p-bad: p"],
      ["recall_memory", "r-bad: r"],
    ]);
    expect(a.manifest.layers.map((l) => l.status)).toEqual(["skipped", "skipped", "skipped"]);
  });

  it("recall items that are not memory candidates are invalid items: skipped, not a crash", async () => {
    const plain = staticSource(
      "plain",
      ["recall_memory"],
      [{ id: "k", text: "hello", category: "fact", score: 0.9 }],
    );
    const a = await chat([constraintsSource({ rules: RULES }), plain]);
    expect(layer(a.manifest.layers, "recall_memory")).toMatchObject({
      status: "skipped",
      reason: "source_failed",
      error: "plain: item k of memory slot recall_memory lacks memory fields or a score",
    });
    expect(a.manifest.failures).toHaveLength(1);
    expect(a.memoryPlan).toBeNull();
    expect(a.prompt).toContain("## Constraints");
  });
});

describe("a required source that fails", () => {
  it.each(FAILING)("%s → the assembly fails closed", async (_name, fetch, msg) => {
    const w = reactWorld();
    const sources = reactSources(w).map((s) =>
      s.id === "planner" ? source("planner", "planner", fetch) : s,
    );
    const err = await rejectsWith(
      assemble(reactInput(w, { sources })),
      SourceError,
      "source_failed",
      "slots.planner",
    );
    expect(err.sourceId).toBe("planner");
    expect(err.message).toBe(`required slot planner: ${msg.replaceAll("broken", "planner")}`);
  });

  it("times out → SourceError source_timeout, after aborting the signal", async () => {
    const w = reactWorld();
    const { src, seen } = hanging("tools", "tool_state");
    const sources = reactSources(w).map((s) => (s.id === "tool_state" ? src : s));
    const err = await rejectsWith(
      assemble(reactInput(w, { sources, timeoutMs: 50 })),
      SourceError,
      "source_timeout",
      "slots.tool_state",
    );
    expect(err.sourceId).toBe("tools");
    expect(seen[0]?.aborted).toBe(true);
  });

  it("an invalid task state fails the required planner slot", async () => {
    const w = reactWorld();
    w.task = { ...w.task!, done: 9, total: 5 };
    await rejectsWith(assemble(reactInput(w)), SourceError, "source_failed", "slots.planner");
  });
});

describe("a slot without a source", () => {
  it("is inactive when optional", async () => {
    const a = await chat([constraintsSource({ rules: RULES })]);
    for (const id of ["profile", "recall_memory"]) {
      expect(layer(a.manifest.layers, id)).toMatchObject({
        status: "inactive",
        reason: "inactive",
        detail: "no source serves this slot",
        sources: [],
        error: null,
        items: [],
      });
    }
    expect(a.manifest.failures).toEqual([]);
    expect(a.memoryPlan).toBeNull();
  });

  it("fails closed when required", async () => {
    const err = await rejectsWith(
      assemble({
        mode: "tool",
        query: QUERY,
        now: NOW,
        sources: [constraintsSource({ rules: RULES })],
      }),
      SourceError,
      "source_failed",
      "slots.tool_state",
    );
    expect(err.sourceId).toBe("none");
    expect(err.message).toBe("no source serves required slot tool_state");
  });

  it("a required slot whose source returns no items is inactive, not a failure", async () => {
    const w = reactWorld();
    w.task = null;
    const a = await assemble(reactInput(w));
    expect(layer(a.manifest.layers, "planner")).toMatchObject({
      status: "inactive",
      required: true,
    });
    expect(a.manifest.failures).toEqual([]);
  });
});

describe("concurrency", () => {
  it("starts every fetch before any finishes (a sequential fill would deadlock)", async () => {
    // react: 6 slots; constraints and profile served by two sources each → 8 fetches.
    const N = 8;
    const gate = barrier(N);
    const gated = (id: string, kind: string, items: SourceItem[]): ContextSource =>
      source(id, kind, async () => {
        await gate.arrive();
        return items;
      });
    const sources = [
      gated("rules-a", "constraints", [{ id: "r1", text: "[forbid] no rm -rf", pinned: true }]),
      gated("rules-b", "constraints", [{ id: "r2", text: "[warn] ask first", pinned: true }]),
      gated("plan", "planner", [{ id: "t", text: "task T-1" }]),
      gated("obs", "task_memory", [{ id: "o", text: "tests fail", createdAt: NOW }]),
      gated("tools", "tool_state", [{ id: "x", text: "run_tests(path)" }]),
      gated("prof-a", "profile", [{ id: "city", text: "city: Beijing", category: "identity" }]),
      gated("prof-b", "profile", [{ id: "lang", text: "language: zh", category: "preference" }]),
      gated("recall", "recall_memory", []),
    ];
    const a = await assemble({
      mode: "react",
      query: QUERY,
      now: NOW,
      sources,
      timeoutMs: 60_000,
    });
    expect(gate.count).toBe(N);
    expect(a.manifest.failures).toEqual([]);
    expect(a.manifest.layers.map((l) => [l.id, l.status])).toEqual([
      ["constraints", "included"],
      ["profile", "included"],
      ["planner", "included"],
      ["task_memory", "included"],
      ["tool_state", "included"],
      ["recall_memory", "inactive"],
    ]);
    expect(a.manifest.timings.fetch).toHaveLength(N);
  });

  it("output never depends on completion order", async () => {
    const kinds = ["constraints", "profile", "planner", "task_memory", "tool_state", "kb"];
    const items: Record<string, SourceItem[]> = {
      constraints: [{ id: "r1", text: "[forbid] no rm -rf", pinned: true }],
      profile: [{ id: "city", text: "city: Beijing", category: "identity" }],
      planner: [{ id: "t", text: "task T-1 · phase 2" }],
      task_memory: [{ id: "o1", text: "tests fail", createdAt: NOW }],
      tool_state: [{ id: "x", text: "run_tests(path)" }],
      kb: [
        { id: "k1", text: "Deploys run on Fridays", score: 0.5 },
        { id: "k2", text: "Rollbacks need approval", score: 0.5 },
      ],
    };
    // Two kb sources with tied scores, so their items interleave only by id.
    const kbSplit: Record<string, SourceItem[]> = {
      "kb-a": [items.kb![1]!],
      "kb-b": [items.kb![0]!],
    };
    const schemas = schemaWith([
      { kind: "constraints" },
      { kind: "profile" },
      { kind: "planner" },
      { kind: "task_memory" },
      { kind: "tool_state" },
      { kind: "kb", priority: 6 },
    ]);
    const permutations = [
      [0, 1, 2, 3, 4, 5, 6],
      [6, 5, 4, 3, 2, 1, 0],
      [3, 6, 0, 5, 1, 4, 2],
      [5, 0, 6, 2, 4, 1, 3],
    ];
    const runs: string[] = [];
    for (const order of permutations) {
      const gates = Array.from({ length: 7 }, () => deferred<void>());
      let started = 0;
      const ids = [...kinds.slice(0, 5), "kb-a", "kb-b"];
      const sources = ids.map((id, i) => {
        const kind = i < 5 ? id : "kb";
        return source(id, kind, async () => {
          started++;
          await gates[i]!.promise;
          return i < 5 ? items[id]! : kbSplit[id]!;
        });
      });
      const running = assemble({ mode: "t", query: QUERY, now: NOW, schemas, sources });
      while (started < 7) await flush();
      for (const i of order) {
        gates[i]!.resolve();
        await flush();
      }
      const a = await running;
      runs.push(`${a.prompt}\u0000${JSON.stringify(deterministicView(a.manifest))}`);
    }
    expect(new Set(runs).size).toBe(1);
    expect(runs[0]).toContain("- Deploys run on Fridays\n- Rollbacks need approval");
  });
});

describe("invalid input", () => {
  const base = (): AssembleInput => ({
    mode: "chat",
    query: QUERY,
    now: NOW,
    sources: [constraintsSource({ rules: RULES })],
  });

  it.each(["yesterday", "", "2026-13-01T00:00:00Z", "17 Aug 2026 10:00"])(
    "now %j → path now",
    async (now) => {
      await rejectsWith(assemble({ ...base(), now }), InvalidInputError, "invalid_input", "now");
    },
  );

  it.each(["", "   ", "\t\n"])("blank userScope %j → path query.userScope", async (userScope) => {
    await rejectsWith(
      assemble({ ...base(), query: { text: "q", userScope } }),
      InvalidInputError,
      "invalid_input",
      "query.userScope",
    );
  });

  it("unknown renderer → path renderer", async () => {
    const err = await rejectsWith(
      assemble({ ...base(), renderer: "fr" }),
      InvalidInputError,
      "invalid_input",
      "renderer",
    );
    expect(err.message).toContain('unknown renderer "fr"');
  });

  it("unknown tokenizer → path tokenizer", async () => {
    await rejectsWith(
      assemble({ ...base(), tokenizer: "gpt-17" }),
      InvalidInputError,
      "invalid_input",
      "tokenizer",
    );
  });

  it("duplicate source ids are rejected, as an array or a registry", async () => {
    const dup = [
      constraintsSource({ rules: RULES }, "s"),
      profileSource([{ key: "city", value: "Beijing" }], "s"),
    ];
    await rejectsWith(
      assemble({ ...base(), sources: dup }),
      InvalidInputError,
      "invalid_input",
      "sources[1].id",
    );
    expect(() => createSourceRegistry(dup)).toThrow(InvalidInputError);
  });

  it("a validation error happens before any source is asked", async () => {
    let fetched = 0;
    const spy = source("spy", "constraints", () => {
      fetched++;
      return [];
    });
    await expect(assemble({ ...base(), sources: [spy], renderer: "nope" })).rejects.toThrow(
      InvalidInputError,
    );
    await expect(assemble({ ...base(), sources: [spy], now: "bad" })).rejects.toThrow(
      InvalidInputError,
    );
    expect(fetched).toBe(0);
  });
});

it("sources receive the resolved mode, the trimmed scope and the now parameter", async () => {
  const seen: Array<[SlotSpec, SourceQuery]> = [];
  const spy = source("spy", "constraints", (slot, query) => {
    seen.push([slot, query]);
    return [];
  });
  await assemble({
    mode: "nope",
    query: { text: "hi", userScope: "  u1 " },
    now: NOW,
    sources: [spy],
  });
  expect(seen).toHaveLength(1);
  expect(seen[0]?.[0].kind).toBe("constraints");
  expect(seen[0]?.[1]).toEqual({ text: "hi", userScope: "u1", mode: "chat", now: NOW });
});
