/**
 * Aligned text tables for people, fitted to a width the CLI edge passes in (the terminal's,
 * or COLUMNS, or 80): key columns stay whole, free-text columns wrap inside their column,
 * and columns that do not fit move under their row as `header: value` lines — no text is
 * cut (`--wide` prints one line per row, `--json` the data). Colour only when the stream
 * is a TTY (and NO_COLOR is unset): machines get `--json`, never ANSI codes.
 */
import { displayWidth, wrapToWidth } from "../text/index.js";

/** How tables are drawn: colour, and the width to fit (`null`: one line per row, any width). */
export interface TableStyle {
  readonly color: boolean;
  readonly width: number | null;
}

/** What the CLI edge knows of its output stream (read once, from the process, by the verb). */
export interface Terminal {
  readonly isTTY: boolean;
  /** The TTY's width in columns, when it reports one. */
  readonly columns?: number | undefined;
  /** The environment (COLUMNS, NO_COLOR). */
  readonly env: Readonly<Record<string, string | undefined>>;
}

/** Width used when stdout is not a terminal and COLUMNS is unset. */
export const DEFAULT_TABLE_WIDTH = 80;

/** The narrowest width fitted to (a narrower terminal gets lines this wide). */
export const MIN_TABLE_WIDTH = 20;

/**
 * The width to fit: the terminal's columns on a TTY, else COLUMNS when it is a positive
 * integer, else 80.
 *
 * @example terminalWidth({ isTTY: false, env: { COLUMNS: "120" } }) // 120
 */
export function terminalWidth(terminal: Terminal): number {
  const cols = terminal.columns;
  if (terminal.isTTY && cols !== undefined && Number.isInteger(cols) && cols > 0) return cols;
  const env = terminal.env.COLUMNS?.trim() ?? "";
  if (/^\d{1,6}$/.test(env) && Number(env) > 0) return Number(env);
  return DEFAULT_TABLE_WIDTH;
}

/**
 * The style for a stream: colour on a TTY without NO_COLOR; the {@link terminalWidth}
 * (at least {@link MIN_TABLE_WIDTH}); `wide` turns fitting off.
 *
 * @example tableStyle({ isTTY: false, env: {} }, true).width // null
 */
export function tableStyle(terminal: Terminal, wide = false): TableStyle {
  const width = wide ? null : Math.max(MIN_TABLE_WIDTH, terminalWidth(terminal));
  return { color: terminal.isTTY && !terminal.env.NO_COLOR, width };
}

/**
 * Text fitted to `style.width`: every line wider than the width is word-wrapped (colour
 * codes take no columns); `null` keeps the text as it is.
 *
 * @example fitText("a long line", { color: false, width: 6 }) // "a long\nline"
 */
export function fitText(text: string, style: TableStyle): string {
  const max = style.width;
  if (max === null) return text;
  return text
    .split("\n")
    .flatMap((line) => (visibleWidth(line) <= max ? [line] : wrapToWidth(line, max)))
    .join("\n");
}

