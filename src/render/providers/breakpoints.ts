/** Anthropic cache-breakpoint placement of docs/session-and-cache.md, shared by the Messages and AI SDK renderers. */
import { InvalidInputError } from "../../errors/index.js";
import type { CacheTier } from "../../plan/index.js";
import type { Layout, ProviderRenderOptions } from "./types.js";

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
 * How far back (in content blocks) Anthropic looks for a cached prefix from a breakpoint:
 * "up to approximately 20 blocks" (prompt-caching guide). An entry further back than
 * that from every breakpoint of a request is not found, even when its prefix matches.
 */
export const ANTHROPIC_CACHE_LOOKBACK_BLOCKS = 20;
/**
 * Stride of the intermediate message breakpoints (block indexes `k × stride − 1`): below
 * the lookback, with a margin of 4 for its "approximately".
 */
export const HISTORY_BREAKPOINT_STRIDE = 16;

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

/**
 * Where a breakpoint sits: on the last block of a system tier; or, in whole requests, on
 * a block of the messages — `"tail"` (the last block before the per-request content, so
 * the tool loop is cached as it grows) or `"history"` (a block at a fixed stride from the
 * first message, so a request that adds many blocks still finds the previous entries).
 */
export type BreakpointPosition = CacheTier | "history" | "tail";

/** A breakpoint placed on the last block of a tier, or on a block of the messages. */
export interface AnthropicBreakpoint {
  tier: BreakpointPosition;
  /** The tier's own tokens (for a message block: the messages' tokens through it). */
  tokens: number;
  /** Tokens of the whole cached prefix (tools + system + messages through this block). */
  prefixTokens: number;
  /** Message breakpoints: the block's index, counted from the first message's first block. */
  block?: number;
}

/** Why a cached tier got no breakpoint. */
export type BreakpointSkipReason = "below_min_cacheable_tokens" | "breakpoint_limit";

