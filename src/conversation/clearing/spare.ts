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
  if (keep === 0) return messages.length;
  let seen = 0;
  for (let i = messages.length - 1; i >= 0; i--) {
    if (messages[i]?.role === "tool" && ++seen === keep) return i;
  }
  return null;
}
