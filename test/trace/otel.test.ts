/**
 * OpenTelemetry spans of an assembly (docs/traces.md), recorded by the real SDK's
 * in-memory exporter: the span tree, attributes equal to the manifest's figures, content
 * only on opt-in, error status on failures, and nothing recorded (with byte-identical
 * output) when no provider is registered.
 */
import { AsyncLocalStorage } from "node:async_hooks";
import { readFileSync } from "node:fs";
import {
  type Attributes,
  type Context,
  type ContextManager,
  context,
  ROOT_CONTEXT,
  SpanStatusCode,
  trace,
} from "@opentelemetry/api";
import {
  BasicTracerProvider,
  InMemorySpanExporter,
  type ReadableSpan,
  SimpleSpanProcessor,
} from "@opentelemetry/sdk-trace-base";
import { afterEach, describe, expect, it } from "vitest";
import { type Assembly, assemble } from "../../src/assemble/index.js";
import { PromptBudgetError, SourceError } from "../../src/errors/index.js";
import { type ContextSource, constraintsSource, staticSource } from "../../src/sources/index.js";
import type { TokenCounter } from "../../src/tokens/index.js";
import { countAttributes, deterministicView, TRACER_VERSION } from "../../src/trace/index.js";
import { assembleWorkspace } from "../../src/workspace/index.js";
import {
  NOW,
  QUERY,
  RULES,
  reactInput,
  reactWorld,
  rejectsWith,
  schemaWith,
} from "../assemble/helpers.js";
import { exampleStore, WORKSPACE, NOW as WS_NOW, QUERY as WS_QUERY } from "../server/helpers.js";

function recorder() {
  const exporter = new InMemorySpanExporter();
  const provider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
  return { exporter, provider, tracer: provider.getTracer("test") };
}

/** A context manager over AsyncLocalStorage, so spans started inside a source nest. */
class AlsContextManager implements ContextManager {
  readonly #als = new AsyncLocalStorage<Context>();
  active(): Context {
    return this.#als.getStore() ?? ROOT_CONTEXT;
  }
  with<A extends unknown[], F extends (...args: A) => ReturnType<F>>(
    ctx: Context,
    fn: F,
    thisArg?: ThisParameterType<F>,
    ...args: A
  ): ReturnType<F> {
    return this.#als.run(ctx, () => fn.call(thisArg, ...args));
  }
  bind<T>(_ctx: Context, target: T): T {
    return target;
  }
  enable(): this {
    return this;
  }
  disable(): this {
    this.#als.disable();
    return this;
  }
}

afterEach(() => {
  trace.disable();
  context.disable();
});

const byName = (spans: readonly ReadableSpan[], name: string) =>
  spans.filter((s) => s.name === name);

function one(spans: readonly ReadableSpan[], name: string): ReadableSpan {
  const found = byName(spans, name);
  expect(found, name).toHaveLength(1);
  return found[0] as ReadableSpan;
}

const parentOf = (s: ReadableSpan) => s.parentSpanContext?.spanId;
const idOf = (s: ReadableSpan) => s.spanContext().spanId;

/**
 * What the root span must say, computed from the manifest alone. Decision counts are
 * counted here table by table (not with the library's `countAttributes`), so the oracle
 * stays independent of the code under test.
 */
function expectedRoot(a: Assembly): Attributes {
  const m = a.manifest;
  const out: Attributes = {
    "gen_ai.operation.name": "assemble_context",
    "promptctx.mode": m.mode,
    "promptctx.renderer": m.renderer,
    "promptctx.tokenizer": m.tokenizer,
    "promptctx.used.chars": m.used.chars,
    "promptctx.used.tokens": m.used.tokens,
    "promptctx.prompt_version": m.promptVersion,
    "promptctx.layers.count": m.layers.length,
    "promptctx.failures.count": m.failures.length,
  };
  const reasons: Record<string, string[]> = {
    layer: m.layers.map((l) => l.reason),
    item: m.layers.flatMap((l) => l.items.map((i) => i.reason)),
    segment: m.segmentDecisions.map((d) => d.reason),
    memory: (m.memoryDecisions ?? []).map((d) => d.reason),
  };
  for (const [table, all] of Object.entries(reasons)) {
    for (const reason of new Set(all))
      out[`promptctx.decisions.${table}.${reason}`] = all.filter((r) => r === reason).length;
  }
  if (m.budget.chars !== null) out["promptctx.budget.chars"] = m.budget.chars;
  if (m.budget.tokens !== null) out["promptctx.budget.tokens"] = m.budget.tokens;
  for (const [tier, key] of Object.entries(m.cacheKeys))
    if (key !== null) out[`promptctx.cache_key.${tier}`] = key;
  return out;
}

/** Every string attribute value of every span. */
const strings = (spans: readonly ReadableSpan[]) =>
  spans.flatMap((s) => Object.values(s.attributes).filter((v) => typeof v === "string"));

