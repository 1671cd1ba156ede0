/**
 * The numbers behind a refused request: which part needs how much of the context window,
 * and what would make it fit — from the {@link PromptBudgetError} the planner threw, with
 * the system side, tools and reserves of the whole request added.
 */
import { type BudgetPart, PromptBudgetError } from "../../errors/index.js";

/** The parts of a request's window a refusal is restated with (a `RequestBudget`). */
export interface WindowParts {
  readonly contextWindow: number;
  readonly messagesBudget: number;
  readonly systemTokens: number;
  readonly toolsTokens: number;
  readonly otherTokens: number;
  readonly responseReserve: number;
  readonly tailReserve: number;
}

/** What {@link explainRefusal} returns: the figures, and the same in a few lines. */
export interface RefusalExplanation {
  /** Tokens the request needs at least, and what it has (the same unit: window or room). */
  need: number;
  budget: number;
  over: number;
  /** Each part's tokens (`system`, `tools`, `ask`, `latest_round`, `older_rounds` …). */
  parts: BudgetPart[];
  /** What would make it fit. */
  fix: string;
  lines: string[];
}

/**
 * The planner's refusal of the conversation restated for the whole request: the window's
 * fixed parts (system side, tools, other, response and tail reserves) added to what the
 * conversation needs, against the context window. Anything else is returned as is.
 */
export function requestRefusal(err: unknown, b: WindowParts): unknown {
  if (!(err instanceof PromptBudgetError) || err.details === null) return err;
  const d = err.details;
  const fixed: BudgetPart[] = [
    { part: "system", tokens: b.systemTokens },
    { part: "tools", tokens: b.toolsTokens },
    { part: "other", tokens: b.otherTokens },
    { part: "response_reserve", tokens: b.responseReserve },
    { part: "tail_reserve", tokens: b.tailReserve },
  ];
  const rest = b.contextWindow - b.messagesBudget;
  return new PromptBudgetError(
    `${err.message} (context window ${b.contextWindow}: ${rest} of it for the system side, tools and reserves)`,
    err.names,
    err.path,
    {
      need: d.need + rest,
      budget: b.contextWindow,
      parts: [...fixed.filter((p) => p.tokens > 0), ...d.parts],
      fix: d.fix,
    },
  );
}

/**
 * Explains a refusal (`prompt_budget_exceeded`) in figures and a few lines: what the
 * request needs, by part, against what it has, and what would make it fit. Returns null for
 * any other error, or a refusal without numbers.
 *
 * @example
 * try { await assembleRequest(input); } catch (err) {
 *   const why = explainRefusal(err);
 *   if (why !== null) console.error(why.lines.join("\n"));
 * }
 */
export function explainRefusal(err: unknown): RefusalExplanation | null {
  if (!(err instanceof PromptBudgetError) || err.details === null) return null;
  const d = err.details;
  const over = d.need - d.budget;
  const parts = d.parts.filter((p) => p.tokens > 0);
  const lines = [
    `refused: needs ${d.need} tokens, has ${d.budget} (${over} over)`,
    ...parts.map((p) => `  ${p.part}: ${p.tokens}`),
    `fix: ${d.fix}`,
  ];
  return { need: d.need, budget: d.budget, over, parts: [...d.parts], fix: d.fix, lines };
}
