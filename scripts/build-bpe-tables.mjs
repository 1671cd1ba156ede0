// Build step (after tsc): the BPE rank tables of o200k_base and cl100k_base in their
// prebuilt form (src/tokens/bpe-prebuilt.ts), written next to the compiled module, so the
// first count of a process reads them instead of parsing gpt-tokenizer's rank files, and
// the pre-tokenizers' class table, so it is read instead of asked of the regex engine.
// Each rank file records the size of the rank file it was made from, the class table the
// Unicode version it was made under; a stale one is ignored.
import { statSync, writeFileSync } from "node:fs";
import { fileURLToPath } from "node:url";

const dist = new URL("../dist/tokens/", import.meta.url);
const { loadRanks, rankFilePath } = await import(new URL("bpe-ranks.js", dist).href);
const { bmpClasses } = await import(new URL("bpe-scan.js", dist).href);
const {
  classesFromPrebuilt,
  classesPath,
  prebuiltClasses,
  prebuiltPath,
  prebuiltRanks,
  ranksFromPrebuilt,
} = await import(new URL("bpe-prebuilt.js", dist).href);

for (const encoding of ["o200k_base", "cl100k_base"]) {
  const source = statSync(rankFilePath(encoding)).size;
  const table = loadRanks(encoding);
  const bytes = prebuiltRanks(table, source);
  // What is written must load back (the tests compare the two forms field for field).
  if (ranksFromPrebuilt(bytes, source) === null) throw new Error(`${encoding}: does not load`);
  const path = prebuiltPath(encoding, dist);
  writeFileSync(path, bytes);
  console.log(`${fileURLToPath(path)}: ${(bytes.length / 1e6).toFixed(1)} MB`);
}

const unicode = process.versions.unicode ?? "";
const classes = prebuiltClasses(bmpClasses(), unicode);
if (classesFromPrebuilt(classes, unicode) === null) throw new Error("classes: do not load");
writeFileSync(classesPath(dist), classes);
console.log(`${fileURLToPath(classesPath(dist))}: Unicode ${unicode}`);
