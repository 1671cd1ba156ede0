/**
 * A hostile workspace, tried through every surface: links of every kind (file, directory,
 * chain, relative, absolute, dangling) planted for every source — instruction files,
 * imports, user files, skills (SKILL.md, skill directories, a skills root), KB files — and
 * a recording naming files outside its workspace. Nothing outside reaches a prompt, a
 * manifest, an HTTP answer, a recording, a CLI output or an error message; and every
 * answer is byte-identical whether the outside targets exist or not (no oracle).
 */
import { spawn } from "node:child_process";
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  realpathSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { toErrorObject } from "../../src/errors/index.js";
import { buildServer } from "../../src/server/index.js";
import { loadInstructionChain } from "../../src/sources/index.js";
import { openStore } from "../../src/store/index.js";
import {
  assembleWorkspace,
  createRecorder,
  parseRecording,
  replayRecording,
} from "../../src/workspace/index.js";
import { runCli } from "../cli/run-cli.js";

const SECRET = "TOP-SECRET-OUTSIDE";
const NOW = "2026-11-30T09:00:00Z";
const made: string[] = [];
afterAll(() => {
  for (const d of made) rmSync(d, { recursive: true, force: true });
});

const skill = (name: string, body: string) =>
  `---\nname: ${name}\ndescription: ${body}\ntriggers:\n  keywords: [hello]\n---\n${body}\n`;
const chunk = (content: string) =>
  `${JSON.stringify({ docId: "d", chunkId: "c", content, score: 0.9, isGolden: true, source: "s", kind: "golden" })}\n`;

/**
 * Targets outside the workspace, reached only through links (their names never appear in
 * the workspace's own text), and one an import names as written.
 */
function plantSecrets(outer: string): void {
  writeFileSync(join(outer, "target-file.md"), `${SECRET} file\n`);
  writeFileSync(join(outer, "target-passwd"), `root:x:0:0:${SECRET}:/root:/bin/sh\n`);
  mkdirSync(join(outer, "target-dir"), { recursive: true });
  writeFileSync(join(outer, "target-dir/AGENTS.md"), `${SECRET} dir\n`);
  mkdirSync(join(outer, "target-skill"), { recursive: true });
  writeFileSync(join(outer, "target-skill/SKILL.md"), skill("evil-dir", SECRET));
  mkdirSync(join(outer, "target-root/rooted"), { recursive: true });
  writeFileSync(join(outer, "target-root/rooted/SKILL.md"), skill("rooted", SECRET));
  writeFileSync(join(outer, "target-chunks.jsonl"), chunk(SECRET));
  writeFileSync(join(outer, "target-broken.jsonl"), "{ not json");
  writeFileSync(join(outer, "written-outside.md"), `${SECRET} written\n`);
}

function removeSecrets(outer: string): void {
  for (const name of [
    "target-file.md",
    "target-passwd",
    "target-dir",
    "target-skill",
    "target-root",
    "target-chunks.jsonl",
    "target-broken.jsonl",
    "written-outside.md",
  ]) {
    rmSync(join(outer, name), { recursive: true, force: true });
  }
}

/** `outer/ws`: a workspace whose every source holds a link out. */
function hostile(): { outer: string; ws: string } {
  const outer = realpathSync(mkdtempSync(join(tmpdir(), "promptctx-hostile-")));
  made.push(outer);
  const ws = join(outer, "ws");
  const put = (rel: string, text: string) => {
    mkdirSync(dirname(join(ws, rel)), { recursive: true });
    writeFileSync(join(ws, rel), text);
  };
  const link = (target: string, rel: string) => {
    mkdirSync(dirname(join(ws, rel)), { recursive: true });
    symlinkSync(target, join(ws, rel));
  };
  put(".promptctx/config.json", JSON.stringify({ user: "u1" }));
  put(
    "AGENTS.md",
    "Be kind.\n@abs.md\n@rel.md\n@chain.md\n@dir/AGENTS.md\n@dangling.md\n@../written-outside.md\n@inside.md\n",
  );
  put("real-inside.md", "Inside and fine.\n");
  link("real-inside.md", "inside.md");
  link(join(outer, "target-file.md"), "abs.md");
  link("../target-file.md", "rel.md");
  link("chain2.md", "chain.md");
  link("../target-passwd", "chain2.md");
  link(join(outer, "target-dir"), "dir");
  link(join(outer, "target-gone.md"), "dangling.md");
  link("../target-passwd", "CLAUDE.md");
  put("user/AGENTS.md", "User rules.\n@../../written-outside.md\n");
  // Skills: SKILL.md linked out (to a file that would not parse), a skill directory linked
  // out, a dangling SKILL.md, and a whole skills root linked out.
  link(join(outer, "target-passwd"), ".promptctx/skills/evil/SKILL.md");
  link(join(outer, "target-skill"), ".promptctx/skills/evil-dir");
  link(join(outer, "target-gone.md"), ".promptctx/skills/gone/SKILL.md");
  put(".promptctx/skills/good/SKILL.md", skill("good", "A good skill."));
  link(join(outer, "target-root"), ".agents/skills");
  // KB: a file linked out (valid chunks), one linked out to a file that would not parse,
  // a dangling one, and a good one.
  link(join(outer, "target-chunks.jsonl"), ".promptctx/kb/evil.jsonl");
  link("../../../target-broken.jsonl", ".promptctx/kb/broken.jsonl");
  link(join(outer, "target-gone.jsonl"), ".promptctx/kb/gone.jsonl");
  put(".promptctx/kb/good.jsonl", chunk("A good chunk."));
  plantSecrets(outer);
  return { outer, ws };
}

