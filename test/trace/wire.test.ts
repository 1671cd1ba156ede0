/**
 * The assembled-prompt wire contract of docs/manifest-wire-guard.md: build from a real assembly, cross a JSON
 * boundary, version checks, anchors, runtime tails cut only when over their reserve.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { type Assembly, assemble } from "../../src/assemble/index.js";
import { versionId } from "../../src/cache/index.js";
import { PromptctxError, UnsupportedVersionError } from "../../src/errors/index.js";
import { cpLength } from "../../src/text/index.js";
import { getTokenCounter } from "../../src/tokens/index.js";
import {
  type AnchorInput,
  appendTail,
  parseWireContract,
  TAIL_JOIN,
  toWireContract,
  WIRE_CONTRACT_VERSION,
  type WireContract,
} from "../../src/trace/index.js";
import { reactInput, reactWorld } from "../assemble/helpers.js";

const counter = getTokenCounter("estimate");

async function sample(extra: Parameters<typeof reactInput>[1] = {}): Promise<Assembly> {
  return assemble(
    reactInput(reactWorld(), {
      budgetChars: null,
      segments: [
        {
          name: "identity",
          content: "You are Ada 🚀, a careful agent.",
          priority: 1,
          required: true,
          cacheTier: "static",
          neverTruncate: true,
        },
        { name: "notes", content: "Operator notes: ✅ ok", priority: 90, cacheTier: "dynamic" },
      ],
      ...extra,
    }),
  );
}

const ANCHORS: AnchorInput[] = [
  { name: "inbound", afterLayer: "identity", reserveTokens: 40 },
  { name: "docs", afterLayer: "notes", reserveTokens: 60, reserveChars: 400 },
  { name: "web", atEnd: true, reserveTokens: 100 },
];
const OPTS = { anchors: ANCHORS, tailReserve: 200, contextWindow: 8000, responseReserve: 1000 };

function cpSlice(s: string, start: number, end: number): string {
  return Array.from(s).slice(start, end).join("");
}

/** Removes every insertion (tails and joins) from a tailed prompt: must give back the body. */
function stripTails(out: ReturnType<typeof appendTail>): string {
  const chars = Array.from(out.prompt);
  const cut = new Set<number>();
  for (const { span } of out.inserted) for (let i = span.start; i < span.end; i++) cut.add(i);
  return chars.filter((_, i) => !cut.has(i)).join("");
}

