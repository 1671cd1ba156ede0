/**
 * The package's entry as a user's project reaches it: by its own name (self-reference through
 * `exports`), from ES modules and from CommonJS (`require()` of the ES build, Node ≥ 20.19).
 */
import { spawnSync } from "node:child_process";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";

const ROOT = fileURLToPath(new URL("../..", import.meta.url));

function run(args: string[]): { status: number | null; stdout: string; stderr: string } {
  const r = spawnSync(process.execPath, args, { cwd: ROOT, encoding: "utf8" });
  return { status: r.status, stdout: r.stdout, stderr: r.stderr };
}

const [major, minor] = process.versions.node.split(".").map(Number) as [number, number];
const requireEsm = major > 20 || (major === 20 && minor >= 19);

describe("package entry", () => {
  it("import by name gives the library", () => {
    const r = run([
      "--input-type=module",
      "-e",
      'const m = await import("promptctx"); console.log(typeof m.assembleRequest, typeof m.getTokenCounter);',
    ]);
    expect(r.stderr).toBe("");
    expect(r.stdout.trim()).toBe("function function");
  });

  it.runIf(requireEsm)("require() by name gives the same exports (the default condition)", () => {
    const r = run([
      "--input-type=commonjs",
      "-e",
      'const m = require("promptctx"); console.log(typeof m.assembleRequest, typeof m.getTokenCounter);',
    ]);
    expect(r.status).toBe(0);
    expect(r.stdout.trim()).toBe("function function");
  });
});