/** What must never be in any answer: the secret, and any name reached only through a link. */
function expectClean(text: string): void {
  expect(text).not.toContain(SECRET);
  expect(text).not.toMatch(/target-|root:x:0/);
}

/** An answer without its wall-clock timings (they differ from run to run). */
function stable(value: unknown): string {
  return JSON.stringify(value, (k, v) => (k === "timings" ? undefined : v));
}

describe("a hostile workspace", () => {
  it("library: the instruction chain, with a user file, reads only inside", async () => {
    const { outer, ws } = hostile();
    const load = () =>
      loadInstructionChain({ cwd: ws, stopDir: ws, userFiles: [join(ws, "user/AGENTS.md")] });
    const present = await load();
    expect(present.parts.map((p) => p.path)).toEqual(["user/AGENTS.md", "AGENTS.md", "inside.md"]);
    expect(new Set(present.issues.map((i) => i.kind))).toEqual(new Set(["path_refused"]));
    expect(new Set(present.issues.map((i) => i.detail.replace(/ \(from .*\)$/, "")))).toEqual(
      new Set(["missing, or outside the allowed roots; not read"]),
    );
    expectClean(JSON.stringify(present));
    removeSecrets(outer);
    expect(JSON.stringify(await load())).toBe(JSON.stringify(present));
  });

  it("library: a workspace assembly (prompt, manifest, report) is the same with or without the targets", async () => {
    const { outer, ws } = hostile();
    const run = async () => {
      const out = await assembleWorkspace({ workspace: ws, query: "hello", now: NOW });
      return stable(out);
    };
    const present = await run();
    expect(present).toContain("Be kind.");
    expect(present).toContain("A good skill.");
    expect(present).toContain("A good chunk.");
    expect(present).toContain("Inside and fine.");
    expect(present).toContain("path_refused");
    expectClean(present);
    removeSecrets(outer);
    expect(await run()).toBe(present);
  });

  it("HTTP: POST /v1/assemble on a real server, and its recording", async () => {
    const { outer, ws } = hostile();
    const recording = join(outer, "rec.jsonl");
    const app = await buildServer({
      workspace: ws,
      store: null,
      logger: false,
      recorder: createRecorder(recording, { at: () => NOW }),
    });
    try {
      await app.listen({ port: 0, host: "127.0.0.1" });
      const base = `http://127.0.0.1:${(app.server.address() as { port: number }).port}`;
      const ask = async (body: Record<string, unknown>) => {
        const res = await fetch(`${base}/v1/assemble`, {
          method: "POST",
          headers: { "content-type": "application/json" },
          body: JSON.stringify(body),
        });
        return { status: res.status, text: stable(await res.json()) };
      };
      const present = await ask({ query: "hello", now: NOW });
      expect(present.status).toBe(200);
      expectClean(present.text);
      // A workspace named outside, through a link or missing: one answer.
      const outside = await Promise.all(
        ["dir", "..", "/etc", "nope", "abs.md", "../target-dir"].map((w) =>
          ask({ query: "hello", now: NOW, workspace: w }),
        ),
      );
      expect(new Set(outside.map((o) => `${o.status} ${o.text}`)).size).toBe(1);
      expect(outside[0]?.text).toContain("path_refused");
      removeSecrets(outer);
      expect((await ask({ query: "hello", now: NOW })).text).toBe(present.text);
      expectClean(readFileSync(recording, "utf8"));
    } finally {
      await app.close();
    }
  });

  it("CLI: assemble --workspace (with a user file) prints the same, clean, with or without the targets", () => {
    const { outer, ws } = hostile();
    // A user-level file whose imports climb out of its directory, or link out of it.
    const home = join(outer, "home");
    const userDir = join(home, ".config/promptctx");
    mkdirSync(userDir, { recursive: true });
    writeFileSync(
      join(userDir, "AGENTS.md"),
      "User rules.\n@../../../written-outside.md\n@linked.md\n@~/notes.md\n",
    );
    symlinkSync(join(outer, "target-file.md"), join(userDir, "linked.md"));
    writeFileSync(join(home, "notes.md"), `${SECRET} notes\n`);
    const run = () => {
      const r = runCli(
        ["assemble", "--workspace", ws, "--query", "hello", "--now", NOW, "--format", "json"],
        { env: { HOME: home } },
      );
      expect(r.code, r.stderr).toBe(0);
      expectClean(r.stdout + r.stderr);
      return stable(JSON.parse(r.stdout));
    };
    const present = run();
    expect(present).toContain("User rules.");
    expect(present).toContain("path_refused");
    removeSecrets(outer);
    expect(run()).toBe(present);
  });
});

