/**
 * `promptctx demo --segments`: the main job on embedded defaults — select memory from the
 * fixture (examples/demo/demo.json), plan the ten-segment prompt, print both decision
 * tables and the prompt. No key, no network.
 */
import { InvalidInputError } from "../../errors/index.js";
import { type MemoryPlan, selectMemoryContext } from "../../memory/index.js";
import { type PromptPlan, planPrompt } from "../../plan/index.js";
import { resolveTokenCounter } from "../../tokens/index.js";
import { fitText, type TableStyle } from "../table.js";
import { memoryDecisionTable, segmentDecisionTable } from "../tables.js";
import { demoData } from "./data.js";
import { demoSegments } from "./segments.js";

/** Reads PROMPT_BUDGET_CHARS: a non-negative integer or absent. */
export function budgetFromEnv(value: string | undefined, fallback: number): number {
  if (value === undefined || value === "") return fallback;
  if (!/^\d+$/.test(value.trim())) {
    throw new InvalidInputError(
      `PROMPT_BUDGET_CHARS must be a non-negative integer, got ${JSON.stringify(value)}`,
      "PROMPT_BUDGET_CHARS",
    );
  }
  return Math.min(Number(value.trim()), fallback);
}

/** Both plans of the demo. */
export interface DemoResult {
  memoryPlan: MemoryPlan;
  segmentPlan: PromptPlan;
}

/**
 * Runs the demo pipeline.
 *
 * @example runDemo({ budgetChars: 12000, tokenizer: "estimate" }).segmentPlan.prompt
 */
export function runDemo(options: {
  budgetChars: number;
  budgetTokens?: number;
  tokenizer: string;
}): DemoResult {
  const tokenCounter = resolveTokenCounter(options.tokenizer, "--tokenizer");
  const data = demoData();
  const memoryPlan = selectMemoryContext(
    { userScope: data.user, candidates: data.candidates },
    { tokenCounter },
  );
  const segmentPlan = planPrompt(
    {
      budgetChars: options.budgetChars,
      ...(options.budgetTokens !== undefined ? { budgetTokens: options.budgetTokens } : {}),
      segments: demoSegments(data, memoryPlan.context),
    },
    { tokenCounter },
  );
  return { memoryPlan, segmentPlan };
}

/** The demo as people read it: two tables, then the prompt, fitted to the style's width. */
export function formatDemo(result: DemoResult, style: TableStyle): string {
  const text = [
    memoryDecisionTable(result.memoryPlan, style),
    "",
    segmentDecisionTable(result.segmentPlan, style),
    "",
    "Prompt",
    "======",
    result.segmentPlan.prompt,
    "",
  ].join("\n");
  return fitText(text, style);
}
