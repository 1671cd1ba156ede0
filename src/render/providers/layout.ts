/**
 * Provider-neutral layout of docs/session-and-cache.md: a plan's tiers as system blocks,
 * memory optionally moved (the types are in types.ts).
 */
import { type CacheKeys, computeCacheKeys } from "../../cache/index.js";
import { InvalidInputError } from "../../errors/index.js";
import { type CacheTier, type PromptPlan, SEGMENT_SEPARATOR } from "../../plan/index.js";
import { cpLength } from "../../text/index.js";
import { isTokenizerName, resolveTokenCounter, type TokenCounter } from "../../tokens/index.js";
import {
  type AssemblyLike,
  type Block,
  type Layout,
  MEMORY_LAYER_NAMES,
  type Moved,
  type ProviderInput,
  type ProviderRenderOptions,
  type ProviderReport,
} from "./types.js";

function isAssemblyLike(input: ProviderInput): input is AssemblyLike {
  return typeof input === "object" && input !== null && "segmentPlan" in input;
}

function planOf(input: ProviderInput): PromptPlan {
  if (typeof input !== "object" || input === null) {
    throw new InvalidInputError("expected an assembly or a prompt plan", "input");
  }
  const plan = isAssemblyLike(input) ? input.segmentPlan : input;
  const path = isAssemblyLike(input) ? "segmentPlan" : "input";
  if (
    typeof plan !== "object" ||
    plan === null ||
    typeof plan.prompt !== "string" ||
    !Array.isArray(plan.tiers) ||
    !Array.isArray(plan.decisions)
  ) {
    throw new InvalidInputError("not a prompt plan (needs prompt, tiers, decisions)", path);
  }
  if (isAssemblyLike(input) && input.prompt !== undefined && input.prompt !== plan.prompt) {
    throw new InvalidInputError("prompt differs from segmentPlan.prompt", "prompt");
  }
  return plan;
}

function sameKeys(a: CacheKeys, b: CacheKeys): boolean {
  return a.static === b.static && a.session === b.session && a.dynamic === b.dynamic;
}

/** The plan's cache keys, cross-checked against an assembly's manifest when it has one. */
function checkedPlanKeys(input: ProviderInput, plan: PromptPlan): CacheKeys {
  const planKeys = computeCacheKeys(plan);
  if (isAssemblyLike(input) && input.manifest !== undefined) {
    const given = input.manifest.cacheKeys;
    if (typeof given !== "object" || given === null || !sameKeys(given, planKeys)) {
      throw new InvalidInputError(
        "manifest.cacheKeys differ from the keys of segmentPlan",
        "manifest.cacheKeys",
      );
    }
  }
  return planKeys;
}

/** Whether a segment of a tier leaves the system side. */
type Moves = (name: string, tier: CacheTier) => boolean;

/**
 * What to cut out of the system side: nothing unless memoryPlacement is "user" (the
 * memory names) or dynamicPlacement is "user" (every segment of the dynamic tier).
 */
function layersToMove(options: ProviderRenderOptions): Moves | null {
  const placement = options.memoryPlacement ?? "system";
  if (placement !== "system" && placement !== "user") {
    throw new InvalidInputError(
      `memoryPlacement must be "system" or "user", got ${JSON.stringify(placement)}`,
      "memoryPlacement",
    );
  }
  const dynamic = options.dynamicPlacement ?? "system";
  if (dynamic !== "system" && dynamic !== "user") {
    throw new InvalidInputError(
      `dynamicPlacement must be "system" or "user", got ${JSON.stringify(dynamic)}`,
      "dynamicPlacement",
    );
  }
  // Built whatever the placement, so a non-iterable memoryNames is an error either way.
  const names = new Set(options.memoryNames ?? MEMORY_LAYER_NAMES);
  if (placement === "system" && dynamic === "system") return null;
  return (name, tier) =>
    (placement === "user" && names.has(name)) || (dynamic === "user" && tier === "dynamic");
}

/** The counter for blocks the plan never counted, resolved only when one is needed. */
interface BlockCounter {
  /** True when the given counter differs from the plan's: every block is recounted. */
  readonly recountAll: boolean;
  count(text: string): number;
  /** The counter's name once given or resolved. */
  name(): string | undefined;
}

