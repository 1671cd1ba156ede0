/**
 * Every TypeScript block in README.md and docs/ is a program: it is type-checked against the
 * built package (imported by its own name, "promptctx") and run with Node. A block that is
 * not a whole program must say so, with a reason, in its fence: ```ts fragment: why.
 */
import { spawnSync } from "node:child_process";
import { mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join, relative } from "node:path";
import { fileURLToPath } from "node:url";
import ts from "typescript";
import { describe, expect, it } from "vitest";

const ROOT = fileURLToPath(new URL("../..", import.meta.url));
// Inside the package, so that `import … from "promptctx"` resolves to the build by self-reference.
const OUT = join(ROOT, ".tmp", "doc-blocks");

interface Block {
  file: string;
  line: number;
  info: string;
  code: string;
}

function markdownFiles(): string[] {
  const docs = readdirSync(join(ROOT, "docs"), { recursive: true, encoding: "utf8" })
    .filter((name) => name.endsWith(".md"))
    .map((name) => join("docs", name));
  return ["README.md", ...docs.sort()];
}

/** Fenced blocks whose info string starts with ts or typescript. */
function tsBlocks(file: string): Block[] {
  const lines = readFileSync(join(ROOT, file), "utf8").split("\n");
  const blocks: Block[] = [];
  for (let i = 0; i < lines.length; i++) {
    const open = /^```(ts|typescript)\b(.*)$/.exec(lines[i] as string);
    if (!open) continue;
    const start = i;
    const body: string[] = [];
    for (i++; i < lines.length && !(lines[i] as string).startsWith("```"); i++) {
      body.push(lines[i] as string);
    }
    blocks.push({ file, line: start + 1, info: (open[2] as string).trim(), code: body.join("\n") });
  }
  return blocks;
}

const blocks = markdownFiles().flatMap(tsBlocks);
const fragments = blocks.filter((b) => b.info.startsWith("fragment"));
const programs = blocks.filter((b) => !b.info.startsWith("fragment"));
const label = (b: Block) => `${b.file}:${b.line}`;
const fileOf = (b: Block) => join(OUT, `${b.file.replace(/[/.]/g, "_")}_${b.line}.ts`);

describe("code blocks in README.md and docs/", () => {
  it("finds the blocks", () => {
    expect(programs.length).toBeGreaterThan(3);
  });

  it("a fragment gives its reason", () => {
    const bare = fragments.filter((b) => !/^fragment:\s*\S.{8,}/.test(b.info)).map(label);
    expect(bare).toEqual([]);
  });

  it("every program type-checks against the built package", () => {
    rmSync(OUT, { recursive: true, force: true });
    mkdirSync(OUT, { recursive: true });
    for (const b of programs) writeFileSync(fileOf(b), `${b.code}\nexport {};\n`);
    const program = ts.createProgram(programs.map(fileOf), {
      target: ts.ScriptTarget.ES2022,
      module: ts.ModuleKind.NodeNext,
      moduleResolution: ts.ModuleResolutionKind.NodeNext,
      lib: ["lib.es2023.d.ts"],
      types: ["node"],
      strict: true,
      noEmit: true,
      skipLibCheck: true,
    });
    const problems = ts.getPreEmitDiagnostics(program).map((d) => {
      const where = d.file ? relative(OUT, d.file.fileName) : "";
      const pos =
        d.file && d.start !== undefined ? d.file.getLineAndCharacterOfPosition(d.start) : null;
      return `${where}:${pos ? pos.line + 1 : 0}: ${ts.flattenDiagnosticMessageText(d.messageText, "\n")}`;
    });
    expect(problems).toEqual([]);
  });

  it.each(programs.map((b) => [label(b), b] as const))("%s runs", (_name, b) => {
    mkdirSync(OUT, { recursive: true });
    const js = ts.transpileModule(b.code, {
      compilerOptions: { target: ts.ScriptTarget.ES2022, module: ts.ModuleKind.ESNext },
    }).outputText;
    const path = fileOf(b).replace(/\.ts$/, ".mjs");
    writeFileSync(path, js);
    const run = spawnSync(process.execPath, [path], {
      cwd: ROOT,
      encoding: "utf8",
      timeout: 60_000,
    });
    expect({ status: run.status, stderr: run.stderr }).toEqual({ status: 0, stderr: "" });
  });
});
