/**
 * A warm workspace never serves stale content: a same-size edit whose stat looks the same
 * (mtime restored with utimes, or two writes within one tick of the file clock, where
 * even the change time stays put) is seen by the next request, because a file changed
 * within the file clock's granularity of its signing is signed by its content too.
 */
import {
  cpSync,
  mkdtempSync,
  readFileSync,
  realpathSync,
  rmSync,
  statSync,
  symlinkSync,
  utimesSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { FastifyInstance } from "fastify";
import { afterAll, describe, expect, it } from "vitest";
import { buildServer } from "../../src/server/index.js";
import {
  RACY_WINDOW_MS,
  recheck,
  signature,
  signaturesOf,
  unchanged,
} from "../../src/workspace/fingerprint.js";
import { WarmWorkspaces } from "../../src/workspace/index.js";
import { NOW, post, QUERY, WORKSPACE } from "../server/helpers.js";

const made: string[] = [];
afterAll(() => {
  for (const d of made) rmSync(d, { recursive: true, force: true });
});

function copy(): string {
  const dir = mkdtempSync(join(tmpdir(), "promptctx-racy-"));
  made.push(dir);
  const ws = join(dir, "ws");
  cpSync(WORKSPACE, ws, { recursive: true });
  return ws;
}

/** A whole second (utimes round-trips it exactly), a little in the past. */
const T = Math.floor(Date.now() / 1000) - 1;

/** Sets `file`'s times to {@link T}. */
const stamp = (file: string) => utimesSync(file, T, T);

/** Rewrites `file` with `from` replaced by `to` (same length), then restores its times. */
function sameSizeEdit(file: string, from: string, to: string): void {
  expect(to.length).toBe(from.length);
  const before = statSync(file);
  const text = readFileSync(file, "utf8");
  expect(text).toContain(from);
  writeFileSync(file, text.replace(from, to));
  stamp(file);
  expect(statSync(file).size).toBe(before.size);
  expect(statSync(file).mtimeMs).toBe(before.mtimeMs);
}

describe("same-size edits with the mtime restored", () => {
  it("are seen by the next assembly of a warm workspace (library)", async () => {
    const ws = copy();
    const file = join(ws, "AGENTS.md");
    writeFileSync(file, `${readFileSync(file, "utf8")}\nCodeword: ALPHA.\n`);
    stamp(file);
    const warm = new WarmWorkspaces({ store: null });
    try {
      const ask = async () =>
        (await warm.assemble(ws, { query: QUERY, now: NOW, tokenizer: "o200k_base" })).prompt;
      expect(await ask()).toContain("Codeword: ALPHA.");
      sameSizeEdit(file, "ALPHA", "OMEGA");
      const next = await ask();
      expect(next).toContain("Codeword: OMEGA.");
      expect(next).not.toContain("ALPHA");
    } finally {
      await warm.close();
    }
  });

  it("are seen by the next POST /v1/assemble of a real server", async () => {
    const ws = copy();
    const file = join(ws, "AGENTS.md");
    writeFileSync(file, `${readFileSync(file, "utf8")}\nCodeword: ALPHA.\n`);
    stamp(file);
    const app: FastifyInstance = await buildServer({ workspace: ws, store: null, logger: false });
    try {
      await app.listen({ port: 0, host: "127.0.0.1" });
      const base = `http://127.0.0.1:${(app.server.address() as { port: number }).port}`;
      const ask = async () => {
        const a = await post(base, "/v1/assemble", { query: QUERY, now: NOW });
        expect(a.status).toBe(200);
        return (a.json as { prompt: string }).prompt;
      };
      expect(await ask()).toContain("Codeword: ALPHA.");
      sameSizeEdit(file, "ALPHA", "OMEGA");
      expect(await ask()).toContain("Codeword: OMEGA.");
      // A KB file too (same size, times restored).
      const kbFile = join(ws, ".promptctx/kb/runbooks.jsonl");
      stamp(kbFile);
      expect(await ask()).toContain("CONCURRENTLY");
      sameSizeEdit(kbFile, "CONCURRENTLY", "CONCURRENTLX");
      expect(await ask()).toContain("CONCURRENTLX");
    } finally {
      await app.close();
    }
  });
});

describe("signatures", () => {
  it("a file changed within the window is signed by its content; an older one by stat alone", () => {
    const ws = copy();
    const file = join(ws, "AGENTS.md");
    const { mtimeMs, ctimeMs } = statSync(file);
    const recent = signature(file, { nowMs: Math.max(mtimeMs, ctimeMs) + 1 });
    const old = signature(file, { nowMs: Math.max(mtimeMs, ctimeMs) + RACY_WINDOW_MS + 1 });
    expect(typeof recent !== "string" && recent[5]).toMatch(/^[A-Za-z0-9+/=]+$/);
    expect(typeof old !== "string" && old[5]).toBe(null);
  });

  it("a same-size edit that leaves every stat field alike (one tick of a coarse file clock) is a change", () => {
    const ws = copy();
    const file = join(ws, "racy.md");
    writeFileSync(file, "content A");
    stamp(file);
    const sigs = signaturesOf([file], { nowMs: statSync(file).ctimeMs });
    writeFileSync(file, "content B");
    stamp(file);
    // On a coarse file clock two writes within one tick leave even the change time alike;
    // this kernel's finer clock moved it, so the recorded one is aligned to stand for that.
    const was = sigs.get(file) as readonly [number, number, number, number, number, string];
    const now = statSync(file);
    const alike = new Map([[file, [was[0], was[1], was[2], now.ctimeMs, was[4], was[5]] as const]]);
    expect([now.ino, now.size, now.mtimeMs, now.mode]).toEqual([was[0], was[1], was[2], was[4]]);
    expect(unchanged(alike)).toBe(false);
    // Written back to what was signed, it is unchanged.
    writeFileSync(file, "content A");
    stamp(file);
    const back = statSync(file);
    expect(
      unchanged(new Map([[file, [was[0], was[1], was[2], back.ctimeMs, was[4], was[5]] as const]])),
    ).toBe(true);
  });

  it("a content-signed path settles to stat alone once its times leave the window (no read at every check)", () => {
    const ws = copy();
    const file = join(ws, "AGENTS.md");
    const { mtimeMs, ctimeMs } = statSync(file);
    const at = Math.max(mtimeMs, ctimeMs);
    const sigs = signaturesOf([file], { nowMs: at });
    const digestOf = (s: ReturnType<typeof recheck>) => {
      const sig = s?.get(file);
      return typeof sig === "string" ? sig : sig?.[5];
    };
    expect(digestOf(sigs)).toBeTruthy();
    // Still within the window: kept as is (same object).
    expect(recheck(sigs, at + 1)).toBe(sigs);
    // Out of it: the same stat, signed by stat alone from now on.
    const settled = recheck(sigs, at + RACY_WINDOW_MS);
    expect(digestOf(settled)).toBe(null);
    expect(unchanged(settled as NonNullable<typeof settled>)).toBe(true);
    // Changed content is never settled: it is a change.
    writeFileSync(file, "x".repeat(statSync(file).size));
    stamp(file);
    expect(recheck(sigs, at + RACY_WINDOW_MS)).toBe(null);
  });

  it("only a path whose real path is inside `within` is read for a digest", () => {
    const ws = copy();
    const outside = join(ws, "..", "outside.md");
    writeFileSync(outside, "outside");
    symlinkSync(outside, join(ws, "link-out.md"));
    const nowMs = statSync(outside).ctimeMs;
    const within = realpathSync(ws);
    const sig = (p: string) => {
      const s = signature(p, { nowMs, within });
      return typeof s === "string" ? s : s[5];
    };
    expect(sig(join(ws, "link-out.md"))).toBe(null);
    writeFileSync(join(ws, "in.md"), "inside");
    expect(sig(join(ws, "in.md"))).toBeTruthy();
  });

  it("a directory changed within the window is signed by its entry names", () => {
    const ws = copy();
    const dir = join(ws, ".promptctx/kb");
    const sigs = signaturesOf([dir], { nowMs: statSync(dir).mtimeMs });
    const sig = sigs.get(dir);
    expect(typeof sig !== "string" && sig?.[5]).toBeTruthy();
    writeFileSync(join(dir, "new.jsonl"), "");
    expect(unchanged(sigs)).toBe(false);
  });
});