describe("a workspace's config and store linked out", () => {
  async function secretStore(file: string): Promise<void> {
    const store = openStore(file);
    try {
      const line = {
        memoryId: "m1",
        userScope: "u1",
        kind: "fact",
        category: "general",
        content: `${SECRET} hello memory`,
        importance: 0.9,
        source: { sourceId: "s", sourceType: "note", title: "t", capturedAt: NOW },
      };
      const r = await store.importJsonl(`${JSON.stringify(line)}\n`, { now: NOW });
      expect(r.skipped).toBe(0);
    } finally {
      await store.close();
    }
  }

  it("a config.json linked out is one path_refused error (no JSON error quoting the target)", async () => {
    const { outer, ws } = hostile();
    rmSync(join(ws, ".promptctx/config.json"));
    symlinkSync(join(outer, "target-passwd"), join(ws, ".promptctx/config.json"));
    const run = () =>
      assembleWorkspace({ workspace: ws, query: "hello", now: NOW, user: "u1" }).then(
        () => "assembled",
        (err: unknown) => JSON.stringify(toErrorObject(err)),
      );
    const present = await run();
    expect(JSON.parse(present)).toEqual({
      error: {
        code: "path_refused",
        message: "config: missing, or outside the allowed roots; not read",
        path: "config",
      },
    });
    removeSecrets(outer);
    expect(await run()).toBe(present);
  });

  it("a memory.db linked to another workspace's store is never opened (library and HTTP)", async () => {
    const { outer, ws } = hostile();
    await secretStore(join(outer, "target-store.db"));
    symlinkSync(join(outer, "target-store.db"), join(ws, ".promptctx/memory.db"));
    const lib = () =>
      assembleWorkspace({ workspace: ws, query: "hello memory", now: NOW }).then(
        (out) => stable(out),
        (err: unknown) => JSON.stringify(toErrorObject(err)),
      );
    const present = await lib();
    expect(present).toContain("path_refused");
    expectClean(present);
    const app = await buildServer({ workspace: outer, store: null, logger: false });
    try {
      await app.listen({ port: 0, host: "127.0.0.1" });
      const base = `http://127.0.0.1:${(app.server.address() as { port: number }).port}`;
      const ask = async () => {
        const res = await fetch(`${base}/v1/assemble`, {
          method: "POST",
          headers: { "content-type": "application/json" },
          body: JSON.stringify({ query: "hello memory", now: NOW, workspace: "ws" }),
        });
        return `${res.status} ${await res.text()}`;
      };
      const answer = await ask();
      expect(answer).toContain("path_refused");
      expectClean(answer);
      rmSync(join(outer, "target-store.db"));
      expect(await ask()).toBe(answer);
    } finally {
      await app.close();
    }
    expect(await lib()).toBe(present);
  });
});

