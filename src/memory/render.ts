/**
 * Byte-exact rendering of docs/memory-selection.md: one `<memory_hit>` per selected candidate inside a
 * `<recalled_memory>` wrapper. What these functions return is what the budgets measure.
 */
import { escapedLength, escapeText, formatScore } from "../text/index.js";
import type { Authority } from "./schema.js";

/** The fields a hit line shows. */
export interface RenderableHit {
  memoryId: string;
  text: string;
  userScope: string;
  score: number;
  sourceRank: number;
  /** Defaults to `user_default`. */
  authority?: Authority | undefined;
  provenance: { sourceId: string; sourceType: string; capturedAt: string };
  conflictKey?: string | null | undefined;
}

// The literal pieces of a hit line, between its values (shared by the renderer and the
// measure below, so the two cannot disagree on the format).
const OPEN = '<memory_hit memory_id="';
const SCORE = '" score="';
const RANK = '" source_rank="';
const AUTHORITY = '" authority="';
const SCOPE = '" user_scope="';
const SOURCE_ID = '" source_id="';
const SOURCE_TYPE = '" source_type="';
const CAPTURED = '" captured_at="';
const SLOT = '" conflict_key="';
const CLOSE_HIT = "</memory_hit>";
const FIXED_CHARS =
  OPEN.length +
  SCORE.length +
  RANK.length +
  AUTHORITY.length +
  SCOPE.length +
  SOURCE_ID.length +
  SOURCE_TYPE.length +
  CAPTURED.length +
  '">'.length +
  CLOSE_HIT.length;

const hasSlot = (hit: RenderableHit) => hit.conflictKey !== undefined && hit.conflictKey !== null;

/**
 * Renders one hit, attributes in spec order, every value escaped.
 *
 * @example renderMemoryHit(candidate) // '<memory_hit memory_id="m1" score="0.930000" …>Use Python</memory_hit>'
 */
export function renderMemoryHit(hit: RenderableHit): string {
  const p = hit.provenance;
  // One join makes a flat string; `+` would make a rope that the token counter, reading
  // it next, first has to flatten (measured: ~5 % of a 5,000-candidate selection).
  return [
    OPEN,
    escapeText(hit.memoryId),
    SCORE,
    formatScore(hit.score),
    RANK,
    hit.sourceRank,
    AUTHORITY,
    hit.authority ?? "user_default",
    SCOPE,
    escapeText(hit.userScope),
    SOURCE_ID,
    escapeText(p.sourceId),
    SOURCE_TYPE,
    escapeText(p.sourceType),
    CAPTURED,
    escapeText(p.capturedAt),
    hasSlot(hit) ? `${SLOT}${escapeText(hit.conflictKey as string)}` : "",
    '">',
    escapeText(hit.text),
    CLOSE_HIT,
  ].join("");
}

/**
 * Code points of `renderMemoryHit(hit)`, computed from its values without rendering it
 * (what a selection that never renders a cut hit still reports as its size).
 */
export function memoryHitChars(hit: RenderableHit): number {
  const p = hit.provenance;
  return (
    FIXED_CHARS +
    escapedLength(hit.memoryId) +
    formatScore(hit.score).length +
    String(hit.sourceRank).length +
    (hit.authority ?? "user_default").length +
    escapedLength(hit.userScope) +
    escapedLength(p.sourceId) +
    escapedLength(p.sourceType) +
    escapedLength(p.capturedAt) +
    (hasSlot(hit) ? SLOT.length + escapedLength(hit.conflictKey as string) : 0) +
    escapedLength(hit.text)
  );
}

/** The opening line of the block for `selected` hits (without its newline). */
export function renderBlockOpen(userScope: string, selected: number): string {
  return `<recalled_memory user_scope="${escapeText(userScope)}" selected="${selected}">`;
}

/** The closing tag of the block. */
export const BLOCK_CLOSE = "</recalled_memory>";

/**
 * Renders the whole block from already-rendered hit lines; no hit gives `""` (never an
 * empty wrapper).
 *
 * @example renderMemoryBlock("u1", []) // ""
 */
export function renderMemoryBlock(userScope: string, hitLines: readonly string[]): string {
  if (hitLines.length === 0) return "";
  return `${renderBlockOpen(userScope, hitLines.length)}\n${hitLines.join("\n")}\n${BLOCK_CLOSE}`;
}
