import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  type Column,
  fitText,
  renderTable,
  tableStyle,
  terminalWidth,
} from "../../src/cli/table.js";
import { displayWidth } from "../../src/text/index.js";

type Row = { id: string; status: string; n: number; kind: string; ref: string; detail: string };
// A decision table's shape: a name, a key code, a number, a short label, two free texts.
const COLUMNS: Column<Row>[] = [
  { header: "id", cell: (r) => r.id },
  { header: "status", cell: (r) => r.status, whole: true, tone: () => "good" },
  { header: "n", cell: (r) => r.n, align: "right" },
  { header: "kind", cell: (r) => r.kind },
  { header: "ref", cell: (r) => (r.ref === "" ? null : r.ref), elastic: true },
  { header: "detail", cell: (r) => r.detail, elastic: true, tone: () => "muted" },
];

const token = (max: number) =>
  fc.string({
    minLength: 1,
    maxLength: max,
    unit: fc.constantFrom("a", "z", "_", ":", "-", "表", "한", "🙂", "é"),
  });
const words = (max: number) => fc.array(token(12), { maxLength: max }).map((ws) => ws.join(" "));
const arbRow = fc.record({
  id: token(14),
  status: fc.constantFrom("included", "dropped", "selected"),
  n: fc.integer({ min: 0, max: 10_000_000 }),
  kind: token(10),
  ref: words(6),
  detail: words(20),
});

const SGR = new RegExp(`${String.fromCharCode(27)}\\[[0-9;]*m`, "g");
const visible = (line: string) => line.replace(SGR, "");
function counts(s: string): Map<string, number> {
  const m = new Map<string, number>();
  for (const ch of s) if (ch !== " ") m.set(ch, (m.get(ch) ?? 0) + 1);
  return m;
}

describe("tables fitted to a width", () => {
  it("no line is wider than the width; key cells stay whole on their row; no text is lost", () => {
    fc.assert(
      fc.property(
        fc.array(arbRow, { minLength: 1, maxLength: 6 }),
        fc.integer({ min: 20, max: 160 }),
        fc.boolean(),
        (rows, width, color) => {
          const out = renderTable(rows, COLUMNS, { color, width });
          const lines = out.split("\n").map(visible);
          for (const line of lines) expect(displayWidth(line)).toBeLessThanOrEqual(width);
          // No character of any cell is lost (rows wrap, columns move under rows).
          const have = counts(lines.join(""));
          for (const r of rows) {
            for (const c of COLUMNS) {
              for (const [ch, n] of counts(String(c.cell(r) ?? "")))
                expect(have.get(ch) ?? 0).toBeGreaterThanOrEqual(n);
            }
          }
          // The key columns (id, status, n) fit together in 20 columns only when short; when
          // they do, each row's key cells are whole on one line.
          const keys = (r: Row) => [r.id, r.status, String(r.n)];
          const keyWidth = Math.max(
            ...["id", "status", "n"].map((h, k) =>
              Math.max(displayWidth(h), ...rows.map((r) => displayWidth(keys(r)[k] as string))),
            ),
          );
          if (3 * keyWidth + 4 <= width) {
            for (const r of rows) {
              expect(lines.some((l) => keys(r).every((k) => l.includes(k)))).toBe(true);
            }
          }
        },
      ),
      { numRuns: 300 },
    );
  });

  it("width null (--wide) prints one line per row with every cell whole", () => {
    fc.assert(
      fc.property(fc.array(arbRow, { minLength: 1, maxLength: 6 }), (rows) => {
        const lines = renderTable(rows, COLUMNS, { color: false, width: null }).split("\n");
        expect(lines).toHaveLength(rows.length + 2);
        rows.forEach((r, i) => {
          for (const c of COLUMNS) {
            const v = c.cell(r);
            expect(lines[i + 2]).toContain(v === null ? "-" : String(v));
          }
        });
      }),
      { numRuns: 200 },
    );
  });

  it("free text wraps in its column when there is room, else moves under the row", () => {
    const rows = [
      {
        id: "identifier-1",
        status: "included",
        n: 1234567,
        kind: "static",
        ref: "",
        detail: "the quick brown fox jumps over the lazy dog twice",
      },
    ];
    const roomy = renderTable(rows, COLUMNS, { color: false, width: 70 }).split("\n");
    expect(roomy[2]).toMatch(/^identifier-1 +included +1234567 +static +- +the quick brown fox/);
    expect(roomy.length).toBeGreaterThan(3);
    const narrow = renderTable(rows, COLUMNS, { color: false, width: 44 }).split("\n");
    expect(narrow).toEqual([
      "id            status          n  kind    ref",
      "------------  --------  -------  ------  ---",
      "identifier-1  included  1234567  static  -",
      "    detail: the quick brown fox jumps over",
      "    the lazy dog twice",
    ]);
  });
});

describe("the width to fit", () => {
  it("the terminal's columns on a TTY, else COLUMNS, else 80", () => {
    expect(terminalWidth({ isTTY: true, columns: 132, env: { COLUMNS: "90" } })).toBe(132);
    expect(terminalWidth({ isTTY: false, columns: 132, env: { COLUMNS: "90" } })).toBe(90);
    expect(terminalWidth({ isTTY: false, env: {} })).toBe(80);
    expect(terminalWidth({ isTTY: true, columns: 0, env: {} })).toBe(80);
    for (const bad of ["", "abc", "-5", "0", "1e3", "9999999"]) {
      expect(terminalWidth({ isTTY: false, env: { COLUMNS: bad } })).toBe(80);
    }
    expect(tableStyle({ isTTY: false, env: {} }, true)).toEqual({ color: false, width: null });
    expect(tableStyle({ isTTY: true, columns: 8, env: {} })).toEqual({ color: true, width: 20 });
    expect(tableStyle({ isTTY: true, columns: 100, env: { NO_COLOR: "1" } }).color).toBe(false);
  });

  it("fitText wraps only lines that are too wide, measuring without colour codes", () => {
    const painted = `\u001b[32m${"x".repeat(20)}\u001b[0m`;
    expect(
      fitText(`${painted}\nshort\n${"word ".repeat(8).trim()}`, { color: true, width: 20 }),
    ).toBe(`${painted}\nshort\nword word word word\nword word word word`);
    expect(fitText("a b c", { color: false, width: null })).toBe("a b c");
  });
});
