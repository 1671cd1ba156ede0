// Admission under the budgets: required segments reserved first, then optional ones priced in admission order.
import { PromptBudgetError } from "../errors/index.js";
import type { TokenCounter } from "../tokens/index.js";
import { type CharLedger, charsWith, commitChars } from "./char-ledger.js";
import { decide } from "./decision.js";
import { type Entry, isReserved } from "./entry.js";
import { type Layout, ownTokens } from "./layout.js";
import { admissionOrder } from "./order.js";
import type { TokenLedger } from "./token-ledger.js";

/** What admission prices against: the budgets, the counter, the layout and the ledgers. */
export interface Budget {
  budgetChars: number | null;
  budgetTokens: number | null;
  counter: TokenCounter;
  layout: Layout;
  /** Null without a token budget: nothing needs pricing per candidate, the prompt is counted once. */
  ledger: TokenLedger | null;
  chars: CharLedger;
}

/**
 * Reserves every active required and `neverTruncate` segment, or throws a
 * {@link PromptBudgetError} naming them all when together they exceed a budget (chars
 * checked first). A `neverTruncate` segment is never a trimming candidate (docs/manifest-wire-guard.md): it is
 * reserved like a required one, with reason `never_truncate`.
 */
export function reserveRequired(entries: readonly Entry[], b: Budget): void {
  const { budgetChars, budgetTokens, counter, layout, ledger, chars } = b;
  const reserved = entries.filter((e) => e.inactive === null && isReserved(e));
  for (const e of reserved) {
    commitChars(chars, e, charsWith(chars, e));
    ledger?.add(e.display);
  }
  if (reserved.length === 0) return;
  const names = reserved.map((e) => e.name);
  const which = reserved.every((e) => e.required)
    ? `required segments (${names.join(", ")})`
    : `required and neverTruncate segments (${names.join(", ")})`;
  if (budgetChars !== null && chars.used > budgetChars) {
    throw new PromptBudgetError(
      `${which} need ${chars.used} chars; budgetChars is ${budgetChars}`,
      names,
      "budgetChars",
    );
  }
  const tokens = ledger?.total() ?? 0;
  if (budgetTokens !== null && tokens > budgetTokens) {
    throw new PromptBudgetError(
      `${which} need ${tokens} tokens (${counter.name}); budgetTokens is ${budgetTokens}`,
      names,
      "budgetTokens",
    );
  }
  for (const e of reserved) {
    ownTokens(layout, counter, e.display);
    if (e.required)
      decide(e, "included", "required", "required: reserved before optional segments");
    else decide(e, "included", "never_truncate", "neverTruncate: reserved like a required segment");
  }
}

/**
 * Admits the optional active segments in admission order while the prompt with each one
 * fits every budget, and drops the others with the budget they exceed.
 */
export function admitOptional(entries: readonly Entry[], b: Budget): void {
  const { budgetChars, budgetTokens, counter, layout, ledger, chars } = b;
  const dropDetails = new Map<number, string>(); // by exact tokens, or -1 - room when bounded
  for (const e of admissionOrder(entries)) {
    const withChars = charsWith(chars, e);
    if (budgetChars !== null && withChars > budgetChars) {
      ownTokens(layout, counter, e.display);
      decide(
        e,
        "dropped",
        "char_budget_exceeded",
        `would use ${withChars} chars; budget is ${budgetChars}`,
      );
      continue;
    }
    let tokens: number | null = null; // stays null without a token budget
    if (ledger !== null && budgetTokens !== null) {
      tokens = ledger.costUpTo(e.display, budgetTokens);
      if (tokens > budgetTokens) {
        if (!ledger.bounded) ownTokens(layout, counter, e.display); // exact: keep its figures
        const detail = tokenDropDetail(ledger, tokens, budgetTokens, dropDetails);
        decide(e, "dropped", "token_budget_exceeded", detail);
        continue;
      }
      ledger.add(e.display);
    }
    ownTokens(layout, counter, e.display);
    commitChars(chars, e, withChars);
    // Formatted only once admitted: under a tight budget most candidates are dropped.
    let detail = `fits: prompt at ${withChars} chars${budgetChars === null ? "" : ` of ${budgetChars}`}`;
    if (tokens !== null) detail += `, ${tokens} of ${budgetTokens} tokens`;
    decide(e, "included", "fits_budget", detail);
  }
}

/**
 * The detail of a drop over the token budget, `tokens` being the ledger's last `costUpTo`:
 * exact, or (when the ledger stopped early) the room the budget left for the segment.
 * Once the budget is nearly full, thousands of drops share a handful of details, so they
 * are kept in `details` by exact tokens, or by -1 - room when bounded.
 */
function tokenDropDetail(
  ledger: TokenLedger,
  tokens: number,
  budgetTokens: number,
  details: Map<number, string>,
): string {
  const key = ledger.bounded ? -1 - Math.max(0, ledger.room) : tokens;
  let detail = details.get(key);
  if (detail === undefined) {
    detail = ledger.bounded
      ? `would use more than ${budgetTokens} tokens (${-1 - key} left for it); budget is ${budgetTokens}`
      : `would use ${tokens} tokens; budget is ${budgetTokens}`;
    details.set(key, detail);
  }
  return detail;
}
