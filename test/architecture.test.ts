import { readdirSync, readFileSync, statSync } from "node:fs";
import { join, relative } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";

const SRC = fileURLToPath(new URL("../src", import.meta.url));

// The pipeline, lowest first: a stage may import only stages to its left.
const LAYERS = [
  "errors",
  "text",
  "tokens",
  "memory",
  "plan",
  "cache",
  "store",
  "sources",
  "render",
  "trace",
  "assemble",
  "workspace",
  "server",
  "cli",
];

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

describe("architecture", () => {
  it("every stage folder is a known layer", () => {
    const stages = new Set(sources.filter((s) => s.path.includes("/")).map((s) => s.stage));
    for (const stage of stages) expect(LAYERS).toContain(stage);
  });

  it("data flows one way: no stage imports a higher one", () => {
    const violations: string[] = [];
    for (const s of sources.filter((f) => f.path.includes("/"))) {
      const own = LAYERS.indexOf(s.stage);
      for (const m of s.text.matchAll(/from "\.\.\/([a-z]+)\//g)) {
        const target = m[1] as string;
        if (LAYERS.indexOf(target) > own) violations.push(`${s.path} imports ${target}`);
      }
    }
    expect(violations).toEqual([]);
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
      ]) {
        if (pattern.test(s.text)) hits.push(`${s.path}: ${pattern.source}`);
      }
    }
    expect(hits).toEqual([]);
  });

  it("no explicit any", () => {
    const hits = sources.filter((s) => /:\s*any\b|as any\b|<any>/.test(s.text)).map((s) => s.path);
    expect(hits).toEqual([]);
  });
});
