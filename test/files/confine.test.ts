/**
 * The one confinement rule (src/files/confine.ts), tried as an attacker would: links of
 * every kind (file, directory, chain, relative, absolute, dangling, looping) and links
 * swapped between the check and the open, through an injected hook. Whatever is missing
 * or outside answers with one and the same refusal, and nothing outside is ever read. A
 * property checks generated layouts against the real paths the OS resolves.
 */
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  realpathSync,
  renameSync,
  rmSync,
  statSync,
  symlinkSync,
  unlinkSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join, relative } from "node:path";
import fc from "fast-check";
import { afterAll, describe, expect, it } from "vitest";
import { toErrorObject } from "../../src/errors/index.js";
import {
  confinedPath,
  confinedRoots,
  entryInside,
  isInside,
  listConfined,
  readConfined,
} from "../../src/files/index.js";

const SECRET = "TOP-SECRET-OUTSIDE";
const made: string[] = [];
afterAll(() => {
  for (const d of made) rmSync(d, { recursive: true, force: true });
});

/** `outer/` holds secrets beside the root `outer/ws/`. */
function layout(): { outer: string; ws: string } {
  const outer = realpathSync(mkdtempSync(join(tmpdir(), "promptctx-files-")));
  made.push(outer);
  const ws = join(outer, "ws");
  mkdirSync(join(ws, "sub"), { recursive: true });
  mkdirSync(join(outer, "secretdir"));
  writeFileSync(join(outer, "secret.txt"), SECRET);
  writeFileSync(join(outer, "secretdir/x.md"), SECRET);
  writeFileSync(join(ws, "in.md"), "inside");
  writeFileSync(join(ws, "sub/x.md"), "inside sub");
  return { outer, ws };
}

const REFUSED = { ok: false, why: "refused" };

describe("readConfined", () => {
  it("reads a regular file inside, and a link (or a chain) that stays inside", async () => {
    const { ws } = layout();
    symlinkSync("in.md", join(ws, "rel-in"));
    symlinkSync(join(ws, "rel-in"), join(ws, "chain-in"));
    const roots = await confinedRoots([ws]);
    for (const p of ["in.md", "rel-in", "chain-in"]) {
      const r = await readConfined(join(ws, p), roots);
      expect(r.ok && r.bytes.toString()).toBe("inside");
      expect(r.ok && r.real).toBe(join(ws, "in.md"));
    }
  });

  it("refuses every link out, every missing path and every loop with one answer", async () => {
    const { outer, ws } = layout();
    symlinkSync(join(outer, "secret.txt"), join(ws, "abs-out"));
    symlinkSync("../secret.txt", join(ws, "rel-out"));
    symlinkSync("rel-out", join(ws, "chain-out"));
    symlinkSync(join(outer, "secretdir"), join(ws, "dir-out"));
    symlinkSync("nope", join(ws, "dangling-in"));
    symlinkSync("../nope", join(ws, "dangling-out"));
    symlinkSync("loop-b", join(ws, "loop-a"));
    symlinkSync("loop-a", join(ws, "loop-b"));
    const roots = await confinedRoots([ws]);
    const paths = [
      "abs-out",
      "rel-out",
      "chain-out",
      "dir-out/x.md",
      "dangling-in",
      "dangling-out",
      "loop-a",
      "missing.md",
      "../secret.txt",
      "sub/../../secret.txt",
      "in.md/x",
    ].map((p) => join(ws, p));
    paths.push(join(outer, "secret.txt"), "/etc/passwd", "/nonexistent/x");
    for (const p of paths) expect(await readConfined(p, roots), p).toEqual(REFUSED);
  });

  it("the root itself may be a link: it is compared by its real path", async () => {
    const { outer, ws } = layout();
    symlinkSync(ws, join(outer, "ws-link"));
    const roots = await confinedRoots([join(outer, "ws-link")]);
    const r = await readConfined(join(outer, "ws-link/in.md"), roots);
    expect(r.ok).toBe(true);
    expect(await readConfined(join(outer, "ws-link/../secret.txt"), roots)).toEqual(REFUSED);
  });

  it("a directory inside is not a file; a file over maxBytes is not read", async () => {
    const { ws } = layout();
    const roots = await confinedRoots([ws]);
    expect(await readConfined(join(ws, "sub"), roots)).toMatchObject({
      ok: false,
      why: "not_a_file",
      detail: "a directory",
    });
    expect(await readConfined(join(ws, "in.md"), roots, { maxBytes: 3 })).toMatchObject({
      ok: false,
      why: "too_large",
      size: 6,
    });
  });

  it("a final component swapped for a link between check and open is refused (O_NOFOLLOW)", async () => {
    const { outer, ws } = layout();
    const roots = await confinedRoots([ws]);
    const r = await readConfined(join(ws, "in.md"), roots, {
      hooks: {
        beforeOpen: (real) => {
          unlinkSync(real);
          symlinkSync(join(outer, "secret.txt"), real);
        },
      },
    });
    expect(r).toEqual(REFUSED);
  });

  it("a directory on the way swapped for a link between check and open is refused (the opened descriptor is checked)", async () => {
    const { outer, ws } = layout();
    const roots = await confinedRoots([ws]);
    let swapped = false;
    const r = await readConfined(join(ws, "sub/x.md"), roots, {
      hooks: {
        beforeOpen: () => {
          renameSync(join(ws, "sub"), join(ws, "sub.away"));
          symlinkSync(join(outer, "secretdir"), join(ws, "sub"));
          swapped = true;
        },
      },
    });
    expect(swapped).toBe(true);
    // The path now leads to the secret: had the open been trusted, it would be read.
    expect(readFileSync(join(ws, "sub/x.md"), "utf8")).toBe(SECRET);
    expect(r).toEqual(REFUSED);
  });
});

