/**
 * What changed between two recorded responses: the decisions (by id, status and reason),
 * the layers, the prompt's bytes (and the changed bytes of the first changed layer), the
 * cache keys and the tier that broke the cache first. Shared by `replay` (recorded vs
 * rerun) and the inspector's diff of two turns.
 */
import { cacheBreak } from "../../cache/index.js";
import { canonicalJson } from "../../conversation/index.js";
import { CACHE_TIERS, type CacheTier } from "../../plan/index.js";
import { type AssemblyResponse, isErrorResponse, type RecordResponse } from "./schema.js";
import { layerSpans } from "./spans.js";

/** A decision table of a response. */
export type DecisionTable = "layer" | "item" | "memory" | "conversation";

/** One decision that appeared, disappeared, or changed status or reason. */
export interface DecisionChange {
  table: DecisionTable;
  /** Layer id, `layer/item` id, memory id or message id. */
  id: string;
  /** `status/reason`, or null when the decision is absent on that side. */
  before: string | null;
  after: string | null;
}

/** A layer whose presence, status or content changed. */
export interface LayerChange {
  id: string;
  tier: CacheTier;
  change: "added" | "removed" | "status" | "content";
}

/** The changed bytes of one text: where they start and what was removed and added. */
export interface ByteChange {
  /** The layer the text is (null: the whole prompt, when no layer could be located). */
  layer: string | null;
  bytesBefore: number;
  bytesAfter: number;
  /** UTF-8 byte offset of the first difference inside the text. */
  offset: number;
  removed: string;
  added: string;
  /** Unchanged text just before and after the change (at most {@link CONTEXT_CHARS}). */
  contextBefore: string;
  contextAfter: string;
}

/** Everything that differs between two responses. */
export interface ResponseDiff {
  same: boolean;
  /** Error codes when either side failed (null: both are assemblies). */
  errors: { before: string | null; after: string | null } | null;
  decisions: DecisionChange[];
  layers: LayerChange[];
  /** UTF-8 sizes of both prompts and the first differing byte (null when equal). */
  prompt: { bytesBefore: number; bytesAfter: number; firstChange: number | null };
  firstChangedLayer: ByteChange | null;
  cacheKeys: Array<{ tier: CacheTier; before: string | null; after: string | null }>;
  /** The most stable tier whose key differs (src/cache `cacheBreak`). */
  cacheBreak: CacheTier | null;
  /** JSON paths of any other field that differs (at most {@link OTHER_LIMIT}). */
  other: string[];
}

/** Unchanged characters shown around a change. */
export const CONTEXT_CHARS = 40;
/** Paths listed under `other`. */
export const OTHER_LIMIT = 20;

const bytes = (s: string): number => Buffer.byteLength(s, "utf8");
const statusOf = (d: { status: string; reason: string }): string => `${d.status}/${d.reason}`;

/** Every decision of a response, keyed `table id`. */
function decisionMap(
  r: AssemblyResponse,
): Map<string, { table: DecisionTable; id: string; v: string }> {
  const out = new Map<string, { table: DecisionTable; id: string; v: string }>();
  const put = (table: DecisionTable, id: string, v: string) => {
    out.set(`${table} ${id}`, { table, id, v });
  };
  for (const l of r.manifest.layers) {
    put("layer", l.id, statusOf(l));
    for (const item of l.items) put("item", `${l.id}/${item.id}`, statusOf(item));
  }
  for (const d of r.memoryPlan?.decisions ?? []) put("memory", d.memoryId, statusOf(d));
  for (const d of r.conversationPlan?.decisions ?? [])
    put("conversation", d.messageId, statusOf(d));
  return out;
}

function decisionChanges(a: AssemblyResponse, b: AssemblyResponse): DecisionChange[] {
  const before = decisionMap(a);
  const after = decisionMap(b);
  const changes: DecisionChange[] = [];
  for (const [key, d] of before) {
    const now = after.get(key);
    if (now === undefined || now.v !== d.v)
      changes.push({ table: d.table, id: d.id, before: d.v, after: now?.v ?? null });
  }
  for (const [key, d] of after) {
    if (!before.has(key)) changes.push({ table: d.table, id: d.id, before: null, after: d.v });
  }
  return changes;
}

function layerChanges(a: AssemblyResponse, b: AssemblyResponse): LayerChange[] {
  const before = new Map(a.manifest.layers.map((l) => [l.id, l]));
  const after = new Map(b.manifest.layers.map((l) => [l.id, l]));
  const out: LayerChange[] = [];
  for (const l of b.manifest.layers) {
    const old = before.get(l.id);
    if (old === undefined) out.push({ id: l.id, tier: l.cacheTier, change: "added" });
    else if (old.status !== l.status) out.push({ id: l.id, tier: l.cacheTier, change: "status" });
    else if (old.versionId !== l.versionId)
      out.push({ id: l.id, tier: l.cacheTier, change: "content" });
  }
  for (const l of a.manifest.layers) {
    if (!after.has(l.id)) out.push({ id: l.id, tier: l.cacheTier, change: "removed" });
  }
  return out;
}

