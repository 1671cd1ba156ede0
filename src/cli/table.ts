/**
 * Aligned text tables for people. Colour only when the stream is a TTY (and NO_COLOR is
 * unset): machines get `--json`, never ANSI codes.
 */
import { cpLength } from "../text/index.js";

export type Tone = "good" | "bad" | "muted" | null;

/** A table column: header, how to read a cell, optional right alignment and tone. */
export interface Column<Row> {
  header: string;
  cell: (row: Row) => string | number | null;
  align?: "left" | "right";
  tone?: (row: Row) => Tone;
}

const CODES: Record<Exclude<Tone, null>, string> = { good: "32", bad: "31", muted: "2" };

// East Asian wide characters take two terminal columns; count them so columns align.
function displayWidth(s: string): number {
  let w = cpLength(s);
  for (const ch of s) {
    const cp = ch.codePointAt(0) as number;
    if (
      (cp >= 0x1100 && cp <= 0x115f) ||
      (cp >= 0x2e80 && cp <= 0xa4cf) ||
      (cp >= 0xac00 && cp <= 0xd7a3) ||
      (cp >= 0xf900 && cp <= 0xfaff) ||
      (cp >= 0xfe30 && cp <= 0xfe4f) ||
      (cp >= 0xff00 && cp <= 0xff60) ||
      (cp >= 0xffe0 && cp <= 0xffe6) ||
      (cp >= 0x1f300 && cp <= 0x1faff) ||
      (cp >= 0x20000 && cp <= 0x3fffd)
    ) {
      w++;
    }
  }
  return w;
}

/**
 * Renders rows as an aligned table with a header and a rule line.
 *
 * @example renderTable([{ a: 1 }], [{ header: "A", cell: (r) => r.a }], false)
 */
export function renderTable<Row>(
  rows: readonly Row[],
  columns: readonly Column<Row>[],
  color: boolean,
): string {
  const text = rows.map((r) =>
    columns.map((c) => {
      const v = c.cell(r);
      return v === null ? "-" : String(v);
    }),
  );
  const widths = columns.map((c, i) =>
    Math.max(displayWidth(c.header), ...text.map((t) => displayWidth(t[i] as string))),
  );
  const pad = (s: string, i: number) => {
    const gap = " ".repeat((widths[i] as number) - displayWidth(s));
    return columns[i]?.align === "right" ? gap + s : s + gap;
  };
  const paint = (s: string, tone: Tone) =>
    color && tone ? `\u001b[${CODES[tone]}m${s}\u001b[0m` : s;
  const lines = [
    columns
      .map((c, i) => pad(c.header, i))
      .join("  ")
      .trimEnd(),
  ];
  lines.push(widths.map((w) => "-".repeat(w)).join("  "));
  text.forEach((cells, r) => {
    const row = rows[r] as Row;
    lines.push(
      cells
        .map((s, i) => paint(pad(s, i), columns[i]?.tone?.(row) ?? null))
        .join("  ")
        .trimEnd(),
    );
  });
  return lines.join("\n");
}
