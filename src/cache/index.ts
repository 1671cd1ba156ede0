/** Cache keys and versions (spec 05 cache tiers, spec 07 manifest hashes). */
export { SHORT_HASH_LENGTH, sha256Hex, shortHash } from "./hash.js";
export {
  type CacheKeySource,
  type CacheKeys,
  cacheBreak,
  computeCacheKeys,
  promptVersion,
  versionId,
} from "./keys.js";
