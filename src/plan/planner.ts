/**
 * Segment planner of docs/planner.md: decides which named segments enter the system prompt under
 * a char budget and an optional token budget, reserving required segments first and
 * logging exactly one decision per segment in display order.
 */
import { InvalidInputError, invalidFromZod } from "../errors/index.js";
import { cpLength } from "../text/index.js";
import { resolveTokenCounter, type TokenCounter } from "../tokens/index.js";
import { admitOptional, type Budget, reserveRequired } from "./admission.js";
import { charLedger } from "./char-ledger.js";
import { makeDecision, type PlanDecision } from "./decision.js";
import { type Entry, makeEntry, resolveContent } from "./entry.js";
import { type Layout, ownTokens, SEGMENT_SEPARATOR } from "./layout.js";
import { displayOrder } from "./order.js";
import {
  type CacheTier,
  DEFAULT_CACHE_BOUNDARY,
  type ParsedPlanPromptRequest,
  type PlanPromptRequest,
  PlanPromptRequestSchema,
} from "./schema.js";
import { makeLedger, splits } from "./token-ledger.js";

/** One cache tier of a tiered prompt that has admitted content (docs/session-and-cache.md). */
export interface PlanTier {
  tier: CacheTier;
  /** Its included segments, in display order. */
  names: string[];
  /** Code points of its rendered content: its segments joined by the separator. */
  chars: number;
  /** Tokens of that content under the plan's counter. */
  tokens: number;
  /** UTF-16 offsets of that content in `prompt` (boundary markers excluded): `prompt.slice(start, end)`. */
  start: number;
  end: number;
}

/** The plan of docs/planner.md, with the cache-tier layout of docs/session-and-cache.md. */
export interface PromptPlan {
  prompt: string;
  usedChars: number;
  usedTokens: number;
  budgetChars: number | null;
  budgetTokens: number | null;
  /** Name of the counter behind every token figure, so the log can be replayed. */
  tokenizer: string;
  includedNames: string[];
  droppedNames: string[];
  decisions: PlanDecision[];
  /** Tiers with admitted content, most stable first; `[]` when the plan is untiered. */
  tiers: PlanTier[];
  /** The marker placed between two tiers; null when the plan is untiered. */
  cacheBoundary: string | null;
  /** The join between two segments, present only when not {@link SEGMENT_SEPARATOR}. */
  separator?: string;
}

/** Options of {@link planPrompt}. */
export interface PlanOptions {
  /** Overrides `request.tokenizer` (e.g. a shared memoizing counter or a custom one). */
  tokenCounter?: TokenCounter;
}

function parseRequest(request: PlanPromptRequest): ParsedPlanPromptRequest {
  const parsed = PlanPromptRequestSchema.safeParse(request);
  if (!parsed.success) throw invalidFromZod(parsed.error);
  const seen = new Map<string, number>();
  parsed.data.segments.forEach((s, i) => {
    const first = seen.get(s.name);
    if (first !== undefined) {
      throw new InvalidInputError(
        `duplicate segment name "${s.name}" (also segments[${first}].name)`,
        ["segments", i, "name"],
      );
    }
    seen.set(s.name, i);
  });
  return parsed.data;
}

/**
 * The entries in display order with their content resolved. Conditions and builders run
 * in display order, so even their side effects do not depend on input order.
 */
function resolveEntries(req: ParsedPlanPromptRequest, tiered: boolean): Entry[] {
  const entries = displayOrder(req.segments.map((seg, index) => makeEntry(seg, index, tiered)));
  for (let d = 0; d < entries.length; d++) {
    const e = entries[d]!;
    e.display = d;
    resolveContent(e);
    if (e.inactive !== null) e.detail = e.inactive;
    else e.chars = cpLength(e.content);
  }
  return entries;
}

/**
 * The layout of the entries, with every active segment's own tokens counted up front
 * unless `lazy` (then each is counted on first need). An inactive segment counts 0.
 */
function layOutEntries(
  entries: readonly Entry[],
  joins: { marker: string; separator: string },
  counter: TokenCounter,
  lazy: boolean,
): Layout {
  const layout: Layout = {
    contents: entries.map((e) => e.content),
    tiers: entries.map((e) => e.tier),
    marker: joins.marker,
    separator: joins.separator,
    tokens: new Float64Array(entries.length).fill(-1),
  };
  for (const e of entries) {
    if (e.inactive !== null) layout.tokens[e.display] = 0;
    else if (!lazy) ownTokens(layout, counter, e.display);
  }
  return layout;
}

/** One decision per entry in display order, and the names of the dropped ones. */
function buildDecisions(
  entries: readonly Entry[],
  layout: Layout,
): { decisions: PlanDecision[]; droppedNames: string[] } {
  const decisions: PlanDecision[] = [];
  const droppedNames: string[] = [];
  for (const e of entries) {
    decisions.push(makeDecision(e, layout.tokens[e.display]!));
    if (e.status === "dropped") droppedNames.push(e.name);
  }
  return { decisions, droppedNames };
}

/**
 * The prompt rendered from the included entries in display order, with each tier's names,
 * offsets, size and tokens (no tiers when untiered): the separator joins two segments of
 * one tier, `marker` two tiers.
 */
