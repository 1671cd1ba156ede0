/**
 * Child process of the `recall-meaning` section (a fresh process, so its resident memory
 * is the encoder's and not the benchmark's): `rss` loads the embedded encoder as
 * `promptctx memory recall` does (its kernels on 2 threads on a machine of 2 or more
 * cores), embeds 256 texts and prints its RSS; `import N` imports N generated memories into
 * a new hybrid SQLite store with the encoder (as `promptctx memory import` runs) and prints
 * records/s and RSS. Prints one JSON line.
 *
 *   node bench/lib/encoder-child.mjs rss
 *   node bench/lib/encoder-child.mjs import 2000 /tmp/dir
 */
import path from "node:path";
import { performance } from "node:perf_hooks";
import { importDist } from "./modules.mjs";
import { createRng, sentence } from "./prng.mjs";

const [mode, nArg, dir] = process.argv.slice(2);
const { createEmbedder } = await importDist("embed/index.js");
const r = createRng(32);
const rssMb = () => Math.round(process.memoryUsage().rss / 1e6);
if (mode === "rss") {
  const embedder = await createEmbedder({ kind: "embedded" }, {});
  await embedder.embed(Array.from({ length: 256 }, () => sentence(r)));
  process.stdout.write(`${JSON.stringify({ rssMb: rssMb() })}\n`);
  await embedder.close();
} else if (mode === "import") {
  const { openStore, hybridStore } = await importDist("store/index.js");
  const n = Number(nArg);
  const embedder = await createEmbedder({ kind: "embedded" }, {});
  const store = hybridStore(openStore(path.join(dir, "import.db")), embedder);
  const lines = Array.from({ length: n }, (_, i) =>
    JSON.stringify({
      memoryId: `m${i}`,
      userScope: "u1",
      content: sentence(r),
      source: {
        sourceId: "bench",
        sourceType: "chat",
        title: "bench",
        capturedAt: "2026-06-01T00:00:00Z",
      },
    }),
  ).join("\n");
  const t = performance.now();
  const res = await store.importJsonl(lines);
  const s = (performance.now() - t) / 1000;
  process.stdout.write(
    `${JSON.stringify({ records: res.imported, embedded: res.embedded, recordsPerS: Math.round(res.imported / s), rssMb: rssMb() })}\n`,
  );
  store.close();
  await embedder.close();
} else {
  throw new Error(`unknown mode ${mode}`);
}