describe("listConfined and entryInside", () => {
  it("lists a directory inside; refuses one out, a swapped one, a missing one and a file", async () => {
    const { outer, ws } = layout();
    symlinkSync(join(outer, "secretdir"), join(ws, "dir-out"));
    const roots = await confinedRoots([ws]);
    const list = await listConfined(join(ws, "sub"), roots);
    expect(list.ok && list.names).toEqual(["x.md"]);
    for (const p of ["dir-out", "missing", "in.md"]) {
      expect(await listConfined(join(ws, p), roots)).toEqual({ ok: false });
    }
    const swapped = await listConfined(join(ws, "sub"), roots, {
      beforeOpen: (real) => {
        renameSync(real, `${real}.away`);
        symlinkSync(join(outer, "secretdir"), real);
      },
    });
    expect(swapped).toEqual({ ok: false });
  });

  it("says an entry exists only for names in a confined directory", async () => {
    const { outer, ws } = layout();
    symlinkSync(join(outer, "secret.txt"), join(ws, "abs-out"));
    symlinkSync(join(outer, "nope"), join(ws, "dangling-out"));
    symlinkSync(join(outer, "secretdir"), join(ws, "dir-out"));
    const roots = await confinedRoots([ws]);
    expect(await entryInside(join(ws, "abs-out"), roots)).toBe(true);
    expect(await entryInside(join(ws, "dangling-out"), roots)).toBe(true);
    // The entry behind a link out is never looked at: present and absent answer alike.
    expect(await entryInside(join(ws, "dir-out/x.md"), roots)).toBe(false);
    expect(await entryInside(join(ws, "dir-out/none.md"), roots)).toBe(false);
    expect(await entryInside(join(ws, "missing"), roots)).toBe(false);
    expect(await entryInside(join(outer, "secret.txt"), roots)).toBe(false);
  });
});

