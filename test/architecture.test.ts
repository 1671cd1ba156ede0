import { readdirSync, readFileSync, statSync } from "node:fs";
import { join, posix, relative } from "node:path";
import { fileURLToPath } from "node:url";
import ts from "typescript";
import { describe, expect, it } from "vitest";

const SRC = fileURLToPath(new URL("../src", import.meta.url));

// The pipeline, lowest first: a stage may import only stages to its left.
const LAYERS = [
  "errors",
  "files",
  "text",
  "tokens",
  "embed",
  "memory",
  "plan",
  "cache",
  "conversation",
  "store",
  "sources",
  "render",
  "trace",
  "assemble",
  "agent",
  "workspace",
  "server",
  "cli",
];

/**
 * Modules a stage offers besides its index.ts, so an edge loads only what it runs (the
 * CLI's `assemble` starts without the chat loop, the stores' dialects or the providers):
 * each with the reason. Any other import into another stage names an index.ts (the
 * stage's, or one of its sub-folders').
 */
const LIGHT_ENTRIES: Readonly<Record<string, string>> = {
  "assemble/assemble.ts": "the assembler without its session, inline and request layers",
  "assemble/schema.ts": "the schema registry without the assembler",
  "assemble/session.ts": "the working modes a workspace config validates, without the assembler",
  "render/builtin.ts": "the slot renderers without the provider request shapes",
  "trace/otel.ts": "the spans without the wire contract and the draft guard",
  "sources/validated.ts": "the marks a validated source leaves, read by the assembler (not public)",
  "store/url.ts": "what a store URL names, without loading a dialect (SQLite, PostgreSQL)",
  "workspace/record/assemble-runner.ts": "one recorded assembly, without the replay runners",
  "workspace/record/recorder.ts": "the --record writer, loaded only for --record",
};

const MAX_FILE_LINES = 500;
const MAX_FUNCTION_LINES = 80;

function files(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    return statSync(path).isDirectory() ? files(path) : path.endsWith(".ts") ? [path] : [];
  });
}

const sources = files(SRC).map((path) => ({
  path: relative(SRC, path),
  stage: relative(SRC, path).split("/")[0] as string,
  text: readFileSync(path, "utf8"),
}));

/** `spec` (a relative import in `from`) as a path under src/, or null when it leaves src/. */
function resolveImport(from: string, spec: string, known: ReadonlySet<string>): string | null {
  const joined = posix.normalize(posix.join(posix.dirname(from), spec));
  if (joined.startsWith("..")) return null;
  const file = joined.replace(/\.js$/, ".ts");
  if (known.has(file)) return file;
  const index = posix.join(joined.replace(/\.js$/, ""), "index.ts");
  return known.has(index) ? index : null;
}

/**
 * The file-level import graph of src/: every relative import (static, re-export,
 * type-only, side-effect and dynamic import()) as an edge between two files.
 */
function importGraph(): Map<string, string[]> {
  const known = new Set(sources.map((s) => s.path));
  const graph = new Map<string, string[]>();
  for (const s of sources) {
    const targets = new Set<string>();
    for (const m of s.text.matchAll(/(?:from\s+|import\s*\(\s*|import\s+)"(\.{1,2}\/[^"]+)"/g)) {
      const target = resolveImport(s.path, m[1] as string, known);
      if (target !== null) targets.add(target);
    }
    graph.set(s.path, [...targets].sort());
  }
  return graph;
}

/** The strongly connected components of more than one file (or a file importing itself). */
function importCycles(graph: ReadonlyMap<string, readonly string[]>): string[][] {
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const cycles: string[][] = [];
  const connect = (v: string): void => {
    index.set(v, index.size);
    low.set(v, index.get(v) as number);
    stack.push(v);
    onStack.add(v);
    for (const w of graph.get(v) ?? []) {
      if (!index.has(w)) {
        connect(w);
        low.set(v, Math.min(low.get(v) as number, low.get(w) as number));
      } else if (onStack.has(w)) {
        low.set(v, Math.min(low.get(v) as number, index.get(w) as number));
      }
    }
    if (low.get(v) !== index.get(v)) return;
    const component: string[] = [];
    let w: string;
    do {
      w = stack.pop() as string;
      onStack.delete(w);
      component.push(w);
    } while (w !== v);
    if (component.length > 1 || graph.get(v)?.includes(v)) cycles.push(component.sort());
  };
  for (const v of graph.keys()) if (!index.has(v)) connect(v);
  return cycles;
}