function blockCounter(plan: PromptPlan, given: TokenCounter | undefined): BlockCounter {
  let counter = given;
  return {
    recountAll: given !== undefined && given.name !== plan.tokenizer,
    count(text) {
      if (counter === undefined) {
        if (!isTokenizerName(plan.tokenizer)) {
          throw new InvalidInputError(
            `the plan was counted by "${plan.tokenizer}", not a built-in counter: pass tokenCounter`,
            "tokenCounter",
          );
        }
        counter = resolveTokenCounter(plan.tokenizer);
      }
      return counter.count(text);
    },
    name: () => counter?.name,
  };
}

/**
 * The plan's tiers. An untiered plan is one block; the planner counts tierless segments
 * as dynamic.
 */
function tiersOf(plan: PromptPlan): PromptPlan["tiers"] {
  if (plan.tiers.length > 0 || plan.prompt === "") return plan.tiers;
  return [
    {
      tier: "dynamic",
      names: plan.includedNames,
      chars: plan.usedChars,
      tokens: plan.usedTokens,
      start: 0,
      end: plan.prompt.length,
    },
  ];
}

/** UTF-16 offset `codePoints` code points after `from` (cpLength's counting), or -1. */
function advance(s: string, from: number, codePoints: number): number {
  let i = from;
  for (let n = 0; n < codePoints; n++) {
    if (i >= s.length) return -1;
    const c = s.charCodeAt(i);
    const pair =
      c >= 0xd800 &&
      c <= 0xdbff &&
      i + 1 < s.length &&
      s.charCodeAt(i + 1) >= 0xdc00 &&
      s.charCodeAt(i + 1) <= 0xdfff;
    i += pair ? 2 : 1;
  }
  return i;
}

/**
 * Splits one tier's text into its segments' rendered contents, using the decisions'
 * `renderedChars` and checking every separator, so the pieces are exactly what the
 * planner joined.
 */
function splitTier(plan: PromptPlan, text: string, names: readonly string[], i: number): string[] {
  const chars = new Map(plan.decisions.map((d) => [d.name, d.renderedChars]));
  const pieces: string[] = [];
  const separator = plan.separator ?? SEGMENT_SEPARATOR;
  let at = 0;
  names.forEach((name, k) => {
    if (k > 0) {
      if (!text.startsWith(separator, at)) {
        throw new InvalidInputError(
          `tiers[${i}]: no separator before segment "${name}" (plan edited after planning?)`,
          ["tiers", i],
        );
      }
      at += separator.length;
    }
    const n = chars.get(name);
    const end = n === undefined ? -1 : advance(text, at, n);
    if (end < 0) {
      throw new InvalidInputError(`tiers[${i}]: segment "${name}" does not fit its tier`, [
        "tiers",
        i,
      ]);
    }
    pieces.push(text.slice(at, end));
    at = end;
  });
  if (at !== text.length) {
    throw new InvalidInputError(`tiers[${i}]: its segments do not cover its text`, ["tiers", i]);
  }
  return pieces;
}

interface Blocks {
  blocks: Block[];
  moved: Moved[];
}

/**
 * Cuts the memory segments out of tier `i`: they go to `moved`, the rest (re-joined by
 * the planner's separator) to `blocks` unless nothing is left.
 */
function cutTier(
  plan: PromptPlan,
  t: PromptPlan["tiers"][number],
  i: number,
  moves: Moves,
  counter: BlockCounter,
  out: Blocks,
): void {
  const pieces = splitTier(plan, plan.prompt.slice(t.start, t.end), t.names, i);
  const keep: string[] = [];
  const kept: string[] = [];
  t.names.forEach((name, k) => {
    const piece = pieces[k] as string;
    if (moves(name, t.tier)) {
      out.moved.push({
        name,
        tier: t.tier,
        text: piece,
        chars: cpLength(piece),
        tokens: counter.count(piece),
      });
    } else {
      keep.push(name);
      kept.push(piece);
    }
  });
  if (kept.length === 0) return;
  const rest = kept.join(plan.separator ?? SEGMENT_SEPARATOR);
  out.blocks.push({
    tier: t.tier,
    names: keep,
    text: rest,
    chars: cpLength(rest),
    tokens: counter.count(rest),
  });
}