describe("toWireContract", () => {
  it("describes every layer with a span whose content hashes to its versionId", async () => {
    const a = await sample();
    const c = toWireContract(a, OPTS);
    expect(c.assemblerVersion).toBe(WIRE_CONTRACT_VERSION);
    expect(c.assembledContext).toBe(a.prompt);
    expect(c.layerManifest.map((l) => l.id)).toEqual(a.manifest.layers.map((l) => l.id));
    const included = c.layerManifest.filter((l) => l.status === "included");
    expect(included.length).toBeGreaterThan(3);
    for (const l of c.layerManifest) {
      if (l.status !== "included") {
        expect(l.span).toBeNull();
        continue;
      }
      const span = l.span as { start: number; end: number };
      const content = cpSlice(a.prompt, span.start, span.end);
      expect(versionId(content)).toBe(l.versionId);
      expect(l.chars).toBe(cpLength(content));
    }
    const identity = c.layerManifest.find((l) => l.id === "identity");
    expect(identity?.neverTruncate).toBe(true);
    expect(c.budget).toEqual({
      tokenizer: "estimate",
      contextWindow: 8000,
      responseReserve: 1000,
      total: 8000 - 200 - 1000,
      bodyTokens: counter.count(a.prompt),
      bodyChars: cpLength(a.prompt),
    });
    expect(c.anchors.map((x) => [x.name, x.offset])).toEqual([
      ["inbound", identity?.span?.end],
      ["docs", c.layerManifest.find((l) => l.id === "notes")?.span?.end],
      ["web", cpLength(a.prompt)],
    ]);
  });

  it("round-trips across a JSON boundary unchanged", async () => {
    const c = toWireContract(await sample(), OPTS);
    const text = JSON.stringify(c);
    const back = parseWireContract(text);
    expect(back).toEqual(c);
    expect(JSON.stringify(back)).toBe(text);
    expect(JSON.stringify(parseWireContract(JSON.parse(text)))).toBe(text);
  });

  it("an anchor after a dropped layer sits after the nearest included layer before it", async () => {
    const a = await sample({ budgetChars: 500 });
    const dropped = a.manifest.layers.filter((l) => l.status !== "included");
    expect(dropped.map((l) => l.id)).toEqual(["task_memory", "recall_memory"]);
    const d = "task_memory";
    const c = toWireContract(a, {
      ...OPTS,
      anchors: [{ name: "x", afterLayer: d, reserveTokens: 10 }],
    });
    const at = c.layerManifest.findIndex((l) => l.id === d);
    const before = c.layerManifest
      .slice(0, at)
      .filter((l) => l.span !== null)
      .at(-1);
    expect(before?.id).toBe("planner");
    expect(c.anchors[0]?.offset).toBe(before?.span?.end);
    expect(parseWireContract(JSON.stringify(c))).toEqual(c);
  });

  it("rejects a negative total budget, an over-budget body, and bad anchors with paths", async () => {
    const a = await sample();
    const err = (f: () => unknown) => {
      try {
        f();
      } catch (e) {
        return e as PromptctxError;
      }
      throw new Error("no error");
    };
    let e = err(() => toWireContract(a, { ...OPTS, contextWindow: 100, responseReserve: 50 }));
    expect([e.code, e.path]).toEqual(["invalid_input", "contextWindow"]);
    e = err(() => toWireContract(a, { ...OPTS, contextWindow: 1300 }));
    expect([e.code, e.path]).toEqual(["prompt_budget_exceeded", "assembledContext"]);
    e = err(() =>
      toWireContract(a, {
        ...OPTS,
        anchors: [{ name: "q", afterLayer: "nope", reserveTokens: 1 }],
      }),
    );
    expect([e.code, e.path]).toEqual(["invalid_input", "anchors[0].afterLayer"]);
    e = err(() =>
      toWireContract(a, {
        ...OPTS,
        anchors: [{ name: "q", afterLayer: "identity", atEnd: true, reserveTokens: 1 }],
      }),
    );
    expect([e.code, e.path]).toEqual(["invalid_input", "anchors[0]"]);
    e = err(() =>
      toWireContract(a, { ...OPTS, anchors: [{ name: "q", atEnd: true, reserveTokens: -1 }] }),
    );
    expect([e.code, e.path]).toEqual(["invalid_input", "anchors[0].reserveTokens"]);
    e = err(() =>
      toWireContract(a, { ...OPTS, anchors: [{ name: "q", atEnd: true, reserveTokens: 201 }] }),
    );
    expect([e.code, e.path]).toEqual(["invalid_input", "anchors"]);
    e = err(() =>
      toWireContract(a, {
        ...OPTS,
        anchors: [
          { name: "q", atEnd: true, reserveTokens: 1 },
          { name: "q", afterLayer: "identity", reserveTokens: 1 },
        ],
      }),
    );
    expect([e.code, e.path]).toEqual(["invalid_input", "anchors[1].name"]);
    e = err(() => toWireContract({ ...a, prompt: `${a.prompt}!` }, OPTS));
    expect([e.code, e.path]).toEqual(["invalid_input", "assembly.prompt"]);
  });
});

