/**
 * Cache keys and versions (docs/session-and-cache.md): SHA-256 hashing, per-tier cache
 * keys and the first tier that broke. May import the stages below it (today: errors, plan).
 */
export { HashMemo, SHORT_HASH_LENGTH, sha256Hex, shortHash } from "./hash.js";
export {
  type CacheKeySource,
  type CacheKeys,
  cacheBreak,
  computeCacheKeys,
  promptVersion,
  versionId,
} from "./keys.js";