/** One block per tier with content; a tier holding layers to move is cut ({@link cutTier}). */
function layoutBlocks(plan: PromptPlan, moves: Moves | null, counter: BlockCounter): Blocks {
  const out: Blocks = { blocks: [], moved: [] };
  tiersOf(plan).forEach((t, i) => {
    if (moves !== null && t.names.some((n) => moves(n, t.tier))) {
      cutTier(plan, t, i, moves, counter, out);
      return;
    }
    const text = plan.prompt.slice(t.start, t.end);
    out.blocks.push({
      tier: t.tier,
      names: [...t.names],
      text,
      chars: t.chars,
      tokens: counter.recountAll ? counter.count(text) : t.tokens,
    });
  });
  return out;
}

/**
 * The system side after memory moved out: the blocks joined by the plan's cache-boundary
 * marker, and its cache keys (all null for an untiered plan, as for the plan itself).
 */
function rejoinSystem(
  plan: PromptPlan,
  blocks: readonly Block[],
): { system: string; keys: CacheKeys } {
  const marker = plan.cacheBoundary ?? "";
  let system = "";
  const rebuilt: PromptPlan["tiers"] = [];
  blocks.forEach((b, k) => {
    if (k > 0) system += marker;
    rebuilt.push({ ...b, start: system.length, end: system.length + b.text.length });
    system += b.text;
  });
  const keys =
    plan.tiers.length > 0
      ? computeCacheKeys({ prompt: system, tiers: rebuilt })
      : { static: null, session: null, dynamic: null };
  return { system, keys };
}

/**
 * Lays a plan out for the renderers: validates the input and options, splits the system
 * side into one block per tier, moves recalled memory out when asked, and rebuilds the
 * system string and its cache keys when it did.
 */
export function buildLayout(input: ProviderInput, options: ProviderRenderOptions): Layout {
  const plan = planOf(input);
  const planKeys = checkedPlanKeys(input, plan);
  const moves = layersToMove(options);
  const counter = blockCounter(plan, options.tokenCounter);
  const { blocks, moved } = layoutBlocks(plan, moves, counter);
  const { system, keys } =
    moved.length > 0 ? rejoinSystem(plan, blocks) : { system: plan.prompt, keys: planKeys };
  return {
    plan,
    blocks,
    system,
    moved,
    keys,
    tokenizer:
      counter.recountAll || moved.length > 0 ? (counter.name() ?? plan.tokenizer) : plan.tokenizer,
  };
}

// ---------------------------------------------------------------------------------------
// Shared pieces of every renderer

export function checkQuery(query: string | undefined): void {
  if (query !== undefined && (typeof query !== "string" || query === "")) {
    throw new InvalidInputError("query must be a non-empty string", "query");
  }
}

/** The texts of the user-role message: moved memory, then the query. */
export function userTexts(layout: Layout, query: string | undefined): string[] {
  return [...layout.moved.map((m) => m.text), ...(query === undefined ? [] : [query])];
}

/**
 * Content of the opening user message as Anthropic, Chat Completions and the AI SDK take
 * it: the query alone as a plain string, else one text part per text; null when empty.
 */
export function userContent(
  layout: Layout,
  query: string | undefined,
): string | { type: "text"; text: string }[] | null {
  const texts = userTexts(layout, query);
  if (texts.length === 0) return null;
  return layout.moved.length === 0 && query !== undefined
    ? query
    : texts.map((text) => ({ type: "text", text }));
}

/** The report every renderer returns besides its body. */
export function report(layout: Layout, tokensEstimated: boolean): ProviderReport {
  return {
    tierTokens: layout.blocks.map((b) => ({
      tier: b.tier,
      names: b.names,
      chars: b.chars,
      tokens: b.tokens,
    })),
    movedLayers: layout.moved.map((m) => ({
      name: m.name,
      tier: m.tier,
      chars: m.chars,
      tokens: m.tokens,
    })),
    tokenizer: layout.tokenizer,
    tokensEstimated,
    cacheKeys: layout.keys,
  };
}
