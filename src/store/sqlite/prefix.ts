/** The per-scope prefix of indexed terms (SQLite store; see store.ts). */
import { createHash } from "node:crypto";

/**
 * The prefix of every indexed term of a scope: 16 hex digits of SHA-256 of the scope.
 * Terms are stored as `PREFIX + term` (e.g. `3f2a…9cpython`), so each scope has its own
 * postings: a recall can only reach its own scope's terms, and a search costs what the
 * scope holds, not what the store holds. The per-scope statistics recall scores with
 * (document frequencies, scope size; see stats.ts) are keyed the same way. The
 * exact `user_scope = ?` comparison in the SQL that reads the rows guards against hash
 * collisions.
 *
 * @example scopePrefix("u1").length // 16
 */
export function scopePrefix(userScope: string): string {
  let prefix = prefixes.get(userScope);
  if (prefix === undefined) {
    // A service recalls in few scopes, each many times: hash each once (bounded).
    if (prefixes.size >= MAX_PREFIXES) prefixes.clear();
    prefix = createHash("sha256").update(userScope, "utf8").digest("hex").slice(0, 16);
    prefixes.set(userScope, prefix);
  }
  return prefix;
}

const MAX_PREFIXES = 4096;
const prefixes = new Map<string, string>();