function layOutTiers(
  entries: readonly Entry[],
  { marker, separator }: { marker: string; separator: string },
  counter: TokenCounter,
): { prompt: string; includedNames: string[]; tiers: PlanTier[] } {
  const includedNames: string[] = [];
  const tiers: PlanTier[] = [];
  let prompt = "";
  for (const e of entries) {
    if (e.status !== "included") continue;
    let open = tiers.at(-1); // the tier being rendered; undefined when untiered or first
    if (includedNames.length > 0) {
      if (open === undefined || open.tier === e.cacheTier) {
        prompt += separator; // untiered, or within one tier
      } else {
        open.end = prompt.length;
        prompt += marker;
      }
    }
    includedNames.push(e.name);
    if (e.cacheTier !== null && open?.tier !== e.cacheTier) {
      open = { tier: e.cacheTier, names: [], chars: 0, tokens: 0, start: prompt.length, end: 0 };
      tiers.push(open);
    }
    open?.names.push(e.name);
    prompt += e.content;
  }
  const lastTier = tiers.at(-1);
  if (lastTier !== undefined) lastTier.end = prompt.length;
  for (const t of tiers) {
    const content = prompt.slice(t.start, t.end);
    t.chars = cpLength(content);
    t.tokens = counter.count(content);
  }
  return { prompt, includedNames, tiers };
}

/**
 * Plans the whole system prompt under one budget (docs/planner.md): inactive segments cost
 * nothing, required ones are reserved first (or a {@link PromptBudgetError} is thrown
 * when they alone cannot fit), optional ones are admitted by `budgetPriority desc →
 * priority asc → name asc` while the rendered prompt, separators included, fits every
 * budget, and the admitted ones are rendered by `priority asc → name asc`. Returns the
 * prompt and one decision per segment in display order; input order never matters.
 * Invalid input throws {@link InvalidInputError} naming the field path.
 *
 * **Cache tiers (docs/session-and-cache.md).** When at least one segment has a `cacheTier` (or the request
 * sets `tiered: true`) the plan is tiered, and a segment without a tier counts as
 * `dynamic`. Display order becomes tier (`static`, `session`, `dynamic`) → priority asc →
 * name asc; segments of one tier are joined by the separator and two tiers by the
 * `cacheBoundary` marker (default `"\n\n<!-- cache-boundary -->\n\n"`), which costs
 * budget like a separator. Only tiers with admitted content appear, with no marker at
 * either end. Optional segments are admitted by tier asc (static first) →
 * `budgetPriority` desc → priority asc → name asc, so every static decision is taken
 * before any optional session or dynamic segment is priced: an optional dynamic segment
 * that grows (or appears) at the same budget can never evict a static (or session)
 * segment that fit before, and the static prefix — and its cache key — stays put.
 * Required segments of every tier are still reserved first, so a growing *required*
 * dynamic segment does take budget from optional static ones. The plan reports each
 * tier's names, size and offsets in `tiers`, and the marker in `cacheBoundary`.
 *
 * @example
 * const plan = planPrompt({
 *   budgetChars: 100,
 *   segments: [
 *     { name: "rules", content: "Never run rm -rf.", required: true, priority: 0 },
 *     { name: "mode", content: "Mode: ask", priority: 90, budgetPriority: 90 },
 *     { name: "skills", content: "x".repeat(200) },
 *   ],
 * });
 * plan.prompt; // "Never run rm -rf.\n\n---\n\nMode: ask"
 * plan.droppedNames; // ["skills"]
 *
 * @example
 * const tiered = planPrompt({
 *   segments: [
 *     { name: "memory", content: "Likes tabs.", cacheTier: "dynamic", priority: 0 },
 *     { name: "rules", content: "Be brief.", cacheTier: "static", priority: 90 },
 *   ],
 * });
 * tiered.prompt; // "Be brief.\n\n<!-- cache-boundary -->\n\nLikes tabs."
 * tiered.tiers.map((t) => [t.tier, t.start, t.end]); // [["static", 0, 9], ["dynamic", 36, 47]]
 */
export function planPrompt(request: PlanPromptRequest, options: PlanOptions = {}): PromptPlan {
  const req = parseRequest(request);
  const counter = options.tokenCounter ?? resolveTokenCounter(req.tokenizer);
  const { budgetChars, budgetTokens } = req;
  const tiered = req.tiered === true || req.segments.some((s) => s.cacheTier !== undefined);
  const marker = req.cacheBoundary ?? DEFAULT_CACHE_BOUNDARY;
  const separator = req.separator ?? SEGMENT_SEPARATOR;
  const joins = { marker, separator };

  const entries = resolveEntries(req, tiered);
  // Under a token budget priced by the split ledger with a counter that can stop early, a
  // segment's content is counted only when its figures are needed: an optional one that
  // provably cannot fit is dropped after counting just the part of it the budget had room
  // for. Otherwise every active segment is counted up front.
  const lazy =
    budgetTokens !== null &&
    counter.countUpTo !== undefined &&
    splits(counter, tiered, marker, separator);
  const layout = layOutEntries(entries, joins, counter, lazy);
  const budget: Budget = {
    budgetChars,
    budgetTokens,
    counter,
    layout,
    ledger: budgetTokens === null ? null : makeLedger(counter, layout, tiered),
    chars: charLedger(cpLength(marker), cpLength(separator)),
  };
  reserveRequired(entries, budget);
  admitOptional(entries, budget);

  const { decisions, droppedNames } = buildDecisions(entries, layout);
  const { prompt, includedNames, tiers } = layOutTiers(entries, joins, counter);
  return {
    prompt,
    usedChars: budget.chars.used,
    usedTokens: budget.ledger?.total() ?? counter.count(prompt),
    budgetChars,
    budgetTokens,
    tokenizer: counter.name,
    includedNames,
    droppedNames,
    decisions,
    tiers,
    cacheBoundary: tiered ? marker : null,
    ...(separator === SEGMENT_SEPARATOR ? {} : { separator }),
  };
}
