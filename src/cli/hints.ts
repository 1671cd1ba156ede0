/** Hints for people: one `hint:` line each, with its stable code. */
import type { Hint } from "../store/index.js";

/**
 * The hints as lines (`hint: MESSAGE (CODE)`), or "" when there are none.
 *
 * @example hintLines([{ code: "query_only_stop_words", message: "…" }]) // "hint: … (query_only_stop_words)\n"
 */
export function hintLines(hints: readonly Hint[]): string {
  return hints.map((h) => `hint: ${h.message} (${h.code})\n`).join("");
}
