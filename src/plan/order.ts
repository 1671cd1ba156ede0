// Display and admission order of the entries, by packed integer sort keys when they fit.
import { compareCodePoints } from "../text/index.js";
import { type Entry, isReserved } from "./entry.js";

// Code-point order of two distinct names. Sorting compares names on every priority tie,
// often sharing a long prefix ("segment-0041" vs "segment-0042"): without surrogates the
// native `<` gives the same order, far faster than compareCodePoints' loop.
function compareNames(a: Entry, b: Entry): number {
  if (a.plainName && b.plainName) return a.name < b.name ? -1 : 1;
  return compareCodePoints(a.name, b.name);
}

// Display order: (tier asc →) priority asc → name asc (names are unique, so the order is
// total). Untiered, every tier rank is 0.
function compareDisplay(a: Entry, b: Entry): number {
  if (a.tier !== b.tier) return a.tier - b.tier;
  if (a.priority !== b.priority) return a.priority < b.priority ? -1 : 1;
  return compareNames(a, b);
}

// Admission order: (tier asc →) budgetPriority desc → priority asc → name asc. Within one
// tier, priority asc → name asc is the display order, already computed as `display`.
function compareAdmission(a: Entry, b: Entry): number {
  if (a.tier !== b.tier) return a.tier - b.tier;
  if (a.budgetPriority !== b.budgetPriority) {
    return a.budgetPriority > b.budgetPriority ? -1 : 1;
  }
  return a.display - b.display;
}

/*
 * Sorting 2,000 entries with Array.prototype.sort costs ~19k comparator callbacks, which
 * dominate the planner's own work. In the usual case, where the numeric ordering field
 * (priority or budgetPriority) holds integers of a modest range, the order is instead
 * that of one packed integer key per entry, which a Uint32Array sorts natively with no
 * callback, many times faster. Otherwise the comparators above.
 */

// `max` and `span` (= max − min + 1) of `field` over `list`, or null when a value is not
// an integer or a key `(tier × span + offset) × n + index` (3 tiers) would not fit in a
// Uint32Array exactly. -0 and 0 key alike, as the comparators treat them.
function packedRange(
  list: readonly Entry[],
  field: (e: Entry) => number,
  n: number,
): { max: number; min: number; span: number } | null {
  let min = Number.POSITIVE_INFINITY;
  let max = Number.NEGATIVE_INFINITY;
  for (const e of list) {
    const v = field(e);
    if (!Number.isInteger(v)) return null;
    if (v < min) min = v;
    if (v > max) max = v;
  }
  const span = max - min + 1;
  return list.length > 0 && 3 * span * n <= 2 ** 32 ? { max, min, span } : null;
}

/**
 * The entries (in request order) in display order: by the key (tier, priority − min,
 * request index), then each run of equal (tier, priority) by name. The runs are usually
 * short, and TimSort takes a run already listed by name (a common input) in one pass.
 */
export function displayOrder(entries: Entry[]): Entry[] {
  const n = entries.length;
  const range = packedRange(entries, (e) => e.priority, n);
  if (range === null) return entries.sort(compareDisplay);
  const keys = new Uint32Array(n);
  for (let i = 0; i < n; i++) {
    const e = entries[i]!;
    keys[i] = (e.tier * range.span + (e.priority - range.min)) * n + i;
  }
  keys.sort();
  const sorted = entries.map((_, i) => entries[keys[i]! % n]!);
  let start = 0;
  for (let i = 1; i <= n; i++) {
    const a = sorted[start]!;
    const b = sorted[i];
    if (b !== undefined && b.tier === a.tier && b.priority === a.priority) continue;
    if (i - start > 1) {
      const run = sorted.slice(start, i).sort(compareNames);
      for (let j = 0; j < run.length; j++) sorted[start + j] = run[j]!;
    }
    start = i;
  }
  return sorted;
}

/** The optional (neither required nor neverTruncate) active entries in admission order, by the key (tier, max − budgetPriority, display). */
export function admissionOrder(entries: readonly Entry[]): Entry[] {
  const optional = entries.filter((e) => e.inactive === null && !isReserved(e));
  const n = entries.length;
  const range = packedRange(optional, (e) => e.budgetPriority, n);
  if (range === null) return optional.sort(compareAdmission);
  const keys = new Uint32Array(optional.length);
  for (let i = 0; i < optional.length; i++) {
    const e = optional[i]!;
    keys[i] = (e.tier * range.span + (range.max - e.budgetPriority)) * n + e.display;
  }
  keys.sort();
  for (let i = 0; i < keys.length; i++) optional[i] = entries[keys[i]! % n]!;
  return optional;
}
