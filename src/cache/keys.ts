/**
 * Cache keys of docs/session-and-cache.md and prompt / layer versions of docs/manifest-wire-guard.md, computed from a plan.
 * A key identifies a prompt prefix: providers cache by prefix, so a key that stays the
 * same across turns means that prefix can still be served from the provider's cache.
 */
import { InvalidInputError } from "../errors/index.js";
import { CACHE_TIERS, type CacheTier, type PromptPlan } from "../plan/index.js";
import { type HashMemo, sha256HexWith, shortHash } from "./hash.js";

/** One key per cache tier: a short hash of the prompt prefix ending with that tier. */
export type CacheKeys = Record<CacheTier, string | null>;

/** What {@link computeCacheKeys} reads from a plan. */
export type CacheKeySource = Pick<PromptPlan, "prompt" | "tiers">;

/**
 * The cache key of every tier (docs/session-and-cache.md): for tier T, the first 16 hex digits of the
 * SHA-256 of `plan.prompt` up to the end of T's content — every earlier tier and the
 * markers between them included, the marker after T excluded. A tier without content has
 * key `null`; an untiered plan has no tiers, so all its keys are `null`.
 *
 * Because each key covers a prefix, changing only dynamic content never changes the
 * static or session key, while changing static content changes every key after it.
 * Throws {@link InvalidInputError} when a tier's offsets do not lie inside the prompt
 * (e.g. a plan edited after planning). With a {@link HashMemo}, prefixes hashed lately are
 * looked up (same keys).
 *
 * @example
 * const plan = planPrompt({
 *   segments: [
 *     { name: "rules", content: "Be brief.", cacheTier: "static" },
 *     { name: "memory", content: "Likes tabs.", cacheTier: "dynamic" },
 *   ],
 * });
 * // plan.prompt: "Be brief.\n\n<!-- cache-boundary -->\n\nLikes tabs."
 * computeCacheKeys(plan);
 * // { static: "213c22ed7234eb11", session: null, dynamic: "b86a6ce7975c8b6a" }
 */
export function computeCacheKeys(plan: CacheKeySource, memo?: HashMemo): CacheKeys {
  const keys: CacheKeys = { static: null, session: null, dynamic: null };
  let previousEnd = 0;
  plan.tiers.forEach((t, i) => {
    const ok =
      CACHE_TIERS.includes(t.tier) &&
      keys[t.tier] === null &&
      Number.isInteger(t.end) &&
      t.end >= previousEnd &&
      t.end <= plan.prompt.length;
    if (!ok) {
      throw new InvalidInputError(
        `tiers[${i}]: not a tier of this prompt (tier ${JSON.stringify(t.tier)}, end ${String(t.end)})`,
        ["tiers", i],
      );
    }
    keys[t.tier] = shortHash(plan.prompt.slice(0, t.end), memo);
    previousEnd = t.end;
  });
  return keys;
}

function isKeys(x: CacheKeys | CacheKeySource): x is CacheKeys {
  return !("prompt" in x);
}

/**
 * The first tier whose cache key differs between two plans (or two {@link CacheKeys}
 * objects, or one of each), most stable tier first; `null` when every key is the same.
 * It says why a provider cache missed: `"static"` means the whole prompt was rebuilt,
 * `"dynamic"` that only the per-turn tail changed. A tier that appears or disappears
 * counts as a change.
 *
 * @example
 * cacheBreak(lastTurnPlan, thisTurnPlan); // "dynamic": only recalled memory changed
 * cacheBreak(
 *   { static: "a", session: "b", dynamic: "c" },
 *   { static: "a", session: "x", dynamic: "y" },
 * ); // "session"
 */
export function cacheBreak(
  previous: CacheKeys | CacheKeySource,
  next: CacheKeys | CacheKeySource,
): CacheTier | null {
  const before = isKeys(previous) ? previous : computeCacheKeys(previous);
  const after = isKeys(next) ? next : computeCacheKeys(next);
  for (const tier of CACHE_TIERS) {
    if (before[tier] !== after[tier]) return tier;
  }
  return null;
}

/**
 * The version of a whole prompt (docs/manifest-wire-guard.md `promptVersion`): its full SHA-256, 64 hex digits
 * (looked up in `memo` when given).
 *
 * @example promptVersion("Be brief.") // "213c22ed7234eb11116e1e88f314c73cb3a019b5c87fe224b6ce5665bd9ec50e"
 */
export function promptVersion(prompt: string, memo?: HashMemo): string {
  return sha256HexWith(prompt, memo);
}

/**
 * The version of one layer's rendered content (docs/manifest-wire-guard.md `versionId`): the first 16 hex
 * digits of its SHA-256 (looked up in `memo` when given).
 *
 * @example versionId("") // "e3b0c44298fc1c14"
 */
export function versionId(text: string, memo?: HashMemo): string {
  return shortHash(text, memo);
}
