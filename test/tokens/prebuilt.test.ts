/**
 * The rank tables prebuilt by the build (scripts/build-bpe-tables.mjs): loaded, they are
 * the tables parsing the rank file builds, field for field; a stale or damaged file is
 * ignored (the rank file is parsed instead), never half used. Likewise the pre-tokenizers'
 * class table: loaded, it is the computed one; made under another Unicode version, ignored.
 */
import { mkdtempSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { afterAll, describe, expect, it } from "vitest";
import {
  classesFromPrebuilt,
  classesPath,
  loadClasses,
  loadRankTable,
  prebuiltClasses,
  prebuiltPath,
  prebuiltRanks,
  ranksFromPrebuilt,
} from "../../src/tokens/bpe-prebuilt.js";
import { type BpeEncoding, loadRanks, rankFilePath } from "../../src/tokens/bpe-ranks.js";
import { bmpClasses } from "../../src/tokens/bpe-scan.js";

// A typed array's bytes, compared whole (element by element would take seconds).
const bytesOf = (a: ArrayLike<number>): Buffer => {
  const v = a as Uint8Array;
  return Buffer.from(v.buffer, v.byteOffset, v.byteLength);
};

const dir = mkdtempSync(join(tmpdir(), "promptctx-ranks-"));
const url = pathToFileURL(`${dir}/`);
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe.each(["cl100k_base", "o200k_base"] as BpeEncoding[])("prebuilt %s", (encoding) => {
  const parsed = loadRanks(encoding);
  const source = statSync(rankFilePath(encoding)).size;
  const bytes = prebuiltRanks(parsed, source);

  it("loads as the table the rank file's parse builds, field for field", () => {
    writeFileSync(prebuiltPath(encoding, url), bytes);
    const loaded = loadRankTable(encoding, url);
    expect(loaded.mask).toBe(parsed.mask);
    for (const key of ["pool", "slots", "pairs", "byteRank", "offset", "length", "highTokens"]) {
      const a = loaded[key as keyof typeof loaded] as ArrayLike<number>;
      const b = parsed[key as keyof typeof parsed] as ArrayLike<number>;
      expect([key, a.length]).toEqual([key, b.length]);
      expect(bytesOf(a).equals(bytesOf(b))).toBe(true);
    }
  });

  it("is ignored when stale, of another version or damaged", () => {
    expect(ranksFromPrebuilt(bytes, source + 1)).toBeNull();
    const version = bytes.slice();
    version[4] = 99;
    expect(ranksFromPrebuilt(version, source)).toBeNull();
    expect(ranksFromPrebuilt(bytes.subarray(0, bytes.length - 1), source)).toBeNull();
    expect(ranksFromPrebuilt(bytes.subarray(0, 16), source)).toBeNull();
    // A damaged file on disk: the rank file is parsed instead.
    writeFileSync(prebuiltPath(encoding, url), bytes.subarray(0, 1000));
    expect(loadRankTable(encoding, url).slots.length).toBe(parsed.slots.length);
    // None at all (running from the sources): parsed.
    const none = pathToFileURL(`${join(dir, "none")}/`);
    expect(loadRankTable(encoding, none).pool.length).toBe(parsed.pool.length);
  });
});

describe("prebuilt class table", () => {
  const unicode = process.versions.unicode ?? "";
  const computed = bmpClasses();
  const bytes = prebuiltClasses(computed, unicode);

  it("loads as the table the regex engine gives", () => {
    writeFileSync(classesPath(url), bytes);
    expect(bytesOf(loadClasses(url)).equals(bytesOf(computed))).toBe(true);
  });

  it("is ignored when made under another Unicode version, of another version or damaged", () => {
    expect(classesFromPrebuilt(prebuiltClasses(computed, "1.0"), unicode)).toBeNull();
    const version = bytes.slice();
    version[4] = 99;
    expect(classesFromPrebuilt(version, unicode)).toBeNull();
    expect(classesFromPrebuilt(bytes.subarray(0, bytes.length - 1), unicode)).toBeNull();
    writeFileSync(
      classesPath(url),
      prebuiltClasses(
        computed.map((c) => c ^ 1),
        "1.0",
      ),
    );
    expect(bytesOf(loadClasses(url)).equals(bytesOf(computed))).toBe(true);
    const none = pathToFileURL(`${join(dir, "none")}/`);
    expect(bytesOf(loadClasses(none)).equals(bytesOf(computed))).toBe(true);
  });
});
