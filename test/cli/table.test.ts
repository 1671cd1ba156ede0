import { execFileSync } from "node:child_process";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { type Column, displayWidth, renderTable, shorten } from "../../src/cli/table.js";
import { BIN } from "./run-cli.js";

type Row = { id: string; n: number; detail: string };
const COLUMNS: Column<Row>[] = [
  { header: "id", cell: (r) => r.id },
  { header: "n", cell: (r) => r.n, align: "right" },
  { header: "detail", cell: (r) => r.detail, elastic: true },
];
const arbRow = fc.record({
  id: fc.string({ minLength: 1, maxLength: 40 }).map((s) => s.replace(/\s/g, "x") || "x"),
  n: fc.integer({ min: 0, max: 10_000_000 }),
  detail: fc.string({ maxLength: 200 }).map((s) => s.replace(/\s/g, "_")),
});

// The plain definitions: a character's columns, and shortening one character at a time.
const WIDE: [number, number][] = [
  [0x1100, 0x115f],
  [0x2e80, 0xa4cf],
  [0xac00, 0xd7a3],
  [0xf900, 0xfaff],
  [0xfe30, 0xfe4f],
  [0xff00, 0xff60],
  [0xffe0, 0xffe6],
  [0x1f300, 0x1faff],
  [0x20000, 0x3fffd],
];
const refWidth = (s: string): number =>
  [...s].reduce((w, ch) => {
    const cp = ch.codePointAt(0) as number;
    return w + (WIDE.some(([a, b]) => cp >= a && cp <= b) ? 2 : 1);
  }, 0);
function refShorten(s: string, width: number): string {
  if (refWidth(s) <= width) return s;
  let out = "";
  for (const ch of s) {
    if (refWidth(out) + refWidth(ch) > width - 1) break;
    out += ch;
  }
  return `${out}…`;
}

describe("cell widths", () => {
  it("displayWidth and shorten agree with the character-by-character definitions", () => {
    const text = fc.oneof(
      fc.string({ unit: "grapheme", maxLength: 30 }),
      fc.string({ unit: "binary", maxLength: 30 }),
      fc.string({ maxLength: 30 }),
      fc.constantFrom("表表表abc", "한국어", "🙂🙂x", "a\ud800b", "ｆｕｌｌ", "x".repeat(40)),
    );
    fc.assert(
      fc.property(text, fc.integer({ min: 0, max: 40 }), (s, width) => {
        expect(displayWidth(s)).toBe(refWidth(s));
        expect(shorten(s, width)).toBe(refShorten(s, width));
      }),
      { numRuns: 2000 },
    );
  });
});

describe("tables fitted to the terminal", () => {
  it("every line fits the width whenever the columns' floors do; cut cells end in …", () => {
    fc.assert(
      fc.property(
        fc.array(arbRow, { minLength: 1, maxLength: 8 }),
        fc.integer({ min: 30, max: 200 }),
        (rows, width) => {
          const out = renderTable(rows, COLUMNS, { color: false, width });
          const nWidth = Math.max(1, ...rows.map((r) => String(r.n).length));
          // Floors: id ≥ min(natural, 6), n whole, detail ≥ its header.
          const floor = 6 + nWidth + "detail".length + 4;
          for (const line of out.split("\n")) {
            if (floor <= width) expect([...line].length).toBeLessThanOrEqual(width);
          }
          for (const line of out.split("\n").slice(2)) {
            const cells = line.split(/ {2,}/);
            for (const c of cells) if (c.endsWith("…")) expect(c.length).toBeGreaterThan(0);
          }
        },
      ),
      { numRuns: 200 },
    );
  });

  it("width null keeps every cell whole", () => {
    const rows = [{ id: "a".repeat(50), n: 1, detail: "d".repeat(300) }];
    const out = renderTable(rows, COLUMNS, { color: false, width: null });
    expect(out).toContain("d".repeat(300));
    expect(out).toContain("a".repeat(50));
  });

  it("elastic columns give way first; numbers are never cut", () => {
    const rows = [{ id: "identifier-1", n: 1234567, detail: "x".repeat(100) }];
    const out = renderTable(rows, COLUMNS, { color: false, width: 40 });
    const row = out.split("\n")[2] as string;
    expect(row).toContain("identifier-1");
    expect(row).toContain("1234567");
    expect(row.endsWith("…")).toBe(true);
    expect([...row].length).toBeLessThanOrEqual(40);
  });

  it("demo piped fits its tables to 100 columns; --wide prints them whole", () => {
    const narrow = execFileSync("node", [BIN, "demo"], { encoding: "utf8" });
    const table = narrow.split("\n\n")[0] as string;
    for (const line of table.split("\n").slice(1))
      expect([...line].length).toBeLessThanOrEqual(100);
    expect(table).toContain("…");
    const wide = execFileSync("node", [BIN, "demo", "--wide"], { encoding: "utf8" });
    expect(wide).toContain("services/billing/CLAUDE.local.md#");
    expect(wide.split("\n\n")[0]).not.toContain("…");
  });
});