describe("parseWireContract", () => {
  const errorOf = (input: unknown) => {
    try {
      parseWireContract(input);
    } catch (e) {
      return e as PromptctxError;
    }
    throw new Error("accepted");
  };

  it("accepts any 1.x version and rejects other majors with unsupported_version", async () => {
    const c = toWireContract(await sample(), OPTS);
    for (const v of ["1.0.0", "1.7.3", "1.0.0-rc.1", "1.2.0+build.5"]) {
      expect(parseWireContract({ ...c, assemblerVersion: v }).assemblerVersion).toBe(v);
    }
    for (const v of ["2.0.0", "0.9.0", "10.0.0"]) {
      const e = errorOf(JSON.stringify({ ...c, assemblerVersion: v }));
      expect(e).toBeInstanceOf(UnsupportedVersionError);
      expect([e.code, e.path]).toEqual(["unsupported_version", "assemblerVersion"]);
    }
    // A future major may change the shape entirely: the version is checked first.
    expect(errorOf({ assemblerVersion: "2.0.0", whatever: true }).code).toBe("unsupported_version");
    for (const v of ["1", "v1.0.0", "1.0", 1, null]) {
      const e = errorOf({ ...c, assemblerVersion: v });
      expect([e.code, e.path]).toEqual(["invalid_input", "assemblerVersion"]);
    }
  });

  it("drops unknown fields of a newer minor version", async () => {
    const c = toWireContract(await sample(), OPTS);
    const newer = { ...c, assemblerVersion: "1.3.0", futureField: { x: 1 } };
    expect(parseWireContract(newer)).toEqual({ ...c, assemblerVersion: "1.3.0" });
  });

  it("reports bad shapes and inconsistencies with the field path", async () => {
    const c: WireContract = toWireContract(await sample(), OPTS);
    const cases: Array<[unknown, string | null]> = [
      ["{not json", null],
      [[], null],
      [{ ...c, layerManifest: [{ ...c.layerManifest[0], chars: -1 }] }, "layerManifest[0].chars"],
      [{ ...c, anchors: [{ ...c.anchors[0], name: " " }] }, "anchors[0].name"],
      [{ ...c, tailReserve: "200" }, "tailReserve"],
      [{ ...c, assembledContext: `${c.assembledContext}x` }, "promptVersion"],
      [{ ...c, budget: { ...c.budget, total: 1 } }, "budget.total"],
      [
        {
          ...c,
          layerManifest: c.layerManifest.map((l, i) =>
            i === 0 ? { ...l, versionId: "0000000000000000" } : l,
          ),
        },
        "layerManifest[0].versionId",
      ],
      [
        { ...c, anchors: c.anchors.map((a, i) => (i === 0 ? { ...a, offset: a.offset + 1 } : a)) },
        "anchors[0].offset",
      ],
      [
        {
          ...c,
          anchors: c.anchors.map((a, i) => (i === 0 ? { ...a, afterLayer: "ghost" } : a)),
        },
        "anchors[0].afterLayer",
      ],
    ];
    for (const [input, path] of cases) {
      const e = errorOf(input);
      expect(e.code).toBe("invalid_input");
      expect(e.path).toBe(path);
    }
  });
});

