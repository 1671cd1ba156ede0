/**
 * The one hashing helper of promptctx: every prompt version, layer version and cache key
 * is a SHA-256 of the text's UTF-8 bytes, written as lowercase hex.
 */
import { createHash } from "node:crypto";

/**
 * SHA-256 of `text` encoded as UTF-8, as 64 lowercase hex digits. A lone surrogate is
 * encoded as U+FFFD (the WHATWG rule every UTF-8 encoder in JavaScript follows), so
 * peers in other languages hash the same bytes for any well-formed text.
 *
 * @example sha256Hex("") // "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
 */
export function sha256Hex(text: string): string {
  return createHash("sha256").update(text, "utf8").digest("hex");
}

/** Length of a short hash: cache keys and layer `versionId`s (docs/session-and-cache.md, docs/manifest-wire-guard.md). */
export const SHORT_HASH_LENGTH = 16;

/**
 * The first 16 hex digits of {@link sha256Hex}: the short form of cache keys and layer
 * version ids.
 *
 * @example shortHash("") // "e3b0c44298fc1c14"
 */
export function shortHash(text: string): string {
  return sha256Hex(text).slice(0, SHORT_HASH_LENGTH);
}