describe("a recording that names files outside its workspace", () => {
  /** A recording whose one line names `fields` (user files, home, cwd). */
  function recordingWith(dir: string, ws: string, fields: Record<string, unknown>): string {
    const file = join(dir, `rec-${Math.abs(JSON.stringify(fields).length)}-${made.length}.jsonl`);
    made.push(file);
    const line = {
      recordVersion: 1,
      at: NOW,
      kind: "assemble",
      request: { workspace: ws, query: "hello", now: NOW, ...fields },
      response: { error: { code: "internal_error", message: "recorded", path: null } },
    };
    writeFileSync(file, `${JSON.stringify(line)}\n`);
    return file;
  }

  const HOSTILE_FIELDS = (outer: string): Array<Record<string, unknown>> => [
    { userFiles: ["/etc/passwd"] },
    { userFiles: [join(outer, "target-passwd")] },
    { userFiles: ["../target-passwd"] },
    { userFiles: ["ws/abs.md"] },
    { userFiles: ["ws/dir/AGENTS.md"] },
    { userFiles: ["ws/dangling.md"] },
    { userFiles: ["ws/no-such-file.md"] },
    { home: "/etc" },
    { home: "ws/dir" },
    { cwd: "ws/dir" },
  ];

  it("library: replay refuses each before reading, with one answer per field", async () => {
    const { outer, ws } = hostile();
    const answers = async () => {
      const out: string[] = [];
      for (const fields of HOSTILE_FIELDS(outer)) {
        const file = recordingWith(outer, ws, fields);
        const text = readFileSync(file, "utf8");
        const report = await replayRecording(parseRecording(text), dirname(file));
        const after = JSON.stringify(report.lines[0]?.diff.errors);
        expectClean(JSON.stringify(report));
        out.push(after);
      }
      return out;
    };
    const present = await answers();
    for (const a of present) expect(a).toContain("path_refused");
    // Same field, same answer: /etc/passwd, a link out, a dangling link, a missing file.
    expect(new Set(present.slice(0, 7)).size).toBe(1);
    removeSecrets(outer);
    expect(await answers()).toEqual(present);
  });

  it("CLI: promptctx replay prints the same, clean, with or without the targets", () => {
    const { outer, ws } = hostile();
    const files = HOSTILE_FIELDS(outer).map((f) => recordingWith(outer, ws, f));
    const run = () =>
      files.map((file) => {
        const r = runCli(["replay", file, "--json"], { env: { HOME: outer } });
        expect(r.code).toBe(1);
        expectClean(r.stdout + r.stderr);
        return r.stdout;
      });
    const present = run();
    for (const out of present) expect(out).toContain("path_refused");
    removeSecrets(outer);
    expect(run()).toEqual(present);
  });
});

describe("links swapped while the sources read", () => {
  it("a racing swapper never gets an outside file into the chain (bounded rounds)", async () => {
    const { outer, ws } = hostile();
    // Two links flipped as fast as a child process can: a file link between inside and
    // out, and a directory on the way between a real directory and a link out.
    mkdirSync(join(ws, "flip-dir"));
    writeFileSync(join(ws, "flip-dir/AGENTS.md"), "Flip dir inside.\n");
    writeFileSync(join(ws, "AGENTS.md"), "Flip.\n@flip.md\n@flip-dir/AGENTS.md\n");
    symlinkSync("real-inside.md", join(ws, "flip.md"));
    const script = `
      const fs = require("node:fs");
      const [ws, outer] = process.argv.slice(1);
      const swap = (target, name) => {
        try { fs.symlinkSync(target, name + ".tmp"); fs.renameSync(name + ".tmp", name); } catch {}
      };
      for (;;) {
        swap(outer + "/target-file.md", ws + "/flip.md");
        swap("real-inside.md", ws + "/flip.md");
        try { fs.renameSync(ws + "/flip-dir", ws + "/flip-dir.away"); } catch {}
        try { fs.symlinkSync(outer + "/target-dir", ws + "/flip-dir"); } catch {}
        try { fs.unlinkSync(ws + "/flip-dir"); } catch {}
        try { fs.renameSync(ws + "/flip-dir.away", ws + "/flip-dir"); } catch {}
      }`;
    const child = spawn(process.execPath, ["-e", script, ws, outer], { stdio: "ignore" });
    try {
      const seen = new Set<string>();
      for (let round = 0; round < 300; round++) {
        const chain = await loadInstructionChain({ cwd: ws, stopDir: ws });
        expectClean(JSON.stringify(chain));
        for (const p of chain.parts) seen.add(p.path);
      }
      expect(seen.has("AGENTS.md")).toBe(true);
    } finally {
      child.kill();
    }
    expect(existsSync(join(outer, "target-file.md"))).toBe(true);
  });
});