describe("appendTail", () => {
  it("appends tails that fit unchanged, in anchor order, body byte-identical", async () => {
    const a = await sample();
    const c = parseWireContract(JSON.stringify(toWireContract(a, OPTS)));
    const out = appendTail(c, [
      { anchor: "web", text: "web: result 🌐" },
      { anchor: "inbound", text: "file: /tmp/a.txt" },
      { anchor: "inbound", text: "file: /tmp/b.txt" },
    ]);
    expect(out.tails.map((t) => [t.anchor, t.truncated, t.cut])).toEqual([
      ["web", false, "none"],
      ["inbound", false, "none"],
      ["inbound", false, "none"],
    ]);
    for (const t of out.tails) {
      const span = t.span as { start: number; end: number };
      expect(cpSlice(out.prompt, span.start, span.end)).toBe(
        ["web: result 🌐", "file: /tmp/a.txt", "file: /tmp/b.txt"][t.index],
      );
    }
    const inbound = out.tails[1]?.span?.start as number;
    const identityEnd = c.layerManifest.find((l) => l.id === "identity")?.span?.end as number;
    expect(inbound).toBe(identityEnd + TAIL_JOIN.length);
    expect(out.prompt.endsWith(`${TAIL_JOIN}web: result 🌐`)).toBe(true);
    expect(stripTails(out)).toBe(a.prompt);
    expect(out.fits).toBe(true);
    expect(out.tokens).toBe(counter.count(out.prompt));
    for (const l of out.layers) {
      const wire = c.layerManifest.find((x) => x.id === l.id);
      expect(versionId(cpSlice(out.prompt, l.span.start, l.span.end))).toBe(wire?.versionId);
    }
  });

  it("cuts only the tail over its reserve, at a line break, and reports the original size", async () => {
    const a = await sample();
    const c = toWireContract(a, OPTS);
    const doc = Array.from({ length: 80 }, (_, i) => `line ${i}: ✨ extracted text`).join("\n");
    const out = appendTail(c, [
      { anchor: "inbound", text: "file: /tmp/a.txt" },
      { anchor: "docs", text: doc },
      { anchor: "web", text: "short web context" },
    ]);
    const [inbound, docs, web] = out.tails;
    expect(inbound?.truncated).toBe(false);
    expect(web?.truncated).toBe(false);
    expect(docs?.truncated).toBe(true);
    expect(docs?.cut).toBe("line");
    expect(docs?.originalChars).toBe(cpLength(doc));
    expect(docs?.originalTokens).toBe(counter.count(doc));
    const kept = cpSlice(out.prompt, docs?.span?.start as number, docs?.span?.end as number);
    expect(doc.startsWith(kept)).toBe(true);
    expect(doc[kept.length]).toBe("\n");
    expect(counter.count(TAIL_JOIN + kept)).toBeLessThanOrEqual(60);
    expect(cpLength(kept) + 2).toBeLessThanOrEqual(400);
    expect(stripTails(out)).toBe(a.prompt);
    // neverTruncate layers (identity, constraints) are untouched at their new positions.
    const never = out.layers.filter((l) => l.neverTruncate);
    expect(never.map((l) => l.id)).toContain("identity");
    for (const l of never) {
      const wire = c.layerManifest.find((x) => x.id === l.id);
      expect(versionId(cpSlice(out.prompt, l.span.start, l.span.end))).toBe(wire?.versionId);
    }
  });

  it("cuts a single-line tail at a code point, never inside a surrogate pair", async () => {
    const c = toWireContract(await sample(), OPTS);
    const text = "🚀".repeat(500);
    const out = appendTail(c, [{ anchor: "docs", text }]);
    const t = out.tails[0];
    expect(t?.cut).toBe("char");
    const kept = cpSlice(out.prompt, t?.span?.start as number, t?.span?.end as number);
    expect(kept).toMatch(/^(🚀)+$/u);
    expect(kept.length % 2).toBe(0);
    expect(t?.chars).toBe(cpLength(kept));
  });

  it("shares an anchor's reserve in order and drops a tail with no room left", async () => {
    const c = toWireContract(await sample(), {
      ...OPTS,
      anchors: [{ name: "web", atEnd: true, reserveTokens: 10 }],
    });
    const out = appendTail(c, [
      { anchor: "web", text: "word ".repeat(40) },
      { anchor: "web", text: "more" },
    ]);
    expect(out.tails.map((t) => t.cut)).toEqual(["char", "dropped"]);
    expect(out.tails[1]?.span).toBeNull();
    expect(out.tails[1]?.chars).toBe(0);
  });

  it("inserts at offset 0 before the body when no included layer precedes the anchor", async () => {
    const banner = {
      name: "banner",
      content: "B".repeat(400),
      priority: 0,
      budgetPriority: 0,
      cacheTier: "static" as const,
    };
    const a = await sample({ budgetChars: 500 });
    const b = await assemble(
      reactInput(reactWorld(), {
        budgetChars: 500,
        segments: [
          banner,
          {
            name: "identity",
            content: "You are Ada 🚀, a careful agent.",
            priority: 1,
            required: true,
            cacheTier: "static",
            neverTruncate: true,
          },
          { name: "notes", content: "Operator notes: ✅ ok", priority: 90, cacheTier: "dynamic" },
        ],
      }),
    );
    expect(b.manifest.layers[0]?.id).toBe("banner");
    expect(b.manifest.layers[0]?.status).toBe("dropped");
    expect(b.prompt).toBe(a.prompt);
    const c = toWireContract(b, {
      ...OPTS,
      anchors: [
        { name: "head", afterLayer: "banner", reserveTokens: 20 },
        { name: "web", atEnd: true, reserveTokens: 20 },
      ],
    });
    expect(c.anchors[0]?.offset).toBe(0);
    const out = appendTail(c, [
      { anchor: "web", text: "W" },
      { anchor: "head", text: "H1" },
      { anchor: "head", text: "H2" },
    ]);
    expect(out.prompt).toBe(`H1${TAIL_JOIN}H2${TAIL_JOIN}${b.prompt}${TAIL_JOIN}W`);
    expect(out.tails.map((t) => t.span)).toEqual([
      { start: out.chars - 1, end: out.chars },
      { start: 0, end: 2 },
      { start: 4, end: 6 },
    ]);
    expect(stripTails(out)).toBe(b.prompt);
  });

  it("rejects an unknown anchor, a foreign counter and a tampered contract", async () => {
    const c = toWireContract(await sample(), OPTS);
    const e1 = (() => {
      try {
        appendTail(c, [
          { anchor: "web", text: "ok" },
          { anchor: "nowhere", text: "x" },
        ]);
      } catch (e) {
        return e as PromptctxError;
      }
    })();
    expect([e1?.code, e1?.path]).toEqual(["invalid_input", "tails[1].anchor"]);
    expect(() => appendTail(c, [], { counter: getTokenCounter("cl100k_base") })).toThrow(
      /reserves are in "estimate" tokens/,
    );
    expect(() =>
      appendTail({ ...c, assembledContext: `${c.assembledContext} ` }, [
        { anchor: "web", text: "x" },
      ]),
    ).toThrow(PromptctxError);
    expect(() => appendTail({ ...c, assemblerVersion: "2.0.0" }, [])).toThrow(
      UnsupportedVersionError,
    );
  });

  it("property: any tails keep the body intact and every kept tail within its reserve", async () => {
    const a = await sample();
    const c = toWireContract(a, OPTS);
    const reserve = new Map(OPTS.anchors.map((x) => [x.name, x]));
    fc.assert(
      fc.property(
        fc.array(
          fc.record({
            anchor: fc.constantFrom("inbound", "docs", "web"),
            text: fc.string({ unit: "grapheme", maxLength: 300 }),
          }),
          { maxLength: 6 },
        ),
        (tails) => {
          const out = appendTail(c, tails);
          expect(stripTails(out)).toBe(a.prompt);
          for (const l of out.layers) {
            const wire = c.layerManifest.find((x) => x.id === l.id);
            expect(versionId(cpSlice(out.prompt, l.span.start, l.span.end))).toBe(wire?.versionId);
          }
          const used = new Map<string, number>();
          out.tails.forEach((t, i) => {
            const original = tails[i]?.text as string;
            const kept = t.span === null ? "" : cpSlice(out.prompt, t.span.start, t.span.end);
            expect(original.startsWith(kept)).toBe(true);
            expect(t.truncated).toBe(kept !== original);
            if (kept !== "") {
              used.set(t.anchor, (used.get(t.anchor) ?? 0) + counter.count(TAIL_JOIN + kept));
            }
          });
          for (const [name, tokens] of used) {
            expect(tokens).toBeLessThanOrEqual(reserve.get(name)?.reserveTokens as number);
          }
        },
      ),
      { numRuns: 60 },
    );
  });
});