const SGR = /\u001b\[[0-9;]*m/g;
const visibleWidth = (s: string) => displayWidth(s.includes("\u001b") ? s.replace(SGR, "") : s);

export type Tone = "good" | "bad" | "muted" | null;

/** A table column: header, how to read a cell, optional right alignment and tone. */
export interface Column<Row> {
  header: string;
  cell: (row: Row) => string | number | null;
  align?: "left" | "right";
  tone?: (row: Row) => Tone;
  /** Free text (details, refs, excerpts): wraps inside its column, or moves under the row first. */
  elastic?: boolean;
  /**
   * A key column (reason codes and statuses: the point of the table): stays on the row
   * while anything else can move. The first column (the row's name) and right-aligned
   * (numeric) columns are keys too.
   */
  whole?: boolean;
}

const CODES: Record<Exclude<Tone, null>, string> = { good: "32", bad: "31", muted: "2" };

/** The narrowest a free-text column gets on the row before it moves under the row. */
const ELASTIC_MIN = 16;

/** A free-text column on the row is wide enough for its longest word, up to this width. */
const WORD_MAX = 40;

/** Indentation of the `header: value` lines under a row. */
const BELOW = "    ";

/** Where each column goes: on the row (at a width) or under it. */
interface Layout {
  /** Column indexes on the row line, in order. */
  row: number[];
  /** Column indexes shown under the row, in order. */
  below: number[];
  /** Width of each column on the row (by column index). */
  widths: number[];
}

const isKey = <Row>(c: Column<Row>, i: number) =>
  i === 0 || c.whole === true || c.align === "right";

// The least an elastic column takes on the row: its header, ELASTIC_MIN columns and its
// longest word up to WORD_MAX (so words rarely break), or its natural width when smaller.
function elasticFloor(natural: number, longestWord: number, header: string): number {
  return Math.min(
    natural,
    Math.max(ELASTIC_MIN, displayWidth(header), Math.min(longestWord, WORD_MAX)),
  );
}

// Moves columns under the row until the row fits: free text first, then other non-key
// columns, then keys (never the first), each time the rightmost; then brings back, left to
// right, free text that fits again. Then gives elastic columns on the row the room left,
// one column at a time to the narrowest, up to their natural width.
function layout<Row>(
  natural: readonly number[],
  longestWord: readonly number[],
  columns: readonly Column<Row>[],
  max: number,
): Layout {
  const row = columns.map((_, i) => i);
  const below: number[] = [];
  const floor = (i: number) => {
    const c = columns[i] as Column<Row>;
    const n = natural[i] as number;
    return c.elastic ? elasticFloor(n, longestWord[i] as number, c.header) : n;
  };
  const need = () => row.reduce((a, i) => a + floor(i), 0) + 2 * (row.length - 1);
  const rightmost = (pick: (c: Column<Row>, i: number) => boolean) =>
    [...row].reverse().filter((i) => i > 0 && pick(columns[i] as Column<Row>, i));
  const order = [
    ...rightmost((c) => c.elastic === true),
    ...rightmost((c, i) => !c.elastic && !isKey(c, i)),
    ...rightmost((c, i) => !c.elastic && isKey(c, i)),
  ];
  for (const i of order) {
    if (need() <= max) break;
    row.splice(row.indexOf(i), 1);
    below.push(i);
  }
  for (const i of [...below].sort((a, b) => a - b)) {
    if (!columns[i]?.elastic) continue;
    const back = [...row, i].sort((a, b) => a - b);
    const fits = back.reduce((a, j) => a + floor(j), 0) + 2 * (back.length - 1) <= max;
    if (fits) {
      row.splice(0, row.length, ...back);
      below.splice(below.indexOf(i), 1);
    }
  }
  const widths = natural.map((w, i) => (columns[i]?.elastic ? floor(i) : w));
  // The first column alone wider than the line: it wraps at the line's width.
  if (row.length === 1 && need() > max) widths[0] = max;
  let extra = max - need();
  const grow = row.filter((i) => columns[i]?.elastic);
  while (extra > 0) {
    const open = grow.filter((i) => (widths[i] as number) < (natural[i] as number));
    if (open.length === 0) break;
    const next = open.reduce((a, b) => ((widths[b] as number) < (widths[a] as number) ? b : a));
    widths[next] = (widths[next] as number) + 1;
    extra--;
  }
  return { row, below: below.sort((a, b) => a - b), widths };
}

// The `header: value · …` lines under a row for the columns moved there (empty cells left
// out), wrapped to `max` with a hanging indent.
function belowLines<Row>(
  below: readonly number[],
  columns: readonly Column<Row>[],
  data: Row,
  cells: readonly string[],
  max: number,
): string[] {
  const fields = below
    .filter((i) => {
      const v = columns[i]?.cell(data) ?? null;
      return v !== null && v !== "";
    })
    .map((i) => (columns[i]?.header ? `${columns[i]?.header}: ${cells[i]}` : cells[i]));
  return fields.length === 0 ? [] : wrapToWidth(`${BELOW}${fields.join(" · ")}`, max, BELOW);
}

// A cell as text on one line: null is "-", newlines are spaces.
function cellText<Row>(c: Column<Row>, row: Row): string {
  const v = c.cell(row);
  return v === null ? "-" : String(v).replace(/\r?\n/g, " ");
}

/**
 * Renders rows as an aligned table with a header and a rule line. With `style.width` set,
 * no line is wider: free-text columns wrap inside their column, and columns that do not fit
 * move under their row as indented `header: value` lines (null cells omitted); key columns
 * are never cut. `null` draws one line per row at the columns' natural widths.
 *
 * @example renderTable([{ a: 1 }], [{ header: "A", cell: (r) => r.a }], { color: false, width: 80 })
 */
export function renderTable<Row>(
  rows: readonly Row[],
  columns: readonly Column<Row>[],
  style: TableStyle,
): string {
  const full = rows.map((r) => columns.map((c) => cellText(c, r)));
  const natural = columns.map((c, i) =>
    Math.max(displayWidth(c.header), ...full.map((t) => displayWidth(t[i] as string))),
  );
  const longestWord = columns.map((_, i) =>
    Math.max(0, ...full.map((t) => Math.max(...(t[i] as string).split(" ").map(displayWidth)))),
  );
  const max = style.width;
  const { row, below, widths } =
    max === null
      ? { row: columns.map((_, i) => i), below: [], widths: natural }
      : layout(natural, longestWord, columns, max);
  const paint = (s: string, tone: Tone) =>
    style.color && tone && s !== "" ? `\u001b[${CODES[tone]}m${s}\u001b[0m` : s;
  const line = (cells: readonly string[], tones: readonly Tone[]) =>
    row
      .map((i, k) => {
        const s = cells[k] as string;
        // Padding stays outside colour codes, so a line's trailing spaces trim.
        const gap = " ".repeat((widths[i] as number) - displayWidth(s));
        const text = paint(s, tones[k] ?? null);
        return columns[i]?.align === "right" ? gap + text : text + gap;
      })
      .join("  ")
      .trimEnd();
  const lines = [
    line(
      row.map((i) => columns[i]?.header as string),
      row.map(() => null),
    ),
    row.map((i) => "-".repeat(widths[i] as number)).join("  "),
  ];
  full.forEach((cells, r) => {
    const data = rows[r] as Row;
    const tones = row.map((i) => columns[i]?.tone?.(data) ?? null);
    // Cells wrap inside their column (only free text is ever narrower than its text).
    const pieces = row.map((i) => wrapToWidth(cells[i] as string, widths[i] as number));
    const height = Math.max(...pieces.map((p) => p.length));
    for (let k = 0; k < height; k++)
      lines.push(
        line(
          pieces.map((p) => p[k] ?? ""),
          tones,
        ),
      );
    if (max === null) return;
    for (const l of belowLines(below, columns, data, cells, max)) lines.push(paint(l, "muted"));
  });
  return lines.join("\n");
}
