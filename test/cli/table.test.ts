import { execFileSync } from "node:child_process";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { type Column, renderTable } from "../../src/cli/table.js";
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
