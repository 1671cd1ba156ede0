/**
 * A deliberately naive reference planner: the definition of docs/planner.md written out with no
 * shortcuts. Every candidate is decided by rendering the whole proposed prompt and
 * measuring it (code points, and the counter on the full text). Tests prove that
 * `planPrompt` decides identically. It supports `content` and boolean `condition` only.
 * Tiered mode (docs/session-and-cache.md) is written out the same way: tiers are rendered one by one and
 * joined by the marker, and each tier's offsets come from that rendering.
 */
import { PromptBudgetError } from "../../src/errors/index.js";
import type {
  CacheTier,
  PlanDecision,
  PlanPromptRequest,
  PlanTier,
  PromptPlan,
} from "../../src/plan/index.js";
import { PlanPromptRequestSchema } from "../../src/plan/index.js";
import { compareCodePoints, cpLength } from "../../src/text/index.js";
import type { TokenCounter } from "../../src/tokens/index.js";

const SEP = "\n\n---\n\n";
const MARKER = "\n\n<!-- cache-boundary -->\n\n";
const TIERS: CacheTier[] = ["static", "session", "dynamic"];

export function naivePlanPrompt(request: PlanPromptRequest, counter: TokenCounter): PromptPlan {
  const req = PlanPromptRequestSchema.parse(request);
  const { budgetChars, budgetTokens } = req;
  const tiered = req.tiered === true || req.segments.some((s) => s.cacheTier !== undefined);
  const marker = req.cacheBoundary ?? MARKER;
  const sep = req.separator ?? SEP;
  const tierOf = (s: (typeof req.segments)[number]): CacheTier | null =>
    tiered ? (s.cacheTier ?? "dynamic") : null;
  const rank = (s: (typeof req.segments)[number]) => TIERS.indexOf(tierOf(s) ?? "static");
  const segs = [...req.segments].sort((a, b) =>
    rank(a) !== rank(b)
      ? rank(a) - rank(b)
      : a.priority !== b.priority
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
  // Each tier's segments joined by the separator; the non-empty tiers joined by the marker.
  const tierTexts = (set: ReadonlySet<number>) =>
    TIERS.map((tier) => ({
      tier,
      indexes: segs
        .map((_, i) => i)
        .filter((i) => set.has(i) && (tierOf(segs[i]!) ?? "static") === tier),
    }))
      .filter((t) => t.indexes.length > 0)
      .map((t) => ({ ...t, text: t.indexes.map(text).join(sep) }));
  const render = (set: ReadonlySet<number>) =>
    tierTexts(set)
      .map((t) => t.text)
      .join(marker);

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
      cacheTier: tierOf(s),
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
      if (rank(a) !== rank(b)) return rank(a) - rank(b);
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
  const tiers: PlanTier[] = [];
  let offset = 0;
  for (const t of tiered ? tierTexts(admitted) : []) {
    if (tiers.length > 0) offset += marker.length;
    tiers.push({
      tier: t.tier,
      names: t.indexes.map((i) => segs[i]!.name),
      chars: cpLength(t.text),
      tokens: counter.count(t.text),
      start: offset,
      end: offset + t.text.length,
    });
    offset += t.text.length;
  }
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
    tiers,
    cacheBoundary: tiered ? marker : null,
    ...(sep === SEP ? {} : { separator: sep }),
  };
}

const BOUNDED_DETAIL = /^would use more than (\d+) tokens \((\d+) left for it\); budget is (\d+)$/;
const EXACT_DETAIL = /^would use (\d+) tokens; budget is (\d+)$/;

/**
 * `planPrompt`'s outcome (JSON) made comparable with the naive one. A segment dropped
 * after counting only part of its rendering has no token figures and a "would use more
 * than" detail; it gets the naive decision's detail and figures once checked: the naive
 * planner dropped it for tokens too, over the same budget, and the bounded detail is
 * consistent with the naive count (what the admitted prompt used plus the segment's
 * piece, more than the room left for it). Everything else must then be byte-identical.
 */
export function alignBoundedDrops(fast: string, naive: string): string {
  const f = JSON.parse(fast) as PromptPlan | { error: unknown };
  const n = JSON.parse(naive) as PromptPlan | { error: unknown };
  if (!("decisions" in f) || !("decisions" in n)) return fast;
  if (f.decisions.length !== n.decisions.length) return fast;
  f.decisions = f.decisions.map((d, i) => {
    if (d.originalTokens !== undefined) return d;
    const ref = n.decisions[i]!;
    const bounded = BOUNDED_DETAIL.exec(d.detail);
    const exact = EXACT_DETAIL.exec(ref.detail);
    if (
      d.status !== "dropped" ||
      d.reason !== "token_budget_exceeded" ||
      ref.status !== "dropped" ||
      ref.reason !== "token_budget_exceeded" ||
      bounded === null ||
      exact === null
    ) {
      return d; // left as is: the comparison fails on it
    }
    const [over, left, budget] = [Number(bounded[1]), Number(bounded[2]), Number(bounded[3])];
    const wouldUse = Number(exact[1]);
    if (over !== budget || budget !== f.budgetTokens || wouldUse <= budget || left > budget)
      return d;
    return {
      ...d,
      detail: ref.detail,
      originalTokens: ref.originalTokens,
      renderedTokens: 0,
    } as PlanDecision;
  });
  return JSON.stringify(f);
}
