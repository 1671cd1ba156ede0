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
 * Where a breakpoint sits: on the last block of a system tier, or (`"history"`, whole
 * requests only) on the last block of the stable history prefix of the messages.
 */
export type BreakpointPosition = CacheTier | "history";

/** A breakpoint placed on the last block of a tier (or of the stable history prefix). */
export interface AnthropicBreakpoint {
  tier: BreakpointPosition;
  /** The tier's own tokens. */
  tokens: number;
  /** Tokens of the whole cached prefix (tools + system up to and including this tier). */
  prefixTokens: number;
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

/** The stable history prefix of a whole request: it may carry one breakpoint after the system side. */
export interface HistoryPrefix {
  /** Tokens of the messages up to and including the prefix's last message. */
  tokens: number;
}

/** The breakpoint decisions of one request. */
export interface BreakpointPlan {
  breakpoints: AnthropicBreakpoint[];
  skipped: AnthropicSkippedBreakpoint[];
  /** Block indexes that carry a breakpoint (`blocks.length` stands for the history prefix). */
  marked: Set<number>;
  /** Whether the stable history prefix carries a breakpoint. */
  history: boolean;
  minTokens: number;
  model: string;
}

/** A place that may carry a breakpoint, with the cached prefix through it. */
interface Candidate {
  index: number;
  tier: BreakpointPosition;
  tokens: number;
  prefixTokens: number;
}

/** The cached tiers' last blocks, then the history prefix, with their prefix tokens. */
function candidates(
  layout: Layout,
  s: BreakpointSettings,
  history: HistoryPrefix | null,
): Candidate[] {
  const out: Candidate[] = [];
  let prefix = s.toolsTokens;
  layout.blocks.forEach((b, index) => {
    prefix += b.tokens;
    if (s.cacheTiers.has(b.tier))
      out.push({ index, tier: b.tier, tokens: b.tokens, prefixTokens: prefix });
  });
  if (history !== null && history.tokens > 0) {
    const index = layout.blocks.length;
    out.push({
      index,
      tier: "history",
      tokens: history.tokens,
      prefixTokens: prefix + history.tokens,
    });
  }
  return out;
}

/**
 * Decides the breakpoints: the last block of each cached tier, then the end of the
 * stable history prefix when one is given, whose cached prefix (tools + system + history
 * through it) reaches the model's minimum cacheable length; then, over the limit of 4
 * (tools included), the later places lose theirs first (the history prefix first).
 */
function planBreakpoints(
  layout: Layout,
  options: AnthropicOptions,
  history: HistoryPrefix | null,
): BreakpointPlan {
  const settings = breakpointSettings(options);
  const { model, minTokens, tools } = settings;
  const breakpoints: AnthropicBreakpoint[] = [];
  const skipped: AnthropicSkippedBreakpoint[] = [];
  const marked = new Set<number>();
  const eligible = candidates(layout, settings, history).filter((c) => {
    if (c.prefixTokens >= minTokens) return true;
    skipped.push({
      tier: c.tier,
      reason: "below_min_cacheable_tokens",
      detail: `cached prefix through ${c.tier} is ${c.prefixTokens} tokens (${layout.tokenizer}); ${model} caches from ${minTokens}`,
    });
    return false;
  });
  const room = ANTHROPIC_MAX_BREAKPOINTS - tools;
  eligible.forEach((c, k) => {
    if (k >= room) {
      skipped.push({
        tier: c.tier,
        reason: "breakpoint_limit",
        detail: `${tools} tool breakpoint(s) + ${room} earlier breakpoint(s) reach the limit of ${ANTHROPIC_MAX_BREAKPOINTS}`,
      });
      return;
    }
    marked.add(c.index);
    breakpoints.push({ tier: c.tier, tokens: c.tokens, prefixTokens: c.prefixTokens });
  });
  const order = (t: BreakpointPosition) =>
    t === "history" ? layout.blocks.length : layout.blocks.findIndex((b) => b.tier === t);
  skipped.sort((a, b) => order(a.tier) - order(b.tier));
  const onHistory = marked.has(layout.blocks.length);
  return { breakpoints, skipped, marked, history: onHistory, minTokens, model };
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
 * breakpoint and undefined on any other. With `history` (a whole request's stable
 * history prefix), `history` in the result says whether its last block gets one too
 * (the caller places it, with {@link PlacedBreakpoints.control}).
 */
export function placeBreakpoints<T>(
  layout: Layout,
  options: AnthropicOptions,
  block: (text: string, control: AnthropicCacheControl | undefined) => T,
  history: HistoryPrefix | null = null,
): PlacedBreakpoints<T> {
  const control = cacheControl(options.ttl);
  const bp = planBreakpoints(layout, options, history);
  const system = layout.blocks.map((b, i) =>
    block(b.text, bp.marked.has(i) ? { ...control } : undefined),
  );
  return { ...bp, system, control };
}
