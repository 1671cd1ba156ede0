// The planner's working record of one segment: its copied keys, resolved content and outcome.
import { type FieldPath, InvalidInputError } from "../errors/index.js";
import { hasSurrogate } from "../text/index.js";
import type { SegmentReason, SegmentStatus } from "./decision.js";
import { type CacheTier, DEFAULT_CACHE_TIER, type Segment } from "./schema.js";

/** Rank of each tier in tiered mode: the display and admission order of tiers. */
const TIER_RANK: Readonly<Record<CacheTier, number>> = { static: 0, session: 1, dynamic: 2 };

/** One segment as the planner works on it: every step reads and updates these plain fields. */
export interface Entry {
  seg: Segment;
  // Copies of the ordering keys as plain fields: sorting 2,000 segments reads them often.
  name: string;
  priority: number;
  budgetPriority: number;
  required: boolean;
  provenance: string;
  /** The name has no surrogate, so native `<` orders it by code point (see compareNames). */
  plainName: boolean;
  /** Index in the request, for error paths. */
  index: number;
  /** Resolved content; `""` when inactive. */
  content: string;
  /** Why the segment is inactive, or null when active. */
  inactive: string | null;
  /** Tier rank (static 0, session 1, dynamic 2); 0 for every segment when untiered. */
  tier: number;
  /** The tier recorded in the decision; null when untiered. */
  cacheTier: CacheTier | null;
  /** Position in display order. */
  display: number;
  chars: number;
  // The decision's outcome, set once by admission (an inactive segment keeps "inactive").
  // Its PlanDecision object is built only in the final pass: see makeDecision.
  status: SegmentStatus;
  reason: SegmentReason;
  detail: string;
}

/** The entry of `seg`, at `index` in the request, before ordering and content resolution. */
export function makeEntry(seg: Segment, index: number, tiered: boolean): Entry {
  const cacheTier: CacheTier | null = tiered ? (seg.cacheTier ?? DEFAULT_CACHE_TIER) : null;
  return {
    seg,
    name: seg.name,
    priority: seg.priority,
    budgetPriority: seg.budgetPriority,
    required: seg.required,
    provenance: seg.provenance,
    plainName: !hasSurrogate(seg.name),
    index,
    content: "",
    inactive: null,
    tier: cacheTier === null ? 0 : TIER_RANK[cacheTier],
    cacheTier,
    display: 0,
    chars: 0,
    status: "inactive",
    reason: "inactive",
    detail: "",
  };
}

// A module-level helper rather than a closure, which would be allocated for every entry.
function fieldPath(e: Entry, field: string): FieldPath {
  return ["segments", e.index, field];
}

// Runs the condition, then the builder (each at most once), and records the content or
// why the segment is inactive.
export function resolveContent(e: Entry): void {
  const { seg } = e;
  let active = seg.condition ?? true;
  if (typeof active === "function") {
    active = active();
    if (typeof active !== "boolean") {
      throw new InvalidInputError(
        `segments[${e.index}].condition: must return a boolean`,
        fieldPath(e, "condition"),
      );
    }
  }
  if (!active) {
    e.inactive = "condition is false";
    return;
  }
  const built = seg.builder !== undefined;
  const content = built ? seg.builder!() : (seg.content ?? null);
  if (content !== null && typeof content !== "string") {
    throw new InvalidInputError(
      `segments[${e.index}].builder: must return a string or null`,
      fieldPath(e, "builder"),
    );
  }
  if (content === null) e.inactive = built ? "builder returned null" : "content is null";
  else if (content === "")
    e.inactive = built ? "builder returned an empty string" : "content is empty";
  else e.content = content;
}
