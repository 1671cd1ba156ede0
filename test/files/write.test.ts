/**
 * Confined writes (src/files/write.ts), tried as an attacker would: links out of every
 * kind at the final component and on the way (file, directory, dangling, relative,
 * chains), links swapped in between the check and the open, FIFOs, and a child process
 * swapping a directory for a link out while writes run. Nothing outside the root is ever
 * created, truncated or written; what is inside is written exactly.
 */
import { spawn } from "node:child_process";
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  realpathSync,
  renameSync,
  rmSync,
  symlinkSync,
  unlinkSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { confinedRoots, writeConfined } from "../../src/files/index.js";

const SECRET = "TOP-SECRET-OUTSIDE";
const made: string[] = [];
afterAll(() => {
  for (const d of made) rmSync(d, { recursive: true, force: true });
});

/** `outer/` holds a secret file and an empty directory beside the root `outer/ws/`. */
function layout(): { outer: string; ws: string } {
  const outer = realpathSync(mkdtempSync(join(tmpdir(), "promptctx-write-")));
  made.push(outer);
  const ws = join(outer, "ws");
  mkdirSync(join(ws, "sub"), { recursive: true });
  mkdirSync(join(outer, "outdir"));
  writeFileSync(join(outer, "secret.txt"), SECRET);
  writeFileSync(join(ws, "in.md"), "inside");
  return { outer, ws };
}

/** Everything under `outer` outside `ws`, with contents: must never change. */
function outside(outer: string): string {
  const walk = (dir: string): string[] =>
    readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
      const p = join(dir, e.name);
      if (p === join(outer, "ws")) return [];
      if (e.isDirectory()) return [`${p}/`, ...walk(p)];
      return [`${p}=${e.isFile() ? readFileSync(p, "utf8") : "link"}`];
    });
  return walk(outer).sort().join("\n");
}

const REFUSED = { ok: false, why: "refused" };

describe("writeConfined", () => {
  it("creates and overwrites files inside, making missing directories, through links that stay inside", async () => {
    const { ws } = layout();
    const roots = await confinedRoots([ws]);
    expect(await writeConfined(join(ws, "a/b/c.txt"), roots, "new")).toMatchObject({
      ok: true,
      created: true,
      bytes: 3,
    });
    expect(readFileSync(join(ws, "a/b/c.txt"), "utf8")).toBe("new");
    expect(await writeConfined(join(ws, "in.md"), roots, "x")).toMatchObject({
      ok: true,
      created: false,
    });
    expect(readFileSync(join(ws, "in.md"), "utf8")).toBe("x");
    symlinkSync("in.md", join(ws, "link-in"));
    symlinkSync("sub", join(ws, "sub-link"));
    expect((await writeConfined(join(ws, "link-in"), roots, "via link")).ok).toBe(true);
    expect(readFileSync(join(ws, "in.md"), "utf8")).toBe("via link");
    expect((await writeConfined(join(ws, "sub-link/deep/z.txt"), roots, "z")).ok).toBe(true);
    expect(readFileSync(join(ws, "sub/deep/z.txt"), "utf8")).toBe("z");
  });

  it("refuses every way out, and nothing outside changes", async () => {
    const { outer, ws } = layout();
    const before = outside(outer);
    const roots = await confinedRoots([ws]);
    symlinkSync(join(outer, "secret.txt"), join(ws, "abs-out"));
    symlinkSync("../secret.txt", join(ws, "rel-out"));
    symlinkSync("rel-out", join(ws, "chain-out"));
    symlinkSync(join(outer, "outdir"), join(ws, "dir-out"));
    symlinkSync(join(outer, "nothing-yet.txt"), join(ws, "dangling"));
    symlinkSync(join(outer, "outdir/new"), join(ws, "dangling-dir"));
    for (const p of [
      join(outer, "secret.txt"),
      join(ws, "../secret.txt"),
      join(outer, "made-here.txt"),
      join(ws, "abs-out"),
      join(ws, "rel-out"),
      join(ws, "chain-out"),
      join(ws, "dir-out/x.txt"),
      join(ws, "dir-out/deep/x.txt"),
      join(ws, "dangling"),
      join(ws, "dangling-dir/x.txt"),
      "/",
    ]) {
      expect(await writeConfined(p, roots, "PWNED"), p).toEqual(REFUSED);
    }
    expect(outside(outer)).toBe(before);
    expect(existsSync(join(outer, "nothing-yet.txt"))).toBe(false);
  });

  it("a directory or a FIFO is not a file to write", async () => {
    const { ws } = layout();
    const roots = await confinedRoots([ws]);
    expect(await writeConfined(join(ws, "sub"), roots, "x")).toMatchObject({ ok: false });
    const fifo = join(ws, "pipe");
    await new Promise((done) => spawn("mkfifo", [fifo]).on("close", done));
    // O_NONBLOCK: a FIFO without a reader fails at once instead of blocking the write.
    expect(await writeConfined(fifo, roots, "x")).toMatchObject({ ok: false });
  });

  it("a final component swapped for a link out between check and open is refused", async () => {
    const { outer, ws } = layout();
    const before = outside(outer);
    const roots = await confinedRoots([ws]);
    const target = join(ws, "in.md");
    const done = await writeConfined(target, roots, "PWNED", {
      beforeOpen: () => {
        rmSync(target, { force: true });
        symlinkSync(join(outer, "secret.txt"), target);
      },
    });
    expect(done).toEqual(REFUSED);
    expect(outside(outer)).toBe(before);
  });

  it("a directory on the way swapped for a link out before the file is made is refused", async () => {
    const { outer, ws } = layout();
    const before = outside(outer);
    const roots = await confinedRoots([ws]);
    const done = await writeConfined(join(ws, "sub/new.txt"), roots, "PWNED", {
      beforeOpen: () => {
        renameSync(join(ws, "sub"), join(ws, "sub-moved"));
        symlinkSync(join(outer, "outdir"), join(ws, "sub"));
      },
    });
    // The held descriptor is the original directory: the file lands there, not outside.
    expect(outside(outer)).toBe(before);
    if (done.ok) expect(readFileSync(join(ws, "sub-moved/new.txt"), "utf8")).toBe("PWNED");
  });

  it("a child process swapping a directory for a link out, while writes run, never gets one out", async () => {
    const { outer, ws } = layout();
    const before = outside(outer);
    const roots = await confinedRoots([ws]);
    mkdirSync(join(ws, "real"));
    const script = `
      const fs = require("node:fs");
      const d = ${JSON.stringify(join(ws, "d"))};
      for (let i = 0; i < 3000; i++) {
        try { fs.rmSync(d, { recursive: true, force: true }); } catch {}
        try { fs.symlinkSync(${JSON.stringify(join(outer, "outdir"))}, d); } catch {}
        try { fs.unlinkSync(d); } catch {}
        try { fs.mkdirSync(d); } catch {}
      }`;
    const child = spawn(process.execPath, ["-e", script], { stdio: "ignore" });
    const exited = new Promise((done) => child.on("close", done));
    for (let i = 0; i < 300; i++) {
      await writeConfined(join(ws, `d/f${i % 5}.txt`), roots, "PWNED");
      await writeConfined(join(ws, `d/x${i % 3}/g.txt`), roots, "PWNED");
    }
    await exited;
    expect(outside(outer)).toBe(before);
    try {
      unlinkSync(join(ws, "d"));
    } catch {
      // a directory (or gone): nothing to undo
    }
  });
});
