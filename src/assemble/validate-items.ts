/**
 * What a source returned, checked at the edge by `SourceItemSchema`, parsing each item
 * once. Items the package's own sources built from validated data are taken as they are;
 * any other item is parsed unless it is, field for field, an item this source returned
 * and passed before: `SourceItemSchema` has no transforms or defaults, so parsing is
 * idempotent and a value equal to a parsed output parses to that output. The outputs
 * kept for that comparison are frozen, so no renderer can alter one.
 */
import { formatPath } from "../errors/index.js";
import { type ContextSource, type SourceItem, SourceItemSchema } from "../sources/index.js";
import { hasUniqueIds, isValidated } from "../sources/validated.js";
import { deepFreeze } from "../text/index.js";
import type { SourcedItem } from "./items.js";

/** Per source and slot kind, the items that passed last time: by id, and as returned. */
const lastValid = new WeakMap<ContextSource, Map<string, LastValid>>();

interface LastValid {
  byId: Map<string, SourceItem>;
  /** The sourced items returned last time, in the source's order. */
  out: readonly SourcedItem[];
}

/**
 * Arrays returned by {@link validateItems} whose items are known to have unique ids: a
 * package source's that rules duplicates out, or a caller's found so while validating.
 */
const uniqueIdItems = new WeakSet<readonly SourcedItem[]>();

/** Whether no two of `items` (an array {@link validateItems} returned) share an id. */
export function knownUniqueIds(items: readonly SourcedItem[]): boolean {
  return uniqueIdItems.has(items);
}

/**
 * `raw` as the items `source` returned for a slot of `kind`, each validated (or known
 * valid). Throws naming the first invalid item; a non-array is an error too. When every
 * item equals, in order, what the source returned and passed last time, the very array
 * returned then comes back: its items are the same objects, so what was made of them
 * (their rank order, their line sizes) holds again.
 */
export function validateItems(
  raw: unknown,
  source: ContextSource,
  kind: string,
): readonly SourcedItem[] {
  const sourceId = source.id;
  // Plain loops, no closures per call: see "Object shapes" in docs/performance.md.
  if (isValidated(raw)) {
    const out: SourcedItem[] = new Array(raw.length);
    for (let i = 0; i < raw.length; i++) out[i] = { item: raw[i] as SourceItem, sourceId };
    if (hasUniqueIds(raw)) uniqueIdItems.add(out);
    return out;
  }
  if (!Array.isArray(raw))
    throw new Error(`source ${sourceId} returned ${typeof raw}, not an array of items`);
  let byKind = lastValid.get(source);
  if (byKind === undefined) {
    byKind = new Map();
    lastValid.set(source, byKind);
  }
  const last = byKind.get(kind);
  if (last !== undefined && sameInOrder(raw, last.out, sourceId)) return last.out;
  const next = new Map<string, SourceItem>();
  const out: SourcedItem[] = new Array(raw.length);
  for (let i = 0; i < raw.length; i++) {
    const item: unknown = raw[i];
    const id = typeof item === "object" && item !== null ? (item as { id?: unknown }).id : null;
    const prev = typeof id === "string" ? last?.byId.get(id) : undefined;
    const valid = prev !== undefined && sameJson(item, prev) ? prev : parseItem(item, i);
    next.set(valid.id, valid);
    out[i] = { item: valid, sourceId };
  }
  // The by-id map holds one entry per id: fewer than items means a shared id.
  if (next.size === out.length) uniqueIdItems.add(out);
  byKind.set(kind, { byId: next, out });
  return out;
}

// Whether `raw` is, item for item and in order, what `out` was made from.
function sameInOrder(raw: readonly unknown[], out: readonly SourcedItem[], sourceId: string) {
  if (raw.length !== out.length) return false;
  for (let i = 0; i < raw.length; i++) {
    const s = out[i] as SourcedItem;
    if (s.sourceId !== sourceId || !sameJson(raw[i], s.item)) return false;
  }
  return true;
}

function parseItem(item: unknown, i: number): SourceItem {
  const parsed = SourceItemSchema.safeParse(item);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    const rest = (issue?.path ?? []).filter((p): p is string | number => typeof p !== "symbol");
    throw new Error(
      `invalid item ${formatPath(["items", i, ...rest])}: ${issue?.message ?? "invalid"}`,
    );
  }
  return deepFreeze(parsed.data as SourceItem);
}

const isPlain = (x: object) => {
  const proto = Object.getPrototypeOf(x);
  return proto === Object.prototype || proto === null;
};

/**
 * Structural equality of plain data: primitives by `Object.is`, arrays element by
 * element, plain objects by the same own keys with equal values. Anything else (class
 * instances, getters on a prototype) is unequal, so it gets parsed.
 */
export function sameJson(a: unknown, b: unknown): boolean {
  // `===` first (the common case), `Object.is` only to tell 0 from -0 (NaN never reaches
  // here equal: it fails `===` and is not an object).
  if (a === b) return a !== 0 || Object.is(a, b);
  if (typeof a !== "object" || typeof b !== "object" || a === null || b === null) {
    return Object.is(a, b);
  }
  const arrayA = Array.isArray(a);
  if (arrayA || Array.isArray(b)) {
    if (!arrayA || !Array.isArray(b) || a.length !== b.length) return false;
    for (let i = 0; i < a.length; i++) if (!sameJson(a[i], b[i])) return false;
    return true;
  }
  if (!isPlain(a) || !isPlain(b)) return false;
  // for…in, not Object.keys: validating thousands of items each fetch would otherwise
  // allocate two key arrays per object. Both objects are plain, so for…in visits the same
  // inherited keys (none, unless Object.prototype was given enumerable ones) on both
  // sides: counting them on both leaves the comparison of own keys exact.
  const ra = a as Record<string, unknown>;
  const rb = b as Record<string, unknown>;
  let keys = 0;
  for (const k in ra) {
    keys++;
    const vb = rb[k];
    if (vb === undefined && !Object.hasOwn(rb, k)) return false;
    if (!sameJson(ra[k], vb)) return false;
  }
  for (const _ in rb) keys--;
  return keys === 0;
}
