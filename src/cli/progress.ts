/** The progress bar of long CLI runs (import, reembed), on stderr when it is a terminal. */

/**
 * A one-line progress bar: `[#####     ] 52% 52000/100000`.
 *
 * @example renderProgress(52000, 100000, 10) // "[#####     ] 52% 52000/100000"
 */
export function renderProgress(done: number, total: number, width = 30): string {
  const ratio = total > 0 ? Math.min(1, Math.max(0, done / total)) : 1;
  const filled = Math.floor(ratio * width);
  const pct = Math.floor(ratio * 100);
  return `[${"#".repeat(filled)}${" ".repeat(width - filled)}] ${pct}% ${done}/${total}`;
}
