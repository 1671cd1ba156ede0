/**
 * The types of the provider renderers (docs/session-and-cache.md): what they take (a plan or
 * an assembly, and the shared options), what they report, and the provider-neutral layout
 * of a plan's tiers as system blocks that layout.ts builds.
 */
import type { CacheKeys } from "../../cache/index.js";
import type { CacheTier, PromptPlan } from "../../plan/index.js";
import type { TokenCounter } from "../../tokens/index.js";

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
 * Cache keys are always computed from the plan (`computeCacheKeys`: deterministic);
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
  /**
   * `"system"` (default): the dynamic tier stays in the system prompt. `"user"`: every
   * layer of the dynamic tier (what changes every request: clock, recall, tool state)
   * leaves the system side as moved memory does; whole requests send the moved layers
   * after the last cached block, so they never sit between cached blocks.
   */
  dynamicPlacement?: "system" | "user";
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

export interface Block {
  tier: CacheTier;
  names: string[];
  text: string;
  chars: number;
  tokens: number;
}

export interface Moved {
  name: string;
  tier: CacheTier;
  text: string;
  chars: number;
  tokens: number;
}

export interface Layout {
  plan: PromptPlan;
  /** System-side blocks, one per tier with content, most stable first. */
  blocks: Block[];
  /** The system side as one string: `plan.prompt`, or the rebuilt one when memory moved. */
  system: string;
  moved: Moved[];
  keys: CacheKeys;
  tokenizer: string;
}