const canonical = (a: Assembly) =>
  JSON.stringify({
    prompt: a.prompt,
    manifest: deterministicView(a.manifest),
    memoryPlan: a.memoryPlan,
    segmentPlan: a.segmentPlan,
  });

describe("assembly spans", () => {
  it("one root per assembly, a child per step, per slot and per source fetch", async () => {
    const { exporter, tracer } = recorder();
    const a = await assemble(reactInput(reactWorld(), { trace: { tracer } }));
    const spans = exporter.getFinishedSpans();
    const root = one(spans, "promptctx.assemble");
    expect(parentOf(root)).toBeUndefined();
    const steps = ["fill_sources", "pack_layers", "global_plan", "manifest"].map((s) =>
      one(spans, `promptctx.${s}`),
    );
    for (const s of steps) expect(parentOf(s)).toBe(idOf(root));
    const [fill, pack] = steps as [ReadableSpan, ReadableSpan];
    // One fetch per (slot, source), as `timings.fetch` lists them.
    const fetches = byName(spans, "promptctx.source.fetch");
    expect(
      fetches
        .map((f) => [f.attributes["promptctx.slot"], f.attributes["gen_ai.data_source.id"]])
        .sort(),
    ).toEqual(a.manifest.timings.fetch.map((t) => [t.slot, t.sourceId]).sort());
    for (const f of fetches) {
      expect(parentOf(f)).toBe(idOf(fill));
      expect(f.attributes["gen_ai.operation.name"]).toBe("retrieval");
    }
    // One packing span per slot, in schema order; the recall slot's is the memory selection.
    const packs = spans.filter((s) => parentOf(s) === idOf(pack));
    const slots = a.manifest.layers.map((l) => l.id);
    expect(packs.map((p) => p.attributes["promptctx.slot"])).toEqual(slots);
    expect(packs.map((p) => p.name)).toEqual(
      slots.map((s) =>
        s === "recall_memory" ? "promptctx.memory_selection" : "promptctx.pack_slot",
      ),
    );
    expect(spans).toHaveLength(1 + steps.length + fetches.length + packs.length);
    expect(spans.every((s) => s.status.code === SpanStatusCode.UNSET)).toBe(true);
  });

  it("a fetch skipped for an unchanged source is still a span and a timing", async () => {
    const input = reactInput(reactWorld()); // the same sources for every assembly
    const first = await assemble(input);
    await assemble(input); // the second fetch under one version is kept
    const { exporter, tracer } = recorder();
    const a = await assemble({ ...input, trace: { tracer } });
    expect(a.prompt).toBe(first.prompt);
    const spans = exporter.getFinishedSpans();
    const fill = one(spans, "promptctx.fill_sources");
    const fetches = byName(spans, "promptctx.source.fetch");
    const pairs = (x: Array<[unknown, unknown]>) => x.map((p) => p.join("/")).sort();
    expect(
      pairs(
        fetches.map((f) => [f.attributes["promptctx.slot"], f.attributes["promptctx.source.id"]]),
      ),
    ).toEqual(pairs(first.manifest.timings.fetch.map((t) => [t.slot, t.sourceId])));
    expect(pairs(a.manifest.timings.fetch.map((t) => [t.slot, t.sourceId]))).toEqual(
      pairs(first.manifest.timings.fetch.map((t) => [t.slot, t.sourceId])),
    );
    for (const f of fetches) {
      expect(parentOf(f)).toBe(idOf(fill));
      expect(f.attributes["promptctx.items.count"]).toBeGreaterThanOrEqual(0);
    }
  });

  it("attributes carry budgets, use, cache keys and decision counts equal to the manifest's", async () => {
    const { exporter, tracer } = recorder();
    const a = await assemble(reactInput(reactWorld(), { trace: { tracer, model: "gpt-4o" } }));
    const spans = exporter.getFinishedSpans();
    const root = one(spans, "promptctx.assemble");
    expect(root.attributes).toEqual({ ...expectedRoot(a), "gen_ai.request.model": "gpt-4o" });
    // e.g. the other user's memory and the one past topK, counted by reason.
    expect(root.attributes["promptctx.decisions.memory.scope_mismatch"]).toBe(1);
    expect(root.attributes["promptctx.decisions.memory.top_k_reached"]).toBeGreaterThan(0);

    const plan = one(spans, "promptctx.global_plan");
    expect(plan.attributes).toMatchObject({
      "promptctx.budget.chars": a.segmentPlan.budgetChars,
      "promptctx.used.chars": a.segmentPlan.usedChars,
      "promptctx.used.tokens": a.segmentPlan.usedTokens,
      "promptctx.segments.included": a.segmentPlan.includedNames.length,
      ...countAttributes(
        "promptctx.decisions.segment",
        a.segmentPlan.decisions.map((d) => d.reason),
      ),
    });
    const memory = one(spans, "promptctx.memory_selection");
    const recall = a.manifest.layers.find((l) => l.id === "recall_memory");
    expect(memory.attributes).toMatchObject({
      "promptctx.slot": "recall_memory",
      "promptctx.memory.candidates": a.memoryPlan?.candidateCount,
      "promptctx.memory.selected": a.memoryPlan?.selectedMemoryIds.length,
      ...countAttributes(
        "promptctx.decisions.memory",
        (a.memoryPlan?.decisions ?? []).map((d) => d.reason),
      ),
      ...countAttributes(
        "promptctx.decisions.item",
        (recall?.items ?? []).map((d) => d.reason),
      ),
    });
    for (const p of byName(spans, "promptctx.pack_slot")) {
      const l = a.manifest.layers.find((x) => x.id === p.attributes["promptctx.slot"]);
      expect(p.attributes["promptctx.items.count"]).toBe(l?.items.length);
      if (l?.budget.chars !== undefined)
        expect(p.attributes["promptctx.slot.budget.chars"]).toBe(l.budget.chars);
    }
  });

  it("records no prompt, query or memory text unless the caller opts in", async () => {
    const w = reactWorld();
    const texts = [QUERY.text, ...w.recall.map((c) => c.text), RULES[0]?.text as string];
    const off = recorder();
    const a = await assemble(reactInput(reactWorld(), { trace: { tracer: off.tracer } }));
    const plain = strings(off.exporter.getFinishedSpans());
    for (const t of [...texts, a.prompt, a.memoryPlan?.context as string])
      expect(
        plain.some((v) => v.includes(t)),
        t,
      ).toBe(false);

    const on = recorder();
    const b = await assemble(
      reactInput(reactWorld(), { trace: { tracer: on.tracer, includeContent: true } }),
    );
    const spans = on.exporter.getFinishedSpans();
    expect(one(spans, "promptctx.assemble").attributes["promptctx.prompt"]).toBe(b.prompt);
    expect(one(spans, "promptctx.memory_selection").attributes["promptctx.memory.context"]).toBe(
      b.memoryPlan?.context,
    );
    for (const f of byName(spans, "promptctx.source.fetch"))
      expect(f.attributes["gen_ai.retrieval.query.text"]).toBe(QUERY.text);
  });

  it("a budget failure ends the root and the global plan with status ERROR and the code", async () => {
    const { exporter, tracer } = recorder();
    await rejectsWith(
      assemble(reactInput(reactWorld(), { budgetChars: 100, trace: { tracer } })),
      PromptBudgetError,
      "prompt_budget_exceeded",
      "budgetChars",
    );
    const spans = exporter.getFinishedSpans();
    for (const name of ["promptctx.assemble", "promptctx.global_plan"]) {
      const s = one(spans, name);
      expect(s.status.code, name).toBe(SpanStatusCode.ERROR);
      expect(s.attributes).toMatchObject({
        "error.type": "prompt_budget_exceeded",
        "promptctx.error.code": "prompt_budget_exceeded",
        "promptctx.error.names": ["constraints", "planner", "tool_state"],
      });
    }
    expect(one(spans, "promptctx.global_plan").attributes["promptctx.budget.chars"]).toBe(100);
    expect(byName(spans, "promptctx.manifest")).toEqual([]);
  });

  it("source failures: the fetch span fails; the root only when the slot is required", async () => {
    const broken: ContextSource = {
      id: "broken",
      supports: (k) => k === "profile",
      fetch: () => {
        throw new Error("profile store offline");
      },
    };
    const hanging: ContextSource = {
      id: "hanging",
      supports: (k) => k === "recall_memory",
      fetch: (_slot, _query, signal) =>
        new Promise((_resolve, reject) => {
          signal.addEventListener("abort", () => reject(signal.reason));
        }),
    };
    const { exporter, tracer } = recorder();
    const a = await assemble({
      mode: "chat",
      query: QUERY,
      now: NOW,
      sources: [constraintsSource({ rules: RULES }), broken, hanging],
      timeoutMs: 20,
      trace: { tracer },
    });
    const spans = exporter.getFinishedSpans();
    const fetches = new Map(
      byName(spans, "promptctx.source.fetch").map((f) => [f.attributes["promptctx.source.id"], f]),
    );
    expect(fetches.get("broken")?.status.code).toBe(SpanStatusCode.ERROR);
    expect(fetches.get("broken")?.attributes["error.type"]).toBe("source_failed");
    expect(fetches.get("hanging")?.attributes["error.type"]).toBe("source_timeout");
    const root = one(spans, "promptctx.assemble");
    expect(root.status.code).toBe(SpanStatusCode.UNSET);
    expect(root.attributes["promptctx.failures.count"]).toBe(a.manifest.failures.length);
    expect(root.attributes["promptctx.decisions.layer.source_failed"]).toBe(1);
    expect(root.attributes["promptctx.decisions.layer.source_timeout"]).toBe(1);

    exporter.reset();
    await rejectsWith(
      assemble({
        mode: "t",
        query: QUERY,
        now: NOW,
        schemas: schemaWith([{ kind: "profile", required: true }]),
        sources: [broken],
        trace: { tracer },
      }),
      SourceError,
      "source_failed",
      "slots.profile",
    );
    const failed = exporter.getFinishedSpans();
    for (const name of ["promptctx.assemble", "promptctx.pack_layers", "promptctx.pack_slot"]) {
      const s = byName(failed, name).find((x) => x.status.code === SpanStatusCode.ERROR);
      expect(s?.attributes["error.type"], name).toBe("source_failed");
    }
  });

  it("an unexpected fault is internal_error with no message of its own", async () => {
    const { exporter, tracer } = recorder();
    const tokenCounter: TokenCounter = {
      name: "faulty",
      kind: "exact",
      newlineCut: false,
      count: () => {
        throw new TypeError("secret detail");
      },
    };
    await expect(
      assemble(reactInput(reactWorld(), { tokenCounter, trace: { tracer } })),
    ).rejects.toThrow("secret detail");
    const root = one(exporter.getFinishedSpans(), "promptctx.assemble");
    expect(root.status).toEqual({ code: SpanStatusCode.ERROR, message: "internal error" });
    expect(root.attributes["error.type"]).toBe("internal_error");
  });

  it("without a registered provider nothing is recorded and the output is byte-identical", async () => {
    const { exporter, tracer } = recorder();
    const untraced = await assemble(reactInput(reactWorld()));
    expect(exporter.getFinishedSpans()).toEqual([]);
    const traced = await assemble(reactInput(reactWorld(), { trace: { tracer } }));
    const withContent = await assemble(
      reactInput(reactWorld(), { trace: { tracer, includeContent: true, model: "gpt-4o" } }),
    );
    expect(exporter.getFinishedSpans().length).toBeGreaterThan(0);
    expect(canonical(traced)).toBe(canonical(untraced));
    expect(canonical(withContent)).toBe(canonical(untraced));
  });

  it("a registered global provider traces a workspace assembly under the promptctx scope", async () => {
    const { exporter, provider } = recorder();
    const store = await exampleStore();
    try {
      const options = { workspace: WORKSPACE, query: WS_QUERY, now: WS_NOW, store: store.path };
      const before = await assembleWorkspace({ ...options, model: "gpt-4o" });
      expect(exporter.getFinishedSpans()).toEqual([]);
      trace.setGlobalTracerProvider(provider);
      const a = await assembleWorkspace({ ...options, model: "gpt-4o" });
      expect(canonical(a)).toBe(canonical(before));
      const spans = exporter.getFinishedSpans();
      const pkg = JSON.parse(readFileSync("package.json", "utf8")) as { version: string };
      expect(TRACER_VERSION).toBe(pkg.version);
      for (const s of spans)
        expect(s.instrumentationScope).toMatchObject({ name: "promptctx", version: pkg.version });
      const root = one(spans, "promptctx.assemble");
      expect(root.attributes).toEqual({ ...expectedRoot(a), "gen_ai.request.model": "gpt-4o" });
      expect(Object.keys(root.attributes)).toContain("promptctx.decisions.memory.selected");
      expect(byName(spans, "promptctx.source.fetch")).toHaveLength(a.manifest.timings.fetch.length);
    } finally {
      store.cleanup();
    }
  });

  it("nests under the application's active span, and a source's own spans nest in its fetch", async () => {
    context.setGlobalContextManager(new AlsContextManager());
    const { exporter, tracer } = recorder();
    const inner: ContextSource = {
      id: "instrumented",
      supports: (k) => k === "profile",
      fetch: () => {
        tracer.startSpan("app.db.query").end();
        return [{ id: "p1", text: "city: Beijing", category: "identity" }];
      },
    };
    await tracer.startActiveSpan("app.request", async (span) => {
      await assemble({
        mode: "chat",
        query: QUERY,
        now: NOW,
        sources: [
          constraintsSource({ rules: RULES }),
          inner,
          staticSource("r", ["recall_memory"], []),
        ],
        trace: { tracer },
      });
      span.end();
    });
    const spans = exporter.getFinishedSpans();
    expect(parentOf(one(spans, "promptctx.assemble"))).toBe(idOf(one(spans, "app.request")));
    const fetch = byName(spans, "promptctx.source.fetch").find(
      (f) => f.attributes["promptctx.source.id"] === "instrumented",
    );
    expect(parentOf(one(spans, "app.db.query"))).toBe(fetch && idOf(fetch));
  });
});
