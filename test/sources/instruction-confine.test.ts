/**
 * Issue 11 item 8: instruction files and their `@imports` are read only inside the
 * workspace root (the walk's stop directory) and the user-level instruction directories
 * the caller configured, checked lexically before any file is touched and on the real path
 * (symlinks resolved) after. Anything else is skipped with a `path_refused` issue, which
 * reaches the manifest (`manifest.instructions`) and never the prompt — through the library,
 * the workspace assembly and HTTP.
 */
import { mkdirSync, mkdtempSync, realpathSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import type { FastifyInstance } from "fastify";
import { afterAll, describe, expect, it } from "vitest";
import { buildServer } from "../../src/server/index.js";
import { type InstructionChain, loadInstructionChain } from "../../src/sources/index.js";
import { assembleWorkspace } from "../../src/workspace/index.js";

const made: string[] = [];
afterAll(() => {
  for (const d of made) rmSync(d, { recursive: true, force: true });
});

const SECRET = "TOP-SECRET-SERVER-FILE";

/** `outer/` holds a secret beside the workspace `outer/ws/`. */
function layout(files: Record<string, string>): { outer: string; ws: string } {
  const outer = realpathSync(mkdtempSync(join(tmpdir(), "promptctx-confine-")));
  made.push(outer);
  const ws = join(outer, "ws");
  mkdirSync(ws);
  writeFileSync(join(outer, "secret.txt"), `${SECRET}\n`);
  mkdirSync(join(outer, "private"));
  writeFileSync(join(outer, "private/key.md"), `${SECRET} key\n`);
  for (const [rel, content] of Object.entries(files)) {
    mkdirSync(dirname(join(ws, rel)), { recursive: true });
    writeFileSync(join(ws, rel), content);
  }
  return { outer, ws };
}

const outside = (c: InstructionChain) =>
  c.issues.filter((i) => i.kind === "path_refused").map((i) => i.path);
const text = (c: InstructionChain) => c.parts.map((p) => p.content).join("");

describe("instruction imports stay inside the allowed roots", () => {
  it("relative escapes are skipped and reported, without touching the file", async () => {
    const { ws } = layout({
      "AGENTS.md": "rules\n@../secret.txt\n@../../../../../../../../etc/os-release\n",
    });
    const chain = await loadInstructionChain({ cwd: ws, stopDir: ws });
    expect(chain.parts.map((p) => p.path)).toEqual(["AGENTS.md"]);
    expect(outside(chain)).toEqual([join(dirname(ws), "secret.txt"), "/etc/os-release"]);
    expect(chain.issues.every((i) => i.kind === "path_refused")).toBe(true);
    expect(chain.issues[0]?.detail).toBe(
      "missing, or outside the allowed roots; not read (from AGENTS.md)",
    );
    expect(text(chain)).not.toContain(SECRET);
  });

  it("absolute paths outside are skipped; absolute paths inside are fine", async () => {
    const { outer, ws } = layout({ "docs/style.md": "style\n" });
    writeFileSync(
      join(ws, "AGENTS.md"),
      `@${join(outer, "secret.txt")}\n@${join(ws, "docs/style.md")}\n`,
    );
    const chain = await loadInstructionChain({ cwd: ws, stopDir: ws });
    expect(chain.parts.map((p) => p.path)).toEqual(["AGENTS.md", "docs/style.md"]);
    expect(outside(chain)).toEqual([join(outer, "secret.txt")]);
  });

  it("symlinks are resolved before the check: a link (file or directory) out is skipped", async () => {
    const { outer, ws } = layout({
      "AGENTS.md": "@link.md\n@shared/key.md\n@ok.md\n",
      "real.md": "ok\n",
    });
    symlinkSync(join(outer, "secret.txt"), join(ws, "link.md"));
    symlinkSync(join(outer, "private"), join(ws, "shared"));
    symlinkSync(join(ws, "real.md"), join(ws, "ok.md")); // a link that stays inside: fine
    const chain = await loadInstructionChain({ cwd: ws, stopDir: ws });
    expect(chain.parts.map((p) => p.path)).toEqual(["AGENTS.md", "ok.md"]);
    expect(outside(chain)).toEqual(["link.md", "shared/key.md"]);
    expect(chain.issues[0]?.detail).toBe(chain.issues[1]?.detail);
    expect(text(chain)).not.toContain(SECRET);
  });

  it("a chain file that is a link out of the workspace is skipped too", async () => {
    const { outer, ws } = layout({ "CLAUDE.md": "claude\n" });
    symlinkSync(join(outer, "secret.txt"), join(ws, "AGENTS.md"));
    const chain = await loadInstructionChain({ cwd: ws, stopDir: ws });
    expect(chain.parts.map((p) => p.path)).toEqual(["CLAUDE.md"]);
    expect(outside(chain)).toEqual(["AGENTS.md"]);
  });

  it("legit imports inside the workspace and inside a configured user directory load", async () => {
    const { outer, ws } = layout({
      "AGENTS.md": "root\n@docs/style.md\n",
      "docs/style.md": "style @../CLAUDE.md\n",
      "CLAUDE.md": "claude\n",
    });
    const home = join(outer, "home");
    mkdirSync(join(home, ".config/promptctx"), { recursive: true });
    writeFileSync(
      join(home, ".config/promptctx/AGENTS.md"),
      "user\n@rules.md\n@~/.config/promptctx/more.md\n@~/notes.md\n",
    );
    writeFileSync(join(home, ".config/promptctx/rules.md"), "user rules\n");
    writeFileSync(join(home, ".config/promptctx/more.md"), "more\n");
    writeFileSync(join(home, "notes.md"), `${SECRET} notes\n`);
    const chain = await loadInstructionChain({
      cwd: ws,
      stopDir: ws,
      home,
      userFiles: [join(home, ".config/promptctx/AGENTS.md")],
    });
    expect(chain.parts.map((p) => p.path)).toEqual([
      join(home, ".config/promptctx/AGENTS.md"),
      join(home, ".config/promptctx/rules.md"),
      join(home, ".config/promptctx/more.md"),
      "AGENTS.md",
      "docs/style.md",
      "CLAUDE.md",
    ]);
    // The home directory itself is not an instruction directory.
    expect(outside(chain)).toEqual([join(home, "notes.md")]);
    expect(text(chain)).not.toContain(SECRET);
  });
});

describe("the manifest reports the skipped files; the prompt never holds them", () => {
  const NOW = "2026-11-30T09:00:00Z";
  const config = JSON.stringify({ user: "u1" });

  it("workspace assembly", async () => {
    const { ws } = layout({
      "AGENTS.md": "Be kind.\n@../secret.txt\n",
      ".promptctx/config.json": config,
    });
    const out = await assembleWorkspace({ workspace: ws, query: "hello", now: NOW });
    expect(out.prompt).toContain("Be kind.");
    expect(out.prompt).not.toContain(SECRET);
    expect(out.manifest.instructions?.issues).toEqual([
      expect.objectContaining({ kind: "path_refused", path: join(dirname(ws), "secret.txt") }),
    ]);
  });

  it("POST /v1/assemble", async () => {
    const { outer, ws } = layout({
      "AGENTS.md": "Be kind.\n@../secret.txt\n",
      ".promptctx/config.json": config,
    });
    symlinkSync(join(outer, "secret.txt"), join(ws, "CLAUDE.md"));
    const app: FastifyInstance = await buildServer({ workspace: ws, logger: false });
    try {
      await app.listen({ port: 0, host: "127.0.0.1" });
      const address = app.server.address();
      if (address === null || typeof address === "string") throw new Error("no port");
      const res = await fetch(`http://127.0.0.1:${address.port}/v1/assemble`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ query: "hello", now: NOW }),
      });
      expect(res.status).toBe(200);
      const body = (await res.json()) as {
        prompt: string;
        manifest: { instructions: { issues: Array<{ kind: string; path: string }> } };
      };
      expect(body.prompt).toContain("Be kind.");
      expect(body.prompt).not.toContain(SECRET);
      expect(body.manifest.instructions.issues.map((i) => [i.kind, i.path])).toEqual([
        ["path_refused", join(outer, "secret.txt")],
        ["path_refused", "CLAUDE.md"],
      ]);
    } finally {
      await app.close();
    }
  });
});
