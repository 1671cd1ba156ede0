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

// The worker thread runs from the compiled files (dist/): a child process embeds the same
// texts with and without it and prints both.
const SCRIPT = `
const { loadUseLite } = await import(process.argv[1]);
const texts = Array.from({ length: 300 }, (_, i) => "note " + i + " about " + "deploys and reviews ".repeat(i % 7));
const a = await loadUseLite({ threads: 1 });
const b = await loadUseLite({ threads: 0 });
const va = await a.embed(texts);
const vb = await b.embed(texts);
let worst = 1;
for (let i = 0; i < texts.length; i++) {
  let dot = 0;
  for (let j = 0; j < 512; j++) dot += va[i][j] * vb[i][j];
  worst = Math.min(worst, dot);
}
await a.close(); await b.close();
const { startHelper } = await import(process.argv[1].replace(/index.js$/, "helper.js"));
const h = await startHelper();
const [w] = h === null ? [null] : await h.run([[6, 7, 8]]);
await h?.close();
process.stdout.write(JSON.stringify({ n: va.length, worst, helper: w?.length ?? 0 }));
`;

describe("bulk embeds on a worker thread (the compiled encoder)", () => {
  it("give the same vectors as one thread, in order, and the process exits", () => {
    const entry = fileURLToPath(new URL("../../dist/embed/use-lite/index.js", import.meta.url));
    const r = spawnSync(process.execPath, ["--input-type=module", "-e", SCRIPT, entry], {
      encoding: "utf8",
      timeout: 240_000,
    });
    expect(r.stderr).toBe("");
    const out = JSON.parse(r.stdout) as { n: number; worst: number; helper: number };
    expect(out.n).toBe(300);
    expect(out.helper).toBe(512); // the worker thread loads and runs the model
    expect(out.worst).toBeGreaterThan(0.99999);
  });
});
