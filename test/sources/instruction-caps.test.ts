/**
 * Issue 11 item 9: under the total cap the nearest instruction files win. The farthest
 * files (user, then root) give way first — cut, then dropped — and each is reported; a
 * chain file and its imports stand or fall together, the importer first.
 */
import { mkdirSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import fc from "fast-check";
import { afterAll, describe, expect, it } from "vitest";
import { type InstructionChain, loadInstructionChain } from "../../src/sources/index.js";

const made: string[] = [];
afterAll(() => {
  for (const d of made) rmSync(d, { recursive: true, force: true });
});

function tempDir(): string {
  const d = realpathSync(mkdtempSync(join(tmpdir(), "promptctx-caps-")));
  made.push(d);
  return d;
}

function tree(root: string, files: Record<string, string>): void {
  for (const [rel, content] of Object.entries(files)) {
    mkdirSync(dirname(join(root, rel)), { recursive: true });
    writeFileSync(join(root, rel), content);
  }
}

const view = (c: InstructionChain) => c.parts.map((p) => [p.path, p.bytes, p.truncated]);
const capIssues = (c: InstructionChain) =>
  c.issues.filter((i) => i.kind === "total_cap").map((i) => [i.path, i.detail]);

describe("total cap: the nearest files win", () => {
  it("with the default 32 KiB cap the nearest directory is kept and the farthest cut or dropped", async () => {
    const root = tempDir();
    const home = tempDir();
    const kib12 = (c: string) => c.repeat(12 * 1024);
    tree(home, { "AGENTS.md": kib12("u") });
    tree(root, { "AGENTS.md": kib12("r"), "a/AGENTS.md": kib12("m"), "a/b/AGENTS.md": kib12("n") });
    const chain = await loadInstructionChain({
      cwd: join(root, "a/b"),
      stopDir: root,
      userFiles: [join(home, "AGENTS.md")],
    });
    expect(view(chain)).toEqual([
      ["AGENTS.md", 8 * 1024, true],
      ["a/AGENTS.md", 12 * 1024, false],
      ["a/b/AGENTS.md", 12 * 1024, false],
    ]);
    expect(chain.totalBytes).toBe(32 * 1024);
    expect(chain.text.endsWith(`${"n".repeat(100)}\n`)).toBe(true);
    expect(capIssues(chain)).toEqual([
      [join(home, "AGENTS.md"), "dropped: total cap of 32768 bytes reached by nearer files"],
      ["AGENTS.md", "kept 8192 of 12288 bytes (maxTotalBytes 32768; nearer files first)"],
    ]);
  });

  it("a file and its imports go together, the importer first; files in one directory: later names win", async () => {
    const root = tempDir();
    tree(root, {
      "AGENTS.md": "far 0123456789\n", // 15
      "a/AGENTS.md": "near @x.md\n", // 11
      "a/x.md": "imported by near\n", // 17
      "a/CLAUDE.md": "nearest\n", // 8
    });
    const chain = await loadInstructionChain({
      cwd: join(root, "a"),
      stopDir: root,
      maxTotalBytes: 30,
    });
    expect(chain.parts.map((p) => [p.path, p.content])).toEqual([
      ["a/AGENTS.md", "near @x.md\n"],
      ["a/x.md", "imported by"],
      ["a/CLAUDE.md", "nearest\n"],
    ]);
    expect(capIssues(chain).map(([p]) => p)).toEqual(["AGENTS.md", "a/x.md"]);
  });

  it("property: kept parts are a suffix of the chain (at most one cut), within the cap", async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.integer({ min: 0, max: 40 }), { minLength: 1, maxLength: 5 }),
        fc.integer({ min: 0, max: 120 }),
        async (sizes, cap) => {
          const root = tempDir();
          const files: Record<string, string> = {};
          sizes.forEach((n, i) => {
            const dirs = sizes.slice(0, i).map((_, k) => `d${k}`);
            files[[...dirs, "AGENTS.md"].join("/")] = String(i % 10).repeat(n);
          });
          tree(root, files);
          const deepest = sizes.slice(0, -1).map((_, k) => `d${k}`);
          const chain = await loadInstructionChain({
            cwd: join(root, ...deepest),
            stopDir: root,
            maxTotalBytes: cap,
          });
          const all = sizes.map((n, i) => ({ i, n }));
          const kept = chain.parts.map((p) => Number(p.path.split("/").length - 1));
          // Kept parts are the last k files of the chain.
          expect(kept).toEqual(all.slice(all.length - kept.length).map((f) => f.i));
          // Only the farthest kept part may be cut; every nearer part is whole.
          for (const p of chain.parts.slice(1)) expect(p.truncated).toBe(false);
          expect(chain.totalBytes).toBeLessThanOrEqual(cap);
          // Nothing was dropped that would have fit whole.
          const total = sizes.reduce((a, b) => a + b, 0);
          if (total <= cap) expect(chain.totalBytes).toBe(total);
          else expect(chain.totalBytes).toBe(cap);
        },
      ),
      { numRuns: 40, seed: 9 },
    );
  });
});
