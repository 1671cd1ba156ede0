/**
 * What the whole-request and middleware tests send: the model name and a system side of
 * stable rules and profile (large enough to be cached) with one dynamic segment of the
 * test's own.
 */
import { type PromptPlan, planPrompt } from "../../src/plan/index.js";

export const MODEL = "claude-sonnet-4-6";

/** `n` distinct words `stem0 stem1 …`. */
export const words = (n: number, stem: string) =>
  Array.from({ length: n }, (_, i) => `${stem}${i}`).join(" ");

/** The system side: 900 rule words (static), 300 profile words (session), then `name` (dynamic). */
export function stableSystem(name: string, content: string): PromptPlan {
  return planPrompt({
    budgetChars: null,
    segments: [
      { name: "rules", content: words(900, "rule"), cacheTier: "static" },
      { name: "profile", content: words(300, "prof"), cacheTier: "session" },
      { name, content, cacheTier: "dynamic" },
    ],
  });
}
