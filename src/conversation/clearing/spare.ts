/**
 * The one rule both clearing kinds spare recent results by: the last N tool messages are
 * never cleared (`keepRecentToolResults`).
 */

/**
 * Index of the earliest of the last `keep` tool messages — clearing stops before it;
 * `messages.length` when `keep` is 0 (nothing is spared), null when there are fewer than
 * `keep` tool messages (everything is spared).
 *
 * @example firstSparedToolMessage([{ role: "user" }, { role: "tool" }, { role: "tool" }], 1) // 2
 */
export function firstSparedToolMessage(
  messages: readonly { readonly role: string }[],
  keep: number,
): number | null {
  const tools: number[] = [];
  messages.forEach((m, i) => {
    if (m.role === "tool") tools.push(i);
  });
  return firstSparedAmong(tools, messages.length, keep);
}

/**
 * {@link firstSparedToolMessage} of the first `n` messages, given the indices of the tool
 * messages in order (of those messages or of a longer conversation): found by bisection,
 * so many prefixes of one conversation share one list.
 *
 * @example firstSparedAmong([1, 2, 5], 5, 1) // 2
 */
export function firstSparedAmong(tools: readonly number[], n: number, keep: number): number | null {
  if (keep === 0) return n;
  // Tool messages among the first n: the keep-th from the last starts the spared ones.
  const lo = countBelow(tools, n);
  return lo >= keep ? (tools[lo - keep] as number) : null;
}

/**
 * How many of the ascending `xs` are below `end` (by bisection).
 *
 * @example countBelow([1, 2, 5], 3) // 2
 */
export function countBelow(xs: readonly number[], end: number): number {
  let lo = 0;
  let hi = xs.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if ((xs[mid] as number) < end) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}
