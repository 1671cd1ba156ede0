/**
 * Aligned text tables for people, fitted to the terminal: long cells are shortened with
 * "…" (the full values are one flag away: `--wide`, or `--json`). Colour only when the
 * stream is a TTY (and NO_COLOR is unset): machines get `--json`, never ANSI codes.
 */
/** How tables are drawn: colour, and the width to fit (`null`: never shorten). */
export interface TableStyle {
  readonly color: boolean;
  readonly width: number | null;
}

/** Width used when stdout is not a terminal. */
export const DEFAULT_TABLE_WIDTH = 100;

/**
 * The style for stdout: colour on a TTY without NO_COLOR; the terminal's width (100 when
 * not a TTY); `wide` turns shortening off.
 *
 * @example tableStyle(true).width // null
 */
export function tableStyle(wide = false): TableStyle {
  const tty = Boolean(process.stdout.isTTY);
  const width = wide
    ? null
    : tty
      ? (process.stdout.columns ?? DEFAULT_TABLE_WIDTH)
      : DEFAULT_TABLE_WIDTH;
  return { color: tty && !process.env.NO_COLOR, width };
}

export type Tone = "good" | "bad" | "muted" | null;

/** A table column: header, how to read a cell, optional right alignment and tone. */
export interface Column<Row> {
  header: string;
  cell: (row: Row) => string | number | null;
  align?: "left" | "right";
  tone?: (row: Row) => Tone;
  /** Free text (details, refs, excerpts) that gives up its width first when a table must fit. */
  elastic?: boolean;
  /** Never shortened (reason codes and statuses: the point of the table). */
  whole?: boolean;
}

const CODES: Record<Exclude<Tone, null>, string> = { good: "32", bad: "31", muted: "2" };

// East Asian wide characters take two terminal columns; count them so columns align.
/** East Asian wide code points (two columns each), as inclusive ranges: the one list. */
const WIDE: ReadonlyArray<readonly [number, number]> = [
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

function charWidth(cp: number): number {
  for (const [lo, hi] of WIDE) if (cp >= lo && cp <= hi) return 2;
  return 1;
}

const hex = (n: number) => `\\u${n.toString(16).padStart(4, "0")}`;

// Without surrogates and wide BMP characters, every UTF-16 unit is one character one
// column wide: most cells, measured by a native scan instead of a loop over characters.
// Built from WIDE's BMP ranges and the surrogate block.
const NARROW = new RegExp(
  `^[^${[...WIDE.filter(([, hi]) => hi <= 0xffff), [0xd800, 0xdfff]]
    .map(([lo, hi]) => `${hex(lo)}-${hex(hi)}`)
    .join("")}]*$`,
);

/**
 * The terminal columns `s` takes (East Asian wide characters count two).
 *
 * @example displayWidth("表a") // 3
 */
export function displayWidth(s: string): number {
  if (NARROW.test(s)) return s.length;
  let w = 0;
  for (const ch of s) w += charWidth(ch.codePointAt(0) as number);
  return w;
}

/**
 * `s` shortened to at most `width` columns, ending in "…" when anything was cut: the
 * characters that fit in `width - 1` columns, then "…".
 *
 * @example shorten("abcdef", 4) // "abc…"
 */
export function shorten(s: string, width: number): string {
  if (NARROW.test(s)) return s.length <= width ? s : `${s.slice(0, Math.max(0, width - 1))}…`;
  let used = 0;
  let at = 0;
  let cut = -1;
  for (const ch of s) {
    used += charWidth(ch.codePointAt(0) as number);
    if (cut < 0 && used > width - 1) cut = at;
    if (used > width) return `${s.slice(0, cut)}…`;
    at += ch.length;
  }
  return s;
}

// Narrows the widest shortenable column, one column at a time, until the row fits: elastic
// (free-text) columns first, then the others. Right-aligned (numeric) and `whole` columns
// are never cut; a column keeps at least its header (and 6 columns unless it is elastic).
function fitWidths<Row>(widths: number[], columns: readonly Column<Row>[], max: number): number[] {
  const out = [...widths];
  const floor = columns.map((c, i) => {
    const header = displayWidth(c.header);
    if (c.align === "right" || c.whole) return widths[i] as number;
    return c.elastic ? header : Math.max(header, Math.min(widths[i] as number, 6));
  });
  let excess = out.reduce((a, b) => a + b, 0) + 2 * (out.length - 1) - max;
  for (const pass of [true, false]) {
    while (excess > 0) {
      let best = -1;
      out.forEach((w, i) => {
        const eligible = pass ? columns[i]?.elastic === true : true;
        if (eligible && w > (floor[i] as number) && (best < 0 || w > (out[best] as number))) {
          best = i;
        }
      });
      if (best < 0) break;
      out[best] = (out[best] as number) - 1;
      excess -= 1;
    }
  }
  return out;
}

/**
 * Renders rows as an aligned table with a header and a rule line, fitted to
 * `style.width` (cells shortened with "…"; `null` keeps every cell whole).
 *
 * @example renderTable([{ a: 1 }], [{ header: "A", cell: (r) => r.a }], { color: false, width: 80 })
 */
export function renderTable<Row>(
  rows: readonly Row[],
  columns: readonly Column<Row>[],
  style: TableStyle,
): string {
  const color = style.color;
  const full = rows.map((r) =>
    columns.map((c) => {
      const v = c.cell(r);
      return v === null ? "-" : String(v);
    }),
  );
  const natural = columns.map((c, i) =>
    Math.max(displayWidth(c.header), ...full.map((t) => displayWidth(t[i] as string))),
  );
  const widths = style.width === null ? natural : fitWidths(natural, columns, style.width);
  const text = full.map((cells) => cells.map((s, i) => shorten(s, widths[i] as number)));
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
