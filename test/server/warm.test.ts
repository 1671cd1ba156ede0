/**
 * The warm service: a real server on 127.0.0.1 over a copy of the example workspace keeps
 * it loaded, and every change on disk — an edited, added or removed instruction file, a
 * new skill, an edited KB file, the config, a memory store that appears — is in the very
 * next answer, equal to what a cold `assembleWorkspace` gives for the same files.
 */
import { cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import fc from "fast-check";
import type { FastifyInstance } from "fastify";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { buildServer } from "../../src/server/index.js";
import { getTokenCounter } from "../../src/tokens/index.js";
import { type Arrival, assembleWorkspace, WarmWorkspaces } from "../../src/workspace/index.js";
import { exampleStore, NOW, post, QUERY, WORKSPACE } from "./helpers.js";

interface Answer {
  prompt: string;
  manifest: { timings?: unknown; layers: Array<{ id: string; status: string }> };
}

let dir: string;
let ws: string;
let app: FastifyInstance;
let base: string;

async function ask(query = QUERY): Promise<Answer> {
  const a = await post(base, "/v1/assemble", { query, now: NOW, tokenizer: "o200k_base" });
  expect(a.status).toBe(200);
  return a.json as Answer;
}

/** What a cold assembly of the same files gives (no shared store: the workspace's own, if any). */
async function cold(query = QUERY): Promise<string> {
  const out = await assembleWorkspace({ workspace: ws, query, now: NOW, tokenizer: "o200k_base" });
  return out.prompt;
}

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "promptctx-warm-"));
  ws = join(dir, "ws");
  cpSync(WORKSPACE, ws, { recursive: true });
  app = await buildServer({ workspace: ws, store: null, logger: false });
  await app.listen({ port: 0, host: "127.0.0.1" });
  base = `http://127.0.0.1:${(app.server.address() as { port: number }).port}`;
});

afterAll(async () => {
  await app?.close();
  rmSync(dir, { recursive: true, force: true });
});

describe("a warm workspace", () => {
  it("answers as a cold assembly, and again without re-reading", async () => {
    const first = await ask();
    expect(first.prompt).toBe(await cold());
    expect((await ask()).prompt).toBe(first.prompt);
  });

  it("sees an edited instruction file in the next request", async () => {
    const file = join(ws, "services/billing/AGENTS.md");
    writeFileSync(file, `${readFileSync(file, "utf8")}\nAlways name migrations by date.\n`);
    const next = await ask();
    expect(next.prompt).toContain("Always name migrations by date.");
    expect(next.prompt).toBe(await cold());
  });

  it("sees an instruction file created, then removed, in a directory of the walk", async () => {
    const file = join(ws, "services/CLAUDE.md");
    writeFileSync(file, "Services share one on-call rota.\n");
    expect((await ask()).prompt).toContain("Services share one on-call rota.");
    rmSync(file);
    const next = await ask();
    expect(next.prompt).not.toContain("Services share one on-call rota.");
    expect(next.prompt).toBe(await cold());
  });

  it("sees a new skill and an edited KB file", async () => {
    const skill = join(ws, ".promptctx/skills/invoice-index");
    mkdirSync(skill);
    writeFileSync(
      join(skill, "SKILL.md"),
      "---\nname: invoice-index\ndescription: Index invoices tables safely\n---\nUse CREATE INDEX CONCURRENTLY.\n",
    );
    expect((await ask()).prompt).toContain("invoice-index");
    const kb = join(ws, ".promptctx/kb/runbooks.jsonl");
    const lines = readFileSync(kb, "utf8").trimEnd().split("\n");
    const chunk = JSON.parse(lines[0] as string) as { content: string };
    chunk.content = `${chunk.content} Index builds run after 22:00 UTC.`;
    writeFileSync(kb, `${[JSON.stringify(chunk), ...lines.slice(1)].join("\n")}\n`);
    const next = await ask();
    expect(next.prompt).toBe(await cold());
  });

  it("sees a config change (identity) in the next request", async () => {
    const file = join(ws, ".promptctx/config.json");
    const config = JSON.parse(readFileSync(file, "utf8")) as { identity: string };
    config.identity = "You are the billing team's migration reviewer.";
    writeFileSync(file, JSON.stringify(config));
    const next = await ask();
    expect(next.prompt).toContain("You are the billing team's migration reviewer.");
    expect(next.prompt).toBe(await cold());
  });

  it("opens the workspace's memory store once it appears", async () => {
    const before = await ask();
    const { path, cleanup } = await exampleStore();
    try {
      cpSync(path, join(ws, ".promptctx/memory.db"));
    } finally {
      cleanup();
    }
    const next = await ask();
    expect(next.prompt).not.toBe(before.prompt);
    expect(next.prompt).toBe(await cold());
  });
});