describe("architecture", () => {
  it("no file-level import circle anywhere in src/", () => {
    const cycles = importCycles(importGraph()).map((files) => `circle among: ${files.join(", ")}`);
    expect(cycles).toEqual([]);
  });

  it("the circle finder finds a circle through any kind of import", () => {
    const graph = new Map([
      ["a.ts", ["b.ts"]],
      ["b.ts", ["c.ts"]],
      ["c.ts", ["a.ts"]],
      ["d.ts", ["a.ts", "d.ts"]],
      ["e.ts", []],
    ]);
    expect(importCycles(graph)).toEqual([["a.ts", "b.ts", "c.ts"], ["d.ts"]]);
    const known = new Set(["x/index.ts", "x/y.ts", "z.ts"]);
    expect(resolveImport("x/y.ts", "./index.js", known)).toBe("x/index.ts");
    expect(resolveImport("x/y.ts", "../z.js", known)).toBe("z.ts");
    expect(resolveImport("z.ts", "./x/index.js", known)).toBe("x/index.ts");
    expect(resolveImport("z.ts", "../outside.js", known)).toBeNull();
  });

  it("every stage folder is a known layer", () => {
    const stages = new Set(sources.filter((s) => s.path.includes("/")).map((s) => s.stage));
    for (const stage of stages) expect(LAYERS).toContain(stage);
  });

  it("data flows one way: no stage imports a higher one", () => {
    const violations: string[] = [];
    for (const s of sources.filter((f) => f.path.includes("/"))) {
      const own = LAYERS.indexOf(s.stage);
      // Static imports, re-exports and dynamic import() alike, at any folder depth.
      for (const m of s.text.matchAll(/(?:from\s+|import\s*\(\s*)"(\.{1,2}\/[^"]+)"/g)) {
        const target = posix.join(posix.dirname(s.path), m[1] as string).split("/")[0] as string;
        if (target.startsWith("..")) violations.push(`${s.path} imports outside src: ${m[1]}`);
        else if (LAYERS.indexOf(target) > own) violations.push(`${s.path} imports ${target}`);
      }
    }
    expect(violations).toEqual([]);
  });

  it("another stage is entered through an index.ts, or a light entry it declares", () => {
    const known = new Set(sources.map((f) => f.path));
    const violations: string[] = [];
    const used = new Set<string>();
    for (const s of sources.filter((f) => f.path.includes("/"))) {
      for (const m of s.text.matchAll(/(?:from\s+|import\s*\(\s*|import\s+)"(\.{1,2}\/[^"]+)"/g)) {
        const target = resolveImport(s.path, m[1] as string, known);
        if (target === null || target.split("/")[0] === s.stage) continue;
        if (target.endsWith("/index.ts")) continue;
        if (target in LIGHT_ENTRIES) used.add(target);
        else violations.push(`${s.path} reaches past ${target.split("/")[0]}'s index: ${m[1]}`);
      }
    }
    expect(violations).toEqual([]);
    // A light entry no other stage uses any more is not one.
    expect(Object.keys(LIGHT_ENTRIES).filter((e) => !used.has(e))).toEqual([]);
  });

  it("the index rule sees a reach past an index, and lets an index through", () => {
    const known = new Set(["a/index.ts", "a/deep.ts", "a/sub/index.ts", "b/x.ts"]);
    expect(resolveImport("b/x.ts", "../a/deep.js", known)).toBe("a/deep.ts");
    expect(resolveImport("b/x.ts", "../a/sub/index.js", known)).toBe("a/sub/index.ts");
    expect("a/deep.ts" in LIGHT_ENTRIES).toBe(false);
  });

  it("stages never read the clock, randomness or locale ordering implicitly", () => {
    const edges = new Set(["cli", "server"]);
    const hits: string[] = [];
    for (const s of sources.filter((f) => !edges.has(f.stage))) {
      for (const pattern of [
        /\.localeCompare\(/,
        /Math\.random\(/,
        /Date\.now\(/,
        /new Date\(\)/,
        /process\.env/,
        /process\.hrtime/,
      ]) {
        if (pattern.test(s.text)) hits.push(`${s.path}: ${pattern.source}`);
      }
      // The wall clock feeds the manifest's `timings` only: it may be read solely as the
      // default of an injected `clock` parameter, never inline in a stage's logic.
      for (const line of s.text.split("\n")) {
        if (/performance\.now\(\)/.test(line) && !/\bclock\b.*\?\?/.test(line)) {
          hits.push(`${s.path}: performance.now outside the timings clock: ${line.trim()}`);
        }
      }
    }
    expect(hits).toEqual([]);
  });

  it("the timings clock reaches only the `timings` field", () => {
    // Whatever reads the injected clock must store the reading under `timings`.
    const hits: string[] = [];
    for (const s of sources.filter((f) => f.stage !== "cli" && f.stage !== "server")) {
      for (const m of s.text.matchAll(/\bclock\(\)/g)) {
        const around = s.text.slice(Math.max(0, (m.index ?? 0) - 400), (m.index ?? 0) + 400);
        if (!/timings|Ms\b|elapsed/i.test(around))
          hits.push(`${s.path}: clock() read far from timings`);
      }
    }
    expect(hits).toEqual([]);
  });

  it("no file in src/ is over 500 lines (the generated case-fold table excepted)", () => {
    const long = sources
      .filter((s) => s.path !== "text/casefold-table.ts")
      .map((s) => ({ path: s.path, lines: s.text.split("\n").length }))
      .filter((f) => f.lines > MAX_FILE_LINES)
      .map((f) => `${f.path}: ${f.lines} lines`);
    expect(long).toEqual([]);
  });

  it("no function in src/ is over 80 lines (nested closures count toward their parent)", () => {
    const long: string[] = [];
    for (const s of sources.filter((f) => f.path !== "text/casefold-table.ts")) {
      const file = ts.createSourceFile(s.path, s.text, ts.ScriptTarget.Latest, true);
      const visit = (node: ts.Node): void => {
        if (ts.isFunctionLike(node) && "body" in node && node.body !== undefined) {
          const start = file.getLineAndCharacterOfPosition(node.getStart(file)).line;
          const end = file.getLineAndCharacterOfPosition(node.end).line;
          if (end - start + 1 > MAX_FUNCTION_LINES) {
            const name = node.name?.getText(file) ?? "<anonymous>";
            long.push(`${s.path}:${start + 1} ${name}: ${end - start + 1} lines`);
          }
        }
        ts.forEachChild(node, visit);
      };
      visit(file);
    }
    expect(long).toEqual([]);
  });

  it("each stage's index.ts opens with a comment saying what the stage does and may import", () => {
    const missing: string[] = [];
    for (const stage of new Set(sources.filter((s) => s.path.includes("/")).map((s) => s.stage))) {
      const index = sources.find((s) => s.path === `${stage}/index.ts`);
      if (index === undefined) {
        missing.push(`${stage}: no index.ts`);
        continue;
      }
      const head = /^\/\*\*([\s\S]*?)\*\//.exec(index.text)?.[1] ?? "";
      if (!/\bimports?\b/i.test(head))
        missing.push(`${stage}/index.ts: header says nothing of imports`);
    }
    expect(missing).toEqual([]);
  });

  it("no explicit any", () => {
    const hits = sources.filter((s) => /:\s*any\b|as any\b|<any>/.test(s.text)).map((s) => s.path);
    expect(hits).toEqual([]);
  });
});
