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
 * version ids. With a {@link HashMemo}, a text hashed lately is looked up.
 *
 * @example shortHash("") // "e3b0c44298fc1c14"
 */
export function shortHash(text: string, memo?: HashMemo): string {
  return sha256HexWith(text, memo).slice(0, SHORT_HASH_LENGTH);
}

/** Characters of text a {@link HashMemo} keeps per generation (two generations at most). */
const MEMO_GENERATION_CHARS = 1 << 20;

/**
 * Remembers the SHA-256 of the texts it hashed lately, so a caller that hashes the same
 * texts again — a warm service's layers, unchanged from one request to the next — looks
 * them up instead (a string lookup costs a fraction of creating a hash and running it).
 * Bounded by characters: once a generation holds about 1 M characters of text it becomes
 * the previous one and the one before is dropped; a text found in the previous
 * generation moves to the current one. Hashing is a pure function of the text, so a memo
 * can never change a result, only its cost.
 *
 * @example
 * const memo = new HashMemo();
 * versionId("Be brief.", memo); // hashed
 * versionId("Be brief.", memo); // looked up: same "213c22ed7234eb11"
 */
export class HashMemo {
  #current = new Map<string, string>();
  #previous = new Map<string, string>();
  #chars = 0;

  /** {@link sha256Hex} of `text`, from the memo when it hashed the same text lately. */
  sha256Hex(text: string): string {
    const hit = this.#current.get(text);
    if (hit !== undefined) return hit;
    const hex = this.#previous.get(text) ?? sha256Hex(text);
    if (this.#chars + text.length > MEMO_GENERATION_CHARS) {
      this.#previous = this.#current;
      this.#current = new Map();
      this.#chars = 0;
    }
    this.#current.set(text, hex);
    this.#chars += text.length;
    return hex;
  }
}

/** {@link sha256Hex} of `text` through `memo` when there is one. */
export function sha256HexWith(text: string, memo: HashMemo | undefined): string {
  return memo === undefined ? sha256Hex(text) : memo.sha256Hex(text);
}
