/**
 * A deliberately naive reference planner: the definition of spec 03 written out with no
 * shortcuts. Every candidate is decided by rendering the whole proposed prompt and
 * measuring it (code points, and the counter on the full text). Tests prove that
 * `planPrompt` decides identically. It supports `content` and boolean `condition` only.
 */
import { PromptBudgetError } from "../../src/errors/index.js";
import type { PlanDecision, PlanPromptRequest, PromptPlan } from "../../src/plan/index.js";
import { PlanPromptRequestSchema } from "../../src/plan/index.js";
import { compareCodePoints, cpLength } from "../../src/text/index.js";
import type { TokenCounter } from "../../src/tokens/index.js";

const SEP = "\n\n---\n\n";

export function naivePlanPrompt(request: PlanPromptRequest, counter: TokenCounter): PromptPlan {
  const req = PlanPromptRequestSchema.parse(request);
  const { budgetChars, budgetTokens } = req;
  const segs = [...req.segments].sort((a, b) =>
    a.priority !== b.priority
      ? a.priority < b.priority
        ? -1
        : 1
      : compareCodePoints(a.name, b.name),
  );
  const text = (i: number) => segs[i]!.content ?? "";
  const inactiveWhy = (i: number): string | null => {
    const s = segs[i]!;
    if (s.condition === false) return "condition is false";
    if (s.content === null || s.content === undefined) return "content is null";
    if (s.content === "") return "content is empty";
    return null;
  };
  const render = (set: ReadonlySet<number>) =>
    segs
      .map((_, i) => i)
      .filter((i) => set.has(i))
      .map(text)
      .join(SEP);

  const decisions = new Map<number, PlanDecision>();
  const decide = (
    i: number,
    status: PlanDecision["status"],
    reason: PlanDecision["reason"],
    detail: string,
  ) => {
    const s = segs[i]!;
    const active = inactiveWhy(i) === null;
    const included = status === "included";
    decisions.set(i, {
      name: s.name,
      priority: s.priority,
      required: s.required,
      budgetPriority: s.budgetPriority,
      provenance: s.provenance,
      cacheTier: s.cacheTier ?? null,
      status,
      reason,
      detail,
      originalChars: active ? cpLength(text(i)) : 0,
      renderedChars: included ? cpLength(text(i)) : 0,
      originalTokens: active ? counter.count(text(i)) : 0,
      renderedTokens: included ? counter.count(text(i)) : 0,
    } as PlanDecision);
  };

  const admitted = new Set<number>();
  const required = segs
    .map((_, i) => i)
    .filter((i) => inactiveWhy(i) === null && segs[i]!.required);
  for (const i of required) admitted.add(i);
  if (required.length > 0) {
    const names = required.map((i) => segs[i]!.name);
    const prompt = render(admitted);
    const chars = cpLength(prompt);
    const which = `required segments (${names.join(", ")})`;
    if (budgetChars !== null && chars > budgetChars) {
      throw new PromptBudgetError(
        `${which} need ${chars} chars; budgetChars is ${budgetChars}`,
        names,
        "budgetChars",
      );
    }
    if (budgetTokens !== null && counter.count(prompt) > budgetTokens) {
      throw new PromptBudgetError(
        `${which} need ${counter.count(prompt)} tokens (${counter.name}); budgetTokens is ${budgetTokens}`,
        names,
        "budgetTokens",
      );
    }
    for (const i of required)
      decide(i, "included", "required", "required: reserved before optional segments");
  }

  const optional = segs
    .map((_, i) => i)
    .filter((i) => inactiveWhy(i) === null && !segs[i]!.required)
    .sort((x, y) => {
      const a = segs[x]!;
      const b = segs[y]!;
      if (a.budgetPriority !== b.budgetPriority)
        return a.budgetPriority > b.budgetPriority ? -1 : 1;
      return x - y; // display order breaks ties: priority asc → name asc
    });
  for (const i of optional) {
    const proposal = new Set(admitted).add(i);
    const prompt = render(proposal);
    const chars = cpLength(prompt);
    if (budgetChars !== null && chars > budgetChars) {
      decide(
        i,
        "dropped",
        "char_budget_exceeded",
        `would use ${chars} chars; budget is ${budgetChars}`,
      );
      continue;
    }
    let detail = `fits: prompt at ${chars} chars${budgetChars === null ? "" : ` of ${budgetChars}`}`;
    if (budgetTokens !== null) {
      const tokens = counter.count(prompt);
      if (tokens > budgetTokens) {
        decide(
          i,
          "dropped",
          "token_budget_exceeded",
          `would use ${tokens} tokens; budget is ${budgetTokens}`,
        );
        continue;
      }
      detail += `, ${tokens} of ${budgetTokens} tokens`;
    }
    admitted.add(i);
    decide(i, "included", "fits_budget", detail);
  }
  segs.forEach((_, i) => {
    if (!decisions.has(i)) decide(i, "inactive", "inactive", inactiveWhy(i)!);
  });

  const prompt = render(admitted);
  const ordered = segs.map((_, i) => decisions.get(i)!);
  return {
    prompt,
    usedChars: cpLength(prompt),
    usedTokens: counter.count(prompt),
    budgetChars,
    budgetTokens,
    tokenizer: counter.name,
    includedNames: ordered.filter((d) => d.status === "included").map((d) => d.name),
    droppedNames: ordered.filter((d) => d.status === "dropped").map((d) => d.name),
    decisions: ordered,
  };
}
