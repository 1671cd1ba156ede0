/**
 * Items valid by construction. The in-memory sources build their items from data they
 * validated with zod when it came in (rules, task states, observations, tools and calls,
 * profile entries, fixed items); an array of items they return is registered here, and the
 * assembler does not parse it again. Internal to the package: not re-exported, so a
 * caller's source is always validated at the edge.
 */
import type { SourceItem } from "./types.js";

/** What was registered with an array. */
interface Mark {
  /** The version token (null: none given). */
  version: object | null;
  /** Whether no two of its items share an id. */
  uniqueIds: boolean;
}

/** Registered arrays. */
const valid = new WeakMap<readonly SourceItem[], Mark>();

/**
 * Registers `items` (a fresh array built from validated data) as valid; returns it.
 * `version`, when given, is the source's token for the data the items were built from:
 * the source hands out the same token exactly as long as that data is unchanged (a new
 * token object on every change), so equal tokens mean equal items and the assembler may
 * reuse what it made of them last time. `uniqueIds` says the source's data rules out two
 * items with one id (keys or ids checked when the data came in), so the assembler need
 * not check again when the items fill a slot alone.
 */
export function markValidated<T extends readonly SourceItem[]>(
  items: T,
  version: object | null = null,
  uniqueIds = false,
): T {
  valid.set(items, { version, uniqueIds });
  return items;
}

/** The version token `items` was registered with, or null. */
export function versionOf(items: unknown): object | null {
  return typeof items === "object" && items !== null
    ? (valid.get(items as readonly SourceItem[])?.version ?? null)
    : null;
}

/** Whether `items` was registered with `uniqueIds` (see {@link markValidated}). */
export function hasUniqueIds(items: readonly SourceItem[]): boolean {
  return valid.get(items)?.uniqueIds === true;
}

/** Whether `items` is an array registered by {@link markValidated}. */
export function isValidated(items: unknown): items is readonly SourceItem[] {
  return typeof items === "object" && items !== null && valid.has(items as readonly SourceItem[]);
}

/**
 * Sources whose next version token is known before they fetch: for a slot kind, the token
 * the items of a fetch right now would carry (null: not known without fetching).
 */
const upfront = new WeakMap<object, (kind: string) => object | null>();

/**
 * Declares that `source` can tell its version token for a slot kind without fetching:
 * `current(kind)` must return exactly the token its `fetch` would mark its items with
 * (see {@link markValidated}) for every slot of that kind and every query — so its
 * items depend on nothing but the data the token stands for. The assembler then skips
 * the fetch when the token is the one it already holds items for. Returns `source`.
 */
export function declareUpfrontVersion<S extends object>(
  source: S,
  current: (kind: string) => object | null,
): S {
  upfront.set(source, current);
  return source;
}

/** The token `source`'s next fetch for `kind` would carry, when known without fetching. */
export function upfrontVersion(source: object, kind: string): object | null {
  const current = upfront.get(source);
  return current === undefined ? null : current(kind);
}
