/**
 * Knowledge-base chunks (docs/sources.md): loading JSONL from a real temp dir (bad lines and
 * duplicates reported with line numbers, the rest loaded), anchors, tier order, the
 * budget cascade under shrinking budgets, and the `kb` source.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import fc from "fast-check";
import { afterAll, describe, expect, it } from "vitest";
import { InvalidInputError } from "../../src/errors/index.js";
import {
  citationAnchor,
  type KbChunk,
  KbChunkSchema,
  kbSource,
  loadKbDir,
  orderChunks,
  planKb,
  SourceItemSchema,
  type SourceQuery,
} from "../../src/sources/index.js";
import { cpLength } from "../../src/text/index.js";

const tmp: string[] = [];
afterAll(() => {
  for (const d of tmp) rmSync(d, { recursive: true, force: true });
});
function tempDir(): string {
  const d = mkdtempSync(join(tmpdir(), "promptctx-kb-"));
  tmp.push(d);
  return d;
}

function chunk(
  kind: KbChunk["kind"],
  docId: string,
  chunkId: string,
  score: number,
  content = `${kind} ${docId}/${chunkId}`,
): KbChunk {
  return { docId, chunkId, content, score, isGolden: kind === "golden", source: "wiki", kind };
}

const G1 = chunk("golden", "d1", "g1", 0.9);
const G2 = chunk("golden", "d2", "g2", 0.5);
const G3 = chunk("golden", "d1", "g3", 0.5);
const H1 = chunk("hybrid", "d3", "h1", 0.95);
const H2 = chunk("hybrid", "d3", "h2", 0.4);
const C1 = chunk("correction", "d4", "c1", 0.99);
const ALL = [C1, H2, G2, H1, G3, G1];
const ORDERED = [G1, G3, G2, H1, H2, C1];

const line = (c: KbChunk) => `${citationAnchor(c)} ${c.content}`;
const width = (list: KbChunk[]) => cpLength(list.map(line).join("\n"));

describe("anchors and order", () => {
  it("renders the citation anchor", () => {
    expect(citationAnchor({ docId: "DOC-7", chunkId: "12" })).toBe("[doc:DOC-7 chunk:12]");
  });

  it("golden first, hybrid by score desc, correction last; ties by docId, chunkId", () => {
    expect(orderChunks(ALL)).toEqual(ORDERED);
    // Golden outranks a higher-scored hybrid.
    expect(orderChunks([H1, G2])).toEqual([G2, H1]);
    fc.assert(
      fc.property(
        fc.shuffledSubarray(ALL, { minLength: ALL.length, maxLength: ALL.length }),
        (p) => {
          expect(orderChunks(p)).toEqual(ORDERED);
        },
      ),
    );
    expect(ALL[0]).toBe(C1); // input untouched
  });

  it("validates chunks", () => {
    expect(KbChunkSchema.safeParse(G1).success).toBe(true);
    expect(KbChunkSchema.safeParse({ ...G1, score: 1.5 }).success).toBe(false);
    expect(KbChunkSchema.safeParse({ ...G1, kind: "silver" }).success).toBe(false);
    expect(KbChunkSchema.safeParse({ ...G1, isGolden: false }).success).toBe(false);
    expect(KbChunkSchema.safeParse({ ...H1, isGolden: true }).success).toBe(false);
    expect(KbChunkSchema.safeParse({ ...G1, chunkId: "a b" }).success).toBe(false);
    expect(KbChunkSchema.safeParse({ ...G1, docId: "a]" }).success).toBe(false);
    expect(KbChunkSchema.safeParse({ ...G1, docId: "a#b" }).success).toBe(false);
    expect(KbChunkSchema.safeParse({ ...G1, content: "  " }).success).toBe(false);
    expect(KbChunkSchema.parse({ ...G1, extra: 1 })).toEqual(G1);
  });
});

describe("planKb cascade", () => {
  it("no budget or a large one: everything, in order", () => {
    for (const budget of [null, width(ORDERED), 10_000]) {
      const plan = planKb(ALL, budget);
      expect(plan.included).toEqual(ORDERED);
      expect(plan.skippedLevels).toEqual([]);
      expect(plan.dropped).toEqual([]);
      expect(plan.text).toBe(ORDERED.map(line).join("\n"));
      expect(plan.chars).toBe(width(ORDERED));
    }
    expect(planKb(ALL, null).text.split("\n")[0]).toBe("[doc:d1 chunk:g1] golden d1/g1");
  });

  it("skips correction first, then hybrid, then drops golden lowest-scored first", () => {
    const full = width(ORDERED);
    const noCorr = width([G1, G3, G2, H1, H2]);
    const golden = width([G1, G3, G2]);

    let plan = planKb(ALL, full - 1);
    expect(plan.included).toEqual([G1, G3, G2, H1, H2]);
    expect(plan.skippedLevels).toEqual(["correction"]);
    expect(plan.dropped).toEqual([
      { chunkId: "c1", docId: "d4", reason: "level correction skipped" },
    ]);

    plan = planKb(ALL, noCorr);
    expect(plan.skippedLevels).toEqual(["correction"]);

    plan = planKb(ALL, noCorr - 1);
    expect(plan.included).toEqual([G1, G3, G2]);
    expect(plan.skippedLevels).toEqual(["correction", "hybrid"]);
    expect(plan.dropped.map((d) => d.chunkId)).toEqual(["c1", "h1", "h2"]);

    plan = planKb(ALL, golden);
    expect(plan.included).toEqual([G1, G3, G2]);
    expect(plan.chars).toBe(golden);

    plan = planKb(ALL, golden - 1);
    // G2 (0.5, d2) sorts after G3 (0.5, d1): it is the "lowest" and goes first.
    expect(plan.included).toEqual([G1, G3]);
    expect(plan.skippedLevels).toEqual(["correction", "hybrid"]);
    expect(plan.dropped.at(-1)).toEqual({
      chunkId: "g2",
      docId: "d2",
      reason: "golden dropped: over budget (lowest score first)",
    });

    plan = planKb(ALL, width([G1]));
    expect(plan.included).toEqual([G1]);

    plan = planKb(ALL, width([G1]) - 1);
    expect(plan.included).toEqual([]);
    expect(plan.skippedLevels).toEqual(["correction", "hybrid", "golden"]);
    expect(plan.dropped.map((d) => d.chunkId)).toEqual(["c1", "h1", "h2", "g2", "g3", "g1"]);
    expect(plan.text).toBe("");
    expect(plan.chars).toBe(0);
  });

  it("levels skip whole, even when part of a level would fit", () => {
    // Budget fits golden + H1 but not golden + both hybrids: hybrid goes as a level.
    const plan = planKb([G1, H1, H2], width([G1, H1]));
    expect(plan.included).toEqual([G1]);
    expect(plan.skippedLevels).toEqual(["hybrid"]);
  });

  it("absent levels are not reported as skipped", () => {
    const plan = planKb([G1, G2, H1], width([G1, G2]));
    expect(plan.skippedLevels).toEqual(["hybrid"]);
    expect(planKb([], 0)).toEqual({
      included: [],
      skippedLevels: [],
      dropped: [],
      text: "",
      chars: 0,
    });
  });

  it("counts code points", () => {
    const emoji = chunk("golden", "d", "c", 1, "😀😀");
    expect(planKb([emoji], cpLength("[doc:d chunk:c] 😀😀")).included).toEqual([emoji]);
  });

  it("output always fits, is a prefix-closed subset and never cuts a chunk", () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: width(ORDERED) + 5 }), (budget) => {
        const plan = planKb(ALL, budget);
        expect(plan.chars).toBeLessThanOrEqual(budget);
        expect(plan.chars).toBe(cpLength(plan.text));
        expect(plan.included.length + plan.dropped.length).toBe(ALL.length);
        expect(orderChunks(plan.included)).toEqual(plan.included);
      }),
    );
  });

  it("rejects a bad budget", () => {
    expect(() => planKb(ALL, -1)).toThrow(InvalidInputError);
    expect(() => planKb(ALL, 1.5)).toThrow(InvalidInputError);
  });
});

describe("loadKbDir", () => {
  it("loads *.jsonl in name order, reports bad lines and duplicates with line numbers", async () => {
    const dir = tempDir();
    const j = (c: KbChunk) => JSON.stringify(c);
    writeFileSync(
      join(dir, "b.jsonl"),
      [
        j(H1),
        "",
        "{not json",
        JSON.stringify({ ...H2, score: 2 }),
        "   ",
        JSON.stringify({ docId: "x" }),
        "[1,2]",
        `${j(G1)}\r`,
        j({ ...G1, content: "dup" }),
      ].join("\n"),
    );
    writeFileSync(join(dir, "a.jsonl"), `\uFEFF${j(C1)}\n${j(G2)}\n`);
    writeFileSync(join(dir, "c.txt"), j(G3));
    mkdirSync(join(dir, "d.jsonl"));

    const { chunks, issues } = await loadKbDir(dir);
    expect(chunks).toEqual([C1, G2, H1, G1]);
    const b = join(dir, "b.jsonl");
    expect(issues.map((i) => [i.file, i.line])).toEqual([
      [b, 3],
      [b, 4],
      [b, 6],
      [b, 7],
      [b, 9],
    ]);
    expect(issues[0]?.reason).toMatch(/^invalid JSON: /);
    expect(issues[1]?.reason).toMatch(/^score: /);
    expect(issues[2]?.reason).toMatch(/^chunkId: /);
    expect(issues[4]?.reason).toBe(`duplicate chunk (docId "d1", chunkId "g1"), first at ${b}:8`);
  });

  it("a missing directory loads nothing", async () => {
    expect(await loadKbDir(join(tempDir(), "nope"))).toEqual({ chunks: [], issues: [] });
  });
});

describe("kbSource", () => {
  const QUERY: SourceQuery = {
    text: "q",
    userScope: "u",
    mode: "react",
    now: "2026-01-01T00:00:00Z",
  };
  const fetch = async (src: ReturnType<typeof kbSource>, filter?: { charBudget: number }) => {
    const items = await src.fetch(
      { kind: "kb", ...(filter ? { filter } : {}) },
      QUERY,
      new AbortController().signal,
    );
    for (const item of items) expect(SourceItemSchema.safeParse(item).success).toBe(true);
    return items;
  };

  it("serves every chunk in order with chunk ids as sourceRefs and cascade levels", async () => {
    const src = kbSource(ALL);
    expect(src.id).toBe("kb");
    expect(src.supports("kb")).toBe(true);
    expect(src.supports("skills")).toBe(false);
    const items = await fetch(src);
    expect(items.map((i) => i.sourceRef)).toEqual([
      "kb:d1#g1",
      "kb:d1#g3",
      "kb:d2#g2",
      "kb:d3#h1",
      "kb:d3#h2",
      "kb:d4#c1",
    ]);
    expect(items.map((i) => i.rank)).toEqual([0, 1, 2, 3, 4, 5]);
    expect(items[0]).toEqual({
      id: "d1#g1",
      text: "[doc:d1 chunk:g1] golden d1/g1",
      category: "golden",
      rank: 0,
      cascadeLevel: 0,
      sourceRef: "kb:d1#g1",
    });
    expect(items.map((i) => i.cascadeLevel)).toEqual([0, 0, 0, 1, 1, 2]);
    // No score on items: the assembler ranks score before rank, which would break tiers.
    expect(items.every((i) => i.score === undefined)).toBe(true);
    expect(await src.fetch({ kind: "other" }, QUERY, new AbortController().signal)).toEqual([]);
  });

  it("applies no budget itself: the assembler cascades, so every chunk gets a decision", async () => {
    const items = await fetch(kbSource(ALL), { charBudget: width([G1]) });
    expect(items).toHaveLength(6);
  });

  it("rejects invalid or duplicate chunks and a bad id", () => {
    expect(() => kbSource([G1, { ...G1, content: "again" }])).toThrow(/duplicate chunk/);
    expect(() => kbSource([{ ...G1, score: -1 }])).toThrow(InvalidInputError);
    expect(() => kbSource(ALL, "")).toThrow(InvalidInputError);
  });

  it("works from a workspace kb directory", async () => {
    const ws = tempDir();
    const dir = join(ws, ".promptctx", "kb");
    mkdirSync(dir, { recursive: true });
    writeFileSync(join(dir, "kb.jsonl"), ALL.map((c) => JSON.stringify(c)).join("\n"));
    const { chunks, issues } = await loadKbDir(dir);
    expect(issues).toEqual([]);
    const items = await fetch(kbSource(chunks));
    expect(items.map((i) => i.category)).toEqual([
      "golden",
      "golden",
      "golden",
      "hybrid",
      "hybrid",
      "correction",
    ]);
  });
});
