import { spawnSync } from "node:child_process";
import { fileURLToPath } from "node:url";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { planRuns } from "../../src/embed/use-lite/index.js";

describe("planRuns: model runs of similar length", () => {
  it("puts every non-empty text in exactly one run, shortest first, within both bounds", () => {
    fc.assert(
      fc.property(
        fc.array(fc.array(fc.nat(100), { maxLength: 40 }), { maxLength: 120 }),
        fc.integer({ min: 1, max: 40 }),
        fc.integer({ min: 1, max: 400 }),
        (ids, maxTexts, maxPadded) => {
          const runs = planRuns(ids, maxTexts, maxPadded);
          const seen = runs.flat();
          const nonEmpty = ids.flatMap((r, i) => (r.length > 0 ? [i] : []));
          expect([...seen].sort((a, b) => a - b)).toEqual(nonEmpty);
          for (const run of runs) {
            expect(run.length).toBeGreaterThan(0);
            expect(run.length).toBeLessThanOrEqual(maxTexts);
            const longest = Math.max(...run.map((i) => ids[i]!.length));
            // A single text longer than the budget still gets a run of its own.
            if (run.length > 1) expect(run.length * longest).toBeLessThanOrEqual(maxPadded);
          }
          const lengths = seen.map((i) => ids[i]!.length);
          expect(lengths).toEqual([...lengths].sort((a, b) => a - b));
        },
      ),
    );
  });
});

// The threaded build runs from the compiled files (dist/: its pthreads run pthread.js):
// child processes embed the same texts with one thread and with two, and print a digest
// of the vectors' bytes and the backend's thread count.
// CommonJS (`-e` alone): a pthread inherits the process's flags, and `--input-type` is
// one a worker refuses (model.ts then keeps one thread).
const SCRIPT = `(async () => {
const { createHash } = await import("node:crypto");
const { loadUseLite } = await import(process.argv[1]);
const texts = Array.from({ length: 300 }, (_, i) => "note " + i + " about " + "deploys and reviews ".repeat(i % 7));
const use = await loadUseLite({ threads: Number(process.argv[2]) });
const vectors = await use.embed(texts);
const hash = createHash("sha256");
for (const v of vectors) hash.update(new Uint8Array(v.buffer, v.byteOffset, v.byteLength));
const { getThreadsCount } = await import("@tensorflow/tfjs-backend-wasm");
await use.close();
process.stdout.write(JSON.stringify({ n: vectors.length, digest: hash.digest("hex"), threads: getThreadsCount() }));
})();
`;

function embedIn(threads: number): { n: number; digest: string; threads: number } {
  const entry = fileURLToPath(new URL("../../dist/embed/use-lite/index.js", import.meta.url));
  const r = spawnSync(
    process.execPath,
    ["-e", SCRIPT, entry, String(threads)],
    // The child ends by itself: the pool's threads keep no process alive.
    { encoding: "utf8", timeout: 240_000 },
  );
  expect(r.stderr).toBe("");
  expect(r.status).toBe(0);
  return JSON.parse(r.stdout) as { n: number; digest: string; threads: number };
}

describe("the threaded WebAssembly build (the compiled encoder)", () => {
  it("gives the same vectors as one thread, bit for bit, and the process exits", () => {
    const one = embedIn(0);
    const two = embedIn(1);
    expect(one.threads).toBe(1);
    expect(two.threads).toBe(2);
    expect(two.n).toBe(300);
    expect(two.digest).toBe(one.digest);
  });
});
