/**
 * Provider output of spec 05: one plan rendered as request fragments for the Anthropic
 * Messages API, OpenAI Chat Completions and Responses, and the Vercel AI SDK, laid out so
 * the providers' prefix caches hit (static content first, cache breakpoints at the end
 * of the stable tiers, a `prompt_cache_key` derived from the static cache key).
 *
 * The shapes are plain data that structurally match the official SDK types
 * (`@anthropic-ai/sdk`, `openai`, `ai`); this module imports none of them at run time.
 * The tests check them against those types and send them through the official clients
 * to a loopback server that records the wire request.
 */
import { type CacheKeys, computeCacheKeys } from "../cache/index.js";
import { InvalidInputError } from "../errors/index.js";
import { type CacheTier, type PromptPlan, SEGMENT_SEPARATOR } from "../plan/index.js";
import { cpLength } from "../text/index.js";
import {
  isTokenizerName,
  resolveTokenCounter,
  type TokenCounter,
  tokenizerForModel,
} from "../tokens/index.js";

// ---------------------------------------------------------------------------------------
// Input and shared options

/** What the renderers read from an {@link Assembly}-like object (`assemble()` output). */
export interface AssemblyLike {
  segmentPlan: PromptPlan;
  /** When given, must equal `segmentPlan.prompt`. */
  prompt?: string;
  /** When given, its `cacheKeys` must equal the keys computed from `segmentPlan`. */
  manifest?: { cacheKeys: CacheKeys };
}

/**
 * One plan: an assembly (`{prompt, segmentPlan, manifest}`) or a bare {@link PromptPlan}.
 * Cache keys are always computed from the plan ({@link computeCacheKeys}: deterministic);
 * a manifest's keys are only cross-checked.
 */
export type ProviderInput = AssemblyLike | PromptPlan;

/** Where recalled memory goes: in the system prompt (as planned) or a user-role block. */
export type MemoryPlacement = "system" | "user";

/** Names of the recalled-memory layer: the assembler's slot and the session's segment. */
export const MEMORY_LAYER_NAMES: readonly string[] = ["recall_memory", "recalled_memory"];

/** Options every provider renderer takes. */
export interface ProviderRenderOptions {
  /**
   * `"system"` (default): the prompt goes out as planned. `"user"`: the recalled-memory
   * layer (see `memoryNames`) leaves the system side and opens the first user-role
   * message instead (lower privilege than system instructions), one text block per
   * moved layer holding exactly that layer's rendered content as it appears in
   * `plan.prompt` — no separator, no wrapper, byte for byte. The system side is the
   * plan's tiers with that layer cut out: the remaining segments of its tier re-joined
   * by the planner's separator, a tier left empty dropped, tiers joined by the plan's
   * cache-boundary marker where the provider takes one string.
   */
  memoryPlacement?: MemoryPlacement;
  /** Segment names treated as recalled memory (default {@link MEMORY_LAYER_NAMES}). */
  memoryNames?: readonly string[];
  /** The user's turn: appended as the last user-role content (after moved memory). */
  query?: string;
  /**
   * Counter for the reported token figures. When absent, or named like the plan's
   * counter, the plan's own tier counts are reused; otherwise every block is recounted.
   * Blocks the plan never counted (a tier with memory cut out, moved memory) are counted
   * with this counter, else with the built-in counter the plan names (a plan counted by
   * a custom counter then needs this option).
   */
  tokenCounter?: TokenCounter;
}

/** Token figures of one system-side block (one cache tier). */
export interface TierTokens {
  tier: CacheTier;
  /** Segments in the block, in display order. */
  names: string[];
  /** Code points of the block's text. */
  chars: number;
  /** Tokens of the block's text under `tokenizer` (message framing not included). */
  tokens: number;
}

/** A layer moved to the user role (memoryPlacement `"user"`). */
export interface MovedLayer {
  name: string;
  /** The tier it was planned in. */
  tier: CacheTier;
  chars: number;
  tokens: number;
}