describe("WarmWorkspaces", () => {
  it("gives what assembleWorkspace gives, for any mode", async () => {
    const warm = new WarmWorkspaces();
    try {
      for (const mode of ["react", "chat", "rag", "tool", "no-such-mode"]) {
        const counter = getTokenCounter("o200k_base");
        const a = await warm.assemble(WORKSPACE, {
          query: QUERY,
          now: NOW,
          mode,
          tokenCounter: counter,
        });
        const b = await assembleWorkspace({
          workspace: WORKSPACE,
          query: QUERY,
          now: NOW,
          mode,
          tokenizer: "o200k_base",
        });
        expect(a.prompt).toBe(b.prompt);
        const { timings: _a, ...ma } = a.manifest;
        const { timings: _b, ...mb } = b.manifest;
        expect(ma).toEqual(mb);
      }
    } finally {
      await warm.close();
    }
  });

  it("reuses the slots a request did not change, and answers as cold every time", async () => {
    const warm = new WarmWorkspaces();
    const counter = getTokenCounter("o200k_base");
    const run = (query: string, now: string) =>
      warm.assemble(WORKSPACE, { query, now, mode: "react", tokenCounter: counter });
    const items = (a: Awaited<ReturnType<typeof run>>) =>
      new Map(a.manifest.layers.map((l) => [l.id, l.items]));
    try {
      const other = "why is the nightly export slow";
      const later = "2026-12-24T09:00:00Z";
      const answers = [];
      for (const [query, now] of [
        [QUERY, NOW],
        [QUERY, NOW],
        [other, NOW],
        [other, later],
        [QUERY, NOW],
      ] as const) {
        const a = await run(query, now);
        const b = await assembleWorkspace({
          workspace: WORKSPACE,
          query,
          now,
          mode: "react",
          tokenizer: "o200k_base",
        });
        expect(a.prompt).toBe(b.prompt);
        const { timings: _a, ...ma } = a.manifest;
        const { timings: _b, ...mb } = b.manifest;
        expect(ma).toEqual(mb);
        answers.push(items(a));
      }
      const [first, same, otherQuery] = answers as Array<Map<string, unknown>>;
      // The same request again: every slot comes from the memo.
      for (const [id, list] of first as Map<string, unknown>) {
        if ((list as unknown[]).length > 0)
          expect((same as Map<string, unknown>).get(id), id).toBe(list);
      }
      // Another query: the instruction files' slot is reused, the recall is not.
      expect((otherQuery as Map<string, unknown>).get("instructions")).toBe(
        first?.get("instructions"),
      );
      expect((otherQuery as Map<string, unknown>).get("recall_memory")).not.toBe(
        first?.get("recall_memory"),
      );
    } finally {
      await warm.close();
    }
  });

  it("a request sees every change made before it arrived, whoever checked (property)", async () => {
    // Ops on one warm workspace: edit the instruction file (a new marker), a request that
    // arrives (its stamp and the marker on disk then noted), a request answered (one that
    // arrived earlier: it may share a check made after its arrival, never an older one).
    type Op = { op: "edit" } | { op: "arrive" } | { op: "answer"; pick: number };
    const op: fc.Arbitrary<Op> = fc.oneof(
      fc.constant({ op: "edit" as const }),
      fc.constant({ op: "arrive" as const }),
      fc.record({ op: fc.constant("answer" as const), pick: fc.nat({ max: 7 }) }),
    );
    const root = join(dir, "arrivals");
    cpSync(WORKSPACE, root, { recursive: true });
    const file = join(root, "AGENTS.md");
    const original = readFileSync(file, "utf8");
    const counter = getTokenCounter("o200k_base");
    try {
      await fc.assert(
        fc.asyncProperty(fc.array(op, { minLength: 1, maxLength: 12 }), async (ops) => {
          const warm = new WarmWorkspaces();
          let version = 0;
          // Each version a different size: signatures tell it apart even within one clock tick.
          const write = () =>
            writeFileSync(file, `${original}\nmarker-${version}${".".repeat(version)}\n`);
          write();
          const waiting: Array<{ arrivedAt: Arrival; atLeast: number }> = [];
          const answer = async (r: { arrivedAt: Arrival; atLeast: number }) => {
            const a = await warm.assemble(root, {
              query: QUERY,
              now: NOW,
              tokenCounter: counter,
              arrivedAt: r.arrivedAt,
            });
            const seen = Number(/marker-(\d+)/.exec(a.prompt)?.[1]);
            expect(seen).toBeGreaterThanOrEqual(r.atLeast);
          };
          try {
            for (const o of [
              ...ops,
              { op: "arrive" as const },
              { op: "answer" as const, pick: 0 },
            ]) {
              if (o.op === "edit") {
                version += 1;
                write();
              } else if (o.op === "arrive") {
                waiting.push({ arrivedAt: warm.arrival(), atLeast: version });
              } else if (waiting.length > 0) {
                const [r] = waiting.splice(o.pick % waiting.length, 1);
                await answer(r as { arrivedAt: Arrival; atLeast: number });
              }
            }
            for (const r of waiting) await answer(r);
          } finally {
            await warm.close();
          }
        }),
        { numRuns: 40 },
      );
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  });

  it("a stamp it did not issue counts as none: the request checks", async () => {
    const root = join(dir, "forged");
    cpSync(WORKSPACE, root, { recursive: true });
    const file = join(root, "AGENTS.md");
    const counter = getTokenCounter("o200k_base");
    const warm = new WarmWorkspaces();
    const other = new WarmWorkspaces();
    try {
      const ask = (arrivedAt: Arrival) =>
        warm.assemble(root, { query: QUERY, now: NOW, tokenCounter: counter, arrivedAt });
      await ask(warm.arrival()); // loads and checks after this stamp
      const early = warm.arrival();
      await ask(early);
      writeFileSync(file, `${readFileSync(file, "utf8")}\nforged-1\n`);
      // Look-alike and foreign stamps are not trusted: each checks and sees the edit.
      expect((await ask({ arrival: true })).prompt).toContain("forged-1");
      writeFileSync(file, `${readFileSync(file, "utf8")}\nforged-22\n`);
      expect((await ask(other.arrival())).prompt).toContain("forged-22");
    } finally {
      await warm.close();
      await other.close();
      rmSync(root, { recursive: true, force: true });
    }
  });
});
