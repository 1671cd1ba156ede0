/**
 * The CLI edge's view of stdout: whether it is a terminal, its width and the environment,
 * read from the process once per verb and passed to the table code as a parameter (table
 * code never reads the process).
 */
import { type TableStyle, type Terminal, tableStyle } from "./table.js";

/**
 * What the process's stdout is now.
 *
 * @example terminalWidth(stdoutTerminal()) // 80 when piped without COLUMNS
 */
export function stdoutTerminal(): Terminal {
  return {
    isTTY: Boolean(process.stdout.isTTY),
    columns: process.stdout.columns,
    env: process.env,
  };
}

/**
 * The table style of the process's stdout; `wide` prints every cell whole.
 *
 * @example stdoutStyle(opts.wide).width // the terminal's width, or null with --wide
 */
export function stdoutStyle(wide = false): TableStyle {
  return tableStyle(stdoutTerminal(), wide);
}
