/**
 * The assembly pipeline: its steps import one way (no circle inside src/assemble, type-only
 * imports included; the memos and the spans sit around the steps, never inside them), and
 * the pure steps give every assembly the kept ones (layer memo, kept source parts) give.
 */
import { readdirSync, readFileSync, statSync } from "node:fs";
import { join, posix, relative } from "node:path";
import { fileURLToPath } from "node:url";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { assemble, createLayerMemo, createSchemaRegistry } from "../../src/assemble/index.js";
import { PURE_STEPS, runPipeline, sortedTimings } from "../../src/assemble/pipeline.js";
import { startAssemblySpan } from "../../src/assemble/spans.js";
import { staticSource } from "../../src/sources/index.js";
import { getTokenCounter } from "../../src/tokens/index.js";
import { comparable, hoursAgo, reactInput, reactWorld, WORDS } from "./helpers.js";

const ASSEMBLE = fileURLToPath(new URL("../../src/assemble", import.meta.url));
// Being moved to a stage of their own; they import the assembler's public index only.
const MOVING = ["request/", "chat/"];

function files(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    return statSync(path).isDirectory() ? files(path) : path.endsWith(".ts") ? [path] : [];
  });
}

/** Each file of src/assemble (posix path inside it) → the files of src/assemble it imports. */
function importGraph(): Map<string, string[]> {
  const graph = new Map<string, string[]>();
  for (const path of files(ASSEMBLE)) {
    const file = relative(ASSEMBLE, path).split("\\").join("/");
    if (MOVING.some((m) => file.startsWith(m))) continue;
    const text = readFileSync(path, "utf8");
    const targets: string[] = [];
    // Imports and re-exports, `import type` and `export type` alike.
    for (const m of text.matchAll(/\b(?:from|import)\s*\(?\s*"(\.{1,2}\/[^"]+)"/g)) {
      const target = posix.normalize(posix.join(posix.dirname(file), m[1] as string));
      if (!target.startsWith("..")) targets.push(target.replace(/\.js$/, ".ts"));
    }
    graph.set(file, targets);
  }
  return graph;
}

/** The import circles of `graph`, each as the path that closes it. */
function circles(graph: Map<string, string[]>): string[][] {
  const found: string[][] = [];
  const done = new Set<string>();
  const walk = (file: string, path: string[]) => {
    const at = path.indexOf(file);
    if (at >= 0) {
      found.push([...path.slice(at), file]);
      return;
    }
    if (done.has(file)) return;
    for (const next of graph.get(file) ?? []) walk(next, [...path, file]);
    done.add(file);
  };
  for (const file of graph.keys()) walk(file, []);
  return found;
}

describe("the assembly pipeline's imports", () => {
  const graph = importGraph();

  it("finds the files and their imports", () => {
    expect(graph.get("pipeline.ts")).toContain("fill.ts");
    expect(graph.get("memo/layer-memo.ts")).toContain("layers.ts");
  });

  it("form no circle inside src/assemble", () => {
    expect(circles(graph)).toEqual([]);
  });

  it("keep the memos around the steps: only the shell and the session import memo/", () => {
    const importers = [...graph]
      .filter(([file, to]) => !file.startsWith("memo/") && to.some((t) => t.startsWith("memo/")))
      .map(([file]) => file)
      .sort();
    expect(importers).toEqual(["assemble.ts", "index.ts", "session.ts"]);
  });

  it("wrap the steps in spans: only the pipeline and the shell import spans.ts", () => {
    const importers = [...graph]
      .filter(([, to]) => to.includes("spans.ts"))
      .map(([file]) => file)
      .sort();
    expect(importers).toEqual(["assemble.ts", "index.ts", "pipeline.ts"]);
  });
});

describe("the pure steps", () => {
  it("give the assemblies the kept steps give, turn after turn (property)", async () => {
    const op = fc.oneof(
      fc.record({ op: fc.constant("observe" as const), n: fc.nat(WORDS.length - 1) }),
      fc.record({ op: fc.constant("query" as const), n: fc.nat(WORDS.length - 1) }),
      fc.record({ op: fc.constant("call" as const), ok: fc.boolean() }),
      fc.record({ op: fc.constant("none" as const) }),
    );
    await fc.assert(
      fc.asyncProperty(fc.array(op, { minLength: 1, maxLength: 6 }), async (ops) => {
        const w = reactWorld();
        const kb = staticSource(
          "kb",
          ["kb"],
          [0, 1, 2, 0].map((l, i) => ({
            id: `k${i}`,
            text: `chunk ${i}: ${"lorem ".repeat(8)}`,
            cascadeLevel: l,
          })),
        );
        const schemas = createSchemaRegistry().register({
          ...createSchemaRegistry().resolve("react").schema,
          slots: [
            ...createSchemaRegistry().resolve("react").schema.slots,
            { kind: "kb", filter: { charBudget: 120 } },
          ],
        });
        const memo = createLayerMemo();
        const counter = getTokenCounter("o200k_base");
        let text = "why does the deploy fail";
        for (const o of ops) {
          if (o.op === "observe")
            w.buffer.add({ text: WORDS[o.n] as string, createdAt: hoursAgo(0) });
          else if (o.op === "query") text = `${WORDS[o.n]} again`;
          else if (o.op === "call")
            w.tools.recordCall({ tool: "run_tests", ok: o.ok, summary: "ran", at: hoursAgo(0.1) });
          const base = reactInput(w, { tokenCounter: counter, schemas });
          const input = {
            ...base,
            query: { ...base.query, text },
            sources: [...(base.sources as []), kb],
          };
          const kept = await assemble({ ...input, layerMemo: memo });
          const pure = await runPipeline(input, () => PURE_STEPS, startAssemblySpan(undefined));
          expect(comparable(pure)).toBe(comparable(kept));
          // The KB slot goes through the cascade: levels skipped under its budget.
          const kbLayer = kept.manifest.layers.find((l) => l.id === "kb");
          expect(kbLayer?.items.map((d) => d.reason)).toContain("level_skipped");
          expect(comparable(await assemble(input))).toBe(comparable(kept));
        }
      }),
      { numRuns: 30 },
    );
  });
});

describe("sortedTimings", () => {
  const t = (slot: string, sourceId: string) => ({ slot, sourceId, ms: 1 });

  it("orders by slot, then by source id — never by their joined text", () => {
    // Joined, "ab"+"a" sorts before "a"+"z"; by slot first, "a" comes first.
    const sorted = sortedTimings([t("ab", "a"), t("a", "z"), t("a", "b")]);
    expect(sorted.map((x) => `${x.slot}/${x.sourceId}`)).toEqual(["a/b", "a/z", "ab/a"]);
  });

  it("is a total order: any input order gives the same list, equal pairs compare equal", () => {
    const pair = fc.record({
      slot: fc.constantFrom("a", "ab", "kb", "k", ""),
      sourceId: fc.constantFrom("a", "z", "ab", "b", ""),
      ms: fc.constant(1),
    });
    fc.assert(
      fc.property(fc.array(pair, { maxLength: 12 }), (xs) => {
        const once = sortedTimings(xs);
        expect(sortedTimings([...xs].reverse())).toEqual(once);
        for (let i = 1; i < once.length; i++) {
          const a = once[i - 1] as (typeof once)[number];
          const b = once[i] as (typeof once)[number];
          expect(a.slot < b.slot || (a.slot === b.slot && a.sourceId <= b.sourceId)).toBe(true);
        }
      }),
    );
  });
});
