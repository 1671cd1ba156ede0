/**
 * Items valid by construction. The in-memory sources build their items from data they
 * validated with zod when it came in (rules, task states, observations, tools and calls,
 * profile entries, fixed items); an array of items they return is registered here, and the
 * assembler does not parse it again. Internal to the package: not re-exported, so a
 * caller's source is always validated at the edge.
 */
import type { SourceItem } from "./types.js";

const valid = new WeakSet<readonly SourceItem[]>();

/** Registers `items` (a fresh array built from validated data) as valid; returns it. */
export function markValidated<T extends readonly SourceItem[]>(items: T): T {
  valid.add(items);
  return items;
}

/** Whether `items` is an array registered by {@link markValidated}. */
export function isValidated(items: unknown): items is readonly SourceItem[] {
  return typeof items === "object" && items !== null && valid.has(items as readonly SourceItem[]);
}