describe("confinedPath", () => {
  it("answers a missing path, an outside one and one of the other kind with the same error", async () => {
    const { outer, ws } = layout();
    symlinkSync(join(outer, "secretdir"), join(ws, "dir-out"));
    const roots = await confinedRoots([ws]);
    expect(await confinedPath(join(ws, "sub"), roots, "workspace")).toBe(join(ws, "sub"));
    expect(await confinedPath(join(ws, "in.md"), roots, "f", "file")).toBe(join(ws, "in.md"));
    const answers = new Set<string>();
    for (const p of ["dir-out", "missing", "in.md", "..", "/etc", "/nonexistent"]) {
      const err = await confinedPath(join(ws, p), roots, "workspace").catch((e: unknown) => e);
      answers.add(JSON.stringify(toErrorObject(err)));
    }
    expect([...answers]).toEqual([
      JSON.stringify({
        error: {
          code: "path_refused",
          message: "workspace: missing, or outside the allowed roots; not read",
          path: "workspace",
        },
      }),
    ]);
  });
});

// ---------------------------------------------------------------------------------------
// generated layouts

type Node =
  | { kind: "file" }
  | { kind: "dir" }
  | { kind: "link"; to: number | "secret" | "secretdir" | "missing"; absolute: boolean };

const nodeArb: fc.Arbitrary<Node> = fc.oneof(
  fc.constant<Node>({ kind: "file" }),
  fc.constant<Node>({ kind: "dir" }),
  fc.record({
    kind: fc.constant("link" as const),
    to: fc.oneof(
      fc.nat({ max: 7 }),
      fc.constantFrom("secret" as const, "secretdir" as const, "missing" as const),
    ),
    absolute: fc.boolean(),
  }),
);

describe("property: generated link layouts", () => {
  it("reads exactly what resolves to a file inside, refuses the rest, and never reads outside", async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(nodeArb, { minLength: 1, maxLength: 8 }), async (nodes) => {
        const { outer, ws } = layout();
        const name = (i: number) => join(ws, `n${i}`);
        const target = (to: number | string): string =>
          typeof to === "number"
            ? name(to % nodes.length)
            : to === "secret"
              ? join(outer, "secret.txt")
              : to === "secretdir"
                ? join(outer, "secretdir")
                : join(outer, "missing");
        nodes.forEach((n, i) => {
          if (n.kind === "file") writeFileSync(name(i), `file ${i}`);
          else if (n.kind === "dir") {
            mkdirSync(name(i));
            writeFileSync(join(name(i), "x.md"), `dir ${i}`);
          } else {
            const t = target(n.to);
            symlinkSync(n.absolute ? t : relative(ws, t), name(i));
          }
        });
        const roots = await confinedRoots([ws]);
        for (let i = 0; i < nodes.length; i++) {
          for (const p of [name(i), join(name(i), "x.md")]) {
            const got = await readConfined(p, roots);
            let real: string | null = null;
            try {
              real = realpathSync(p);
            } catch {
              real = null;
            }
            const inside = real !== null && isInside(ws, real);
            if (!inside) expect(got, p).toEqual(REFUSED);
            else if (statSync(real as string).isFile()) {
              expect(got.ok && got.bytes.toString()).toBe(readFileSync(real as string, "utf8"));
            } else expect(got).toMatchObject({ ok: false, why: "not_a_file" });
            if (got.ok) expect(got.bytes.toString()).not.toContain(SECRET);
          }
        }
        // The answers do not depend on what exists outside: remove the secrets, ask again.
        const before = await Promise.all(nodes.map((_, i) => readConfined(name(i), roots)));
        rmSync(join(outer, "secret.txt"));
        rmSync(join(outer, "secretdir"), { recursive: true });
        const after = await Promise.all(nodes.map((_, i) => readConfined(name(i), roots)));
        expect(after).toEqual(before);
        expect(existsSync(ws)).toBe(true);
      }),
      { numRuns: 60 },
    );
  });
});