/** The changed bytes between two texts (common prefix and suffix trimmed). */
export function byteChange(layer: string | null, before: string, after: string): ByteChange {
  const a = [...before];
  const b = [...after];
  let p = 0;
  while (p < a.length && p < b.length && a[p] === b[p]) p++;
  let s = 0;
  while (s < a.length - p && s < b.length - p && a[a.length - 1 - s] === b[b.length - 1 - s]) s++;
  return {
    layer,
    bytesBefore: bytes(before),
    bytesAfter: bytes(after),
    offset: bytes(a.slice(0, p).join("")),
    removed: a.slice(p, a.length - s).join(""),
    added: b.slice(p, b.length - s).join(""),
    contextBefore: a.slice(Math.max(0, p - CONTEXT_CHARS), p).join(""),
    contextAfter: a.slice(a.length - s, a.length - s + CONTEXT_CHARS).join(""),
  };
}

/** The text of layer `id` in a response (null when it is not in the prompt). */
function layerText(r: AssemblyResponse, id: string): string | null {
  const span = layerSpans(r).find((s) => s.id === id);
  return span === undefined ? null : r.prompt.slice(span.start, span.end);
}

/** The first layer, in display order, whose text differs, with its changed bytes. */
function firstChangedLayer(
  a: AssemblyResponse,
  b: AssemblyResponse,
  layers: readonly LayerChange[],
): ByteChange | null {
  if (a.prompt === b.prompt) return null;
  const changed = new Set(layers.map((l) => l.id));
  const order = [...a.manifest.layers, ...b.manifest.layers].map((l) => l.id);
  for (const id of order) {
    if (!changed.has(id)) continue;
    const before = layerText(a, id);
    const after = layerText(b, id);
    if (before !== after) return byteChange(id, before ?? "", after ?? "");
  }
  return byteChange(null, a.prompt, b.prompt);
}

/** Paths (up to the limit) where two JSON values differ. */
function differingPaths(a: unknown, b: unknown, path: string, out: string[], skip?: RegExp): void {
  if (out.length >= OTHER_LIMIT || skip?.test(path) || canonicalJson(a) === canonicalJson(b))
    return;
  const objects = typeof a === "object" && a !== null && typeof b === "object" && b !== null;
  if (!objects || Array.isArray(a) !== Array.isArray(b)) {
    out.push(path);
    return;
  }
  const ra = a as Record<string, unknown>;
  const rb = b as Record<string, unknown>;
  const keys = [...new Set([...Object.keys(ra), ...Object.keys(rb)])];
  for (const k of keys) {
    const sub = Array.isArray(a) ? `${path}[${k}]` : path === "" ? k : `${path}.${k}`;
    differingPaths(ra[k], rb[k], sub, out, skip);
  }
}

// Fields reported by their own part of the diff, left out of `other`.
const REPORTED = /^(prompt|segmentPlan\.prompt|manifest\.promptVersion|manifest\.cacheKeys)$/;

function firstByte(a: string, b: string): number | null {
  if (a === b) return null;
  return byteChange(null, a, b).offset;
}

function errorDiff(a: RecordResponse, b: RecordResponse, same: boolean): ResponseDiff {
  const code = (r: RecordResponse) => (isErrorResponse(r) ? r.error.code : null);
  const prompt = (r: RecordResponse) => (isErrorResponse(r) ? "" : r.prompt);
  const other: string[] = [];
  differingPaths(a, b, "", other);
  return {
    same,
    errors: { before: code(a), after: code(b) },
    decisions: [],
    layers: [],
    prompt: {
      bytesBefore: bytes(prompt(a)),
      bytesAfter: bytes(prompt(b)),
      firstChange: firstByte(prompt(a), prompt(b)),
    },
    firstChangedLayer: null,
    cacheKeys: [],
    cacheBreak: null,
    other,
  };
}

/**
 * Compares two responses (an earlier and a later one, or the recorded and the rerun one).
 *
 * @example compareResponses(recorded, rerun).same
 */
export function compareResponses(a: RecordResponse, b: RecordResponse): ResponseDiff {
  const same = canonicalJson(a) === canonicalJson(b);
  if (isErrorResponse(a) || isErrorResponse(b)) return errorDiff(a, b, same);
  const layers = layerChanges(a, b);
  const other: string[] = [];
  differingPaths(a, b, "", other, REPORTED);
  return {
    same,
    errors: null,
    decisions: decisionChanges(a, b),
    layers,
    prompt: {
      bytesBefore: bytes(a.prompt),
      bytesAfter: bytes(b.prompt),
      firstChange: firstByte(a.prompt, b.prompt),
    },
    firstChangedLayer: firstChangedLayer(a, b, layers),
    cacheKeys: CACHE_TIERS.filter((t) => a.manifest.cacheKeys[t] !== b.manifest.cacheKeys[t]).map(
      (tier) => ({ tier, before: a.manifest.cacheKeys[tier], after: b.manifest.cacheKeys[tier] }),
    ),
    cacheBreak: cacheBreak(a.manifest.cacheKeys, b.manifest.cacheKeys),
    other,
  };
}