/** What every renderer reports besides the body. */
export interface ProviderReport {
  /** Per system-side tier, most stable first. */
  tierTokens: TierTokens[];
  /** Layers moved to the user role, in display order (`[]` unless memoryPlacement user). */
  movedLayers: MovedLayer[];
  /** The counter behind every token figure. */
  tokenizer: string;
  /**
   * True when the figures are estimates for the target provider: always for Claude
   * (its tokenizer is not public; `claude_estimate` is o200k_base × 1.25), and for
   * OpenAI unless the counter is the model's own BPE encoding.
   */
  tokensEstimated: boolean;
  /** Cache keys of the system side actually sent (equal to the plan's unless memory moved). */
  cacheKeys: CacheKeys;
}

// ---------------------------------------------------------------------------------------
// Layout: the plan's tiers as blocks, memory optionally cut out

interface Block {
  tier: CacheTier;
  names: string[];
  text: string;
  chars: number;
  tokens: number;
}

interface Moved {
  name: string;
  tier: CacheTier;
  text: string;
  chars: number;
  tokens: number;
}

interface Layout {
  plan: PromptPlan;
  /** System-side blocks, one per tier with content, most stable first. */
  blocks: Block[];
  /** The system side as one string: `plan.prompt`, or the rebuilt one when memory moved. */
  system: string;
  moved: Moved[];
  keys: CacheKeys;
  tokenizer: string;
}

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
  let at = 0;
  names.forEach((name, k) => {
    if (k > 0) {
      if (!text.startsWith(SEGMENT_SEPARATOR, at)) {
        throw new InvalidInputError(
          `tiers[${i}]: no separator before segment "${name}" (plan edited after planning?)`,
          ["tiers", i],
        );
      }
      at += SEGMENT_SEPARATOR.length;
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

function sameKeys(a: CacheKeys, b: CacheKeys): boolean {
  return a.static === b.static && a.session === b.session && a.dynamic === b.dynamic;
}

function buildLayout(input: ProviderInput, options: ProviderRenderOptions): Layout {
  const plan = planOf(input);
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
  const placement = options.memoryPlacement ?? "system";
  if (placement !== "system" && placement !== "user") {
    throw new InvalidInputError(
      `memoryPlacement must be "system" or "user", got ${JSON.stringify(placement)}`,
      "memoryPlacement",
    );
  }
  const memoryNames = new Set(options.memoryNames ?? MEMORY_LAYER_NAMES);
  const given = options.tokenCounter;
  const recountAll = given !== undefined && given.name !== plan.tokenizer;
  let counter: TokenCounter | undefined = given;
  const count = (text: string): number => {
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
  };

  // An untiered plan is one block; the planner counts tierless segments as dynamic.
  const tiers =
    plan.tiers.length > 0 || plan.prompt === ""
      ? plan.tiers
      : [
          {
            tier: "dynamic" as const,
            names: plan.includedNames,
            chars: plan.usedChars,
            tokens: plan.usedTokens,
            start: 0,
            end: plan.prompt.length,
          },
        ];

  const blocks: Block[] = [];
  const moved: Moved[] = [];
  tiers.forEach((t, i) => {
    const text = plan.prompt.slice(t.start, t.end);
    const cut = placement === "user" ? t.names.filter((n) => memoryNames.has(n)) : [];
    if (cut.length === 0) {
      blocks.push({
        tier: t.tier,
        names: [...t.names],
        text,
        chars: t.chars,
        tokens: recountAll ? count(text) : t.tokens,
      });
      return;
    }
    const pieces = splitTier(plan, text, t.names, i);
    const keep: string[] = [];
    const kept: string[] = [];
    t.names.forEach((name, k) => {
      const piece = pieces[k] as string;
      if (memoryNames.has(name)) {
        moved.push({
          name,
          tier: t.tier,
          text: piece,
          chars: cpLength(piece),
          tokens: count(piece),
        });
      } else {
        keep.push(name);
        kept.push(piece);
      }
    });
    if (kept.length === 0) return;
    const rest = kept.join(SEGMENT_SEPARATOR);
    blocks.push({
      tier: t.tier,
      names: keep,
      text: rest,
      chars: cpLength(rest),
      tokens: count(rest),
    });
  });

  let system = plan.prompt;
  let keys = planKeys;
  if (moved.length > 0) {
    const marker = plan.cacheBoundary ?? "";
    system = "";
    const rebuilt: PromptPlan["tiers"] = [];
    blocks.forEach((b, k) => {
      if (k > 0) system += marker;
      rebuilt.push({ ...b, start: system.length, end: system.length + b.text.length });
      system += b.text;
    });
    keys =
      plan.tiers.length > 0
        ? computeCacheKeys({ prompt: system, tiers: rebuilt })
        : { static: null, session: null, dynamic: null };
  }
  return {
    plan,
    blocks,
    system,
    moved,
    keys,
    tokenizer: recountAll || moved.length > 0 ? (counter?.name ?? plan.tokenizer) : plan.tokenizer,
  };
}

function checkQuery(query: string | undefined): void {
  if (query !== undefined && (typeof query !== "string" || query === "")) {
    throw new InvalidInputError("query must be a non-empty string", "query");
  }
}

function report(layout: Layout, tokensEstimated: boolean): ProviderReport {
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

// ---------------------------------------------------------------------------------------
// Anthropic Messages

/**
 * Minimum cacheable prompt length of Claude models, as data. A breakpoint on a shorter
 * prefix is accepted by the API but caches nothing (no error; both cache usage counters
 * stay 0).
 *
 * Source: the "Cache limitations" section of Anthropic's prompt-caching guide
 * (https://platform.claude.com/docs/en/build-with-claude/prompt-caching), as quoted
 * verbatim in anthropics/anthropic-sdk-python#1194 on 2026-02-21:
 * 4096 tokens for Claude Opus 4.6, Claude Opus 4.5; 1024 for Claude Sonnet 4.6, Sonnet
 * 4.5, Opus 4.1, Opus 4, Sonnet 4, Sonnet 3.7; 4096 for Claude Haiku 4.5; 2048 for
 * Claude Haiku 3.5 and Haiku 3 (`-4-0` ids are the aliases of Opus 4 / Sonnet 4).
 * Older mirrors of the same page list Claude Opus 3 and Sonnet 3.5 at 1024 (the
 * default). Not encoded, because not found in Anthropic's own text: later third-party
 * reports of 2048 for Opus 4.7, 1024 for Opus 4.8 and Sonnet 5, 512 for Opus 5 / Fable 5
 * / Mythos 5, and an observed ~2048 for Sonnet 4.6 (the issue above); those models get
 * the default. A minimum set too high only forgoes a cache write; one set too low places
 * a breakpoint the API silently ignores. Pass `minCacheableTokens` to override.
 */
export const ANTHROPIC_MIN_CACHEABLE_TOKENS = {
  source:
    "https://platform.claude.com/docs/en/build-with-claude/prompt-caching (Cache limitations), quoted in https://github.com/anthropics/anthropic-sdk-python/issues/1194",
  asOf: "2026-02-21",
  /** For a Claude model the table does not name. */
  defaultTokens: 1024,
  /** Model ids (aliases; dated snapshots such as `-20251101` match their alias). */
  models: {
    "claude-opus-4-6": 4096,
    "claude-opus-4-5": 4096,
    "claude-haiku-4-5": 4096,
    "claude-sonnet-4-6": 1024,
    "claude-sonnet-4-5": 1024,
    "claude-opus-4-1": 1024,
    "claude-opus-4-0": 1024,
    "claude-opus-4": 1024,
    "claude-sonnet-4-0": 1024,
    "claude-sonnet-4": 1024,
    "claude-3-7-sonnet": 1024,
    "claude-3-5-haiku": 2048,
    "claude-3-haiku": 2048,
  } as Readonly<Record<string, number>>,
} as const;

/**
 * Model assumed by {@link toAnthropicRequest} and the CLI when none is named. Note:
 * `@anthropic-ai/sdk` 1.14 lists it as deprecated (end of life 2026-11-30) and warns.
 */
export const DEFAULT_ANTHROPIC_MODEL = "claude-sonnet-4-6";
/** Breakpoints Anthropic accepts in one request (tools, system and messages together). */
export const ANTHROPIC_MAX_BREAKPOINTS = 4;

/**
 * The minimum cacheable prompt length of a Claude model from
 * {@link ANTHROPIC_MIN_CACHEABLE_TOKENS}: the model id is lower-cased, a provider prefix
 * (`anthropic/`, `anthropic.`), a `@…` or `-vN:M` suffix, a `-latest` or `-YYYYMMDD`
 * date suffix are dropped; an id the table does not name gets the default (1024).
 *
 * @example minCacheableTokens("claude-haiku-4-5-20251001") // 4096
 * @example minCacheableTokens("claude-3-5-haiku-latest") // 2048
 */
export function minCacheableTokens(model: string): number {
  const id = model
    .trim()
    .toLowerCase()
    .replace(/^(?:[a-z0-9-]+\/)?(?:[a-z]+\.)*(?=claude)/, "")
    .replace(/@.*$/, "")
    .replace(/-v\d+(?::\d+)?$/, "")
    .replace(/-(?:latest|\d{8})$/, "");
  return ANTHROPIC_MIN_CACHEABLE_TOKENS.models[id] ?? ANTHROPIC_MIN_CACHEABLE_TOKENS.defaultTokens;
}

/** `cache_control` of a text block (Messages API `CacheControlEphemeral`). */
export type AnthropicCacheControl = {
  type: "ephemeral";
  ttl?: "5m" | "1h";
};

/** A Messages API `TextBlockParam`. */
export interface AnthropicTextBlock {
  type: "text";
  text: string;
  cache_control?: AnthropicCacheControl;
}

/** A Messages API `MessageParam` (user role only: this renders the start of a conversation). */
export interface AnthropicMessage {
  role: "user";
  content: string | AnthropicTextBlock[];
}

/** The part of a Messages API request body this renders (add `model`, `max_tokens`, …). */
export interface AnthropicRequestBody {
  system: AnthropicTextBlock[];
  /** Present when memory moved to the user role or a query was given. */
  messages?: AnthropicMessage[];
}

/** Options of {@link toAnthropicRequest}. */
export interface AnthropicOptions extends ProviderRenderOptions {
  /** Picks the minimum cacheable length (default {@link DEFAULT_ANTHROPIC_MODEL}). */
  model?: string;
  /** Cache lifetime: `"5m"` (default; no `ttl` field sent) or `"1h"`. */
  ttl?: "5m" | "1h";
  /** Tiers that get a breakpoint on their last block (default static and session; never dynamic). */
  cacheTiers?: readonly ("static" | "session")[];
  /**
   * Breakpoints (`cache_control`) the caller's `tools` already carry: they count
   * against the limit of 4. With `ttl: "1h"` those must be 1h too (Anthropic requires
   * longer-lived breakpoints before shorter ones).
   */
  toolsBreakpoints?: number;
  /** Tokens of the tool definitions, which precede `system` in the cached prefix (default 0). */
  toolsTokens?: number;
  /** Overrides the table's minimum cacheable length. */
  minCacheableTokens?: number;
}

/** A breakpoint placed on the last block of a tier. */
export interface AnthropicBreakpoint {
  tier: CacheTier;
  /** The tier's own tokens. */
  tokens: number;
  /** Tokens of the whole cached prefix (tools + system up to and including this tier). */
  prefixTokens: number;
}

/** Why a cached tier got no breakpoint. */
export type BreakpointSkipReason = "below_min_cacheable_tokens" | "breakpoint_limit";

export interface AnthropicSkippedBreakpoint {
  tier: CacheTier;
  reason: BreakpointSkipReason;
  detail: string;
}

/** Result of {@link toAnthropicRequest}. */
export interface AnthropicRequest extends ProviderReport {
  body: AnthropicRequestBody;
  breakpoints: AnthropicBreakpoint[];
  skipped: AnthropicSkippedBreakpoint[];
  /** The minimum cacheable length applied, and the model it came from. */
  minCacheableTokens: number;
  model: string;
}

function nonNegativeInt(value: number | undefined, path: string, max = Infinity): number {
  if (value === undefined) return 0;
  if (!Number.isInteger(value) || value < 0 || value > max) {
    throw new InvalidInputError(
      `${path} must be an integer in [0, ${max === Infinity ? "∞" : max}], got ${String(value)}`,
      path,
    );
  }
  return value;
}

interface BreakpointPlan {
  breakpoints: AnthropicBreakpoint[];
  skipped: AnthropicSkippedBreakpoint[];
  /** Block indexes that carry a breakpoint. */
  marked: Set<number>;
  minTokens: number;
  model: string;
}

/**
 * Decides the breakpoints: the last block of each cached tier whose cached prefix
 * (tools + system through that tier) reaches the model's minimum cacheable length;
 * then, over the limit of 4 (tools included), the later tiers lose theirs first.
 */
function planBreakpoints(layout: Layout, options: AnthropicOptions): BreakpointPlan {
  const model = options.model ?? DEFAULT_ANTHROPIC_MODEL;
  if (typeof model !== "string" || model.trim() === "") {
    throw new InvalidInputError("model must be a non-empty string", "model");
  }
  const minTokens =
    options.minCacheableTokens === undefined
      ? minCacheableTokens(model)
      : nonNegativeInt(options.minCacheableTokens, "minCacheableTokens");
  const tools = nonNegativeInt(
    options.toolsBreakpoints,
    "toolsBreakpoints",
    ANTHROPIC_MAX_BREAKPOINTS,
  );
  const toolsTokens = nonNegativeInt(options.toolsTokens, "toolsTokens");
  const cacheTiers = new Set<CacheTier>(options.cacheTiers ?? ["static", "session"]);
  for (const t of cacheTiers) {
    if (t !== "static" && t !== "session") {
      throw new InvalidInputError(
        `cacheTiers: only "static" and "session" can carry a breakpoint, got ${JSON.stringify(t)}`,
        "cacheTiers",
      );
    }
  }
  const breakpoints: AnthropicBreakpoint[] = [];
  const skipped: AnthropicSkippedBreakpoint[] = [];
  const marked = new Set<number>();
  const eligible: number[] = [];
  let prefix = toolsTokens;
  layout.blocks.forEach((b, i) => {
    prefix += b.tokens;
    if (!cacheTiers.has(b.tier)) return;
    if (prefix < minTokens) {
      skipped.push({
        tier: b.tier,
        reason: "below_min_cacheable_tokens",
        detail: `cached prefix through ${b.tier} is ${prefix} tokens (${layout.tokenizer}); ${model} caches from ${minTokens}`,
      });
      return;
    }
    eligible.push(i);
  });
  const room = ANTHROPIC_MAX_BREAKPOINTS - tools;
  eligible.forEach((i, k) => {
    const b = layout.blocks[i] as Block;
    if (k >= room) {
      skipped.push({
        tier: b.tier,
        reason: "breakpoint_limit",
        detail: `${tools} tool breakpoint(s) + ${room} earlier system breakpoint(s) reach the limit of ${ANTHROPIC_MAX_BREAKPOINTS}`,
      });
      return;
    }
    marked.add(i);
    const prefixTokens =
      toolsTokens + layout.blocks.slice(0, i + 1).reduce((sum, x) => sum + x.tokens, 0);
    breakpoints.push({ tier: b.tier, tokens: b.tokens, prefixTokens });
  });
  const order = (t: CacheTier) => layout.blocks.findIndex((b) => b.tier === t);
  skipped.sort((a, b) => order(a.tier) - order(b.tier));
  return { breakpoints, skipped, marked, minTokens, model };
}

function cacheControl(ttl: AnthropicOptions["ttl"]): AnthropicCacheControl {
  if (ttl === undefined || ttl === "5m") return { type: "ephemeral" };
  if (ttl === "1h") return { type: "ephemeral", ttl: "1h" };
  throw new InvalidInputError(`ttl must be "5m" or "1h", got ${JSON.stringify(ttl)}`, "ttl");
}

function userTexts(layout: Layout, query: string | undefined): string[] {
  return [...layout.moved.map((m) => m.text), ...(query === undefined ? [] : [query])];
}

/**
 * Renders a plan as the `system` (and opening `messages`) of an Anthropic Messages API
 * request: one text block per tier with content (static, session, dynamic; each holds
 * exactly `plan.prompt.slice(tier.start, tier.end)`, no boundary marker), with
 * `cache_control: {type: "ephemeral"}` (`ttl: "1h"` on request) on the last block of
 * each cached tier (static and session by default, dynamic never).
 *
 * A tier gets no breakpoint when the cached prefix through it (tools + system) is
 * shorter than the model's minimum cacheable length ({@link minCacheableTokens}, by the
 * tier token counts — an estimate for Claude, `tokenizer` says which counter), or when
 * the request would exceed 4 breakpoints counting `toolsBreakpoints` (the later tier
 * loses its breakpoint first); `skipped` says which and why.
 *
 * With `memoryPlacement: "user"` the recalled-memory layer leaves `system` and opens
 * the first user message (see {@link ProviderRenderOptions.memoryPlacement}); `query`, when
 * given, follows it. A user message is a plain string when it holds only the query.
 *
 * @example
 * const { body, breakpoints, skipped } = toAnthropicRequest(assembly, { model: "claude-sonnet-4-5" });
 * await anthropic.messages.create({ model: "claude-sonnet-4-5", max_tokens: 1024, ...body,
 *   messages: [...(body.messages ?? []), ...]});
 */
export function toAnthropicRequest(
  input: ProviderInput,
  options: AnthropicOptions = {},
): AnthropicRequest {
  checkQuery(options.query);
  const layout = buildLayout(input, options);
  const control = cacheControl(options.ttl);
  const bp = planBreakpoints(layout, options);
  const system: AnthropicTextBlock[] = layout.blocks.map((b, i) =>
    bp.marked.has(i)
      ? { type: "text", text: b.text, cache_control: { ...control } }
      : { type: "text", text: b.text },
  );
  const body: AnthropicRequestBody = { system };
  const texts = userTexts(layout, options.query);
  if (texts.length > 0) {
    body.messages = [
      {
        role: "user",
        content:
          layout.moved.length === 0 && options.query !== undefined
            ? options.query
            : texts.map((text) => ({ type: "text", text })),
      },
    ];
  }
  return {
    body,
    breakpoints: bp.breakpoints,
    skipped: bp.skipped,
    minCacheableTokens: bp.minTokens,
    model: bp.model,
    ...report(layout, true),
  };
}

// ---------------------------------------------------------------------------------------
// OpenAI

/** Model assumed by the CLI's `--format openai` when none is named. */
export const DEFAULT_OPENAI_MODEL = "gpt-4o";
/** Prefix of the `prompt_cache_key` derived from the static cache key. */
export const PROMPT_CACHE_KEY_PREFIX = "promptctx-";

/** Options of the OpenAI renderers. */
export interface OpenAIOptions extends ProviderRenderOptions {
  /** Names the model, so `tokensEstimated` can tell whether the counter is its encoding. */
  model?: string;
  /** Prefix of `prompt_cache_key` (default {@link PROMPT_CACHE_KEY_PREFIX}). */
  cacheKeyPrefix?: string;
}

/** Options of {@link toOpenAIChatRequest}. */
export interface OpenAIChatOptions extends OpenAIOptions {
  /** Role of the instructions message: `"system"` (default) or `"developer"` (o-series, gpt-5). */
  role?: "system" | "developer";
}

/** A Chat Completions message this renders. */
export type OpenAIChatMessage =
  | { role: "system" | "developer"; content: string }
  | { role: "user"; content: string | { type: "text"; text: string }[] };

/** The part of a Chat Completions body this renders (add `model`, …). */
export interface OpenAIChatBody {
  messages: OpenAIChatMessage[];
  /** Absent when the plan has no static tier. */
  prompt_cache_key?: string;
}

/** A Responses API input message. */
export interface OpenAIResponsesInputMessage {
  role: "user";
  content: { type: "input_text"; text: string }[];
}

/** The part of a Responses API body this renders (add `model`, …). */
export interface OpenAIResponsesBody {
  instructions: string;
  /** The query alone is a plain string; moved memory makes it one user message of input_text parts. */
  input?: string | OpenAIResponsesInputMessage[];
  prompt_cache_key?: string;
}

/** Result of the OpenAI renderers. */
export interface OpenAIRequest<B> extends ProviderReport {
  body: B;
  /** `prompt_cache_key` sent, or null when there is no static tier to derive it from. */
  promptCacheKey: string | null;
}

function promptCacheKey(layout: Layout, prefix: string | undefined): string | null {
  if (prefix !== undefined && typeof prefix !== "string") {
    throw new InvalidInputError("cacheKeyPrefix must be a string", "cacheKeyPrefix");
  }
  const key = layout.keys.static;
  return key === null ? null : `${prefix ?? PROMPT_CACHE_KEY_PREFIX}${key}`;
}

function openAIEstimated(tokenizer: string, model: string | undefined): boolean {
  if (tokenizer !== "o200k_base" && tokenizer !== "cl100k_base") return true;
  if (model === undefined) return false;
  try {
    return tokenizerForModel(model) !== tokenizer;
  } catch {
    return true;
  }
}

/**
 * Renders a plan as the start of an OpenAI Chat Completions request: one `system` (or
 * `developer`) message holding the prompt as planned (already tier-ordered, static
 * first, so automatic prefix caching hits), then a user message with moved memory and
 * the query, and `prompt_cache_key` = `promptctx-` + the static cache key (stable while
 * static content is; absent without a static tier).
 *
 * @example
 * const { body } = toOpenAIChatRequest(assembly, { role: "developer", query: "fix the build" });
 * await openai.chat.completions.create({ model: "gpt-4o", ...body });
 */
export function toOpenAIChatRequest(
  input: ProviderInput,
  options: OpenAIChatOptions = {},
): OpenAIRequest<OpenAIChatBody> {
  checkQuery(options.query);
  const role = options.role ?? "system";
  if (role !== "system" && role !== "developer") {
    throw new InvalidInputError(
      `role must be "system" or "developer", got ${JSON.stringify(role)}`,
      "role",
    );
  }
  const layout = buildLayout(input, options);
  const messages: OpenAIChatMessage[] = [];
  if (layout.system !== "") messages.push({ role, content: layout.system });
  const texts = userTexts(layout, options.query);
  if (texts.length > 0) {
    messages.push({
      role: "user",
      content:
        layout.moved.length === 0 && options.query !== undefined
          ? options.query
          : texts.map((text) => ({ type: "text", text })),
    });
  }
  const key = promptCacheKey(layout, options.cacheKeyPrefix);
  const body: OpenAIChatBody = key === null ? { messages } : { messages, prompt_cache_key: key };
  return {
    body,
    promptCacheKey: key,
    ...report(layout, openAIEstimated(layout.tokenizer, options.model)),
  };
}

/**
 * Renders a plan as the start of an OpenAI Responses request: `instructions` = the
 * prompt as planned, `input` = the query (a string), or one user message of
 * `input_text` parts (moved memory, then the query), and `prompt_cache_key` as for
 * {@link toOpenAIChatRequest}.
 *
 * @example
 * const { body } = toOpenAIResponsesRequest(assembly, { query: "fix the build" });
 * await openai.responses.create({ model: "gpt-4o", ...body });
 */
export function toOpenAIResponsesRequest(
  input: ProviderInput,
  options: OpenAIOptions = {},
): OpenAIRequest<OpenAIResponsesBody> {
  checkQuery(options.query);
  const layout = buildLayout(input, options);
  const body: OpenAIResponsesBody = { instructions: layout.system };
  if (layout.moved.length > 0) {
    body.input = [
      {
        role: "user",
        content: userTexts(layout, options.query).map((text) => ({ type: "input_text", text })),
      },
    ];
  } else if (options.query !== undefined) {
    body.input = options.query;
  }
  const key = promptCacheKey(layout, options.cacheKeyPrefix);
  if (key !== null) body.prompt_cache_key = key;
  return {
    body,
    promptCacheKey: key,
    ...report(layout, openAIEstimated(layout.tokenizer, options.model)),
  };
}

// ---------------------------------------------------------------------------------------
// Vercel AI SDK

/** A JSON value (`ai`'s `JSONValue`). */
export type AiSdkJsonValue =
  | null
  | string
  | number
  | boolean
  | AiSdkJsonValue[]
  | { [key: string]: AiSdkJsonValue | undefined };

/** Provider options by provider name (`ai`'s `ProviderOptions`). */
export type AiSdkProviderOptions = Record<string, { [key: string]: AiSdkJsonValue | undefined }>;

/** `ai`'s `SystemModelMessage`. */
export interface AiSdkSystemMessage {
  role: "system";
  content: string;
  providerOptions?: AiSdkProviderOptions;
}

/** `ai`'s `UserModelMessage` with text content. */
export interface AiSdkUserMessage {
  role: "user";
  content: string | { type: "text"; text: string }[];
}

/** The `ModelMessage`s this renders. */
export type AiSdkMessage = AiSdkSystemMessage | AiSdkUserMessage;

/** Call settings for `generateText` / `streamText` (add `model`). */
export interface AiSdkRequestBody {
  /**
   * OpenAI: the whole system side as one string. Anthropic: one system message per tier
   * (`ai` ≥ 5.1 takes an array). Absent when the system side is empty.
   */
  system?: string | AiSdkSystemMessage[];
  /** The user message (moved memory, then the query); `[]` when there is neither. */
  messages: AiSdkUserMessage[];
  /** `{openai: {promptCacheKey}}` for OpenAI. */
  providerOptions?: AiSdkProviderOptions;
}

/** Options of {@link toAiSdkRequest}. */
export type AiSdkOptions =
  | (AnthropicOptions & { provider: "anthropic" })
  | (OpenAIOptions & { provider: "openai" });

/** Result of {@link toAiSdkRequest}. */
export interface AiSdkRequest extends ProviderReport {
  provider: "anthropic" | "openai";
  body: AiSdkRequestBody;
  /** Anthropic only: as in {@link toAnthropicRequest}. */
  breakpoints: AnthropicBreakpoint[];
  skipped: AnthropicSkippedBreakpoint[];
  /** OpenAI only: the `promptCacheKey` sent, else null. */
  promptCacheKey: string | null;
}

function aiSdkUser(layout: Layout, query: string | undefined): AiSdkUserMessage[] {
  const texts = userTexts(layout, query);
  if (texts.length === 0) return [];
  return [
    {
      role: "user",
      content:
        layout.moved.length === 0 && query !== undefined
          ? query
          : texts.map((text) => ({ type: "text", text })),
    },
  ];
}

/**
 * Renders a plan as Vercel AI SDK call settings (`generateText({model, ...body})`):
 * - `anthropic`: `system` = one `SystemModelMessage` per tier, the cached ones carrying
 *   `providerOptions: {anthropic: {cacheControl: {type: "ephemeral"}}}` (same breakpoint
 *   rules as {@link toAnthropicRequest}; `@ai-sdk/anthropic` turns each into one system
 *   text block with `cache_control`); `messages` = the user message.
 * - `openai`: `system` = the prompt as planned, the user message, and
 *   `providerOptions: {openai: {promptCacheKey}}` (derived from the static key).
 *
 * @example
 * const { body } = toAiSdkRequest(assembly, { provider: "anthropic", query: "fix the build" });
 * await generateText({ model: anthropic("claude-sonnet-4-5"), ...body });
 */
export function toAiSdkRequest(input: ProviderInput, options: AiSdkOptions): AiSdkRequest {
  if (options.provider === "anthropic") {
    checkQuery(options.query);
    const layout = buildLayout(input, options);
    const control = cacheControl(options.ttl);
    const bp = planBreakpoints(layout, options);
    const system: AiSdkSystemMessage[] = layout.blocks.map((b, i) =>
      bp.marked.has(i)
        ? {
            role: "system",
            content: b.text,
            providerOptions: { anthropic: { cacheControl: { ...control } } },
          }
        : { role: "system", content: b.text },
    );
    const body: AiSdkRequestBody = { messages: aiSdkUser(layout, options.query) };
    if (system.length > 0) body.system = system;
    return {
      provider: "anthropic",
      body,
      breakpoints: bp.breakpoints,
      skipped: bp.skipped,
      promptCacheKey: null,
      ...report(layout, true),
    };
  }
  if (options.provider === "openai") {
    checkQuery(options.query);
    const layout = buildLayout(input, options);
    const key = promptCacheKey(layout, options.cacheKeyPrefix);
    const body: AiSdkRequestBody = { messages: aiSdkUser(layout, options.query) };
    if (layout.system !== "") body.system = layout.system;
    if (key !== null) body.providerOptions = { openai: { promptCacheKey: key } };
    return {
      provider: "openai",
      body,
      breakpoints: [],
      skipped: [],
      promptCacheKey: key,
      ...report(layout, openAIEstimated(layout.tokenizer, options.model)),
    };
  }
  throw new InvalidInputError(
    `provider must be "anthropic" or "openai", got ${JSON.stringify((options as { provider?: unknown }).provider)}`,
    "provider",
  );
}