export interface AnthropicSkippedBreakpoint {
  tier: BreakpointPosition;
  reason: BreakpointSkipReason;
  detail: string;
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

/** The breakpoint options, validated. */
interface BreakpointSettings {
  model: string;
  minTokens: number;
  /** Breakpoints the caller's tools already carry. */
  tools: number;
  toolsTokens: number;
  cacheTiers: Set<CacheTier>;
}

function breakpointSettings(options: AnthropicOptions): BreakpointSettings {
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
  return { model, minTokens, tools, toolsTokens, cacheTiers };
}

/**
 * The messages of a whole request as the breakpoints see them: the tokens through the end
 * of each content block (cumulative, in block order, as the conversation planner counts:
 * each message's framing on its first block). The last block is the tail.
 */
export interface MessageBlocks {
  prefixTokens: readonly number[];
}

/** The breakpoint decisions of one request. */
export interface BreakpointPlan {
  breakpoints: AnthropicBreakpoint[];
  skipped: AnthropicSkippedBreakpoint[];
  /** System block indexes that carry a breakpoint. */
  marked: Set<number>;
  /** Message block indexes that carry a breakpoint (empty without messages). */
  messageBlocks: Set<number>;
  /** Whether any message block carries a breakpoint. */
  history: boolean;
  minTokens: number;
  model: string;
}

/** A place that may carry a breakpoint, with the cached prefix through it. */
interface Candidate {
  /** System block index, or message block index for `history` / `tail`. */
  index: number;
  tier: BreakpointPosition;
  tokens: number;
  prefixTokens: number;
  /** Lower keeps its place first under the limit of 4. */
  rank: number;
  /** Order in the request (system blocks first, then message blocks). */
  order: number;
}

/** The cached tiers' last blocks, with their prefix tokens, ranked in request order. */
function systemCandidates(layout: Layout, s: BreakpointSettings): Candidate[] {
  const out: Candidate[] = [];
  let prefix = s.toolsTokens;
  layout.blocks.forEach((b, index) => {
    prefix += b.tokens;
    if (s.cacheTiers.has(b.tier)) {
      out.push({
        index,
        tier: b.tier,
        tokens: b.tokens,
        prefixTokens: prefix,
        rank: out.length,
        order: index,
      });
    }
  });
  return out;
}

/**
 * The stride positions below the tail: block indexes `k × stride − 1`, the latest two
 * (latest first). Positions depend only on the blocks before them, so two requests over
 * the same conversation share them: a request that adds more blocks than the lookback
 * still finds the entry the previous request wrote at a shared position.
 */
export function strideBlocks(tail: number, stride = HISTORY_BREAKPOINT_STRIDE): number[] {
  const out: number[] = [];
  let b = Math.floor(tail / stride) * stride - 1;
  while (b >= 0 && out.length < 2) {
    if (b < tail) out.push(b);
    b -= stride;
  }
  return out;
}

/**
 * Candidates of a whole request, ranked for the limit of 4: the tail first (it caches
 * the whole conversation for the next request), then the last cached system tier (tools +
 * system: what survives a window move), then the two latest stride positions (a request
 * that adds up to `stride + lookback − 1` blocks still reads the previous one's cache),
 * then the earlier system tiers (they pay only when a later tier changes).
 */
function requestCandidates(
  layout: Layout,
  s: BreakpointSettings,
  messages: MessageBlocks,
): Candidate[] {
  const system = systemCandidates(layout, s);
  const base = s.toolsTokens + layout.blocks.reduce((n, b) => n + b.tokens, 0);
  const n = layout.blocks.length;
  const at = (index: number, tier: "history" | "tail", rank: number): Candidate => {
    const through = messages.prefixTokens[index] as number;
    return { index, tier, tokens: through, prefixTokens: base + through, rank, order: n + index };
  };
  const out: Candidate[] = [];
  const tail = messages.prefixTokens.length - 1;
  if (tail >= 0) out.push(at(tail, "tail", 0));
  const last = system.at(-1);
  if (last !== undefined) out.push({ ...last, rank: 1 });
  const [latest, second] = strideBlocks(tail);
  if (latest !== undefined) out.push(at(latest, "history", 2));
  if (second !== undefined) out.push(at(second, "history", 3));
  system.slice(0, -1).forEach((c, k) => {
    out.push({ ...c, rank: 4 + k / system.length });
  });
  return out;
}

const isMessage = (t: BreakpointPosition): boolean => t === "history" || t === "tail";

/**
 * Decides the breakpoints. System-only (no `messages`): the last block of each cached
 * tier, later tiers losing theirs first over the limit. Whole requests: the ranked
 * candidates of {@link requestCandidates}. Either way a place whose cached prefix (tools +
 * system + messages through it) is below the model's minimum cacheable length gets none,
 * and at most 4 are placed counting the caller's tool breakpoints.
 */
function planBreakpoints(
  layout: Layout,
  options: AnthropicOptions,
  messages: MessageBlocks | null,
): BreakpointPlan {
  const settings = breakpointSettings(options);
  const { model, minTokens, tools } = settings;
  const skipped: (AnthropicSkippedBreakpoint & { order: number })[] = [];
  const all =
    messages === null
      ? systemCandidates(layout, settings)
      : requestCandidates(layout, settings, messages);
  const eligible = all.filter((c) => {
    if (c.prefixTokens >= minTokens) return true;
    skipped.push({
      tier: c.tier,
      reason: "below_min_cacheable_tokens",
      detail: `cached prefix through ${c.tier} is ${c.prefixTokens} tokens (${layout.tokenizer}); ${model} caches from ${minTokens}`,
      order: c.order,
    });
    return false;
  });
  const room = ANTHROPIC_MAX_BREAKPOINTS - tools;
  const chosen: Candidate[] = [];
  [...eligible]
    .sort((a, b) => a.rank - b.rank)
    .forEach((c, k) => {
      if (k < room) chosen.push(c);
      else
        skipped.push({
          tier: c.tier,
          reason: "breakpoint_limit",
          detail: `${tools} tool breakpoint(s) + ${room} breakpoint(s) placed first reach the limit of ${ANTHROPIC_MAX_BREAKPOINTS}`,
          order: c.order,
        });
    });
  chosen.sort((a, b) => a.order - b.order);
  const marked = new Set<number>();
  const messageBlocks = new Set<number>();
  const breakpoints = chosen.map((c): AnthropicBreakpoint => {
    (isMessage(c.tier) ? messageBlocks : marked).add(c.index);
    const bp = { tier: c.tier, tokens: c.tokens, prefixTokens: c.prefixTokens };
    return isMessage(c.tier) ? { ...bp, block: c.index } : bp;
  });
  skipped.sort((a, b) => a.order - b.order);
  return {
    breakpoints,
    skipped: skipped.map(({ order: _order, ...s }) => s),
    marked,
    messageBlocks,
    history: messageBlocks.size > 0,
    minTokens,
    model,
  };
}

function cacheControl(ttl: AnthropicOptions["ttl"]): AnthropicCacheControl {
  if (ttl === undefined || ttl === "5m") return { type: "ephemeral" };
  if (ttl === "1h") return { type: "ephemeral", ttl: "1h" };
  throw new InvalidInputError(`ttl must be "5m" or "1h", got ${JSON.stringify(ttl)}`, "ttl");
}

/** The system blocks with their breakpoints, and the decisions behind them. */
export interface PlacedBreakpoints<T> extends BreakpointPlan {
  system: T[];
  /** The `cache_control` every placed breakpoint carries (copy it before use). */
  control: AnthropicCacheControl;
}

/**
 * Places the breakpoints on the system side, for every Anthropic-bound renderer: decides
 * them ({@link planBreakpoints}), then builds each system block with `block(text,
 * control)`, where `control` is a fresh `cache_control` on a block that carries a
 * breakpoint and undefined on any other. With `messages` (a whole request's message
 * blocks), `messageBlocks` in the result names the message blocks that get one too (the
 * caller places them, with {@link PlacedBreakpoints.control}).
 */
export function placeBreakpoints<T>(
  layout: Layout,
  options: AnthropicOptions,
  block: (text: string, control: AnthropicCacheControl | undefined) => T,
  messages: MessageBlocks | null = null,
): PlacedBreakpoints<T> {
  const control = cacheControl(options.ttl);
  const bp = planBreakpoints(layout, options, messages);
  const system = layout.blocks.map((b, i) =>
    block(b.text, bp.marked.has(i) ? { ...control } : undefined),
  );
  return { ...bp, system, control };
}
